/**
 * The program's DWARF types as C types (./cTypeModel.ts, the model the
 * handler language computes with): base types by size and encoding (their
 * DWARF names kept: `long unsigned int`), typedefs by their name, pointers
 * (a function pointer spelled `int (*)(...)`), structs and unions with
 * members read on demand (bitfields by bit offset and size), enums with
 * their enumerators, arrays by dimension. const / volatile stay in type
 * names only. Floating-point values and integers wider than 64 bits become
 * opaque types a handler cannot compute with.
 *
 * typeNamed() finds `struct file`, `union u`, `enum e` or a typedef by name
 * in any unit (complete definitions first), for casts and sizeof.
 */
import type { ElfImage } from '../types';
import type { CType, IntType, Member, PtrType, StructType, VoidType } from './cTypeModel';
import { DebugInfo, debugInfoOf } from './info';
import { DW_AT, DW_ATE, Die, TAG } from './dies';
import { bitfieldOffset, strip, typeText } from './typeDies';
import { nameIndex } from './nameIndex';

const VOID: VoidType = { kind: 'void' };

const cache = new WeakMap<Die, CType>();
const voidPtrCache = new WeakMap<Die, PtrType>();

/** The origin a StructType / ArrayType made here carries: the debugger expands values through it. */
export interface DwarfOrigin { readonly image: ElfImage; readonly die: Die }

/** An opaque type of `size` bytes a handler cannot compute with (a float, an __int128). */
function opaque(name: string, size: number): StructType {
  return { kind: 'struct', union: false, name, size, members: () => [] };
}

export function dwarfCType(image: ElfImage, die: Die | undefined, depth = 0): CType {
  if (!die) return VOID;
  const hit = cache.get(die);
  if (hit) return hit;
  const di = debugInfoOf(image);
  const t = convert(image, di, die, depth);
  cache.set(die, t);
  return t;
}

function convert(image: ElfImage, di: DebugInfo, d: Die, depth: number): CType {
  if (depth > 32) return VOID;
  const inner = (): CType => dwarfCType(image, di.ref(d, DW_AT.type), depth + 1);
  const size = Number(di.uint(d, DW_AT.byte_size) ?? 0n);
  switch (d.tag) {
    case TAG.base_type: {
      const name = di.name(d) ?? '?';
      const enc = Number(di.uint(d, DW_AT.encoding) ?? 0n);
      if (enc === DW_ATE.float || ![1, 2, 4, 8].includes(size)) return opaque(name, size);
      const signed = enc === DW_ATE.signed || enc === DW_ATE.signed_char;
      if (enc === DW_ATE.boolean) return { kind: 'int', size: size as 1, signed: false, name, bool: true } satisfies IntType;
      return { kind: 'int', size: size as 1 | 2 | 4 | 8, signed, name } satisfies IntType;
    }
    case TAG.typedef: {
      const name = di.name(d) ?? '?';
      const t = inner();
      if (t.kind === 'int' || t.kind === 'struct') return { ...t, name } as CType;
      return t;
    }
    case TAG.const_type: case TAG.volatile_type: {
      // the qualifier stays in the name (`const char *` as gdb writes it); the value's type is the same
      const t = inner();
      const q = d.tag === TAG.const_type ? 'const' : 'volatile';
      if (t.kind === 'int' || t.kind === 'struct') return { ...t, name: `${q} ${t.name}` } as CType;
      return t;
    }
    case TAG.restrict_type: case TAG.atomic_type:
      return inner();
    case TAG.pointer_type: {
      const to = di.ref(d, DW_AT.type);
      if (to && strip(di, to)?.tag === TAG.subroutine_type) {
        let p = voidPtrCache.get(d);
        if (!p) { p = { kind: 'ptr', to: VOID, name: typeText(di, d) }; voidPtrCache.set(d, p); }
        return p;
      }
      // a placeholder breaks cycles through typedefs of pointers (struct members are lazy anyway)
      const p: { kind: 'ptr'; to: CType } = { kind: 'ptr', to: VOID };
      cache.set(d, p);
      p.to = dwarfCType(image, to, depth + 1);
      return p;
    }
    case TAG.structure_type: case TAG.union_type: {
      const union = d.tag === TAG.union_type;
      const n = di.name(d);
      let members: Member[] | undefined;
      const origin: DwarfOrigin = { image, die: d };
      return {
        kind: 'struct', union, name: `${union ? 'union' : 'struct'} ${n ?? '{...}'}`, size, origin,
        members: () => (members ??= membersOf(image, di, d)),
      };
    }
    case TAG.enumeration_type: {
      const enumerators = new Map<bigint, string>();
      let negative = false;
      for (const c of d.children) {
        if (c.tag !== TAG.enumerator) continue;
        const v = di.attr(c, DW_AT.const_value);
        if (v && (v.kind === 'uint' || v.kind === 'sint')) {
          if (v.value < 0n) negative = true;
          if (!enumerators.has(v.value)) enumerators.set(v.value, di.name(c) ?? '?');
        }
      }
      const under = di.ref(d, DW_AT.type) ? inner() : undefined;
      const sz = ([1, 2, 4, 8].includes(size) ? size : 4) as 1 | 2 | 4 | 8;
      const signed = under?.kind === 'int' ? under.signed : negative;
      return { kind: 'int', size: sz, signed, name: `enum ${di.name(d) ?? '{...}'}`, enumerators } satisfies IntType;
    }
    case TAG.array_type: {
      const dims = d.children.filter(c => c.tag === TAG.subrange_type).map(c => Number(di.uint(c, DW_AT.count) ?? ((di.uint(c, DW_AT.upper_bound) ?? -1n) + 1n)));
      let t = inner();
      for (let i = dims.length - 1; i >= 0; i--) t = { kind: 'array', of: t, count: Math.max(0, dims[i]), origin: i === 0 ? { image, die: d } : undefined };
      return dims.length ? t : { kind: 'array', of: t, count: 0 };
    }
    case TAG.subroutine_type:
      return VOID;
    default:
      return inner();
  }
}


function membersOf(image: ElfImage, di: DebugInfo, d: Die): Member[] {
  const out: Member[] = [];
  for (const m of d.children) {
    if (m.tag !== 0x0d) continue; // DW_TAG_member
    const type = dwarfCType(image, di.ref(m, DW_AT.type));
    const off = Number(di.uint(m, DW_AT.data_member_location) ?? 0n);
    const bitSize = di.uint(m, DW_AT.bit_size);
    const name = di.name(m) ?? '';
    if (bitSize !== undefined) {
      const bitOff = bitfieldOffset(di, m, type.kind === 'int' ? type.size : 4);
      out.push({ name, type, offset: Math.floor(bitOff / 8), bits: { offset: bitOff, size: Number(bitSize) } });
    } else out.push({ name, type, offset: off });
  }
  return out;
}

/** `struct file`, `union u`, `enum e` or a typedef of the program by name (complete definitions first), or undefined. */
export function typeNamed(image: ElfImage, kind: 'struct' | 'union' | 'enum' | 'typedef', name: string): CType | undefined {
  const di = debugInfoOf(image);
  const off = nameIndex(di).types.get(`${kind} ${name}`);
  const d = off === undefined ? undefined : di.dieAt(off);
  return d ? dwarfCType(image, d) : undefined;
}

/** The typedef and tag names of the program (for completion). */
export function typeNames(image: ElfImage): string[] {
  return [...nameIndex(debugInfoOf(image)).types.keys()];
}
