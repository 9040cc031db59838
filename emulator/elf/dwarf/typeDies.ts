/**
 * Type DIEs as C sees them: typedefs and qualifiers stripped, a type's size
 * in bytes (arrays from their dimensions), its C spelling as gdb writes it
 * (`const char *`, `struct node *`, `int (*)(...)`, `char [16]`), and a
 * bitfield member's bit offset in either DWARF style. Pure reading of the
 * debug info: no memory, no registers.
 */
import { DebugInfo } from './info';
import { DW_AT, Die, TAG } from './dies';

/** Strip typedefs and qualifiers */
export function strip(di: DebugInfo, t: Die | undefined): Die | undefined {
  for (let i = 0; t && i < 32; i++) {
    if (t.tag !== TAG.typedef && t.tag !== TAG.const_type && t.tag !== TAG.volatile_type && t.tag !== TAG.restrict_type && t.tag !== TAG.atomic_type) return t;
    t = di.ref(t, DW_AT.type);
  }
  return t;
}

/** A type's size in bytes (a pointer without DW_AT_byte_size: the address size), undefined when DWARF does not say. */
export function sizeOf(di: DebugInfo, t: Die | undefined, addressSize: number): number | undefined {
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
