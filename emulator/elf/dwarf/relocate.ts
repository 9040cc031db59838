/**
 * A program that runs away from its link addresses (a kernel moved by
 * KASLR) seen through its DWARF: a relocation maps each link address the
 * debug information holds to where it is at run time and back. Only the
 * addresses the loader moved change (the image's own range; a kernel's
 * zero-based per-CPU offsets stay), so the mapping is a function, not a
 * plain addition.
 *
 * relocateExpr gives a location expression with its DW_OP_addr operands
 * moved (a global's address); every other operand is kept byte for byte.
 */
import { ByteReader } from '../reader';

export interface AddressRelocation {
  /** a link address as it is at run time */
  toRuntime(link: bigint): bigint;
  /** a run-time address as the image links it */
  toLink(runtime: bigint): bigint;
}

/**
 * Operand layouts of the DW_OP_* codes with operands (DWARF 5 section 7.7.1
 * and the GNU extensions compilers emit): 'a' address, 'o' section offset,
 * '1'/'2'/'4'/'8' fixed bytes, 'u' ULEB128, 's' SLEB128, 'b' a ULEB128
 * length then that many bytes, 'c' a byte length then that many bytes.
 */
const OPERANDS: Readonly<Record<number, string>> = {
  0x03: 'a', 0x08: '1', 0x09: '1', 0x0a: '2', 0x0b: '2', 0x0c: '4', 0x0d: '4', 0x0e: '8', 0x0f: '8',
  0x10: 'u', 0x11: 's', 0x15: '1', 0x23: 'u', 0x28: '2', 0x2f: '2', 0x90: 'u', 0x91: 's', 0x92: 'us',
  0x93: 'u', 0x94: '1', 0x95: '1', 0x98: '2', 0x99: '4', 0x9a: 'o', 0x9d: 'uu', 0x9e: 'b', 0xa0: 'os',
  0xa1: 'u', 0xa2: 'u', 0xa3: 'b', 0xa4: 'uc', 0xa5: 'uu', 0xa6: '1u', 0xa8: 'u', 0xa9: 'u',
  0xf2: 'os', 0xf3: 'b', 0xf4: 'uc', 0xf5: 'uu', 0xf6: '1u', 0xf7: 'u', 0xf9: 'u', 0xfa: '4', 0xfb: 'u', 0xfc: 'u',
};

/**
 * The expression with each DW_OP_addr operand relocated; the same array
 * when it has none (or holds an opcode this walk does not know: then it is
 * left as it is, and evalLocation reports that opcode anyway).
 */
export function relocateExpr(expr: Uint8Array, reloc: AddressRelocation, addressSize: number, offsetSize: number, little: boolean): Uint8Array {
  const at: number[] = [];
  const r = new ByteReader(expr, little);
  try {
    while (r.pos < r.length) {
      const op = r.u8();
      if (op >= 0x70 && op <= 0x8f) { r.slebBig(); continue; } // breg0..31
      for (const k of OPERANDS[op] ?? '') {
        switch (k) {
          case 'a': at.push(r.pos); r.skip(addressSize); break;
          case 'o': r.skip(offsetSize); break;
          case 'u': r.ulebBig(); break;
          case 's': r.slebBig(); break;
          case 'b': r.skip(r.uleb()); break;
          case 'c': r.skip(r.u8()); break;
          default: r.skip(Number(k));
        }
      }
      if (!(op in OPERANDS) && !(op >= 0x30 && op <= 0x6f) && !SIMPLE.has(op)) return expr;
    }
  } catch {
    return expr;
  }
  if (at.length === 0) return expr;
  const out = expr.slice();
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (const p of at) {
    const v = new ByteReader(expr, little).uintAt(p, addressSize);
    const moved = BigInt.asUintN(addressSize * 8, reloc.toRuntime(v));
    if (addressSize === 8) dv.setBigUint64(p, moved, little);
    else dv.setUint32(p, Number(moved), little);
  }
  return out;
}

/** DW_OP_* without operands (besides lit/reg 0x30-0x6f) */
const SIMPLE: ReadonlySet<number> = new Set([
  0x06, 0x12, 0x13, 0x14, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x24, 0x25, 0x26, 0x27,
  0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x96, 0x97, 0x9b, 0x9c, 0x9f, 0xa7, 0xe0,
]);
