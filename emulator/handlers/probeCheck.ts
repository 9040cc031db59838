/**
 * Semantic checks and compilation of parsed .kprobe files: handler kinds per
 * probe kind, duplicate handlers/attributes, attribute values, symbol
 * existence, jprobe/kretprobe placement rules, and the handler snippets
 * themselves.
 */
import type { CType } from './ctypes';
import { abiFactsFor, abiFactsForRegs } from '../arch/abiFacts';
import { didYouMean } from '../elf/nearNames';
import { Span } from './ast';
import { compileSnippetAst } from './compiler';
import { SnippetCache } from './sharedSnippets';
import { argRegsOf, charSignedOf } from './context';
import { diagAt } from './parser';
import { ProbeAst, ProbeEvent, ProbeFileAst, ProbeKindName, ProbeTarget, USER_PROBE_KINDS, parseProbeFileTaking } from './probeFile';
import { portByName } from '../ports';
import { moduleSymbol, resolveEventArch } from '../tracing/events/parse';
import { CompileOptions, CompiledHandler, Diagnostic, HandlerKind, ProgramName } from './types';

export interface CheckOptions {
  /** pt_regs field names of the image's architecture */
  regNames: string[];
  /** symbol lookup in the image (unknown symbols in handlers are errors; unknown probe targets, see compileProbeFile) */
  symbolExists?(name: string): boolean;
  /** a function symbol of the image (handlers may call it); absent with symbolExists present: no calls */
  functionExists?(name: string): boolean;
  /**
   * DWARF names of the program at a probe's target (its pc): pre, entry and
   * jprobe handlers may use the probed function's parameters and locals
   */
  programNamesFor?(target: ProbeTarget): ((name: string) => ProgramName | undefined) | undefined;
  /** the program's globals and statics (DWARF), named in every handler */
  programGlobals?(name: string): ProgramName | undefined;
  /** the program's types by name (DWARF), for casts and sizeof */
  programType?(kind: 'struct' | 'union' | 'enum' | 'typedef', name: string): CType | undefined;
  /** symbol names of the image close to a misspelled one, for "did you mean" (none: no hint) */
  similarSymbols?(name: string): string[];
  /** ELF arch name of the image ('x86_64' | 'aarch64' | 'riscv64'...): its ABI facts (emulator/arch/abiFacts.ts)
   *  give plain char signedness, argument registers, the pc register and whether probes can be jump-optimized */
  imageArch?: string;
  argRegs?: string[];
  stepBudget?: number;
}

export interface ProbeSpec {
  kind: ProbeKindName;
  target: ProbeTarget;
  attrs: { maxactive?: number; data_size?: number; disabled?: boolean; len?: number; type?: KwatchTypeName };
  handlers: Partial<Record<HandlerKind, CompiledHandler>>;
  /** position of the probe keyword */
  line: number;
  column: number;
  /** the batch block the probe is in (all of it registers, or none) */
  batch?: { index: number; line: number; column: number; size: number };
  /** a kprobe_events / uprobe_events line: its event (a trace line per hit; def: target and fetch arguments) */
  event?: ProbeEvent;
}

/** What a kwatch watches: write, read or write, execute, read (where the debug registers can watch reads only). */
export type KwatchTypeName = 'w' | 'rw' | 'x' | 'r';
/** `type=` spellings: the letters, and the DR7 R/W codes of the original register_kwatch (0 execute, 1 write, 3 read/write) */
export const KWATCH_TYPES: Readonly<Record<string, KwatchTypeName>> = { w: 'w', rw: 'rw', x: 'x', r: 'r', 0: 'x', 1: 'w', 3: 'rw' };
/** Largest kwatch len accepted by the checker (the debug registers' own limits are the arch's, at registration). */
export const MAX_KWATCH_LEN = 8;

/** Largest accepted maxactive and data_size. */
export const MAX_MAXACTIVE = 4096;
export const MAX_DATA_SIZE = 4096;

const KIND_HANDLERS: Record<ProbeKindName, readonly HandlerKind[]> = {
  kprobe: ['pre', 'post', 'fault'],
  kretprobe: ['entry', 'return'],
  jprobe: ['jprobe'],
  // today's uprobe_consumer has a handler (pre) and no post_handler; fault runs for a fault in pre
  uprobe: ['pre', 'fault'],
  uretprobe: ['entry', 'return'],
  kwatch: ['kwatch'],
};

const ATTRS: Record<string, readonly ProbeKindName[]> = {
  maxactive: ['kretprobe'],
  data_size: ['kretprobe'],
  disabled: ['kprobe', 'kretprobe', 'jprobe', 'uprobe', 'uretprobe', 'kwatch'],
  len: ['kwatch'],
  type: ['kwatch'],
};

function compileOpts(opts: CheckOptions): CompileOptions {
  const arch = opts.imageArch;
  return {
    regNames: opts.regNames,
    // worked out once for the file, not once per handler
    argRegs: argRegsOf({ regNames: opts.regNames, argRegs: opts.argRegs, arch }),
    charSigned: charSignedOf({ arch }),
    arch,
    symbolExists: opts.symbolExists,
    functionExists: opts.functionExists,
    stepBudget: opts.stepBudget,
    programType: opts.programType,
  };
}

/**
 * The register a pre handler assigns to change the execution path, when
 * such a change can be lost to jump optimization on this arch (undefined
 * when the arch has no optprobes or is unknown).
 */
function optimizablePcReg(opts: CheckOptions): string | undefined {
  const f = opts.imageArch !== undefined ? abiFactsFor(opts.imageArch) : abiFactsForRegs(opts.regNames);
  return f?.optprobes ? f.pcReg : undefined;
}

/** Warning text for a pre handler that assigns the pc of a kprobe that may be jump-optimized. */
export function ignoredPcWriteMessage(pcReg: string): string {
  return `this pre handler assigns regs->${pcReg}, but the change is ignored once the probe is jump-optimized `
    + '(the optimizer replaces the breakpoint shortly after registration): add an empty `post {}` handler, '
    + 'which keeps the probe from being optimized, or run with --sysctl debug.kprobes_optimization=0';
}

/**
 * What an unknown target symbol is: 'error' for an editor (checkProbeFile:
 * the probe cannot work), 'register' when the probes are compiled to be
 * registered (compileProbeFile: the probe is kept and its registration fails
 * with -ENOENT, like any other errno failure, while the other probes register).
 */
type UnknownTargets = 'error' | 'register';

function analyze(file: ProbeFileAst, opts: CheckOptions, unknownTargets: UnknownTargets): { diagnostics: Diagnostic[]; probes: ProbeSpec[] } {
  const a = analyzer(opts, unknownTargets);
  for (const pr of file.probes) a.add(pr);
  return a;
}

/**
 * The checks and compilation of probes given one by one in file order
 * (`add`; true when the probe compiled into a spec), gathering their
 * diagnostics and specs as analyze does for a whole file.
 */
function analyzer(opts: CheckOptions, unknownTargets: UnknownTargets, shared?: SnippetCache): { diagnostics: Diagnostic[]; probes: ProbeSpec[]; add(pr: ProbeAst): boolean } {
  const diagnostics: Diagnostic[] = [];
  const probes: ProbeSpec[] = [];
  const copts = compileOpts(opts);
  const pcReg = optimizablePcReg(opts);
  const jprobeTargets = new Map<string, number>();
  const add = (pr: ProbeAst): boolean => {
    const mine: Diagnostic[] = [];
    const err = (span: Span, msg: string): void => { mine.push(diagAt(span, msg)); };
    const warn = (span: Span, msg: string): void => { mine.push(diagAt(span, msg, 'warning')); };
    checkTarget(pr, opts, unknownTargets, err);
    checkEventArch(pr, opts, err);
    const attrs = checkAttrs(pr, err);
    if (pr.kind === 'kwatch') {
      if (!pr.attrs.some(a => a.name === 'len')) err(pr.span, `a kwatch needs len=N: the number of bytes to watch (1, 2, 4 or 8), e.g. kwatch ${pr.targetText || 'jiffies'} len=8 type=w`);
      if (!pr.attrs.some(a => a.name === 'type')) err(pr.span, 'a kwatch needs type=w|rw|x (r where the CPU can watch reads only): what access to watch');
      if (pr.batch) err(pr.span, 'a kwatch cannot be in a batch (register_kprobes registers kprobes; register_kwatch is one call per watchpoint)');
    }
    const handlers: Partial<Record<HandlerKind, CompiledHandler>> = {};
    // the handler kinds so far with their lines (a probe has a handful: an array, no Map per probe)
    const seen: { kind: string; line: number }[] = [];
    let usesRiData = false;
    let prePcWrite: Span | undefined;
    for (const h of pr.handlers) {
      const allowed = KIND_HANDLERS[pr.kind];
      if (!allowed.includes(h.kind as HandlerKind)) {
        const owner = (Object.keys(KIND_HANDLERS) as ProbeKindName[]).find(k => KIND_HANDLERS[k].includes(h.kind as HandlerKind) && k !== 'jprobe');
        err(h.span, owner
          ? `'${h.kind}' handlers belong to ${owner}s; a ${pr.kind} has ${allowed.join(', ')} handlers`
          : `unknown handler kind '${h.kind}' (a ${pr.kind} has ${allowed.join(', ')} handlers)`);
        continue;
      }
      const prev = seen.find(x => x.kind === h.kind)?.line;
      if (prev !== undefined) { err(h.span, `duplicate '${h.kind}' handler (the first is at line ${prev})`); continue; }
      seen.push({ kind: h.kind, line: h.span.line });
      // at the probed instruction (before it runs), the program's names in scope there
      // (looked up at the snippet's first name that is none of its own: a snippet naming nothing costs no DWARF scope walk)
      const atPc = h.kind === 'pre' || h.kind === 'entry' || h.kind === 'jprobe';
      const target = pr.target;
      const names = (): ((name: string) => ProgramName | undefined) | undefined => {
        const namesFor = atPc && target && opts.programNamesFor ? opts.programNamesFor : undefined;
        return namesFor && target ? lazyNames(() => namesFor(target) ?? opts.programGlobals) : opts.programGlobals;
      };
      // a handler text seen before shares that compile where it can (sharedSnippets.ts)
      const at = h.text;
      const r = shared !== undefined && at !== undefined && h.body.k === 'body'
        ? shared.compile(at, at.tokens, h.body, h.body.body, h.kind as HandlerKind, copts, names)
        : compileSnippetAst(h.body, h.kind as HandlerKind, copts, [], names());
      mine.push(...r.diagnostics);
      if (r.used.has('ri->data')) usesRiData = true;
      if (h.kind === 'pre' && pcReg !== undefined) prePcWrite = r.regWrites.get(pcReg);
      if (r.handler) handlers[h.kind as HandlerKind] = r.handler;
    }
    // optimized probes ignore a pre_handler's change of the pc; a post handler keeps a probe from being optimized
    if (pr.kind === 'kprobe' && pcReg !== undefined && prePcWrite && !seen.some(x => x.kind === 'post')) warn(prePcWrite, ignoredPcWriteMessage(pcReg));
    if (pr.handlers.length === 0 && pr.kind !== 'jprobe' && pr.kind !== 'kwatch' && !pr.event) warn(pr.span, `this ${pr.kind} has no handlers`);
    if (pr.kind === 'kretprobe' && usesRiData && !attrs.data_size) warn(pr.span, 'a handler uses ri->data but data_size is 0; set data_size=N');
    if (pr.kind === 'jprobe' && pr.target) {
      const key = targetKey(pr.target);
      const first = jprobeTargets.get(key);
      if (first !== undefined) err(pr.targetSpan, `only one jprobe per function: another jprobe on '${pr.targetText}' is at line ${first}`);
      else jprobeTargets.set(key, pr.span.line);
    }
    diagnostics.push(...mine);
    if (!pr.target || mine.some(d => d.severity === 'error')) return false;
    const batch = pr.batch ? { index: pr.batch.index, line: pr.batch.span.line, column: pr.batch.span.column, size: pr.batch.size } : undefined;
    probes.push({ kind: pr.kind, target: pr.target, attrs, handlers, line: pr.span.line, column: pr.span.column, batch, event: pr.event });
    return true;
  };
  return { diagnostics, probes, add };
}

/** A name lookup made at its first use (then kept). */
function lazyNames(make: () => ((name: string) => ProgramName | undefined) | undefined): (name: string) => ProgramName | undefined {
  let names: ((name: string) => ProgramName | undefined) | undefined | null = null;
  return name => {
    if (names === null) names = make();
    return names?.(name);
  };
}

/** a kprobe_events / uprobe_events line's registers (the image's arch) and @SYM symbols, at their columns */
function checkEventArch(pr: ProbeAst, opts: CheckOptions, err: (s: Span, m: string) => void): void {
  const def = pr.event?.def;
  if (!def) return;
  const port = opts.imageArch !== undefined ? portByName(opts.imageArch) : undefined;
  const arch = { name: opts.imageArch ?? 'this image', regs: opts.regNames.map(name => ({ name, bits: 64, group: 'general' as const })), regAliases: port?.regAliases, abi: { pointerSize: 8 } };
  for (const e of resolveEventArch(def, arch, def.subsystem === 'kprobe' ? opts.symbolExists : undefined)) {
    const column = pr.span.column + e.column - 1;
    err({ line: pr.span.line, column, endLine: pr.span.line, endColumn: column + 1 }, e.message);
  }
}

function targetKey(t: ProbeTarget): string {
  switch (t.kind) {
    case 'symbol': return `s:${t.name}+${t.offset}`;
    case 'address': return `a:${t.addr}`;
    case 'line': return `l:${t.file}:${t.line}`;
    case 'user': return `u:${t.path}:${t.symbol ?? ''}+${t.offset ?? t.symOffset ?? 0n}`;
  }
}

/** "unknown symbol 'do_frok' in the image (did you mean 'do_fork'?)" */
export function unknownSymbolMessage(name: string, similar: readonly string[] = []): string {
  return `unknown symbol '${name}' in the image${didYouMean(similar)}`;
}

function checkTarget(pr: ProbeAst, opts: CheckOptions, unknownTargets: UnknownTargets, err: (s: Span, m: string) => void): void {
  const t = pr.target;
  if (!t) return;
  const user = USER_PROBE_KINDS.includes(pr.kind);
  if (user !== (t.kind === 'user')) {
    err(pr.targetSpan, user
      ? `a ${pr.kind} is placed in a user program: PATH:0xOFFSET or PATH:symbol[+off], not ${pr.targetText}`
      : `a ${pr.kind} is placed in the kernel image; ${pr.targetText} names a user program (use uprobe / uretprobe)`);
    return;
  }
  if (t.kind === 'user') {
    if (!t.path.startsWith('/')) err(pr.targetSpan, `the program's path must be absolute in the machine's filesystem (e.g. /bin/app), not '${t.path}'`);
    if (pr.kind === 'uretprobe' && t.symbol !== undefined && t.symOffset !== 0n) err(pr.targetSpan, `a uretprobe must be placed at a function entry (offset 0), not ${pr.targetText}`);
    return;
  }
  if (pr.kind === 'kwatch') {
    if (t.kind === 'line') err(pr.targetSpan, `a kwatch watches memory: a symbol, symbol+offset or 0xaddress, not the source line ${pr.targetText}`);
    else if (t.kind === 'address' && t.addr === 0n) err(pr.targetSpan, 'watch address 0 is not valid');
    else if (t.kind === 'symbol' && t.addr !== undefined) err(pr.targetSpan, `a kwatch takes a symbol or an address, not both (${pr.targetText})`);
    else if (t.kind === 'symbol' && unknownTargets === 'error' && opts.symbolExists && !opts.symbolExists(t.name)) err(pr.targetSpan, unknownSymbolMessage(t.name, opts.similarSymbols?.(t.name)));
    return;
  }
  if (t.kind === 'symbol') {
    // an event's MOD:SYM waits for its module (trace_kprobe accepts it while MOD is not loaded)
    if (unknownTargets === 'error' && opts.symbolExists && !opts.symbolExists(t.name) && moduleSymbol(t.name).module === undefined) {
      err(pr.targetSpan, unknownSymbolMessage(t.name, opts.similarSymbols?.(t.name)));
    }
    if (t.offset !== 0n && pr.kind !== 'kprobe') err(pr.targetSpan, `a ${pr.kind} must be placed at a function entry (offset 0), not ${pr.targetText}`);
  } else if (t.kind === 'address') {
    if (t.addr === 0n) err(pr.targetSpan, 'probe address 0 is not valid');
  } else if (pr.kind !== 'kprobe') {
    err(pr.targetSpan, `a ${pr.kind} must be placed on a function (symbol or address), not a source line`);
  }
}

/** the attributes of every probe that has none: one shared, frozen object (nothing writes a spec's attributes) */
const NO_ATTRS: ProbeSpec['attrs'] = Object.freeze({});

function checkAttrs(pr: ProbeAst, err: (s: Span, m: string) => void): ProbeSpec['attrs'] {
  if (pr.attrs.length === 0) return NO_ATTRS;
  const out: ProbeSpec['attrs'] = {};
  const seen = new Set<string>();
  for (const a of pr.attrs) {
    const kinds = ATTRS[a.name];
    if (!kinds) { err(a.span, `unknown attribute '${a.name}' (known: ${Object.keys(ATTRS).filter(k => ATTRS[k].includes(pr.kind)).join(', ')})`); continue; }
    if (!kinds.includes(pr.kind)) { err(a.span, `attribute '${a.name}' only applies to ${kinds.join('/')}s`); continue; }
    if (seen.has(a.name)) { err(a.span, `duplicate attribute '${a.name}'`); continue; }
    seen.add(a.name);
    const vspan = a.valueSpan ?? a.span;
    if (a.name === 'type') {
      const ty = a.value !== undefined ? KWATCH_TYPES[a.value] : undefined;
      if (a.value === undefined) err(a.span, "attribute 'type' needs a value: type=w (writes), type=rw (reads and writes), type=x (execution) or type=r (reads, where the CPU can)");
      else if (!ty) err(vspan, `unknown kwatch type '${a.value}' (expected w, rw, x or r; or the DR7 codes 1, 3, 0)`);
      else out.type = ty;
      continue;
    }
    if (a.name === 'len') {
      if (a.value === undefined) { err(a.span, "attribute 'len' needs a value: the number of bytes to watch, e.g. len=8"); continue; }
      if (!/^(0[xX][0-9a-fA-F]+|[0-9]+)$/.test(a.value)) { err(vspan, `'len' must be a number of bytes (1, 2, 4 or 8), not '${a.value}'`); continue; }
      const n = BigInt(a.value);
      if (n === 0n || n > BigInt(MAX_KWATCH_LEN)) { err(vspan, `'len' of ${n} is out of range: a debug register watches 1 to ${MAX_KWATCH_LEN} bytes`); continue; }
      out.len = Number(n);
      continue;
    }
    if (a.name === 'disabled') {
      if (a.value === undefined || a.value === 'true' || a.value === '1') out.disabled = true;
      else if (a.value === 'false' || a.value === '0') out.disabled = false;
      else err(vspan, `'disabled' takes true or false, not '${a.value}'`);
      continue;
    }
    const max = a.name === 'maxactive' ? MAX_MAXACTIVE : MAX_DATA_SIZE;
    if (a.value === undefined) { err(a.span, `attribute '${a.name}' needs a value, e.g. ${a.name}=${a.name === 'maxactive' ? 20 : 8}`); continue; }
    // maxactive: any value <= 0 asks for the default, as register_kretprobe() does (max(10, 2 * NR_CPUS))
    const neg = a.name === 'maxactive' && a.value.startsWith('-');
    const digits = neg ? a.value.slice(1) : a.value;
    if (!/^(0[xX][0-9a-fA-F]+|[0-9]+)$/.test(digits)) {
      err(vspan, a.name === 'maxactive' ? `'maxactive' must be an integer (<= 0: the default), not '${a.value}'` : `'${a.name}' must be a non-negative integer, not '${a.value}'`);
      continue;
    }
    const v = neg ? 0n : BigInt(digits);
    if (v > BigInt(max)) { err(vspan, `'${a.name}' of ${v} is too large (at most ${max})`); continue; }
    if (a.name === 'maxactive') out.maxactive = Number(v);
    else out.data_size = Number(v);
  }
  return out;
}

/** Semantic diagnostics of a parsed probe file (handler snippets included). */
export function checkProbeFile(file: ProbeFileAst, opts: CheckOptions): Diagnostic[] {
  return analyze(file, opts, 'error').diagnostics;
}

/**
 * Parse, check and compile a .kprobe file. Probes with errors are left out of
 * `probes` (their diagnostics explain why); the others are ready to register.
 * A target symbol the image does not have is no compile error here: that
 * probe's registration fails with -ENOENT (kprobe_addr()), the others register.
 */
export function compileProbeFile(text: string, fileName: string, opts: CheckOptions): { probes: ProbeSpec[]; diagnostics: Diagnostic[]; image?: string } {
  // each probe is checked and compiled as soon as the parser hands it on (its tree then dies young);
  // the lines its whole text spans are kept beside its spec for the syntax-error filter below
  const shared = new SnippetCache(text);
  const r = analyzer(opts, 'register', shared);
  const first: number[] = [], last: number[] = [];
  const parsed = parseProbeFileTaking(text, fileName, opts.programType, pr => {
    if (r.add(pr)) { first.push(pr.fullSpan.line); last.push(pr.fullSpan.endLine); }
  }, (kind, start) => shared.knownBody(kind, start));
  const bad = [...new Set(parsed.diagnostics.filter(d => d.severity === 'error').map(d => d.line))];
  // a probe whose text holds a syntax error is not registered either
  const probes = bad.length === 0 ? r.probes : r.probes.filter((_p, i) => !bad.some(l => l >= first[i] && l <= last[i]));
  return { probes, diagnostics: [...parsed.diagnostics, ...r.diagnostics], image: parsed.file.image?.path };
}
