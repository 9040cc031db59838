/**
 * The C extension (RV64C) as an expansion table: each 16-bit form becomes
 * the 32-bit instruction it stands for (the ISA manual's "expands to"
 * column), which is then decoded by the normal table — one set of
 * executors, and disassembly as llvm-objdump prints it (the expanded form).
 * The D forms (c.fld, c.fsd, c.fldsp, c.fsdsp) expand to fld/fsd; reserved
 * encodings are illegal (null). RV64 has no c.flw / c.fsw.
 */

const bit = (h: number, b: number): number => (h >> b) & 1;
const bits = (h: number, hi: number, lo: number): number => (h >> lo) & ((1 << (hi - lo + 1)) - 1);
/** sign-extend the low n bits */
const sx = (v: number, n: number): number => (v << (32 - n)) >> (32 - n);

// 32-bit encoders
const encI = (op: number, rd: number, f3: number, rs1: number, imm: number): number =>
  (((imm & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op) | 0;
const encR = (op: number, rd: number, f3: number, rs1: number, rs2: number, f7: number): number =>
  ((f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op) | 0;
const encS = (op: number, f3: number, rs1: number, rs2: number, imm: number): number =>
  ((((imm >> 5) & 0x7f) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((imm & 0x1f) << 7) | op) | 0;
const encB = (f3: number, rs1: number, rs2: number, imm: number): number =>
  ((bit(imm, 12) << 31) | (bits(imm, 10, 5) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (bits(imm, 4, 1) << 8) | (bit(imm, 11) << 7) | 0x63) | 0;
const encJ = (rd: number, imm: number): number =>
  ((bit(imm, 20) << 31) | (bits(imm, 10, 1) << 21) | (bit(imm, 11) << 20) | (bits(imm, 19, 12) << 12) | (rd << 7) | 0x6f) | 0;
const encU = (op: number, rd: number, imm20: number): number => (((imm20 & 0xfffff) << 12) | (rd << 7) | op) | 0;

/** EBREAK's 32-bit encoding (c.ebreak expands to it) */
export const EBREAK = 0x00100073;

/** Expand a 16-bit instruction to its 32-bit equivalent; null when illegal or reserved. */
export function expandRvc(h: number): number | null {
  const q = h & 3, f3 = bits(h, 15, 13);
  const rdp = bits(h, 4, 2) + 8, rs1p = bits(h, 9, 7) + 8;
  const rd = bits(h, 11, 7), rs2 = bits(h, 6, 2);
  if (q === 0) {
    switch (f3) {
      case 0: { // c.addi4spn
        const imm = (bits(h, 12, 11) << 4) | (bits(h, 10, 7) << 6) | (bit(h, 6) << 2) | (bit(h, 5) << 3);
        return imm === 0 ? null : encI(0x13, rdp, 0, 2, imm);
      }
      case 1: return encI(0x07, rdp, 3, rs1p, (bits(h, 12, 10) << 3) | (bits(h, 6, 5) << 6)); // c.fld
      case 2: return encI(0x03, rdp, 2, rs1p, (bits(h, 12, 10) << 3) | (bit(h, 6) << 2) | (bit(h, 5) << 6)); // c.lw
      case 3: return encI(0x03, rdp, 3, rs1p, (bits(h, 12, 10) << 3) | (bits(h, 6, 5) << 6)); // c.ld
      case 5: return encS(0x27, 3, rs1p, rdp, (bits(h, 12, 10) << 3) | (bits(h, 6, 5) << 6)); // c.fsd
      case 6: return encS(0x23, 2, rs1p, rdp, (bits(h, 12, 10) << 3) | (bit(h, 6) << 2) | (bit(h, 5) << 6)); // c.sw
      case 7: return encS(0x23, 3, rs1p, rdp, (bits(h, 12, 10) << 3) | (bits(h, 6, 5) << 6)); // c.sd
      default: return null; // reserved
    }
  }
  const imm6 = sx((bit(h, 12) << 5) | bits(h, 6, 2), 6);
  if (q === 1) {
    switch (f3) {
      case 0: return encI(0x13, rd, 0, rd, imm6); // c.addi / c.nop
      case 1: return rd === 0 ? null : encI(0x1b, rd, 0, rd, imm6); // c.addiw
      case 2: return encI(0x13, rd, 0, 0, imm6); // c.li
      case 3:
        if (rd === 2) { // c.addi16sp
          const imm = sx((bit(h, 12) << 9) | (bit(h, 6) << 4) | (bit(h, 5) << 6) | (bits(h, 4, 3) << 7) | (bit(h, 2) << 5), 10);
          return imm === 0 ? null : encI(0x13, 2, 0, 2, imm);
        }
        return imm6 === 0 ? null : encU(0x37, rd, imm6); // c.lui
      case 4: {
        const f2 = bits(h, 11, 10);
        const shamt = (bit(h, 12) << 5) | bits(h, 6, 2);
        if (f2 === 0) return encI(0x13, rs1p, 5, rs1p, shamt); // c.srli
        if (f2 === 1) return encI(0x13, rs1p, 5, rs1p, shamt | 0x400); // c.srai
        if (f2 === 2) return encI(0x13, rs1p, 7, rs1p, imm6); // c.andi
        const op2 = bits(h, 6, 5), rs2p = rdp;
        if (bit(h, 12) === 0) {
          switch (op2) {
            case 0: return encR(0x33, rs1p, 0, rs1p, rs2p, 0x20); // c.sub
            case 1: return encR(0x33, rs1p, 4, rs1p, rs2p, 0); // c.xor
            case 2: return encR(0x33, rs1p, 6, rs1p, rs2p, 0); // c.or
            default: return encR(0x33, rs1p, 7, rs1p, rs2p, 0); // c.and
          }
        }
        if (op2 === 0) return encR(0x3b, rs1p, 0, rs1p, rs2p, 0x20); // c.subw
        if (op2 === 1) return encR(0x3b, rs1p, 0, rs1p, rs2p, 0); // c.addw
        return null;
      }
      case 5: { // c.j
        const imm = sx((bit(h, 12) << 11) | (bit(h, 11) << 4) | (bits(h, 10, 9) << 8) | (bit(h, 8) << 10) | (bit(h, 7) << 6)
          | (bit(h, 6) << 7) | (bits(h, 5, 3) << 1) | (bit(h, 2) << 5), 12);
        return encJ(0, imm);
      }
      default: { // c.beqz / c.bnez
        const imm = sx((bit(h, 12) << 8) | (bits(h, 11, 10) << 3) | (bits(h, 6, 5) << 6) | (bits(h, 4, 3) << 1) | (bit(h, 2) << 5), 9);
        return encB(f3 === 6 ? 0 : 1, rs1p, 0, imm);
      }
    }
  }
  if (q === 2) {
    switch (f3) {
      case 0: return encI(0x13, rd, 1, rd, (bit(h, 12) << 5) | bits(h, 6, 2)); // c.slli
      case 1: return encI(0x07, rd, 3, 2, (bit(h, 12) << 5) | (bits(h, 6, 5) << 3) | (bits(h, 4, 2) << 6)); // c.fldsp
      case 2: return rd === 0 ? null : encI(0x03, rd, 2, 2, (bit(h, 12) << 5) | (bits(h, 6, 4) << 2) | (bits(h, 3, 2) << 6)); // c.lwsp
      case 3: return rd === 0 ? null : encI(0x03, rd, 3, 2, (bit(h, 12) << 5) | (bits(h, 6, 5) << 3) | (bits(h, 4, 2) << 6)); // c.ldsp
      case 4:
        if (bit(h, 12) === 0) {
          if (rs2 === 0) return rd === 0 ? null : encI(0x67, 0, 0, rd, 0); // c.jr
          return encR(0x33, rd, 0, 0, rs2, 0); // c.mv
        }
        if (rs2 === 0) return rd === 0 ? EBREAK : encI(0x67, 1, 0, rd, 0); // c.ebreak / c.jalr
        return encR(0x33, rd, 0, rd, rs2, 0); // c.add
      case 6: return encS(0x23, 2, 2, rs2, (bits(h, 12, 9) << 2) | (bits(h, 8, 7) << 6)); // c.swsp
      case 5: return encS(0x27, 3, 2, rs2, (bits(h, 12, 10) << 3) | (bits(h, 9, 7) << 6)); // c.fsdsp
      case 7: return encS(0x23, 3, 2, rs2, (bits(h, 12, 10) << 3) | (bits(h, 9, 7) << 6)); // c.sdsp
      default: return null;
    }
  }
  return null;
}
