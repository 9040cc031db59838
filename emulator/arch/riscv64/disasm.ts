/**
 * riscv64 disassembly as `llvm-objdump -d` prints it: ABI register names,
 * llvm's preferred aliases (li, mv, nop, not, neg, sext.w, seqz, snez, j,
 * jr, ret, beqz..., csrr/csrw, rdtime...), compressed instructions shown as
 * their expanded form, branch targets as absolute addresses (with
 * ` <symbol>` when a symbolizer names them). Also the control-flow
 * classification kprobes and stepping use.
 */
import type { DecodedInsn } from '../types';
import type { RvInsn } from './insn';
import { X0_SINK } from './insn';
import { CSR_NAMES } from './csr';
import { fromVAddr } from '../../memory/address';

export const ABI = ['zero', 'ra', 'sp', 'gp', 'tp', 't0', 't1', 't2', 's0', 's1', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7',
  's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9', 's10', 's11', 't3', 't4', 't5', 't6'];

/** f register ABI names */
export const FABI = ['ft0', 'ft1', 'ft2', 'ft3', 'ft4', 'ft5', 'ft6', 'ft7', 'fs0', 'fs1', 'fa0', 'fa1', 'fa2', 'fa3', 'fa4', 'fa5',
  'fa6', 'fa7', 'fs2', 'fs3', 'fs4', 'fs5', 'fs6', 'fs7', 'fs8', 'fs9', 'fs10', 'fs11', 'ft8', 'ft9', 'ft10', 'ft11'];
/** rounding-mode operand as llvm prints it (nothing for dyn) */
const RM_TEXT = [', rne', ', rtz', ', rdn', ', rup', ', rmm', ', 5', ', 6', ''];
/** the floating-point CSRs' aliases: frflags / fsflags / fsflagsi, frrm / fsrm / fsrmi, frcsr / fscsr */
const FCSR_ALIAS: Record<string, [string, boolean]> = { fflags: ['flags', true], frm: ['rm', true], fcsr: ['csr', false] };
/** conversions that are always exact: llvm prints no rounding mode */
const EXACT_CVT = new Set(['fcvt.d.s', 'fcvt.d.w', 'fcvt.d.wu']);

const BRANCH_ZERO: Record<string, [string, string]> = { beq: ['beqz', ''], bne: ['bnez', ''], blt: ['bltz', 'bgtz'], bge: ['bgez', 'blez'] };
const FENCE_SET = (v: number): string => ['i', 'o', 'r', 'w'].filter((_, k) => (v >> (3 - k)) & 1).join('') || '0';

export interface RvText { mnemonic: string; operands: string; target?: bigint }

/** Mnemonic and operands of a decoded instruction; `sym` appends ` <name>` to an absolute target. */
export function rvText(i: RvInsn, sym?: (a: bigint) => string | undefined): RvText {
  const n = i.row.name, w = i.word;
  const rd = ABI[i.rd === X0_SINK ? 0 : i.rd], rs1 = ABI[i.rs1], rs2 = ABI[i.rs2];
  const rdz = i.rd === X0_SINK, imm = i.imm;
  const tgt = (): RvText => {
    const t = fromVAddr(i.addr + imm);
    const name = sym?.(t);
    return { mnemonic: '', operands: `0x${t.toString(16)}${name ? ` <${name}>` : ''}`, target: t };
  };
  const T = (mnemonic: string, prefix: string): RvText => { const t = tgt(); return { mnemonic, operands: prefix + t.operands, target: t.target }; };
  const o = (mnemonic: string, operands = ''): RvText => ({ mnemonic, operands });
  switch (i.row.fmt) {
    case 'R':
      if (n === 'sfence.vma') return o(n, i.rs2 !== 0 ? `${rs1}, ${rs2}` : i.rs1 !== 0 ? rs1 : '');
      if (n === 'add' && i.rs1 === 0 && i.len === 2) return o('mv', `${rd}, ${rs2}`); // c.mv
      if (n === 'sub' && i.rs1 === 0) return o('neg', `${rd}, ${rs2}`);
      if (n === 'subw' && i.rs1 === 0) return o('negw', `${rd}, ${rs2}`);
      if (n === 'sltu' && i.rs1 === 0) return o('snez', `${rd}, ${rs2}`);
      if (n === 'slt' && i.rs2 === 0) return o('sltz', `${rd}, ${rs1}`);
      if (n === 'slt' && i.rs1 === 0) return o('sgtz', `${rd}, ${rs2}`);
      return o(n, `${rd}, ${rs1}, ${rs2}`);
    case 'I':
      if (n === 'addi') {
        if (rdz && i.rs1 === 0 && imm === 0) return o('nop');
        if (i.rs1 === 0) return o('li', `${rd}, ${imm}`);
        if (imm === 0) return o('mv', `${rd}, ${rs1}`);
      }
      if (n === 'addiw' && imm === 0) return o('sext.w', `${rd}, ${rs1}`);
      if (n === 'xori' && imm === -1) return o('not', `${rd}, ${rs1}`);
      if (n === 'sltiu' && imm === 1) return o('seqz', `${rd}, ${rs1}`);
      return o(n, `${rd}, ${rs1}, ${imm}`);
    case 'Ishift': case 'Ishiftw': return o(n, `${rd}, ${rs1}, ${imm}`);
    case 'load': return o(n, `${rd}, ${imm}(${rs1})`);
    case 'S': return o(n, `${rs2}, ${imm}(${rs1})`);
    case 'U': return o(n, `${rd}, ${(imm >>> 12)}`);
    case 'J':
      if (rdz) return T('j', '');
      if (i.rd === 1) return T('jal', '');
      return T('jal', `${rd}, `);
    case 'jalr':
      if (rdz && i.rs1 === 1 && imm === 0) return o('ret');
      if (rdz) return o('jr', imm === 0 ? rs1 : `${imm}(${rs1})`);
      if (i.rd === 1) return o('jalr', imm === 0 ? rs1 : `${imm}(${rs1})`);
      return o('jalr', `${rd}, ${imm}(${rs1})`);
    case 'B': {
      const z = BRANCH_ZERO[n];
      if (z && i.rs2 === 0) return T(z[0], `${rs1}, `);
      if (z && z[1] && i.rs1 === 0) return T(z[1], `${rs2}, `);
      return T(n, `${rs1}, ${rs2}, `);
    }
    case 'fload': return o(n, `${FABI[(w >>> 7) & 31]}, ${imm}(${rs1})`);
    case 'fstore': return o(n, `${FABI[i.rs2]}, ${imm}(${rs1})`);
    case 'fR': case 'fR4': case 'fR1': case 'fRn': {
      const fd = FABI[(w >>> 7) & 31], f1 = FABI[i.rs1], f2 = FABI[i.rs2];
      const rm = RM_TEXT[(w >>> 12) & 7];
      if (i.row.fmt === 'fR4') return o(n, `${fd}, ${f1}, ${f2}, ${FABI[(w >>> 27) & 31]}${rm}`);
      if (i.row.fmt === 'fR1') return o(n, `${fd}, ${f1}${EXACT_CVT.has(n) ? '' : rm}`);
      if (i.row.fmt === 'fR') return o(n, `${fd}, ${f1}, ${f2}${rm}`);
      if (i.rs1 === i.rs2 && n.startsWith('fsgnj')) {
        const alias = n.startsWith('fsgnjn') ? 'fneg' : n.startsWith('fsgnjx') ? 'fabs' : 'fmv';
        return o(`${alias}${n.slice(n.lastIndexOf('.'))}`, `${fd}, ${f1}`);
      }
      return o(n, `${fd}, ${f1}, ${f2}`);
    }
    case 'fcmp': return o(n, `${rd}, ${FABI[i.rs1]}, ${FABI[i.rs2]}`);
    case 'f2x': return o(n, `${rd}, ${FABI[i.rs1]}${n.startsWith('fcvt') ? RM_TEXT[(w >>> 12) & 7] : ''}`);
    case 'x2f': return o(n, `${FABI[(w >>> 7) & 31]}, ${rs1}${n.startsWith('fcvt') && !EXACT_CVT.has(n) ? RM_TEXT[(w >>> 12) & 7] : ''}`);
    case 'csr': case 'csri': {
      const csr = CSR_NAMES[i.csr] ?? `${i.csr}`;
      const fa = FCSR_ALIAS[csr];
      if (fa) {
        const [x, hasImm] = fa;
        if (n === 'csrrs' && i.rs1 === 0) return o(`fr${x}`, rd);
        if (n === 'csrrw') return o(`fs${x}`, rdz ? rs1 : `${rd}, ${rs1}`);
        if (n === 'csrrwi' && hasImm) return o(`fs${x}i`, rdz ? `${imm}` : `${rd}, ${imm}`);
      }
      const src = i.row.fmt === 'csri' ? `${imm}` : rs1;
      const base = n.replace(/^csrr/, '').replace(/i$/, ''); // w, s, c
      const isImm = i.row.fmt === 'csri';
      if (n === 'csrrs' && i.rs1 === 0) {
        if (csr === 'time' || csr === 'cycle' || csr === 'instret') return o(`rd${csr}`, rd);
        return o('csrr', `${rd}, ${csr}`);
      }
      if (rdz) return o(`csr${base}${isImm ? 'i' : ''}`, `${csr}, ${src}`);
      return o(n, `${rd}, ${csr}, ${src}`);
    }
    case 'amo': case 'lr': {
      const aq = (w >>> 26) & 1, rl = (w >>> 25) & 1;
      const m = n + (aq && rl ? '.aqrl' : aq ? '.aq' : rl ? '.rl' : '');
      return i.row.fmt === 'lr' ? o(m, `${rd}, (${rs1})`) : o(m, `${rd}, ${rs2}, (${rs1})`);
    }
    case 'fence': {
      const pred = (w >>> 24) & 15, succ = (w >>> 20) & 15;
      if (pred === 15 && succ === 15) return o('fence');
      return o('fence', `${FENCE_SET(pred)}, ${FENCE_SET(succ)}`);
    }
    default:
      return o(n);
  }
}

/** Control-flow class (kprobes, stepping, stack walks). */
export function rvFlow(i: RvInsn): DecodedInsn['flow'] {
  switch (i.row.fmt) {
    case 'J': return i.rd === X0_SINK ? 'jump' : 'call';
    case 'jalr':
      if (i.rd === X0_SINK) return i.rs1 === 1 && i.imm === 0 ? 'ret' : 'indirectJump';
      return 'indirectCall';
    case 'B': return 'condJump';
  }
  switch (i.row.name) {
    case 'ecall': case 'ebreak': case 'unimp': return 'trap';
    case 'wfi': return 'halt';
    case 'sret': return 'indirectJump';
  }
  return 'none';
}

/** The DecodedInsn view of a decoded instruction. */
export function toDecoded(i: RvInsn, bytes: Uint8Array, sym?: (a: bigint) => string | undefined): DecodedInsn {
  const t = rvText(i, sym);
  const d: DecodedInsn = {
    addr: fromVAddr(i.addr), length: i.len, bytes, mnemonic: t.mnemonic, operands: t.operands,
    flow: rvFlow(i), ipRelative: i.row.name === 'auipc',
  };
  if (t.target !== undefined) d.target = t.target;
  return d;
}
