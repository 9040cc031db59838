/**
 * The one breakpoint resolver: what a debugger asks for (a source line, a
 * function text, an instruction address) and in which mode -> where the
 * probe goes (a structured target for the probe manager: a kernel file and
 * line, a symbol, an address, a user program's file offset) or why not.
 *
 *   source line in the kernel (or a loaded module)  -> that line, else the next line with code
 *                                                      (kretprobe: the function holding it)
 *   source line in a user program of the filesystem -> a uprobe at the line's (or the next
 *                                                      line's) file offset past the prologue
 *                                                      (uretprobe: the function holding it)
 *   no line information anywhere                    -> a reason; `pending` when a module loaded
 *                                                      later may bring the file
 *   function text ("do_fork+0x4", "r:sys_open",
 *   a kprobe_events definition)                      -> its target, mode and event definition
 *   instruction address                             -> that address
 *
 * The probe manager registers the target as given (no second resolution
 * round trip through the front end).
 */
import type { ArchOps } from '../arch/types';
import type { ElfImage } from '../elf/types';
import type { ProbeTarget } from '../handlers';
import { parseBreakpointTarget, resolveTarget } from '../probes';
import type { ProbeSite } from '../probes';
import type { BreakpointMode, ProbeEntry } from '../probes';
import type { UserProgram, UserPrograms } from './userPrograms';

const PT_LOAD = 1;

/** What a breakpoint asks for. `mode` is the client's word (kprobe unless it names another). */
export type BreakpointRequestSpec =
  | { kind: 'source'; path: string; line: number; mode?: string }
  | { kind: 'function'; text: string; mode?: string }
  | { kind: 'instruction'; addr: bigint; mode?: string };

export type BreakpointResolution =
  | {
    ok: true;
    target: ProbeTarget;
    mode: BreakpointMode;
    /** a kprobe_events definition as written (its event, fetch args and mode; the manager parses it) */
    definition?: string;
    /** source: the line the breakpoint is on (the next line with code when the asked one has none) */
    line?: number;
    /** source: the probe is at the function's entry but the breakpoint stays on the asked line (kretprobe) */
    keepsLine?: boolean;
    /** the target's sites, when resolving it already found them (the probe manager then does not resolve it again) */
    sites?: readonly ProbeSite[];
  }
  | {
    ok: false;
    message: string;
    /** no line information yet: a module loaded later may have the file (registered, verified then) */
    pending?: ProbeTarget;
    /** the reason is a line without code in a known file, not an unknown file */
    noCode?: boolean;
  };

/** A breakpoint resolved and registered: the resolution with the probe manager's entry (a pending one too). */
export type BreakpointPlacement =
  | (Extract<BreakpointResolution, { ok: true }> & { entry: ProbeEntry })
  | { ok: false; message: string; pending?: { target: ProbeTarget; entry: ProbeEntry } };

/** What a breakpoint adds to where it is: a condition, a hit condition, a log message (the handler language compiles them). */
export interface BreakpointParts {
  condition?: string;
  hitCondition?: string;
  logMessage?: string;
}

/** What the resolver reads of the machine. */
export interface ResolverContext {
  image: ElfImage;
  /** whether a front end's path names the same file as a DWARF file name */
  same(path: string, dwarfFile: string): boolean;
  arch: ArchOps;
  /** null: no uprobes engine on this machine */
  userPrograms: UserPrograms | null;
  /** false: the machine has no module support (no breakpoint can wait for one) */
  modulesSupported: boolean;
}

/** The breakpoint mode a client's `mode` asks for (kprobe unless it names another). */
export function breakpointModeOf(mode: string | undefined, fallback: BreakpointMode = 'kprobe'): BreakpointMode {
  return mode === 'kretprobe' || mode === 'hardware' || mode === 'kprobe' ? mode : fallback;
}

const baseName = (p: string): string | undefined => p.split(/[\\/]/).pop();

export function resolveBreakpoint(ctx: ResolverContext, spec: BreakpointRequestSpec): BreakpointResolution {
  switch (spec.kind) {
    case 'source': return resolveSource(ctx, spec);
    case 'function': {
      // user text: "do_fork", "do_fork+0x4", "r:sys_open", "0xffffffff81000010", or a kprobe_events definition
      // ("p:myopen sys_open path=+0(%di):string": traces, never stops), checked against the image's registers and symbols
      const symbols = ctx.image.symbols;
      const t = parseBreakpointTarget(spec.text, ctx.arch, n => symbols.lookup(n) !== undefined);
      if (typeof t === 'string') return { ok: false, message: t };
      // an event's mode is its definition's (p or r)
      const mode: BreakpointMode = t.event ? t.mode ?? 'kprobe' : breakpointModeOf(spec.mode, t.mode ?? 'kprobe');
      return { ok: true, target: t.target, mode, definition: t.event ? spec.text : undefined };
    }
    case 'instruction':
      return { ok: true, target: { kind: 'address', addr: spec.addr }, mode: breakpointModeOf(spec.mode) };
  }
}

/** The DWARF file name of the kernel image (and loaded modules) that names the client's file. */
export function kernelFileFor(image: ElfImage, same: (dwarfFile: string) => boolean): string | undefined {
  return (image.lines?.files() ?? []).find(same);
}

function resolveSource(ctx: ResolverContext, spec: Extract<BreakpointRequestSpec, { kind: 'source' }>): BreakpointResolution {
  const { line } = spec;
  const file = kernelFileFor(ctx.image, f => ctx.same(spec.path, f));
  if (!file) return resolveUserLine(ctx, spec);
  if (spec.mode === 'kretprobe') {
    const fn = functionAtLine(ctx.image, file, line);
    if (!fn) return { ok: false, message: `no code at ${baseName(spec.path)}:${line} (or below it) for a kretprobe`, noCode: true };
    return { ok: true, target: { kind: 'symbol', name: fn, offset: 0n }, mode: 'kretprobe', line, keepsLine: true };
  }
  // a line without code: the next line with code (as gdb moves a breakpoint)
  let r = resolveTarget(ctx.image, { kind: 'line', file, line });
  const at = !r.ok && r.nextLine !== undefined ? r.nextLine : line;
  if (at !== line) r = resolveTarget(ctx.image, { kind: 'line', file, line: at });
  return { ok: true, target: { kind: 'line', file, line: at }, mode: breakpointModeOf(spec.mode), line: at, sites: r.ok ? r.sites : undefined };
}

/** The addresses of a source line's code, else of the next line with code (where gdb moves a breakpoint). */
function codeAtOrAfter(lines: NonNullable<ElfImage['lines']>, file: string, line: number): { line: number; addrs: bigint[] } | undefined {
  const addrs = lines.addressesForLine(file, line);
  if (addrs.length) return { line, addrs };
  const next = lines.nextLineWithCode(file, line);
  return next === undefined ? undefined : { line: next, addrs: lines.addressesForLine(file, next) };
}

/** The function symbol whose code holds a source line (or the next line with code). */
function functionAtLine(image: ElfImage, file: string, line: number): string | undefined {
  const code = image.lines ? codeAtOrAfter(image.lines, file, line) : undefined;
  const at = code?.addrs.length ? image.symbols.resolve(code.addrs[0]) : undefined;
  return at?.sym.name;
}

/**
 * A source line of a user program in the machine's filesystem (its DWARF
 * names the file) as a uprobe target: the program's path and the file
 * offset of the line's (or the next line's) code; why not, otherwise.
 */
function resolveUserLine(ctx: ResolverContext, spec: Extract<BreakpointRequestSpec, { kind: 'source' }>): BreakpointResolution {
  const { path, line } = spec;
  const name = baseName(path);
  const failed = (message: string, noCode = false): BreakpointResolution => {
    if (ctx.modulesSupported && !noCode) {
      // pending: a module loaded later may have this file (verified then)
      return {
        ok: false, pending: { kind: 'line', file: path, line },
        message: `pending: no line information for ${name} in the kernel, its programs or its loaded modules (verified when a module with it is loaded)`,
      };
    }
    return { ok: false, message, noCode };
  };
  const progs = ctx.userPrograms;
  if (!progs) return failed(`no line information for ${path} in the kernel image`);
  const found = progs.programFor(f => ctx.same(path, f));
  if (!found) return failed(`no line information for ${path} in the kernel image or in a program of the machine's filesystem`);
  const site = userLineSite(found.program, found.file, line);
  if (!site) return failed(`no code at ${name}:${line} (or below it) in ${found.program.path}`, true);
  if (spec.mode === 'hardware') {
    return { ok: false, message: 'hardware breakpoints are kernel breakpoints: a user program line takes a kprobe-mode breakpoint (a uprobe)' };
  }
  if (spec.mode === 'kretprobe') {
    // a uretprobe on the function holding the line (its entry)
    const fn = found.program.image.symbols.resolve(site.vaddr);
    if (!fn || fn.sym.type !== 'func') return failed(`no function holds ${name}:${line} in ${found.program.path} for a return breakpoint`);
    return { ok: true, target: { kind: 'user', path: found.program.path, symbol: fn.sym.name, symOffset: 0n }, mode: 'kretprobe', line };
  }
  return { ok: true, target: { kind: 'user', path: found.program.path, offset: site.offset }, mode: 'kprobe', line: site.line };
}

/** A source line of a user program as a uprobe target. */
export interface UserLineSite {
  program: UserProgram;
  /** the line that has code (the asked line, or the next one with code) */
  line: number;
  vaddr: bigint;
  offset: bigint;
}

/** Where the code of `file:line` (or the next line with code) is in a user program, as a file offset. */
function userLineSite(program: UserProgram, file: string, line: number): UserLineSite | undefined {
  const code = program.image.lines ? codeAtOrAfter(program.image.lines, file, line) : undefined;
  if (!code) return undefined;
  const at = code.line;
  const addrs = code.addrs;
  const sorted = [...addrs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let vaddr = sorted[0];
  if (vaddr === undefined) return undefined;
  // a function's first line: past the prologue, where the line table has the line again (gdb's
  // skip_prologue_using_sal), so that the parameters are in their homes when the breakpoint stops
  const fn = program.image.symbols.resolve(vaddr);
  if (fn && fn.offset === 0n && fn.sym.type === 'func') {
    const next = sorted.find(a => a > vaddr && a < fn.sym.value + (fn.sym.size || 1n));
    if (next !== undefined) vaddr = next;
  }
  const seg = program.image.segments.find(s => s.type === PT_LOAD && vaddr >= s.vaddr && vaddr < s.vaddr + s.filesz);
  if (!seg) return undefined;
  return { program, line: at, vaddr, offset: vaddr - seg.vaddr + seg.offset };
}
