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

/**
 * A breakpoint target as a user types it (a function breakpoint, a CLI
 * argument): "do_fork", "do_fork+0x4", "0xffffffff81000010", "fork.c:30",
 * optionally prefixed "r:" (kretprobe) or "p:"/"k:" (kprobe), kprobe_events
 * and perf-probe style. A clear error when it is none of these.
 */
export function parseBreakpointTarget(text: string): { target: ProbeTarget; mode?: 'kprobe' | 'kretprobe' } | string {
  const m = /^\s*([rkp]):(.*)$/.exec(text);
  const t = parseTargetText(m ? m[2] : text);
  if (typeof t === 'string') return t;
  return m ? { target: t, mode: m[1] === 'r' ? 'kretprobe' : 'kprobe' } : { target: t };
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
