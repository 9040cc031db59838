/**
 * The C type model of the handler language (LP64): integer types, bool,
 * void and pointers, with C's integer promotions and usual arithmetic
 * conversions; and the program's own structs, unions and arrays (from its
 * DWARF: emulator/elf/dwarf/ctype.ts), which live in emulated memory only.
 * Every runtime value is a bigint held in the canonical form of its static
 * type: signed types as BigInt.asIntN(bits), unsigned types and pointers as
 * BigInt.asUintN(bits); a struct / union / array value is its address.
 */

import type { ArrayType, CType, IntType, Member, PtrType, StructType, VoidType } from '../elf/dwarf/cTypeModel';

// the model itself is data the DWARF reader builds too: it lives with it (elf/dwarf/cTypeModel.ts)
export type { ArrayType, CType, IntType, Member, PtrType, StructType, VoidType } from '../elf/dwarf/cTypeModel';

function it(name: string, size: 1 | 2 | 4 | 8, signed: boolean): IntType {
  return { kind: 'int', size, signed, name };
}

export const T = {
  bool: { kind: 'int', size: 1, signed: false, name: 'bool', bool: true } as IntType,
  char: it('char', 1, true),
  uchar: it('unsigned char', 1, false),
  schar: it('signed char', 1, true),
  short: it('short', 2, true),
  ushort: it('unsigned short', 2, false),
  int: it('int', 4, true),
  uint: it('unsigned int', 4, false),
  long: it('long', 8, true),
  ulong: it('unsigned long', 8, false),
  llong: it('long long', 8, true),
  ullong: it('unsigned long long', 8, false),
  u8: it('u8', 1, false), u16: it('u16', 2, false), u32: it('u32', 4, false), u64: it('u64', 8, false),
  s8: it('s8', 1, true), s16: it('s16', 2, true), s32: it('s32', 4, true), s64: it('s64', 8, true),
  void: { kind: 'void' } as VoidType,
};

/** Plain `char` with the configured signedness. */
export function charType(signed: boolean): IntType {
  return signed ? T.char : { kind: 'int', size: 1, signed: false, name: 'char' };
}

export function ptrTo(t: CType): PtrType { return { kind: 'ptr', to: t }; }

/** Named types (typedefs of the kernel) other than the keyword combinations. */
export const TYPEDEFS: ReadonlyMap<string, CType> = new Map<string, CType>([
  ['u8', T.u8], ['u16', T.u16], ['u32', T.u32], ['u64', T.u64],
  ['s8', T.s8], ['s16', T.s16], ['s32', T.s32], ['s64', T.s64],
  ['__u8', T.u8], ['__u16', T.u16], ['__u32', T.u32], ['__u64', T.u64],
  ['__s8', T.s8], ['__s16', T.s16], ['__s32', T.s32], ['__s64', T.s64],
  ['uint8_t', T.u8], ['uint16_t', T.u16], ['uint32_t', T.u32], ['uint64_t', T.u64],
  ['int8_t', T.s8], ['int16_t', T.s16], ['int32_t', T.s32], ['int64_t', T.s64],
  ['size_t', it('size_t', 8, false)], ['ssize_t', it('ssize_t', 8, true)],
  ['uintptr_t', it('uintptr_t', 8, false)], ['loff_t', it('loff_t', 8, true)],
  ['ktime_t', it('ktime_t', 8, true)], ['pid_t', it('pid_t', 4, true)],
  ['bool', T.bool], ['_Bool', T.bool],
]);

export function typeName(t: CType): string {
  if (t.kind === 'int') return t.name;
  if (t.kind === 'void') return 'void';
  if (t.kind === 'struct') return t.name;
  if (t.kind === 'array') return `${typeName(t.of)} [${t.count}]`;
  if (t.name) return t.name;
  const inner = typeName(t.to);
  return inner.endsWith('*') ? `${inner}*` : `${inner} *`;
}

export function sizeOf(t: CType): number {
  if (t.kind === 'int') return t.size;
  if (t.kind === 'ptr') return 8;
  if (t.kind === 'struct') return t.size;
  if (t.kind === 'array') return t.count * sizeOf(t.of);
  return 1; // GCC: sizeof(void) == 1, used for void * arithmetic
}

/** a struct, union or array: lives in memory, its value is its address */
export function isAggregate(t: CType): t is StructType | ArrayType { return t.kind === 'struct' || t.kind === 'array'; }

/** The member `name` of a struct / union, looking into anonymous struct / union members as C does. */
export function findMember(t: StructType, name: string): Member | undefined {
  for (const m of t.members()) {
    if (m.name === name) return m;
    if (m.name === '' && m.type.kind === 'struct') {
      const inner = findMember(m.type, name);
      if (inner) return { ...inner, offset: m.offset + inner.offset, bits: inner.bits && { ...inner.bits, offset: inner.bits.offset + m.offset * 8 } };
    }
  }
  return undefined;
}

export function isScalar(t: CType): boolean { return t.kind !== 'void' && !isAggregate(t); }
export function isInt(t: CType): t is IntType { return t.kind === 'int'; }
export function isPtr(t: CType): t is PtrType { return t.kind === 'ptr'; }
export function isCharPtr(t: CType): boolean { return t.kind === 'ptr' && t.to.kind === 'int' && t.to.size === 1 && !t.to.bool; }

/** Bring a bigint into the canonical representation of type t (C conversion). */
export function convert(v: bigint, t: CType): bigint {
  if (t.kind === 'ptr' || isAggregate(t)) return BigInt.asUintN(64, v);
  if (t.kind === 'void') return 0n;
  if (t.bool) return v !== 0n ? 1n : 0n;
  const bits = t.size * 8;
  return t.signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
}

/** A converter specialised for one type (used in compiled closures). */
export function converter(t: CType): (v: bigint) => bigint {
  if (t.kind === 'ptr' || isAggregate(t)) return TO_U64;
  if (t.kind === 'void') return TO_VOID;
  if (t.bool) return TO_BOOL;
  const bits = t.size * 8;
  // one function per width and signedness, shared by every compiled handler (10,000 probes keep 10,000 handlers)
  const made = t.signed ? SIGNED : UNSIGNED;
  let f = made.get(bits);
  if (f === undefined) made.set(bits, f = t.signed ? v => BigInt.asIntN(bits, v) : v => BigInt.asUintN(bits, v));
  return f;
}

const TO_U64 = (v: bigint): bigint => BigInt.asUintN(64, v);
const TO_VOID = (): bigint => 0n;
const TO_BOOL = (v: bigint): bigint => (v !== 0n ? 1n : 0n);
const SIGNED = new Map<number, (v: bigint) => bigint>();
const UNSIGNED = new Map<number, (v: bigint) => bigint>();

/** C integer promotion: types narrower than int (and bool) become int. */
export function promote(t: IntType): IntType {
  return t.size < 4 || t.bool ? T.int : t;
}

/** C usual arithmetic conversions for two integer operands (LP64). */
export function usualArith(a: IntType, b: IntType): IntType {
  const x = promote(a), y = promote(b);
  if (x.size === y.size && x.signed === y.signed) return x.size === 8 && x.name !== y.name ? pick8(x.signed) : x;
  if (x.signed === y.signed) return x.size > y.size ? x : y;
  const u = x.signed ? y : x, s = x.signed ? x : y;
  if (u.size >= s.size) return u.size === 8 ? (u.name === 'unsigned long long' || s.name === 'long long' ? T.ullong : u) : u;
  return s; // the signed type is wider and holds every value of the unsigned one
}

function pick8(signed: boolean): IntType { return signed ? T.long : T.ulong; }

/** Same type for assignment-compatibility purposes (names ignored). */
export function sameType(a: CType, b: CType): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'int' && b.kind === 'int') return a.size === b.size && a.signed === b.signed && !!a.bool === !!b.bool;
  if (a.kind === 'ptr' && b.kind === 'ptr') return sameType(a.to, b.to);
  if (a.kind === 'struct' && b.kind === 'struct') return a === b || (a.name === b.name && a.size === b.size && a.union === b.union);
  if (a.kind === 'array' && b.kind === 'array') return a.count === b.count && sameType(a.of, b.of);
  return true;
}

/** A byte as C writes it inside a char literal, as gdb shows chars: `A`, `\n`, `\'`, `\210`. */
export function charText(c: number): string {
  const esc: Record<number, string> = { 0: '\\000', 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 39: "\\'", 92: '\\\\' };
  if (esc[c] !== undefined) return esc[c];
  if (c >= 0x20 && c < 0x7f) return String.fromCharCode(c);
  return `\\${c.toString(8).padStart(3, '0')}`;
}
