/**
 * The function tracer and its tracefs files (kernel/trace/trace_functions.c,
 * ftrace.c), over the ftrace call sites the kprobes engine knows (x86_64:
 * functions built -pg -mfentry, whose first instruction is
 * `call __fentry__`):
 *
 *   available_tracers   "function nop\n" when the kernel has call sites,
 *                       else "nop\n"
 *   current_tracer      "nop\n" / "function\n"; writing a tracer's name
 *                       switches (an unknown one: -EINVAL)
 *   available_filter_functions  one function name per call site, in address
 *                       order (Linux's ftrace_pages order); this file, the
 *                       two below and the stack tracer's exist only where
 *                       there are call sites (CONFIG_DYNAMIC_FTRACE)
 *   set_ftrace_filter   the functions the tracer is limited to ("#### all
 *                       functions enabled ####" when none); words written
 *                       are names or globs (`*`, `?`, `[...]`), a leading
 *                       '!' removes; `>` (O_TRUNC) empties the list first,
 *                       `>>` adds; a word matching no function: -EINVAL
 *   set_ftrace_notrace  the same for functions never traced ("#### no
 *                       functions disabled ####" when none)
 *
 *   stack_trace_filter, stack_max_size, stack_trace  the stack tracer's
 *                       (ftraceStack.ts), present when there are call sites
 *
 * With `function` current, every call of a traced function writes
 *   "<task>-<pid> [<cpu>] <flags> <secs>.<usecs>: <func> <-<caller>"
 * into the trace buffer (trace_output.c trace_fn_trace; %ps names), while
 * tracing_on is 1.
 */
import { Errno } from '../kernel/abi';
import type { Kernel } from '../kernel/kernel';
import type { PseudoFile } from '../kernel/fs/pseudo';
import { recordTraceLine } from './events/traceBuffer';
import { tracingOn } from './events/tracingOn';
import { traceContextText } from './events/format';
import { StackTracer, SYSCTL_STACK_TRACER } from './ftraceStack';

/** What the function tracer needs of the kprobes engine's ftrace call sites (emulator/kprobes/ftrace.ts). */
export interface FunctionTraceHooks {
  /** CONFIG_DYNAMIC_FTRACE: the arch has call sites to patch */
  readonly enabled: boolean;
  /** the call site covering addr, or undefined */
  location(addr: bigint): bigint | undefined;
  /** trace these call sites, each hit given to record with the function's caller and entry sp (an empty set or null: stop) */
  setFunctionTrace(sites: ReadonlySet<bigint>, record: ((cpu: number, ip: bigint, parentIp: bigint, sp: bigint) => void) | null): void;
}

/** One traceable function: its name and its call site. */
export interface FtraceFunction { name: string; site: bigint }

/** the function tracer's irq-info column: traced functions run in task context with interrupts on */
const FUNCTION_FLAGS = '.....';

/** The kernel's traceable functions in address order: each function symbol whose entry is a call site. */
export function ftraceFunctions(k: Kernel, hooks: FunctionTraceHooks): FtraceFunction[] {
  if (!hooks.enabled) return [];
  const out: FtraceFunction[] = [];
  const seen = new Set<bigint>();
  for (const s of k.image.symbols.all()) {
    if (s.type !== 'func' || s.shndx === 0 || seen.has(s.value)) continue;
    const site = hooks.location(s.value);
    if (site === undefined || site < s.value || site > s.value + 4n) continue;
    seen.add(s.value);
    out.push({ name: s.name, site });
  }
  return out.sort((a, b) => (a.site < b.site ? -1 : a.site > b.site ? 1 : 0));
}

/** glob_match as ftrace's filters use it: `*`, `?` and `[...]` */
function globRegex(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) { re += '\\['; continue; }
      const body = glob.slice(i + 1, end);
      re += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\]/g, m => `\\${m}`);
  }
  return new RegExp(`^${re}$`);
}

const bytesOf = (text: string): number => new TextEncoder().encode(text).length;

interface TracerFiles { files: Record<string, PseudoFile>; current: () => string }
/** one function tracer per kernel: every tracefs mount of it shows the same state */
const perKernel = new WeakMap<Kernel, TracerFiles>();

/**
 * The function tracer's and the stack tracer's files for tracefs's root,
 * over `hooks` (null: the machine has no kprobes engine), and the current
 * tracer's name.
 */
export function functionTracerFiles(k: Kernel, hooks: () => FunctionTraceHooks | null): TracerFiles {
  let made = perKernel.get(k);
  if (!made) perKernel.set(k, made = makeFiles(k, hooks));
  return made;
}

function makeFiles(k: Kernel, hooks: () => FunctionTraceHooks | null): TracerFiles {
  const state = { tracer: 'nop', filter: new Set<string>(), notrace: new Set<string>(), stackFilter: new Set<string>() };
  let cache: FtraceFunction[] | null = null;
  const functions = (): FtraceFunction[] => {
    const h = hooks();
    return h ? (cache ??= ftraceFunctions(k, h)) : [];
  };
  const available = (): string[] => (functions().length ? ['function', 'nop'] : ['nop']);
  let traced = new Set<bigint>(), stacked = new Set<bigint>();

  const traceLine = (cpu: number, ip: bigint, parentIp: bigint): void => {
    if (!tracingOn(k)) return;
    const task = k.currentTask(cpu);
    const ns = k.clock.now(cpu);
    const name = (a: bigint): string => k.image.symbols.resolve(a)?.sym.name ?? `0x${a.toString(16)}`;
    const ctx = traceContextText({ comm: task?.comm ?? '', pid: task?.pid ?? 0, cpu, ns, flags: FUNCTION_FLAGS });
    recordTraceLine(k, cpu, ns, `${ctx}${name(ip)} <-${name(parentIp)}`);
  };
  const record = (cpu: number, ip: bigint, parentIp: bigint, sp: bigint): void => {
    if (traced.has(ip)) traceLine(cpu, ip, parentIp);
    if (stacked.has(ip)) stack.hit(cpu, ip, sp);
  };
  /** ftrace_ops_test for each user: in its filter (or no filter) and not in notrace; the call sites of both, patched */
  const apply = (): void => {
    const h = hooks();
    if (!h) return;
    const fns = functions();
    traced = new Set(state.tracer !== 'function' ? [] : fns.filter(f => (!state.filter.size || state.filter.has(f.name)) && !state.notrace.has(f.name)).map(f => f.site));
    stacked = new Set(!stack.enabled ? [] : fns.filter(f => !state.stackFilter.size || state.stackFilter.has(f.name)).map(f => f.site));
    const sites = new Set([...traced, ...stacked]);
    h.setFunctionTrace(sites, sites.size ? record : null);
  };
  const stack = new StackTracer(k, apply);
  if (hooks()?.enabled && !k.sysctl.entry(SYSCTL_STACK_TRACER)) k.sysctl.register(stack.sysctl());

  /** ftrace_regex_write: each word a name or glob, '!' removing; a word matching nothing is -EINVAL */
  const regexFile = (set: Set<string>, empty: string): PseudoFile => ({
    show: () => (set.size ? functions().filter(f => set.has(f.name)).map(f => `${f.name}\n`).join('') : `${empty}\n`),
    write: (text: string) => {
      for (const word of text.split(/\s+/).filter(Boolean)) {
        const remove = word.startsWith('!');
        const re = globRegex(remove ? word.slice(1) : word);
        const hit = functions().filter(f => re.test(f.name));
        if (!hit.length) return -Errno.EINVAL;
        for (const f of hit) { if (remove) set.delete(f.name); else set.add(f.name); }
      }
      apply();
      return bytesOf(text);
    },
    truncate: () => { set.clear(); apply(); },
  });

  const files: Record<string, PseudoFile> = {
    available_tracers: { show: () => `${available().join(' ')}\n` },
    current_tracer: {
      show: () => `${state.tracer}\n`,
      write: (text: string) => {
        const name = text.trim();
        if (!available().includes(name)) return -Errno.EINVAL;
        state.tracer = name;
        apply();
        return bytesOf(text);
      },
    },
  };
  // CONFIG_DYNAMIC_FTRACE's files: only where there are call sites
  if (functions().length) {
    Object.assign(files, {
      available_filter_functions: { show: () => functions().map(f => `${f.name}\n`).join('') },
      set_ftrace_filter: regexFile(state.filter, '#### all functions enabled ####'),
      set_ftrace_notrace: regexFile(state.notrace, '#### no functions disabled ####'),
      stack_trace_filter: regexFile(state.stackFilter, '#### all functions enabled ####'),
      stack_max_size: {
        show: () => stack.showMax(),
        write: (text: string) => { const r = stack.setMax(text); return r < 0 ? r : bytesOf(text); },
      },
      stack_trace: { show: () => stack.showTrace() },
    });
  }
  return { files, current: () => state.tracer };
}
