/**
 * The variables of a stopped frame from DWARF, with their values (what the
 * Variables view shows): the parameters and the locals in scope at the
 * frame's pc (the scopes, names and types are elf/dwarf's: scopes.ts,
 * typeDies.ts), each with its location evaluated with the frame's registers
 * (DWARF numbers), CFA and frame base, and its value formatted as gdb prints
 * it: integers in decimal, chars as `65 'A'`, pointers in hex (`char *` with
 * the string), enums by name, `<optimized out>` where the compiler left no
 * location, structs / unions / arrays summarized; the frames of a CPU by its
 * call frame information; globals by name.
 *
 * Arch-neutral: the frame comes in DWARF register numbers, memory through a
 * reader; nothing here knows a register name.
 */
import type { ElfImage } from '../elf/types';
import type { ArchOps, Cpu } from '../arch/types';
import { cfiFor } from '../unwind';
import { mustVAddr, toVAddr } from '../memory/address';
import { DebugInfo, debugInfoOf } from '../elf/dwarf/info';
import { DW_AT, DW_ATE, Die, TAG } from '../elf/dwarf/dies';
import { Location, evalLocation } from '../elf/dwarf/location';
import { ScopeAt, frameScope, globalDie, nameOf, outermostFunction, refOf, scopeChildren } from '../elf/dwarf/scopes';
import { bitfieldOffset, sizeOf, strip, typeText } from '../elf/dwarf/typeDies';
import { charText } from '../handlers/ctypes';
import { CallerFrame, entryValue } from '../elf/dwarf/callSites';

export interface FrameState extends ScopeAt {
  pc: bigint;
  /** the frame's place in the walk: 0 = the CPU's registers, 1 = its caller... (default 0) */
  level?: number;
  /** registers known in this frame, by DWARF number */
  regs: ReadonlyMap<number, bigint>;
  /** the frame's canonical frame address (from the CFI), when known */
  cfa?: bigint;
  /** the caller as the CFI recovers it (its registers, and the return address into it), when known */
  caller?: CallerFrame;
}

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
    entryValue: (block: Uint8Array) => entryValue(di, frame.caller, block, memUint, little),
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

function safe<T>(f: () => T): T | undefined {
  try { return f(); } catch { return undefined; }
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
  imageOfDi.set(di, x.image);
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
  imageOfDi.set(di, image);
  const little = image.endian === 'little';
  const ctx = {
    addressSize: u.addressSize, little, reg: () => undefined,
    read: (a: bigint, size: number) => { const b = read(a, size); return b ? bytesToUint(b, little) : undefined; },
    addrx: (i: bigint) => di.addrIndex(u, i),
    baseType: (o: bigint) => di.baseType(u, o),
  };
  return variable(di, d, 'local', pc ?? 0n, ctx, read, little);
}



/** A struct / union / array in memory as gdb prints it (`{x = 1, y = 2}`, `"abc"`, `{0 <repeats 16 times>}`). */
export function aggregateValue(x: Expandable, read: MemReader): string {
  const di = debugInfoOf(x.image);
  imageOfDi.set(di, x.image);
  return aggregateText(di, x.type, x.addr, read, x.image.endian === 'little', 0);
}
