/**
 * AdvSIMD scalar forms: shift by immediate, copy (dup to a scalar),
 * pairwise (addp, faddp) and two-register misc FP on one element, using
 * the vector forms' executors (advsimd.ts, advsimdFp.ts). See fpsimd.ts.
 */
import type { Row } from '../insn';
import { f } from '../fmt';
import { lane, setLane, lane64, setLane64, SCALAR } from './fpsimdRegs';
import { fpwrite, FADD, farith } from './fpScalar';
import { shiftImmExec } from './advsimd';
import { fLane, FP_MISC, fpMiscExec } from './advsimdFp';

/** AdvSIMD scalar shift by immediate (64-bit): shl / ushr / sshr Dd, Dn, #n */
export const scalarShiftImm: Row = {
  name: 'AdvSIMD scalar shift by immediate', mask: 0xdf800400, match: 0x5f000400,
  decode(w, i) {
    const u = f(w, 29, 1), immh = f(w, 19, 4), immb = f(w, 16, 3), opc = f(w, 11, 5);
    if (!(immh & 8)) return false;
    const raw = (immh << 3) | immb;
    i.size = 8; i.imm3 = 8; i.op2 = u; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    if (opc === 10 && !u) { i.op = 10; i.imm = raw - 64; }
    else if (opc === 0) { i.op = 0; i.imm = 128 - raw; }
    else return false;
    i.exec = shiftImmExec;
    return true;
  },
  fmt: i => [i.op === 10 ? 'shl' : i.op2 ? 'ushr' : 'sshr', `d${i.rd}, d${i.rn}, #${i.imm}`],
};

/** AdvSIMD scalar copy: dup (mov) Vd, Vn.T[i] into a scalar register */
export const scalarCopy: Row = {
  name: 'AdvSIMD scalar copy', mask: 0xffe0fc00, match: 0x5e000400,
  decode(w, i) {
    const imm5 = f(w, 16, 5);
    const sz = imm5 & 1 ? 0 : imm5 & 2 ? 1 : imm5 & 4 ? 2 : imm5 & 8 ? 3 : -1;
    if (sz < 0) return false;
    i.imm3 = 1 << sz; i.imm2 = imm5 >> (sz + 1); i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    i.exec = (c, x) => {
      const v = x.imm3 === 8 ? lane64(c, x.rn, x.imm2) : BigInt(lane(c, x.rn, x.imm3, x.imm2));
      c.vb.fill(0, x.rd * 16, x.rd * 16 + 16);
      if (x.imm3 === 8) setLane64(c, x.rd, 0, v); else setLane(c, x.rd, x.imm3, 0, Number(v));
    };
    return true;
  },
  fmt: i => ['mov', `${SCALAR[Math.log2(i.imm3)]}${i.rd}, v${i.rn}.${['b', 'h', 's', 'd'][Math.log2(i.imm3)]}[${i.imm2}]`],
};

/** AdvSIMD scalar pairwise: addp Dd, Vn.2d; faddp Sd/Dd, Vn.2s/2d */
export const scalarPairwise: Row = {
  name: 'AdvSIMD scalar pairwise', mask: 0xdf3e0c00, match: 0x5e300800,
  decode(w, i) {
    const u = f(w, 29, 1), size = f(w, 22, 2), opc = f(w, 12, 5);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    if (!u && size === 3 && opc === 27) {
      i.op = 0; i.exec = (c, x) => { const v = lane64(c, x.rn, 0) + lane64(c, x.rn, 1); c.vb.fill(0, x.rd * 16, x.rd * 16 + 16); setLane64(c, x.rd, 0, v); };
      return true;
    }
    if (u && size < 2 && opc === 13) {
      i.op = 1; i.imm3 = size ? 8 : 4;
      i.exec = (c, x) => {
        const d = x.imm3 === 8;
        const v = farith(c, FADD, fLane(c, x.rn, d, 0), fLane(c, x.rn, d, 1), d);
        fpwrite(c, x.rd, v, d);
      };
      return true;
    }
    return false;
  },
  fmt: i => (i.op === 0 ? ['addp', `d${i.rd}, v${i.rn}.2d`] : ['faddp', `${i.imm3 === 8 ? 'd' : 's'}${i.rd}, v${i.rn}.${i.imm3 === 8 ? '2d' : '2s'}`]),
};

/** AdvSIMD scalar two-register misc (FP): fcvtzs fcvtzu scvtf ucvtf fneg fabs ... on one S/D element */
export const scalarMiscFp: Row = {
  name: 'AdvSIMD scalar two-register misc (FP)', mask: 0xdf3e0c00, match: 0x5e200800,
  decode(w, i) {
    const u = f(w, 29, 1), size = f(w, 22, 2), opc = f(w, 12, 5);
    const name = opc >= 12 ? FP_MISC[`${u}:${size >> 1}:${opc}`] : undefined;
    if (!name || name === 'fcvtl' || name === 'fcvtn') return false;
    i.imm3 = size & 1 ? 8 : 4; i.size = i.imm3; i.op = opc; i.op2 = u; i.imm2 = size >> 1; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    i.exec = fpMiscExec;
    return true;
  },
  fmt: i => {
    const name = FP_MISC[`${i.op2}:${i.imm2}:${i.op}`], r = i.imm3 === 8 ? 'd' : 's';
    return [name, `${r}${i.rd}, ${r}${i.rn}${/^fcm/.test(name) ? ', #0.0' : ''}`];
  },
};
