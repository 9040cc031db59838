/**
 * The variables of a stopped frame from DWARF (issue 14): the function
 * holding the pc (a DW_TAG_subprogram, with the inlined subroutines and
 * lexical blocks that hold it), its parameters and the locals in scope at
 * the pc, each with its C type, its location evaluated with the frame's
 * registers (DWARF numbers), CFA and frame base, and its value formatted as
 * gdb prints it: integers in decimal, chars as `65 'A'`, pointers in hex
 * (`char *` with the string), enums by name, `<optimized out>` where the
 * compiler left no location, structs / unions / arrays summarized.
 *
 * Arch-neutral: the frame comes in DWARF register numbers, memory through a
 * reader; nothing here knows a register name.
 */
import type { ElfImage } from '../elf/types';
import type { ArchOps, Cpu } from '../arch/types';
import { cfiFor } from '../unwind';
import { mustVAddr, toVAddr } from '../memory/address';
import { DW_AT, DebugInfo, Die, debugInfoOf } from '../elf/dwarf/info';
import { Location, evalLocation } from '../elf/dwarf/location';
import { charText } from '../handlers/ctypes';
import { entryValue } from './callSites';

export interface FrameState {
  pc: bigint;
  /** the frame's place in the walk: 0 = the CPU's registers, 1 = its caller... (default 0) */
  level?: number;
  /** registers known in this frame, by DWARF number */
  regs: ReadonlyMap<number, bigint>;
  /** the frame's canonical frame address (from the CFI), when known */
  cfa?: bigint;
  /** the caller as the CFI recovers it (its registers, and the return address into it), when known */
  caller?: { returnAddress: bigint; regs: ReadonlyMap<number, bigint> };
  /** which function of the frame: 0 = the innermost inlined call holding pc, 1 = its caller... (default 0) */
  inlineDepth?: number;
  /**
   * At the first instruction of an inlined call, show the caller (gdb's
   * skip_inline_frames; default true). A stop at a line or instruction
   * breakpoint there shows the inlined function, as gdb does.
   */
  skipInlineEntry?: boolean;
}

/** Where to look a frame's scope up: its pc, which inline frame, the inline-entry rule. */
export interface ScopeAt { inlineDepth?: number; skipInlineEntry?: boolean }

/** Bytes of memory, or undefined when they cannot be read. */
export type MemReader = (addr: bigint, size: number) => Uint8Array | undefined;

export interface FrameVariable {
  name: string;
  /** C type as gdb writes it: `int`, `struct node *`, `const char *` */
  type: string;
  /** the value as gdb prints it, or `<optimized out>` / `<error: ...>` */
  value: string;
  kind: 'param' | 'local' | 'member';
  /** a struct / union / array in memory, or the struct a pointer points to: its members on demand (childrenOf) */
  expand?: Expandable;
}

/** What childrenOf needs to list an aggregate's members */
export interface Expandable { readonly image: ElfImage; readonly type: Die; readonly addr: bigint }

export type FrameVariables =
  | { ok: true; function: string; params: FrameVariable[]; locals: FrameVariable[] }
  /** broken: the debug info is there but cannot be read (the reason says what and where) */
  | { ok: false; reason: string; broken?: true };

export const TAG = {
  formal_parameter: 0x05, lexical_block: 0x0b, pointer_type: 0x0f, structure_type: 0x13, typedef: 0x16, union_type: 0x17,
  inlined_subroutine: 0x1d, base_type: 0x24, const_type: 0x26, enumerator: 0x28, enumeration_type: 0x04, array_type: 0x01,
  subprogram: 0x2e, variable: 0x34, volatile_type: 0x35, subroutine_type: 0x15, restrict_type: 0x37, subrange_type: 0x21,
  atomic_type: 0x47,
} as const;

/** The variables of a frame, or why there are none ("no debug info for this frame: ..."). */
export function frameVariables(image: ElfImage, frame: FrameState, read: MemReader): FrameVariables {
  const di = debugInfoOf(image);
  imageOfDi.set(di, image);
  const u = di.unitFor(frame.pc);
  if (!u) {
    // a unit that cannot be read may be the one: say why
    const bad = di.units().filter(x => { if (!x.error) di.root(x); return x.error !== undefined; }).map(x => x.error);
    const why = bad.length ? `; ${bad.length} unit${bad.length > 1 ? 's' : ''} cannot be read: ${bad.slice(0, 2).join('; ')}` : '';
    return bad.length
      ? { ok: false, reason: `no debug info for 0x${frame.pc.toString(16)} (no compile unit covers it${why})`, broken: true }
      : { ok: false, reason: `no debug info for 0x${frame.pc.toString(16)} (no compile unit covers it)` };
  }
  const root = di.root(u);
  if (!root) return { ok: false, reason: `no debug info for 0x${frame.pc.toString(16)}: ${u.error ?? 'the compile unit cannot be read'}`, broken: true };
  const chain = frameScope(di, root, frame.pc, frame);
  if (!chain) return { ok: false, reason: `no debug info for 0x${frame.pc.toString(16)} (no function of ${di.name(root) ?? 'its unit'} covers it)` };
  // the frame base is the physical function's (the subprogram's), also in an inlined frame
  const fn = outermostFunction(di, root, frame.pc) ?? chain[0];
  const little = image.endian === 'little';
  const addressSize = u.addressSize;
  const memUint = (a: bigint, size: number): bigint | undefined => {
    const b = read(a, size);
    return b ? bytesToUint(b, little) : undefined;
  };
  let frameBaseCache: bigint | undefined | null = null;
  const ctx = {
    addressSize, little, cfa: frame.cfa,
    reg: (n: number) => frame.regs.get(n),
    read: memUint,
    addrx: (i: bigint) => di.addrIndex(u, i),
    baseType: (o: bigint) => di.baseType(u, o),
    entryValue: (block: Uint8Array) => entryValue(di, frame, block, memUint, little),
    frameBase: (): bigint | undefined => {
      if (frameBaseCache !== null) return frameBaseCache;
      frameBaseCache = undefined;
      const e = safe(() => di.locationAt(fn, DW_AT.frame_base, frame.pc));
      if (e) {
        const l = evalLocation(e, { ...ctx, frameBase: undefined });
        if (l.kind === 'register') frameBaseCache = frame.regs.get(l.reg);
        else if (l.kind === 'memory') frameBaseCache = l.addr;
        else if (l.kind === 'value') frameBaseCache = l.value;
      }
      return frameBaseCache;
    },
  };
  const params: FrameVariable[] = [];
  const locals: FrameVariable[] = [];
  // parameters: of the frame's function (an inlined subroutine's own, else the subprogram's); locals: its blocks'
  const paramOwner = chain[0];
  for (const d of chain) {
    for (const c of scopeChildren(di, d)) {
      if (c.tag === TAG.formal_parameter && d === paramOwner) params.push(variable(di, c, 'param', frame.pc, ctx, read, little));
      else if (c.tag === TAG.variable) locals.push(variable(di, c, 'local', frame.pc, ctx, read, little));
    }
  }
  const fname = nameOf(di, paramOwner) ?? '?';
  return { ok: true, function: fname, params, locals };
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
function scopeChildren(di: DebugInfo, d: Die): readonly Die[] {
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
function frameScope(di: DebugInfo, root: Die, pc: bigint, at: ScopeAt): Die[] | undefined {
  const chain = scopeChain(di, root, pc, at.skipInlineEntry !== false);
  if (!chain) return undefined;
  const fns = functionScopes(chain);
  return fns[Math.min(at.inlineDepth ?? 0, fns.length - 1)];
}

function outermostFunction(di: DebugInfo, root: Die, pc: bigint): Die | undefined {
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
    const unitLine = stmt && stmt.kind === 'uint' ? Number(stmt.value) : undefined;
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

function safe<T>(f: () => T): T | undefined {
  try { return f(); } catch { return undefined; }
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

/** an attribute's DIE reference, through abstract_origin */
export function refOf(di: DebugInfo, d: Die, at: number): Die | undefined {
  for (let x: Die | undefined = d, i = 0; x && i < 8; i++) {
    const r = di.ref(x, at);
    if (r) return r;
    x = di.ref(x, DW_AT.abstract_origin);
  }
  return undefined;
}

function variable(di: DebugInfo, d: Die, kind: 'param' | 'local', pc: bigint, ctx: Parameters<typeof evalLocation>[1], read: MemReader, little: boolean): FrameVariable {
  const name = nameOf(di, d) ?? '?';
  const type = refOf(di, d, DW_AT.type);
  const typeName = type ? typeText(di, type) : 'void';
  // a type reference that leads nowhere (past the section, a DIE that cannot be read): no value can be right
  if (!type && hasTypeRef(di, d)) return { name, type: '<unknown type>', value: '<error: its type (DW_AT_type) cannot be read>', kind };
  let value: string;
  const cv = di.attr(d, DW_AT.const_value);
  // a constant: its bytes are the value (a struct the compiler folded is one constant, as gdb reads it)
  if (cv && (cv.kind === 'uint' || cv.kind === 'sint')) value = valueAt(di, type, { kind: 'value', value: cv.value }, ctx, read, little);
  else if (cv && cv.kind === 'block') value = valueAt(di, type, { kind: 'implicit', bytes: cv.value }, ctx, read, little);
  else {
    let expr: Uint8Array | undefined;
    try {
      expr = di.locationAt(d, DW_AT.location, pc);
    } catch (e) {
      return { name, type: typeName, value: `<error: ${e instanceof Error ? e.message : String(e)}>`, kind };
    }
    if (expr === undefined) value = '<optimized out>';
    else {
      const loc = evalLocation(expr, ctx);
      value = valueAt(di, type, loc, ctx, read, little);
      const expand = expandable(di, type, loc, ctx, value);
      if (expand) return { name, type: typeName, value, kind, expand: { image: imageOf(di), ...expand } };
    }
  }
  return { name, type: typeName, value, kind };
}

/** The DIE (or its abstract origin) names a type, whether or not it resolves. */
function hasTypeRef(di: DebugInfo, d: Die): boolean {
  const o = di.ref(d, DW_AT.abstract_origin);
  return d.attrs.has(DW_AT.type) || (!!o && o !== d && o.attrs.has(DW_AT.type));
}

const imageOfDi = new WeakMap<DebugInfo, ElfImage>();
function imageOf(di: DebugInfo): ElfImage { return imageOfDi.get(di) as ElfImage; }

/** An aggregate in memory, or a non-null pointer to a struct / union: what can be expanded */
function expandable(di: DebugInfo, type: Die | undefined, loc: Location, ctx: Parameters<typeof evalLocation>[1], value: string): { type: Die; addr: bigint } | undefined {
  const s = strip(di, type);
  if (!s) return undefined;
  if ((s.tag === TAG.structure_type || s.tag === TAG.union_type || s.tag === TAG.array_type) && loc.kind === 'memory') return { type: s, addr: loc.addr };
  if (s.tag === TAG.pointer_type) {
    const to = strip(di, di.ref(s, DW_AT.type));
    const m = /^0x([0-9a-f]+)/.exec(value);
    if (to && m && BigInt('0x' + m[1]) !== 0n && (to.tag === TAG.structure_type || to.tag === TAG.union_type)) return { type: to, addr: BigInt('0x' + m[1]) };
  }
  void ctx;
  return undefined;
}

/** Most array elements listed as children */
const MAX_ELEMENTS = 256;

/**
 * The members of a struct / union, or the elements of an array (the first
 * MAX_ELEMENTS), read from memory now; bitfields extracted with their bit
 * size and offset. Nested aggregates and pointers to structs expand again.
 */
export function childrenOf(x: Expandable, read: MemReader): FrameVariable[] {
  const di = debugInfoOf(x.image);
  const little = x.image.endian === 'little';
  const t = x.type;
  const out: FrameVariable[] = [];
  const addressSize = t.unit.addressSize;
  const ctx = { addressSize, little, reg: () => undefined, read: (a: bigint, n: number) => { const b = read(a, n); return b ? bytesToUint(b, little) : undefined; } };
  const member = (name: string, mt: Die | undefined, addr: bigint, bits?: { size: number; offset: number }): FrameVariable => {
    const type = typeText(di, mt);
    if (bits) {
      const bytes = Math.ceil((bits.offset % 8 + bits.size) / 8);
      const b = read(addr + BigInt(Math.floor(bits.offset / 8)), bytes);
      if (!b) return { name, type, value: `<error: cannot access memory at address 0x${addr.toString(16)}>`, kind: 'member' };
      const raw = (bytesToUint(b, little) >> BigInt(bits.offset % 8)) & ((1n << BigInt(bits.size)) - 1n);
      const st = strip(di, mt);
      const signedEnc = st?.tag === TAG.base_type && [DW_ATE.signed, DW_ATE.signed_char].includes(Number(di.uint(st, DW_AT.encoding) ?? 0n) as 5 | 6);
      return { name, type, value: signedEnc ? String(BigInt.asIntN(bits.size, raw)) : String(raw), kind: 'member' };
    }
    const loc: Location = { kind: 'memory', addr };
    const value = valueAt(di, mt, loc, ctx, read, little);
    const ex = expandable(di, mt, loc, ctx, value);
    return ex ? { name, type, value, kind: 'member', expand: { image: x.image, ...ex } } : { name, type, value, kind: 'member' };
  };
  if (t.tag === TAG.array_type) {
    const et = di.ref(t, DW_AT.type);
    const dims = t.children.filter(c => c.tag === TAG.subrange_type);
    const count = dims.length ? Number(di.uint(dims[0], DW_AT.count) ?? ((di.uint(dims[0], DW_AT.upper_bound) ?? -1n) + 1n)) : 0;
    // a multi-dimensional array: each element is the array of the remaining dimensions, expanded the same way
    const inner = dims.length > 1 ? { ...t, children: dims.slice(1) } as Die : undefined;
    const esize = (sizeOf(di, et, addressSize) ?? 0) * (inner ? dims.slice(1).reduce((n, d) => n * Number(di.uint(d, DW_AT.count) ?? ((di.uint(d, DW_AT.upper_bound) ?? -1n) + 1n)), 1) : 1);
    for (let i = 0; i < Math.min(count, MAX_ELEMENTS); i++) {
      const addr = x.addr + BigInt(i * esize);
      if (inner) out.push({ name: `[${i}]`, type: typeText(di, inner), value: aggregateText(di, inner, addr, read, little, 1), kind: 'member', expand: { image: x.image, type: inner, addr } });
      else out.push(member(`[${i}]`, et, addr));
    }
    return out;
  }
  for (const m of t.children) {
    if (m.tag !== 0x0d) continue; // DW_TAG_member
    const name = di.name(m) ?? '<anonymous>';
    const mt = di.ref(m, DW_AT.type);
    const bitSize = di.uint(m, DW_AT.bit_size);
    const off = di.uint(m, DW_AT.data_member_location) ?? 0n;
    if (bitSize !== undefined) {
      out.push(member(name, mt, x.addr, { size: Number(bitSize), offset: bitfieldOffset(di, m, sizeOf(di, mt, addressSize) ?? 4) }));
    } else out.push(member(name, mt, x.addr + off));
  }
  return out;
}

/**
 * A bitfield member's offset in bits from the struct's start: DWARF 4+
 * data_bit_offset; DWARF 2/3 style (clang 14) bit_offset from the most
 * significant bit of a storage unit of byte_size bytes (else the member
 * type's size) at data_member_location (little-endian layout here).
 */
export function bitfieldOffset(di: DebugInfo, m: Die, typeSize: number): number {
  const off = di.uint(m, DW_AT.data_member_location) ?? 0n;
  const dbo = di.uint(m, DW_AT.data_bit_offset);
  if (dbo !== undefined) return Number(dbo);
  const old = di.uint(m, DW_AT.bit_offset);
  if (old === undefined) return Number(off * 8n);
  const unitBits = (di.uint(m, DW_AT.byte_size) ?? BigInt(typeSize)) * 8n;
  return Number(off * 8n + unitBits - old - (di.uint(m, DW_AT.bit_size) ?? 0n));
}

/** Strip typedefs and qualifiers */
export function strip(di: DebugInfo, t: Die | undefined): Die | undefined {
  for (let i = 0; t && i < 32; i++) {
    if (t.tag !== TAG.typedef && t.tag !== TAG.const_type && t.tag !== TAG.volatile_type && t.tag !== TAG.restrict_type && t.tag !== TAG.atomic_type) return t;
    t = di.ref(t, DW_AT.type);
  }
  return t;
}

function sizeOf(di: DebugInfo, t: Die | undefined, addressSize: number): number | undefined {
  const s = strip(di, t);
  if (!s) return undefined;
  if (s.tag === TAG.pointer_type) return Number(di.uint(s, DW_AT.byte_size) ?? BigInt(addressSize));
  if (s.tag === TAG.array_type && di.uint(s, DW_AT.byte_size) === undefined) {
    const el = sizeOf(di, di.ref(s, DW_AT.type), addressSize);
    if (el === undefined) return undefined;
    return s.children.filter(c => c.tag === TAG.subrange_type)
      .reduce((n, c) => n * Math.max(0, Number(di.uint(c, DW_AT.count) ?? ((di.uint(c, DW_AT.upper_bound) ?? -1n) + 1n))), el);
  }
  const b = di.uint(s, DW_AT.byte_size);
  return b === undefined ? undefined : Number(b);
}

/** The C spelling of a type, as gdb prints it in `ptype`-like one-liners. */
export function typeText(di: DebugInfo, t: Die | undefined, depth = 0): string {
  if (!t) return 'void';
  if (depth > 16) return '...';
  const inner = (): string => typeText(di, di.ref(t, DW_AT.type), depth + 1);
  const named = (kw: string): string => `${kw} ${di.name(t) ?? '{...}'}`;
  switch (t.tag) {
    case TAG.base_type: case TAG.typedef: return di.name(t) ?? '?';
    case TAG.pointer_type: { const i = di.ref(t, DW_AT.type); return i?.tag === TAG.subroutine_type ? `${typeText(di, di.ref(i, DW_AT.type), depth + 1)} (*)(...)` : `${inner()} *`; }
    case TAG.const_type: return `const ${inner()}`;
    case TAG.volatile_type: return `volatile ${inner()}`;
    case TAG.structure_type: return named('struct');
    case TAG.union_type: return named('union');
    case TAG.enumeration_type: return named('enum');
    case TAG.array_type: {
      const dims = t.children.filter(c => c.tag === TAG.subrange_type).map(c => {
        const n = di.uint(c, DW_AT.count) ?? ((di.uint(c, DW_AT.upper_bound) ?? -1n) + 1n);
        return `[${n >= 0n ? n : ''}]`;
      });
      return `${inner()} ${dims.join('')}`;
    }
    case TAG.subroutine_type: return `${inner()} (...)`;
    default: return inner();
  }
}

function bytesToUint(b: Uint8Array, little: boolean): bigint {
  let v = 0n;
  for (let i = 0; i < b.length; i++) v = (v << 8n) | BigInt(little ? b[b.length - 1 - i] : b[i]);
  return v;
}

function valueAt(di: DebugInfo, type: Die | undefined, loc: Location, ctx: Parameters<typeof evalLocation>[1], read: MemReader, little: boolean): string {
  const size = sizeOf(di, type, ctx.addressSize) ?? ctx.addressSize;
  switch (loc.kind) {
    case 'optimizedOut': return '<optimized out>';
    case 'error': return `<error: ${loc.message}>`;
    case 'register': case 'value': case 'implicit': case 'pieces': {
      // not in memory: the value's bytes assembled (a struct in a register, pieces of registers and values)
      const bytes = valueBytes(loc, size, ctx, read, little);
      const s = strip(di, type);
      if (s && (s.tag === TAG.structure_type || s.tag === TAG.union_type || s.tag === TAG.array_type)) {
        return aggregateText(di, s, SYNTHETIC_BASE, syntheticReader(bytes, read), little, 0);
      }
      const b = syntheticReader(bytes, read)(SYNTHETIC_BASE, Math.min(size, 8));
      if (!b) return '<optimized out>';
      return formatScalar(di, type, bytesToUint(b, little), read);
    }
    case 'memory': {
      const s = strip(di, type);
      if (s && (s.tag === TAG.structure_type || s.tag === TAG.union_type || s.tag === TAG.array_type)) return aggregateText(di, s, loc.addr, read, little, 0);
      const b = read(loc.addr, size);
      if (!b) return loc.addr >= SYNTHETIC_BASE && loc.addr < SYNTHETIC_BASE + 0x10000n ? '<optimized out>' : `<error: cannot access memory at address 0x${loc.addr.toString(16)}>`;
      return formatScalar(di, type, bytesToUint(b, little), read);
    }
  }
}

/**
 * Where a value that is not in memory is laid out to be read member by
 * member: a non-canonical address no memory can have. Bytes the DWARF does
 * not give (an empty piece, a register the frame does not know) cannot be
 * read there and show as <optimized out>.
 */
const SYNTHETIC_BASE = 0xdead_0000_0000_0000n;
/** a byte past the last piece of a value's location (no piece describes it) */
const PAST_PIECES = -1;

function syntheticReader(bytes: readonly (number | undefined)[], read: MemReader): MemReader {
  return (addr, size) => {
    if (addr < SYNTHETIC_BASE || addr >= SYNTHETIC_BASE + 0x10000n) return read(addr, size);
    const off = Number(addr - SYNTHETIC_BASE);
    const out = bytes.slice(off, off + size);
    // a value partly past the last piece reads zeros there (as gdb shows it); wholly past it, or in an empty piece: unknown
    if (out.length !== size || out.some(b => b === undefined) || out.every(b => b === PAST_PIECES)) return undefined;
    return Uint8Array.from(out.map(b => (b === PAST_PIECES ? 0 : b as number)));
  };
}

/** The bytes of a value at a location that is not (only) memory; undefined where unknown. */
function valueBytes(loc: Location, size: number, ctx: Parameters<typeof evalLocation>[1], read: MemReader, little: boolean): (number | undefined)[] {
  const le = (v: bigint | undefined, n: number): (number | undefined)[] =>
    Array.from({ length: n }, (_, i) => (v === undefined ? undefined : Number((BigInt.asUintN(64, v) >> BigInt(8 * (little ? i : n - 1 - i))) & 0xffn)));
  switch (loc.kind) {
    case 'register': {
      const v = ctx.reg(loc.reg);
      return le(v, Math.min(size, 8)).concat(Array(Math.max(0, size - 8)).fill(undefined));
    }
    case 'value': return le(loc.value, Math.min(size, 8)).concat(Array(Math.max(0, size - 8)).fill(0));
    case 'implicit': return Array.from({ length: size }, (_, i) => loc.bytes[i]);
    case 'memory': { const b = read(loc.addr, size); return b ? [...b] : Array(size).fill(undefined); }
    case 'pieces': {
      const out: (number | undefined)[] = [];
      for (const p of loc.pieces) out.push(...valueBytes(p.loc, p.size, ctx, read, little).slice(0, p.size));
      while (out.length < size) out.push(PAST_PIECES);
      return out.slice(0, size);
    }
    default: return Array(size).fill(undefined);
  }
}

export const DW_ATE = { boolean: 0x02, float: 0x04, signed: 0x05, signed_char: 0x06, unsigned: 0x07, unsigned_char: 0x08 } as const;


/** A scalar value (raw bits of the type's size) as gdb prints it. */
function formatScalar(di: DebugInfo, type: Die | undefined, raw: bigint, read: MemReader): string {
  const t = strip(di, type);
  if (!t) return `0x${raw.toString(16)}`;
  const size = Number(di.uint(t, DW_AT.byte_size) ?? 8n);
  switch (t.tag) {
    case TAG.base_type: {
      const enc = Number(di.uint(t, DW_AT.encoding) ?? 0n);
      const bits = size * 8;
      if (enc === DW_ATE.boolean) return raw === 0n ? 'false' : 'true';
      if (enc === DW_ATE.signed_char || enc === DW_ATE.unsigned_char) {
        const v = enc === DW_ATE.signed_char ? BigInt.asIntN(8, raw) : BigInt.asUintN(8, raw);
        return `${v} '${charText(Number(BigInt.asUintN(8, raw)))}'`;
      }
      if (enc === DW_ATE.float) {
        const dv = new DataView(new ArrayBuffer(8));
        if (size === 4) { dv.setUint32(0, Number(raw & 0xffffffffn)); return String(dv.getFloat32(0)); }
        if (size === 8) { dv.setBigUint64(0, raw); return String(dv.getFloat64(0)); }
        return `0x${raw.toString(16)}`;
      }
      return String(enc === DW_ATE.signed ? BigInt.asIntN(bits, raw) : BigInt.asUintN(bits, raw));
    }
    case TAG.enumeration_type: {
      const e = t.children.find(c => c.tag === TAG.enumerator && BigInt.asUintN(size * 8, (di.uint(c, DW_AT.const_value) ?? -1n)) === raw);
      return e ? di.name(e) ?? String(raw) : String(BigInt.asIntN(size * 8, raw));
    }
    case TAG.pointer_type: {
      const hex = `0x${raw.toString(16)}`;
      const to = strip(di, di.ref(t, DW_AT.type));
      const isChar = to?.tag === TAG.base_type && [DW_ATE.signed_char, DW_ATE.unsigned_char].includes(Number(di.uint(to, DW_AT.encoding) ?? 0n) as 6 | 8);
      if (isChar && raw !== 0n) {
        const s = readCString(read, raw, 200);
        return s === undefined ? `${hex} <error: Cannot access memory at address ${hex}>` : `${hex} "${s}"`;
      }
      // as gdb: a pointer into a symbol of the image is followed by <symbol> or <symbol+off>
      const img = imageOfDi.get(di);
      const r = raw !== 0n ? img?.symbols.resolve(raw) : undefined;
      return r ? `${hex} <${r.sym.name}${r.offset ? `+${r.offset}` : ''}>` : hex;
    }
    default: return `0x${raw.toString(16)}`;
  }
}

/** gdb prints a run of at least this many equal array elements once, with `<repeats N times>` */
const REPEAT_THRESHOLD = 10;
/** elements gdb prints of an array before `...` (`set print elements 200`) */
const PRINT_ELEMENTS = 200;

/** A struct / union / array in memory as gdb prints it: `{x = 1, y = 2}`, `{1, 2, 3}`, char arrays as strings. */
function aggregateText(di: DebugInfo, t: Die, addr: bigint, read: MemReader, little: boolean, depth: number): string {
  if (depth > 8) return '{...}';
  const img = imageOfDi.get(di);
  if (!img) return '{...}';
  const kids = childrenOf({ image: img, type: t, addr }, read);
  if (t.tag === TAG.array_type) {
    const et = strip(di, di.ref(t, DW_AT.type));
    const isChars = et?.tag === TAG.base_type && [DW_ATE.signed_char, DW_ATE.unsigned_char].includes(Number(di.uint(et, DW_AT.encoding) ?? 0n) as 6 | 8)
      && !t.children.some((c, i) => i > 0 && c.tag === TAG.subrange_type);
    if (isChars) {
      // a char array is a string only when every element was read (else gdb's element list: <optimized out>, <error ...>)
      const codes = kids.map(k => /^-?\d+ /.exec(k.value)?.[0]);
      if (codes.every(c => c !== undefined)) {
        const bytes = codes.map(c => Number(BigInt.asUintN(8, BigInt(c!.trim()))));
        let end = bytes.length;
        while (end > 0 && bytes[end - 1] === 0) end--; // gdb drops trailing NULs
        return `"${bytes.slice(0, end).map(b => (b === 0x22 ? '\\"' : charText(b))).join('')}"`;
      }
    }
    const vals = kids.map(k => (k.expand && k.value === '{...}' ? aggregateText(di, k.expand.type, k.expand.addr, read, little, depth + 1) : k.value));
    const parts: string[] = [];
    for (let i = 0; i < vals.length && i < PRINT_ELEMENTS;) {
      let j = i + 1;
      while (j < vals.length && vals[j] === vals[i]) j++;
      if (j - i >= REPEAT_THRESHOLD) { parts.push(`${vals[i]} <repeats ${j - i} times>`); i = j; } else { parts.push(vals[i]); i++; }
    }
    return `{${parts.join(', ')}${vals.length > PRINT_ELEMENTS ? '...' : ''}}`;
  }
  return `{${kids.map(k => `${k.name} = ${k.value}`).join(', ')}}`;
}

function readCString(read: MemReader, addr: bigint, max: number): string | undefined {
  let out = '';
  for (let i = 0; i < max; i++) {
    const b = read(addr + BigInt(i), 1);
    if (!b) return i === 0 ? undefined : out;
    if (b[0] === 0) return out;
    out += charText(b[0]);
  }
  return out + '...';
}

/**
 * Frame 0 of a CPU as FrameState: its registers by DWARF number (the port's
 * dwarfRegs map) and the CFA from the image's call frame information.
 */
export function cpuFrameState(image: ElfImage, arch: ArchOps, cpu: Cpu, pc = cpu.getPc()): FrameState {
  return unwindStates(image, arch, cpu, 1, pc)[0];
}

/**
 * The frames of a CPU by the call frame information, innermost first, up to
 * `max`: each with the registers the unwinder recovers for it (callee-saved
 * ones restored, the others unknown), its CFA, and as pc the address the
 * frame's code is at — for callers the byte before the return address (the
 * call), where their scopes and location lists are looked up. The walk ends
 * where the CFI does (no FDE, an unreadable save slot).
 */
export function unwindStates(image: ElfImage, arch: ArchOps, cpu: Cpu, max: number, pc = cpu.getPc()): FrameState[] {
  let regs = new Map<number, bigint>();
  const bits = arch.abi.pointerSize * 8;
  arch.dwarfRegs?.forEach((idx, d) => { if (idx >= 0) regs.set(d, BigInt.asUintN(bits, cpu.getReg(idx))); });
  const spD = arch.dwarfRegs ? arch.dwarfRegs.indexOf(arch.abi.spReg) : -1;
  const cfi = cfiFor(image);
  const readPtr = (a: bigint): bigint | undefined => memReader(cpu)(a, arch.abi.pointerSize)?.reduceRight((v, b) => (v << 8n) | BigInt(b), 0n);
  const out: FrameState[] = [];
  let lookup = pc;
  for (let i = 0; i < max; i++) {
    const step = cfi && spD >= 0 ? cfi.step(lookup, regs, readPtr, spD) : undefined;
    out.push({
      pc: lookup, level: i, regs, cfa: step?.kind === 'ok' ? step.cfa : undefined,
      caller: step?.kind === 'ok' && step.ra !== undefined && step.ra !== 0n ? { returnAddress: step.ra, regs: step.regs } : undefined,
    });
    if (step?.kind !== 'ok' || step.ra === undefined || step.ra === 0n) break;
    regs = new Map(step.regs);
    lookup = step.ra - 1n;
  }
  return out;
}

/** A MemReader over a CPU's address space (little-endian bytes; undefined where unmapped). */
export function memReader(cpu: Cpu): MemReader {
  return (addr, size) => {
    const v = toVAddr(addr);
    if (v === null || !cpu.mem.isMapped(v, size)) return undefined;
    try { return cpu.mem.readBytes(mustVAddr(addr), size); } catch { return undefined; }
  };
}

/**
 * A global or file-static variable by name (DW_TAG_variable at unit level
 * with a memory location), its value read now; the unit holding `pc` is
 * searched first (its statics win), then the others. Undefined when no
 * unit has one with that name.
 */
export function globalVariable(image: ElfImage, name: string, read: MemReader, pc?: bigint): FrameVariable | undefined {
  const g = globalDie(image, name, pc);
  if (!g) return undefined;
  const { di, unit: u, die: d } = g;
  const little = image.endian === 'little';
  const ctx = {
    addressSize: u.addressSize, little, reg: () => undefined,
    read: (a: bigint, size: number) => { const b = read(a, size); return b ? bytesToUint(b, little) : undefined; },
    addrx: (i: bigint) => di.addrIndex(u, i),
    baseType: (o: bigint) => di.baseType(u, o),
  };
  return variable(di, d, 'local', pc ?? 0n, ctx, read, little);
}

/**
 * The DIE of a global or file-static variable by name: a definition with a
 * location (or a constant) in the unit holding pc first, then in the other
 * units, else one the compiler left without (optimized out).
 */
export function globalDie(image: ElfImage, name: string, pc?: bigint): { di: DebugInfo; unit: Die['unit']; die: Die } | undefined {
  const di = debugInfoOf(image);
  imageOfDi.set(di, image);
  const first = pc !== undefined ? di.unitFor(pc) : undefined;
  const units = first ? [first, ...di.units().filter(u => u !== first)] : di.units();
  for (const withLocation of [true, false]) {
    for (const u of units) {
      if (u.error) continue;
      const root = di.root(u);
      const d = root?.children.find(c => c.tag === TAG.variable && di.name(c) === name && !c.attrs.has(DW_AT.declaration)
        && (!withLocation || c.attrs.has(DW_AT.location) || c.attrs.has(DW_AT.const_value)));
      if (d) return { di, unit: u, die: d };
    }
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
  imageOfDi.set(di, image);
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


/** A struct / union / array in memory as gdb prints it (`{x = 1, y = 2}`, `"abc"`, `{0 <repeats 16 times>}`). */
export function aggregateValue(x: Expandable, read: MemReader): string {
  const di = debugInfoOf(x.image);
  imageOfDi.set(di, x.image);
  return aggregateText(di, x.type, x.addr, read, x.image.endian === 'little', 0);
}
