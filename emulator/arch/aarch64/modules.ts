/**
 * arm64 module relocations (Linux arch/arm64/kernel/module.c
 * apply_relocate_add): what gcc and clang emit for -fno-pic kernel code
 * (small code model: ADRP + ADD/LDR/STR :lo12:, BL/B to other functions,
 * data pointers; the MOVW groups of the large model). Immediate fields are
 * patched in place; out-of-range values are named errors.
 */
import type { ArchModuleRelocs, Rela, RelocTarget } from '../../kernel/modules/relocations';
import { fitsSigned, get32, put16, put32, put64 } from '../../kernel/modules/relocations';

const NAMES: Readonly<Record<number, string>> = {
  0: 'R_AARCH64_NONE', 257: 'R_AARCH64_ABS64', 258: 'R_AARCH64_ABS32', 259: 'R_AARCH64_ABS16',
  260: 'R_AARCH64_PREL64', 261: 'R_AARCH64_PREL32', 262: 'R_AARCH64_PREL16',
  263: 'R_AARCH64_MOVW_UABS_G0', 264: 'R_AARCH64_MOVW_UABS_G0_NC', 265: 'R_AARCH64_MOVW_UABS_G1', 266: 'R_AARCH64_MOVW_UABS_G1_NC',
  267: 'R_AARCH64_MOVW_UABS_G2', 268: 'R_AARCH64_MOVW_UABS_G2_NC', 269: 'R_AARCH64_MOVW_UABS_G3',
  274: 'R_AARCH64_ADR_PREL_LO21', 275: 'R_AARCH64_ADR_PREL_PG_HI21', 276: 'R_AARCH64_ADR_PREL_PG_HI21_NC',
  277: 'R_AARCH64_ADD_ABS_LO12_NC', 278: 'R_AARCH64_LDST8_ABS_LO12_NC', 279: 'R_AARCH64_TSTBR14', 280: 'R_AARCH64_CONDBR19',
  282: 'R_AARCH64_JUMP26', 283: 'R_AARCH64_CALL26', 284: 'R_AARCH64_LDST16_ABS_LO12_NC', 285: 'R_AARCH64_LDST32_ABS_LO12_NC',
  286: 'R_AARCH64_LDST64_ABS_LO12_NC', 299: 'R_AARCH64_LDST128_ABS_LO12_NC', 273: 'R_AARCH64_LD_PREL_LO19',
  311: 'R_AARCH64_ADR_GOT_PAGE', 312: 'R_AARCH64_LD64_GOT_LO12_NC',
};

/** insert `bits` bits of v at bit `lsb` of the instruction word */
function ins(w: number, v: bigint, lsb: number, bits: number): number {
  const mask = (1 << bits) - 1;
  return ((w & ~(mask << lsb)) | ((Number(BigInt.asUintN(bits, v)) & mask) << lsb)) >>> 0;
}

export const aarch64ModuleRelocs: ArchModuleRelocs = {
  arch: 'aarch64',
  typeName: t => NAMES[t] ?? `type ${t}`,
  applyRelocateAdd(target: RelocTarget, relas: readonly Rela[], symValue: (sym: number) => bigint): string | undefined {
    const b = target.bytes;
    for (const r of relas) {
      const off = Number(r.offset);
      const S = symValue(r.sym), A = r.addend, P = target.addr + r.offset;
      const where = `${target.name}+0x${r.offset.toString(16)}: ${this.typeName(r.type)}`;
      const size = r.type === 257 || r.type === 260 ? 8 : r.type === 259 || r.type === 262 ? 2 : 4;
      if (off < 0 || off + size > b.length) return `${where} is outside the section`;
      const word = (): number => get32(b, off);
      const range = (v: bigint, bits: number, what: string): string | undefined =>
        fitsSigned(v, bits) ? undefined : `${where}: ${what} 0x${BigInt.asUintN(64, v).toString(16)} is out of range (overflow)`;
      const X = BigInt.asIntN(64, S + A);
      switch (r.type) {
        case 0: break;
        case 257: put64(b, off, S + A); break;
        case 258: case 259: { // ABS32 / ABS16: signed or unsigned, as Linux's RELOC_OP_ABS checks
          const bits = r.type === 258 ? 32n : 16n;
          if (X < -(1n << (bits - 1n)) || X >= (1n << bits)) return `${where}: value 0x${BigInt.asUintN(64, X).toString(16)} does not fit in ${bits} bits (overflow)`;
          if (bits === 32n) put32(b, off, Number(BigInt.asUintN(32, X))); else put16(b, off, Number(BigInt.asUintN(16, X)));
          break;
        }
        case 260: put64(b, off, S + A - P); break;
        case 261: { const v = BigInt.asIntN(64, S + A - P); const e = range(v, 32, 'offset'); if (e) return e; put32(b, off, Number(BigInt.asUintN(32, v))); break; }
        case 262: { const v = BigInt.asIntN(64, S + A - P); const e = range(v, 16, 'offset'); if (e) return e; put16(b, off, Number(BigInt.asUintN(16, v))); break; }
        case 263: case 264: case 265: case 266: case 267: case 268: case 269: {
          // MOVW_UABS_Gn(_NC): bits [16n+15:16n] of S+A into the imm16 of movz/movk
          const g = r.type <= 264 ? 0 : r.type <= 266 ? 1 : r.type <= 268 ? 2 : 3;
          const v = BigInt.asUintN(64, S + A);
          const checked = r.type === 263 || r.type === 265 || r.type === 267;
          if (checked && v >> BigInt(16 * (g + 1)) !== 0n) return `${where}: value 0x${v.toString(16)} does not fit (overflow)`;
          put32(b, off, ins(word(), v >> BigInt(16 * g), 5, 16));
          break;
        }
        case 274: { // ADR: 21-bit byte offset
          const v = BigInt.asIntN(64, S + A - P);
          const e = range(v, 21, 'offset'); if (e) return e;
          put32(b, off, ins(ins(word(), v, 29, 2), v >> 2n, 5, 19));
          break;
        }
        case 275: case 276: { // ADRP: 4 KiB page delta
          const v = BigInt.asIntN(64, ((S + A) & ~0xfffn) - (P & ~0xfffn)) >> 12n;
          if (r.type === 275) { const e = range(v, 21, 'page offset'); if (e) return e; }
          put32(b, off, ins(ins(word(), v, 29, 2), v >> 2n, 5, 19));
          break;
        }
        case 277: put32(b, off, ins(word(), S + A, 10, 12)); break;
        case 278: case 284: case 285: case 286: case 299: {
          const shift = r.type === 278 ? 0n : r.type === 284 ? 1n : r.type === 285 ? 2n : r.type === 286 ? 3n : 4n;
          const lo = BigInt.asUintN(12, S + A);
          if (lo & ((1n << shift) - 1n)) return `${where}: address 0x${BigInt.asUintN(64, S + A).toString(16)} is not aligned for the access`;
          put32(b, off, ins(word(), lo >> shift, 10, 12));
          break;
        }
        case 279: case 280: case 273: case 282: case 283: {
          const v = BigInt.asIntN(64, S + A - P);
          if (v & 3n) return `${where}: target is not 4-byte aligned`;
          const [lsb, bits] = r.type === 279 ? [5, 14] : r.type === 280 || r.type === 273 ? [5, 19] : [0, 26];
          const e = range(v >> 2n, bits, 'branch offset'); if (e) return e;
          put32(b, off, ins(word(), v >> 2n, lsb, bits));
          break;
        }
        default:
          return `${where}: unsupported relocation type ${r.type}`;
      }
    }
    return undefined;
  },
};
