/**
 * Names and scopes from DWARF, without a frame: the DIEs holding a pc (the
 * subprogram, its lexical blocks, the inlined calls), the functions a pc
 * is in as gdb's backtrace shows them (inline frames), the parameters and
 * locals in scope there with their types and location expressions, and
 * globals / file statics by name. Reading only the debug info: the values
 * (memory, registers) are the debugger's (emulator/debug/variables.ts) and
 * the handler binding's (emulator/probes/programNames.ts).
 */
import type { ElfImage } from '../types';
import { DebugInfo, debugInfoOf } from './info';
import { DW_AT, Die, TAG } from './dies';
import { nameIndex } from './nameIndex';

/** Where to look a frame's scope up: its pc, which inline frame, the inline-entry rule. */
export interface ScopeAt {
  /** which function of the frame: 0 = the innermost inlined call holding pc, 1 = its caller... (default 0) */
  inlineDepth?: number;
  /**
   * At the first instruction of an inlined call, show the caller (gdb's
   * skip_inline_frames; default true). A stop at a line or instruction
   * breakpoint there shows the inlined function, as gdb does.
   */
  skipInlineEntry?: boolean;
}

/**
 * At the first instruction of an inlined call the call has not begun yet for
 * the user: the frame is the caller's (gdb's skip_inline_frames), and a
 * breakpoint on the caller shows the caller's variables there.
 */
function atInlineEntry(di: DebugInfo, d: Die, pc: bigint): boolean {
  return di.entryPc(d) === pc;
}

/**
 * The DIEs holding pc, outermost first: the subprogram, then the lexical
 * blocks and inlined subroutines nested in it (an inlined call at its first
 * instruction left out unless `skipInlineEntry` is false). Undefined when no
 * function of the unit covers pc.
 */
function scopeChain(di: DebugInfo, root: Die, pc: bigint, skipInlineEntry: boolean): Die[] | undefined {
  const holds = (d: Die): boolean => di.ranges(d).some(([lo, hi]) => pc >= lo && pc < hi);
  const chain: Die[] = [];
  const seen = new Set<Die>();
  let scope: Die | undefined = root.children.find(c => c.tag === TAG.subprogram && holds(c));
  while (scope && !seen.has(scope)) {
    seen.add(scope);
    chain.push(scope);
    scope = scope.children.find(c => (c.tag === TAG.lexical_block || (c.tag === TAG.inlined_subroutine && !(skipInlineEntry && atInlineEntry(di, c, pc)))) && holds(c));
  }
  return chain.length ? chain : undefined;
}

/**
 * A scope's children, with the parameters and variables of its abstract
 * origin that no concrete child stands for (an inlined call or an
 * out-of-line copy whose compiler dropped a variable it kept no location
 * for: gdb's inherit_abstract_dies shows them `<optimized out>`).
 */
export function scopeChildren(di: DebugInfo, d: Die): readonly Die[] {
  const origin = di.ref(d, DW_AT.abstract_origin);
  if (!origin || origin === d) return d.children;
  const covered = new Set<Die>();
  for (const c of d.children) { const o = di.ref(c, DW_AT.abstract_origin); if (o) covered.add(o); }
  const extra = origin.children.filter(c => (c.tag === TAG.formal_parameter || c.tag === TAG.variable) && !covered.has(c));
  return extra.length ? [...d.children, ...extra] : d.children;
}

/** The chain cut into one run of DIEs per function (the subprogram, then each inlined call), innermost first. */
function functionScopes(chain: readonly Die[]): Die[][] {
  const out: Die[][] = [];
  for (const d of chain) {
    if (d.tag === TAG.subprogram || d.tag === TAG.inlined_subroutine || !out.length) out.unshift([d]);
    else out[0].push(d);
  }
  return out;
}

/** The DIEs of the function a frame shows (its inline depth; the outermost when deeper than the chain). */
export function frameScope(di: DebugInfo, root: Die, pc: bigint, at: ScopeAt): Die[] | undefined {
  const chain = scopeChain(di, root, pc, at.skipInlineEntry !== false);
  if (!chain) return undefined;
  const fns = functionScopes(chain);
  return fns[Math.min(at.inlineDepth ?? 0, fns.length - 1)];
}

/** The subprogram (the physical function) holding pc. */
export function outermostFunction(di: DebugInfo, root: Die, pc: bigint): Die | undefined {
  return root.children.find(c => c.tag === TAG.subprogram && di.ranges(c).some(([lo, hi]) => pc >= lo && pc < hi));
}

/** One function of a physical frame: the innermost inlined call first, the real (outermost) function last. */
export interface InlineFrame {
  function: string;
  /** an inlined call (false for the physical frame's own function) */
  inlined: boolean;
  /**
   * Where this function is at pc when it is not the innermost: the source
   * position of the inlined call it made (the callee's DW_AT_call_file /
   * call_line / call_column).
   */
  call?: { file?: string; line: number; column: number };
}

/**
 * The functions a pc is in, innermost first, as gdb's backtrace shows a
 * physical frame: each inlined call holding pc (except, by default, one at
 * its first instruction), then the subprogram. Empty when no debug info
 * covers pc or it cannot be read.
 */
export function inlineFrames(image: ElfImage, pc: bigint, skipInlineEntry = true): InlineFrame[] {
  let di: DebugInfo;
  try { di = debugInfoOf(image); } catch { return []; }
  try {
    const u = di.unitFor(pc);
    const root = u ? di.root(u) : null;
    if (!u || !root) return [];
    const chain = scopeChain(di, root, pc, skipInlineEntry);
    if (!chain) return [];
    const fns = functionScopes(chain);
    const stmt = di.attr(root, DW_AT.stmt_list);
    // DWARF 4/5 write DW_AT_stmt_list as a section offset (DW_FORM_sec_offset); older producers as data4
    const unitLine = stmt && (stmt.kind === 'uint' || stmt.kind === 'secOffset') ? Number(stmt.value) : undefined;
    return fns.map((f, i) => {
      const head = f[0];
      const out: InlineFrame = { function: nameOf(di, head) ?? '?', inlined: head.tag === TAG.inlined_subroutine };
      const callee = i > 0 ? fns[i - 1][0] : undefined;
      const line = callee ? di.attr(callee, DW_AT.call_line) : undefined;
      if (callee && line?.kind === 'uint') {
        const fileAttr = di.attr(callee, DW_AT.call_file);
        const col = di.attr(callee, DW_AT.call_column);
        const file = fileAttr?.kind === 'uint' && unitLine !== undefined ? image.lines?.fileOf?.(unitLine, Number(fileAttr.value)) : undefined;
        out.call = { file, line: Number(line.value), column: col?.kind === 'uint' ? Number(col.value) : 0 };
      }
      return out;
    });
  } catch {
    return [];
  }
}

/** DW_AT_name, through DW_AT_abstract_origin / DW_AT_specification */
export function nameOf(di: DebugInfo, d: Die): string | undefined {
  for (let x: Die | undefined = d, i = 0; x && i < 8; i++) {
    const n = di.name(x);
    if (n !== undefined) return n;
    x = di.ref(x, DW_AT.abstract_origin) ?? di.ref(x, DW_AT.specification);
  }
  return undefined;
}

/** an attribute's DIE reference, through abstract_origin, or DW_AT_specification (a global defined apart from its declaration: DEFINE_PER_CPU after a header's DECLARE_PER_CPU) */
export function refOf(di: DebugInfo, d: Die, at: number): Die | undefined {
  for (let x: Die | undefined = d, i = 0; x && i < 8; i++) {
    const r = di.ref(x, at);
    if (r) return r;
    x = di.ref(x, DW_AT.abstract_origin) ?? di.ref(x, DW_AT.specification);
  }
  return undefined;
}

/**
 * The DIE of a global or file-static variable by name: a definition with a
 * location (or a constant) in the unit holding pc first, then in the other
 * units, else one the compiler left without (optimized out).
 */
export function globalDie(image: ElfImage, name: string, pc?: bigint): { di: DebugInfo; unit: Die['unit']; die: Die } | undefined {
  const di = debugInfoOf(image);
  const first = pc !== undefined ? di.unitFor(pc) : undefined;
  const local = (withLocation: boolean): Die | undefined => first && !first.error
    ? di.root(first)?.children.find(c => c.tag === TAG.variable && nameOf(di, c) === name && !c.attrs.has(DW_AT.declaration)
      && (!withLocation || c.attrs.has(DW_AT.location) || c.attrs.has(DW_AT.const_value)))
    : undefined;
  // the other units through the program's name index (no unit's tree is read to find it)
  const defs = nameIndex(di).variables.get(name) ?? [];
  for (const withLocation of [true, false]) {
    const d = local(withLocation) ?? (() => {
      const hit = defs.find(x => (!withLocation || x.located) && !(first && x.offset >= first.dieOffset && x.offset < first.end));
      return hit ? di.dieAt(hit.offset) : undefined;
    })();
    if (d) return { di, unit: d.unit, die: d };
  }
  return undefined;
}

/** A DWARF name in scope at a pc: its DIE, type and location expression there (undefined: optimized out) */
export interface ScopedName {
  name: string;
  die: Die;
  kind: 'param' | 'local';
  type: Die | undefined;
  /** the location expression in effect at the pc; undefined when optimized out there */
  expr: Uint8Array | undefined;
  /** a constant value (DW_AT_const_value) instead of a location */
  constValue?: bigint;
}

/**
 * The parameters and locals in scope at a pc without a frame (what a probe
 * handler compiled for that pc can name), with the function's name; undefined
 * when no debug info covers the pc.
 */
export function namesAt(image: ElfImage, pc: bigint, at: ScopeAt = {}):
  { function: string; di: DebugInfo; names: Map<string, ScopedName>; frameBase?: Uint8Array } | undefined {
  const di = debugInfoOf(image);
  const u = di.unitFor(pc);
  const root = u ? di.root(u) : null;
  if (!u || !root) return undefined;
  const chain = frameScope(di, root, pc, at);
  if (!chain) return undefined;
  const paramOwner = chain[0];
  const names = new Map<string, ScopedName>();
  for (const d of chain) {
    for (const c of scopeChildren(di, d)) {
      const isParam = c.tag === TAG.formal_parameter && d === paramOwner;
      if (!isParam && c.tag !== TAG.variable) continue;
      const name = nameOf(di, c);
      if (name === undefined) continue;
      const cv = di.attr(c, DW_AT.const_value);
      let expr: Uint8Array | undefined;
      try { expr = di.locationAt(c, DW_AT.location, pc); } catch { expr = undefined; }
      // inner scopes shadow outer ones (the chain goes outward to inward)
      names.set(name, {
        name, die: c, kind: isParam ? 'param' : 'local', type: refOf(di, c, DW_AT.type), expr,
        constValue: cv && (cv.kind === 'uint' || cv.kind === 'sint') ? cv.value : undefined,
      });
    }
  }
  // the frame base is the physical function's (the subprogram's), also in an inlined frame (DW_OP_fbreg locations)
  const fn = outermostFunction(di, root, pc) ?? chain[0];
  let frameBase: Uint8Array | undefined;
  try { frameBase = di.locationAt(fn, DW_AT.frame_base, pc); } catch { frameBase = undefined; }
  return { function: nameOf(di, paramOwner) ?? '?', di, names, frameBase };
}
