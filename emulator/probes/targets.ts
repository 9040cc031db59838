/**
 * Probe targets -> probe sites. A target is what a user writes (probe file,
 * DAP breakpoint); a site is what one engine registration gets:
 *
 *   symbol / symbol+0xoff -> one site carrying symbol_name + offset, so the
 *                            engine's own kprobe_addr() rules (-ENOENT for an
 *                            unknown symbol, -EINVAL...) apply unchanged;
 *   0xaddress             -> one site at that exact 64-bit address;
 *   file.c:line           -> one site per DWARF is_stmt address of the line
 *                            (a line without code is an error naming the next
 *                            line that has code).
 */
import type { ElfImage } from '../elf/types';
import { hex } from '../memory/address';
import { parseTarget, ProbeTarget } from '../handlers';
import { moduleSymbol, parseEventDefinition, resolveEventArch, looksLikeEventDefinition } from '../tracing/events/parse';
import type { EventArch } from '../tracing/events/parse';
import type { TraceEventEntry } from '../tracing/events/profile';

/** One place an engine probe goes. Exactly one of symbol_name / addr is set. */
export interface ProbeSite {
  symbol_name?: string;
  offset?: bigint;
  addr?: bigint;
  /** the address the site resolves to in the image, when known (symbol sites: undefined if the symbol is unknown) */
  resolved?: bigint;
}

export type TargetResolution =
  | { ok: true; sites: ProbeSite[] }
  | { ok: false; message: string; nextLine?: number };

/** Text of a target as users write it ("do_fork+0x4", "0xffffffff81000010", "fork.c:30"). */
export function targetText(t: ProbeTarget): string {
  switch (t.kind) {
    case 'symbol': return (t.offset ? `${t.name}+0x${t.offset.toString(16)}` : t.name) + (t.addr !== undefined ? `@${hex(t.addr)}` : '');
    case 'address': return hex(t.addr);
    case 'line': return `${t.file}:${t.line}`;
    case 'user': return `${t.path}:${t.symbol !== undefined ? (t.symOffset ? `${t.symbol}+0x${t.symOffset.toString(16)}` : t.symbol) : `0x${(t.offset ?? 0n).toString(16)}`}`;
  }
}

/** Parse a target text; a clear error when it is none of the four forms. */
export function parseTargetText(text: string): ProbeTarget | string {
  const t = parseTarget(text.trim());
  return t ?? `invalid probe target '${text}' (expected symbol, symbol+offset, 0xaddress or file.c:line)`;
}

/** A parsed breakpoint target: where, the mode its prefix asks for, and for a kprobe_events definition its event. */
export interface BreakpointTargetParse {
  target: ProbeTarget;
  mode?: 'kprobe' | 'kretprobe';
  /** a kprobe_events / uprobe_events definition: the event (its hits write trace lines; the breakpoint never stops) */
  event?: TraceEventEntry;
}

/**
 * A breakpoint target as a user types it (a function breakpoint, a CLI
 * argument): "do_fork", "do_fork+0x4", "0xffffffff81000010", "fork.c:30",
 * optionally prefixed "r:" (kretprobe) or "p:"/"k:" (kprobe), perf-probe
 * style; or a whole kprobe_events definition (Linux
 * Documentation/trace/kprobetrace.rst):
 *
 *   p:myprobe do_sys_open dfd=%ax filename=+0(%di):string
 *   r10:myretprobe do_sys_open $retval
 *   p /bin/app:0x1136 %di                     (uprobe_events)
 *
 * A definition makes an event breakpoint: each hit writes the kernel's
 * trace line for the event to the console and the machine does not stop
 * (a condition and hit condition still filter hits). `-:EVENT` is refused:
 * a function breakpoint is removed by deleting it. `arch` checks the
 * definition's %REG names (and `symbolExists` its @SYM symbols); errors
 * name the 1-based column. A clear error when the text is none of these.
 */
export function parseBreakpointTarget(text: string, arch?: EventArch, symbolExists?: (name: string) => boolean): BreakpointTargetParse | string {
  const m = /^\s*([rkp]):(\S*)\s*$/.exec(text);
  const plain = m ? parseTargetText(m[2]) : undefined;
  if (m && typeof plain !== 'string' && plain) return { target: plain, mode: m[1] === 'r' ? 'kretprobe' : 'kprobe' };
  if (!looksLikeEventDefinition(text)) {
    const t = parseTargetText(m ? m[2] : text);
    if (typeof t === 'string') return t;
    return m ? { target: t, mode: m[1] === 'r' ? 'kretprobe' : 'kprobe' } : { target: t };
  }
  const lead = text.length - text.trimStart().length;
  const at = (column: number, message: string): string => `kprobe_events: column ${column + lead}: ${message}`;
  const r = parseEventDefinition(text.trim(), { arch });
  if (!r.ok) return at(r.error.column, r.error.message);
  const def = r.cmd;
  if (def.op === 'remove') return at(1, `-:${def.group ? `${def.group}/` : ''}${def.event} removes an event in tracefs; to remove an event breakpoint, delete the breakpoint`);
  if (arch) {
    const errs = resolveEventArch(def, arch, def.subsystem === 'kprobe' ? symbolExists : undefined);
    if (errs.length) return at(errs[0].column, errs[0].message);
  }
  const t = def.target;
  const target: ProbeTarget = t.kind === 'symbol' ? { kind: 'symbol', name: moduleSymbol(t).symbol, offset: t.offset } : t.kind === 'address' ? { kind: 'address', addr: t.addr } : { ...t };
  return { target, mode: def.type === 'r' ? 'kretprobe' : 'kprobe', event: { def, nhit: 0, nmissed: () => 0, live: () => false } };
}

/** Spellings of a source path to try against the line table: as written, then without leading ./ and ../ parts. */
function pathCandidates(file: string): string[] {
  const out = [file];
  const stripped = file.replace(/\\/g, '/').replace(/^(?:\.\.?\/)+/, '');
  if (stripped && stripped !== file) out.push(stripped);
  return out;
}

/** Resolve a target against an image. */
export function resolveTarget(image: ElfImage, t: ProbeTarget): TargetResolution {
  switch (t.kind) {
    case 'symbol': {
      const s = image.symbols.lookup(t.name);
      const site: ProbeSite = { symbol_name: t.name, offset: t.offset, resolved: s ? BigInt.asUintN(64, s.value + t.offset) : undefined };
      if (t.addr !== undefined) site.addr = t.addr; // both: kprobe_addr() refuses it with -EINVAL
      return { ok: true, sites: [site] };
    }
    case 'address':
      if (t.addr === 0n) return { ok: false, message: 'probe address 0 is not valid' };
      return { ok: true, sites: [{ addr: t.addr, resolved: t.addr }] };
    case 'line': {
      const lines = image.lines;
      if (!lines) return { ok: false, message: `${image.path} has no line table (.debug_line): build it with -g to probe by source line` };
      for (const f of pathCandidates(t.file)) {
        const addrs = lines.addressesForLine(f, t.line);
        if (addrs.length) return { ok: true, sites: addrs.map(a => lineSite(image, a)) };
      }
      for (const f of pathCandidates(t.file)) {
        const next = lines.nextLineWithCode(f, t.line);
        if (next !== undefined) return { ok: false, message: `no code at ${t.file}:${t.line}; the next line with code is ${t.file}:${next}`, nextLine: next };
      }
      const known = lines.files().some(rec => pathCandidates(t.file).some(f => rec === f || rec.endsWith('/' + f)));
      return {
        ok: false,
        message: known
          ? `no code at or after ${t.file}:${t.line}`
          : `source file '${t.file}' is not in the line table of ${image.path}`,
      };
    }
    case 'user':
      return { ok: false, message: `${targetText(t)} is in a user program: a uprobe, not a kprobe` };
  }
}

/**
 * A source line's address as perf probe registers it: the function's
 * symbol_name + offset (p->symbol_name names the function), or the bare
 * address when no symbol holds it or its name is not unique (a static
 * function of the same name elsewhere: the name would find that one).
 */
function lineSite(image: ElfImage, a: bigint): ProbeSite {
  const r = image.symbols.resolve(a);
  if (r && r.sym.type === 'func' && image.symbols.lookup(r.sym.name)?.value === r.sym.value
    && image.symbols.all().filter(x => x.name === r.sym.name).length === 1) {
    return { symbol_name: r.sym.name, offset: r.offset, resolved: a };
  }
  return { addr: a, resolved: a };
}

/** "symbol+0xoff" of an address (kallsyms style), or its hex value. */
export function whereOf(image: ElfImage, addr: bigint): string {
  return image.symbols.format(addr, false);
}

/** "symbol+0xoff" of an address inside a kernel symbol, undefined elsewhere. */
export function symbolAt(image: ElfImage, addr: bigint): string | undefined {
  return image.symbols.resolve(addr) ? image.symbols.format(addr, false) : undefined;
}
