/**
 * The riscv64 encoding table (QEMU decodetree's insn32.decode as data):
 * one row per 32-bit instruction — mask/match, operand format, executor.
 * The decoder, the disassembler and the kprobes decoder all read it;
 * compressed instructions are expanded to these rows first (rvc.ts).
 */
import type { RvExec, RvFormat, RvRow } from './insn';
import * as I from './exec/rvi';
import * as M from './exec/rvm';
import * as A from './exec/rva';
import * as Z from './exec/zicsr';
import * as S from './exec/system';
import * as F from './exec/rvfd';

const OPC = 0x7f, F3 = 0x7000, F7 = 0xfe000000 | 0, F6 = 0xfc000000 | 0;
const row = (name: string, mask: number, match: number, fmt: RvFormat, exec: RvExec): RvRow => ({ name, mask: mask | 0, match: match | 0, fmt, exec });
const f3 = (op: number, f: number): number => op | (f << 12);
const f37 = (op: number, f: number, f7: number): number => op | (f << 12) | (f7 << 25);
const r = (name: string, op: number, f: number, f7: number, exec: RvExec): RvRow => row(name, OPC | F3 | F7, f37(op, f, f7), 'R', exec);
const RS2 = 0x1f00000;
/** OP-FP (0x53) rows for .s (fmt 0) and .d (fmt 1): funct5 in bits 31:27; f3 and rs2 fixed when given */
const fp = (name: string, f5: number, f3: number | null, rs2: number | null, fmt: RvFormat, exec: RvExec, formats = ['s', 'd']): RvRow[] =>
  formats.map(sfx => {
    const k = sfx === 's' ? 0 : 1;
    return row(`${name}.${sfx}`, OPC | 0xfe000000 | (f3 !== null ? F3 : 0) | (rs2 !== null ? RS2 : 0),
      0x53 | (((f5 << 2) | k) << 25) | ((f3 ?? 0) << 12) | ((rs2 ?? 0) << 20), fmt, exec);
  });
/** fused multiply-add rows (major opcode, fmt in bits 26:25) */
const fma = (name: string, op: number, exec: RvExec): RvRow[] =>
  [row(`${name}.s`, OPC | 0x6000000, op, 'fR4', exec), row(`${name}.d`, OPC | 0x6000000, op | 0x2000000, 'fR4', exec)];
/** fcvt between integers and floats: one row per (float format, integer type) */
const cvt = (toInt: boolean): RvRow[] => {
  const out: RvRow[] = [];
  for (const [k, sfx] of [[0, 's'], [1, 'd']] as const) {
    for (const [t, it] of [[0, 'w'], [1, 'wu'], [2, 'l'], [3, 'lu']] as const) {
      const name = toInt ? `fcvt.${it}.${sfx}` : `fcvt.${sfx}.${it}`;
      const f7 = ((toInt ? 0x18 : 0x1a) << 2) | k;
      out.push(row(name, OPC | 0xfe000000 | RS2, 0x53 | (f7 << 25) | (t << 20), toInt ? 'f2x' : 'x2f', toInt ? F.fcvtToInt : F.fcvtFromInt));
    }
  }
  return out;
};
const amo = (name: string, f5: number, exec32: RvExec, exec64: RvExec, fmt: RvFormat = 'amo'): RvRow[] => {
  const mask = OPC | F3 | 0xf8000000 | (fmt === 'lr' ? 0x1f00000 : 0);
  return [row(`${name}.w`, mask, 0x2f | (2 << 12) | (f5 << 27), fmt, exec32), row(`${name}.d`, mask, 0x2f | (3 << 12) | (f5 << 27), fmt, exec64)];
};

export const RV_ROWS: readonly RvRow[] = [
  // RV64I
  row('lui', OPC, 0x37, 'U', I.lui),
  row('auipc', OPC, 0x17, 'U', I.auipc),
  row('jal', OPC, 0x6f, 'J', I.jal),
  row('jalr', OPC | F3, 0x67, 'jalr', I.jalr),
  row('beq', OPC | F3, f3(0x63, 0), 'B', I.beq),
  row('bne', OPC | F3, f3(0x63, 1), 'B', I.bne),
  row('blt', OPC | F3, f3(0x63, 4), 'B', I.blt),
  row('bge', OPC | F3, f3(0x63, 5), 'B', I.bge),
  row('bltu', OPC | F3, f3(0x63, 6), 'B', I.bltu),
  row('bgeu', OPC | F3, f3(0x63, 7), 'B', I.bgeu),
  row('lb', OPC | F3, f3(0x03, 0), 'load', I.lb),
  row('lh', OPC | F3, f3(0x03, 1), 'load', I.lh),
  row('lw', OPC | F3, f3(0x03, 2), 'load', I.lw),
  row('ld', OPC | F3, f3(0x03, 3), 'load', I.ld),
  row('lbu', OPC | F3, f3(0x03, 4), 'load', I.lbu),
  row('lhu', OPC | F3, f3(0x03, 5), 'load', I.lhu),
  row('lwu', OPC | F3, f3(0x03, 6), 'load', I.lwu),
  row('sb', OPC | F3, f3(0x23, 0), 'S', I.sb),
  row('sh', OPC | F3, f3(0x23, 1), 'S', I.sh),
  row('sw', OPC | F3, f3(0x23, 2), 'S', I.sw),
  row('sd', OPC | F3, f3(0x23, 3), 'S', I.sd),
  row('addi', OPC | F3, f3(0x13, 0), 'I', I.addi),
  row('slti', OPC | F3, f3(0x13, 2), 'I', I.slti),
  row('sltiu', OPC | F3, f3(0x13, 3), 'I', I.sltiu),
  row('xori', OPC | F3, f3(0x13, 4), 'I', I.xori),
  row('ori', OPC | F3, f3(0x13, 6), 'I', I.ori),
  row('andi', OPC | F3, f3(0x13, 7), 'I', I.andi),
  row('slli', OPC | F3 | F6, f3(0x13, 1), 'Ishift', I.slli),
  row('srli', OPC | F3 | F6, f3(0x13, 5), 'Ishift', I.srli),
  row('srai', OPC | F3 | F6, f3(0x13, 5) | (0x10 << 26), 'Ishift', I.srai),
  row('addiw', OPC | F3, f3(0x1b, 0), 'I', I.addiw),
  row('slliw', OPC | F3 | F7, f3(0x1b, 1), 'Ishiftw', I.slliw),
  row('srliw', OPC | F3 | F7, f3(0x1b, 5), 'Ishiftw', I.srliw),
  row('sraiw', OPC | F3 | F7, f3(0x1b, 5) | (0x20 << 25), 'Ishiftw', I.sraiw),
  r('add', 0x33, 0, 0, I.add), r('sub', 0x33, 0, 0x20, I.sub), r('sll', 0x33, 1, 0, I.sll),
  r('slt', 0x33, 2, 0, I.slt), r('sltu', 0x33, 3, 0, I.sltu), r('xor', 0x33, 4, 0, I.xor),
  r('srl', 0x33, 5, 0, I.srl), r('sra', 0x33, 5, 0x20, I.sra), r('or', 0x33, 6, 0, I.or), r('and', 0x33, 7, 0, I.and),
  r('addw', 0x3b, 0, 0, I.addw), r('subw', 0x3b, 0, 0x20, I.subw), r('sllw', 0x3b, 1, 0, I.sllw),
  r('srlw', 0x3b, 5, 0, I.srlw), r('sraw', 0x3b, 5, 0x20, I.sraw),
  row('fence', OPC | F3, f3(0x0f, 0), 'fence', I.fence),
  row('fence.i', OPC | F3, f3(0x0f, 1), 'none', I.fence),
  // RV64M
  r('mul', 0x33, 0, 1, M.mul), r('mulh', 0x33, 1, 1, M.mulh), r('mulhsu', 0x33, 2, 1, M.mulhsu), r('mulhu', 0x33, 3, 1, M.mulhu),
  r('div', 0x33, 4, 1, M.div), r('divu', 0x33, 5, 1, M.divu), r('rem', 0x33, 6, 1, M.rem), r('remu', 0x33, 7, 1, M.remu),
  r('mulw', 0x3b, 0, 1, M.mulw), r('divw', 0x3b, 4, 1, M.divw), r('divuw', 0x3b, 5, 1, M.divuw),
  r('remw', 0x3b, 6, 1, M.remw), r('remuw', 0x3b, 7, 1, M.remuw),
  // RV64A
  ...amo('lr', 0x02, A.lrW, A.lrD, 'lr'), ...amo('sc', 0x03, A.scW, A.scD),
  ...amo('amoswap', 0x01, A.amoswapW, A.amoswapD), ...amo('amoadd', 0x00, A.amoaddW, A.amoaddD),
  ...amo('amoxor', 0x04, A.amoxorW, A.amoxorD), ...amo('amoand', 0x0c, A.amoandW, A.amoandD),
  ...amo('amoor', 0x08, A.amoorW, A.amoorD), ...amo('amomin', 0x10, A.amominW, A.amominD),
  ...amo('amomax', 0x14, A.amomaxW, A.amomaxD), ...amo('amominu', 0x18, A.amominuW, A.amominuD),
  ...amo('amomaxu', 0x1c, A.amomaxuW, A.amomaxuD),
  // F, D
  row('flw', OPC | F3, f3(0x07, 2), 'fload', F.flw),
  row('fld', OPC | F3, f3(0x07, 3), 'fload', F.fld),
  row('fsw', OPC | F3, f3(0x27, 2), 'fstore', F.fsw),
  row('fsd', OPC | F3, f3(0x27, 3), 'fstore', F.fsd),
  ...fma('fmadd', 0x43, F.fmaddOp), ...fma('fmsub', 0x47, F.fmsubOp),
  ...fma('fnmsub', 0x4b, F.fnmsubOp), ...fma('fnmadd', 0x4f, F.fnmaddOp),
  ...fp('fadd', 0x00, null, null, 'fR', F.faddOp), ...fp('fsub', 0x01, null, null, 'fR', F.fsubOp),
  ...fp('fmul', 0x02, null, null, 'fR', F.fmulOp), ...fp('fdiv', 0x03, null, null, 'fR', F.fdivOp),
  ...fp('fsqrt', 0x0b, null, 0, 'fR1', F.fsqrtOp),
  ...fp('fsgnj', 0x04, 0, null, 'fRn', F.fsgnjOp), ...fp('fsgnjn', 0x04, 1, null, 'fRn', F.fsgnjnOp),
  ...fp('fsgnjx', 0x04, 2, null, 'fRn', F.fsgnjxOp),
  ...fp('fmin', 0x05, 0, null, 'fRn', F.fminOp), ...fp('fmax', 0x05, 1, null, 'fRn', F.fmaxOp),
  row('fcvt.s.d', OPC | 0xfe000000 | RS2, 0x53 | (0x20 << 25) | (1 << 20), 'fR1', F.fcvtFloat),
  row('fcvt.d.s', OPC | 0xfe000000 | RS2, 0x53 | (0x21 << 25), 'fR1', F.fcvtFloat),
  ...fp('feq', 0x14, 2, null, 'fcmp', F.feqOp), ...fp('flt', 0x14, 1, null, 'fcmp', F.fltOp),
  ...fp('fle', 0x14, 0, null, 'fcmp', F.fleOp),
  ...fp('fclass', 0x1c, 1, 0, 'f2x', F.fclassOp),
  ...cvt(true), ...cvt(false),
  row('fmv.x.w', OPC | 0xfe000000 | F3 | RS2, 0x53 | (0x70 << 25), 'f2x', F.fmvToInt),
  row('fmv.x.d', OPC | 0xfe000000 | F3 | RS2, 0x53 | (0x71 << 25), 'f2x', F.fmvToInt),
  row('fmv.w.x', OPC | 0xfe000000 | F3 | RS2, 0x53 | (0x78 << 25), 'x2f', F.fmvFromInt),
  row('fmv.d.x', OPC | 0xfe000000 | F3 | RS2, 0x53 | (0x79 << 25), 'x2f', F.fmvFromInt),
  // system, Zicsr
  row('ecall', -1, 0x00000073, 'none', S.ecall),
  row('ebreak', -1, 0x00100073, 'none', S.ebreak),
  row('sret', -1, 0x10200073, 'none', S.sret),
  row('wfi', -1, 0x10500073, 'none', S.wfi),
  row('sfence.vma', OPC | F3 | F7 | 0xf80, 0x12000073, 'R', S.sfenceVma),
  row('csrrw', OPC | F3, f3(0x73, 1), 'csr', Z.csrrw),
  row('csrrs', OPC | F3, f3(0x73, 2), 'csr', Z.csrrs),
  row('csrrc', OPC | F3, f3(0x73, 3), 'csr', Z.csrrc),
  row('csrrwi', OPC | F3, f3(0x73, 5), 'csri', Z.csrrwi),
  row('csrrsi', OPC | F3, f3(0x73, 6), 'csri', Z.csrrsi),
  row('csrrci', OPC | F3, f3(0x73, 7), 'csri', Z.csrrci),
];

/** the row of an illegal encoding */
export const ILLEGAL_ROW: RvRow = row('unimp', 0, 0, 'none', S.illegal);

/** rows by major opcode (bits 6:0), in table order */
const BY_OPCODE = new Map<number, RvRow[]>();
for (const rw of RV_ROWS) {
  const op = rw.match & OPC;
  let list = BY_OPCODE.get(op);
  if (!list) BY_OPCODE.set(op, list = []);
  list.push(rw);
}

/** The row matching a 32-bit instruction word, or null (illegal). */
export function matchRow(word: number): RvRow | null {
  const list = BY_OPCODE.get(word & OPC);
  if (list) for (const rw of list) if ((word & rw.mask) === rw.match) return rw;
  return null;
}
