/**
 * The riscv64 front end of the block translator (emulator/jit/ir.ts): RV64I
 * and M (register, immediate and W forms, loads, stores, conditional
 * branches, jal, jalr), compressed instructions included — the decoder hands
 * them over expanded, with the 32-bit form's row and fields. Everything else
 * (ecall / ebreak, fence, Zicsr, A, F / D, system, illegal encodings) runs
 * through its executor as a helper.
 *
 * The executors in exec/rvi.ts and exec/rvm.ts are the specification; each
 * emitter below computes the same 64-bit value from the same registers.
 * Notes:
 *  - x0 reads as the constant 0 and writes to it are dropped (the executors
 *    write the sink slot X0_SINK, which is no state: RvCpu.saveContext
 *    reports it as 0); slot 0 stays 0.
 *  - Misaligned loads and stores complete in the interpreter (exec/rvi.ts),
 *    so no alignment check is needed; an access the TLB cannot serve (a page
 *    crossing, a fault, a non-canonical address, device memory) leaves
 *    translated code before the instruction and the interpreter runs it.
 *  - A store does not drop other harts' LR reservations itself: while a
 *    hart holds one, its address space is observed and translated stores
 *    leave to the interpreter, which does (reservation.ts).
 *  - The IR's division gives riscv's results (remainder by zero = the
 *    dividend, MIN / -1 = MIN remainder 0) except the quotient by zero:
 *    0 in the IR, all ones in riscv (selected here).
 *  - jalr (RvCpu.target) faults at the jalr, before the link write, when
 *    x[rs1] or x[rs1] + imm is not a 48-bit canonical address (the sum as
 *    an exact integer); it does not check alignment (bit 0 is cleared; a
 *    target with bit 1 set is a compressed instruction's address). The
 *    emitted jalr leaves before itself through exitIf in both cases (the
 *    sum may be canonical while x[rs1] is not), so the interpreter faults
 *    exactly. jind's own canonical check cannot stand in for it when the
 *    jalr links: it comes after the link write, which its exit would store;
 *    a jalr x0, 0(rs1) (ret, jr) writes nothing and relies on it alone
 *    (clearing bit 0 keeps an address canonical or not).
 *  - branches and jal to a non-canonical target (only from code near the
 *    top or bottom of the canonical range) run as helpers: the executor
 *    sets that pc and the fetch faults.
 *  - riscv has no flags: no scratch, nothing to synchronise.
 */
import type { BinOp, FrontEnd, IrBuilder, Temp } from '../../jit/ir';
import type { RvCpu } from './cpu';
import type { RvInsn } from './insn';
import { X0_SINK } from './insn';
import { rvFlow } from './disasm';

type B = IrBuilder<RvInsn>;
/** the value an operation gives from its two operands (rs2, or the immediate as a sign-extended constant) */
type Value = (b: B, a: Temp, c: Temp) => Temp;

const CANON = 2 ** 47;
/** a pc the translator can exit to (a jump to a non-canonical address is left to the executor, which faults at the fetch) */
const canonical = (a: number): boolean => a >= -CANON && a < CANON;
/** 1 when the 64-bit value in t is not a 48-bit canonical address: t + 2^47 >= 2^48 unsigned */
const nonCanonical = (b: B, t: Temp): Temp => b.bin('geu', b.addi(t, 2 ** 47), b.const(2 ** 48));

const sext = (b: B, t: Temp): Temp => b.un('sext32', t);
const zext = (b: B, t: Temp): Temp => b.un('zext32', t);
const op = (o: BinOp): Value => (b, a, c) => b.bin(o, a, c);
/** a W shift: the amount is the low 5 bits of the operand */
const amt32 = (b: B, c: Temp): Temp => b.andi(c, 31);
/** riscv's quotient by zero: all ones */
const byZeroAllOnes = (b: B, c: Temp, q: Temp): Temp => b.sel(b.un('eqz', c), b.const(-1), q);

/** register-register operations (and the immediate forms' through IMMEDIATE) */
const VALUES: Record<string, Value> = {
  add: op('add'), sub: op('sub'), xor: op('xor'), or: op('or'), and: op('and'),
  // 64-bit shifts: wasm takes the amount modulo 64, as riscv does
  sll: op('shl'), srl: op('shru'), sra: op('shrs'),
  slt: op('lts'), sltu: op('ltu'),
  addw: (b, a, c) => sext(b, b.bin('add', a, c)),
  subw: (b, a, c) => sext(b, b.bin('sub', a, c)),
  sllw: (b, a, c) => sext(b, b.bin('shl', a, amt32(b, c))),
  srlw: (b, a, c) => sext(b, b.bin('shru', zext(b, a), amt32(b, c))),
  sraw: (b, a, c) => b.bin('shrs', sext(b, a), amt32(b, c)),
  mul: op('mul'), mulh: op('mulhs'), mulhu: op('mulhu'),
  // signed x unsigned high half: the unsigned one less b when a is negative
  mulhsu: (b, a, c) => b.bin('sub', b.bin('mulhu', a, c), b.and(b.bin('shrs', a, b.const(63)), c)),
  div: (b, a, c) => byZeroAllOnes(b, c, b.bin('divs', a, c)),
  divu: (b, a, c) => byZeroAllOnes(b, c, b.bin('divu', a, c)),
  rem: op('rems'), remu: op('remu'),
  mulw: (b, a, c) => sext(b, b.bin('mul', a, c)),
  // on the sign-extended words MIN/-1 gives +2^31, which sext32 turns back into MIN
  divw: (b, a, c) => { const y = sext(b, c); return byZeroAllOnes(b, y, sext(b, b.bin('divs', sext(b, a), y))); },
  divuw: (b, a, c) => { const y = zext(b, c); return byZeroAllOnes(b, y, sext(b, b.bin('divu', zext(b, a), y))); },
  remw: (b, a, c) => b.bin('rems', sext(b, a), sext(b, c)),
  remuw: (b, a, c) => sext(b, b.bin('remu', zext(b, a), zext(b, c))),
};

/** immediate forms: the register form's operation with the immediate as its second operand */
const IMMEDIATE: Record<string, string> = {
  addi: 'add', slti: 'slt', sltiu: 'sltu', xori: 'xor', ori: 'or', andi: 'and',
  slli: 'sll', srli: 'srl', srai: 'sra', addiw: 'addw', slliw: 'sllw', srliw: 'srlw', sraiw: 'sraw',
};

const LOADS: Record<string, [1 | 2 | 4 | 8, boolean]> = {
  lb: [1, true], lh: [2, true], lw: [4, true], ld: [8, false], lbu: [1, false], lhu: [2, false], lwu: [4, false],
};
const STORES: Record<string, 1 | 2 | 4 | 8> = { sb: 1, sh: 2, sw: 4, sd: 8 };
/** branch taken when rs1 <op> rs2 */
const BRANCHES: Record<string, BinOp> = { beq: 'eq', bne: 'ne', blt: 'lts', bge: 'ges', bltu: 'ltu', bgeu: 'geu' };

/** x[r] (x0: the constant) */
const x = (b: B, r: number): Temp => (r === 0 ? b.const(0) : b.get(r));
/** x[rd] = t (x0: dropped) */
const put = (b: B, rd: number, t: Temp): void => { if (rd !== X0_SINK) b.set(rd, t); };

function emit(b: B, i: RvInsn): boolean {
  const name = i.row.name;
  const v = VALUES[name];
  if (v !== undefined) { put(b, i.rd, v(b, x(b, i.rs1), x(b, i.rs2))); return true; }
  const vi = IMMEDIATE[name];
  if (vi !== undefined) { put(b, i.rd, VALUES[vi](b, x(b, i.rs1), b.const(i.imm))); return true; }
  const ld = LOADS[name];
  if (ld !== undefined) { put(b, i.rd, b.ld(b.addi(x(b, i.rs1), i.imm), ld[0], ld[1])); return true; }
  const st = STORES[name];
  if (st !== undefined) { b.st(b.addi(x(b, i.rs1), i.imm), x(b, i.rs2), st); return true; }
  const br = BRANCHES[name];
  if (br !== undefined) {
    const t = i.addr + i.imm;
    if (!canonical(t)) return false;
    b.br(b.bin(br, x(b, i.rs1), x(b, i.rs2)), t, i.next);
    return true;
  }
  switch (name) {
    case 'lui': put(b, i.rd, b.const(i.imm)); return true;
    case 'auipc': put(b, i.rd, b.const(i.addr + i.imm)); return true;
    case 'jal': {
      const t = i.addr + i.imm;
      if (!canonical(t)) return false;
      put(b, i.rd, b.const(i.next));
      b.jmp(t);
      return true;
    }
    case 'jalr': {
      // the target from rs1 before the link write (rd may be rs1)
      const s = x(b, i.rs1);
      const sum = i.imm === 0 ? s : b.addi(s, i.imm);
      // the interpreter's faults, before the link write (jind's own check comes after it: only a jalr that writes nothing may rely on it)
      if (i.imm !== 0) b.exitIf(b.bin('or', nonCanonical(b, s), nonCanonical(b, sum)));
      else if (i.rd !== X0_SINK) b.exitIf(nonCanonical(b, s));
      const t = b.andi(sum, -2);
      put(b, i.rd, b.const(i.next));
      b.jind(t);
      return true;
    }
  }
  return false;
}

export const riscv64FrontEnd: FrontEnd<RvCpu, RvInsn> = {
  slots: 33,
  scratchBytes: 0,
  emit: (b, insn) => emit(b, insn),
  // branches, jumps, traps, wfi, sret
  endsBlock: insn => rvFlow(insn) !== 'none',
  syncIn: () => undefined,
  syncOut: () => undefined,
};
