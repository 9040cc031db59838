/**
 * The riscv64 front end of the block translator (emulator/arch/riscv64/jit.ts):
 *  - which instructions it emits as IR (the rest run as helpers);
 *  - a directed program (every native instruction on corner operands,
 *    misaligned and page-crossing accesses, x0 as destination, compressed
 *    forms, every branch both ways, jalr with rd == rs1, an odd sum and a
 *    ret) in lockstep mode, and its registers and memory equal to the
 *    interpreter's; again with a jalr faulting in its last round (a ret to a
 *    non-canonical address, a non-canonical rs1 whose sum is canonical, a
 *    canonical rs1 whose sum is not): the same fault at the same place;
 *  - another hart's LR reservation lost to a translated store;
 *  - four representative riscv64 conformance programs in lockstep mode:
 *    output and exit status equal to the interpreter's, with instructions
 *    run by translated code (npm test runs the whole differential suite in
 *    lockstep mode too).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { repoPath } from '../util/paths';
import { runUser } from '../fixtures/kernel/harness';
import { allTranslators, translatorFor } from '../../emulator/jit';
import { JIT_HOT_ARRIVALS_LOCKSTEP } from '../../emulator/cpu/interp';
import { IrBuilder } from '../../emulator/jit/ir';
import type { FrontEnd } from '../../emulator/jit/ir';
import { Memory, PERM_R, PERM_W, PERM_X } from '../../emulator/memory/memory';
import { riscv64 } from '../../emulator/arch/riscv64/index';
import { riscv64FrontEnd } from '../../emulator/arch/riscv64/jit';
import { RvCpu } from '../../emulator/arch/riscv64/cpu';
import { Reservations } from '../../emulator/arch/riscv64/reservation';
import { RV_ROWS } from '../../emulator/arch/riscv64/table';
import { decodeWord } from '../../emulator/arch/riscv64/decoder';
import type { RvInsn } from '../../emulator/arch/riscv64/insn';

const NATIVE = new Set([
  'lui', 'auipc', 'jal', 'jalr', 'beq', 'bne', 'blt', 'bge', 'bltu', 'bgeu',
  'lb', 'lh', 'lw', 'ld', 'lbu', 'lhu', 'lwu', 'sb', 'sh', 'sw', 'sd',
  'addi', 'slti', 'sltiu', 'xori', 'ori', 'andi', 'slli', 'srli', 'srai', 'addiw', 'slliw', 'srliw', 'sraiw',
  'add', 'sub', 'sll', 'slt', 'sltu', 'xor', 'srl', 'sra', 'or', 'and', 'addw', 'subw', 'sllw', 'srlw', 'sraw',
  'mul', 'mulh', 'mulhsu', 'mulhu', 'div', 'divu', 'rem', 'remu', 'mulw', 'divw', 'divuw', 'remw', 'remuw',
]);

const stats = (mode: string) => allTranslators().get(`riscv64:${mode}`)?.stats;

describe('riscv64 translator front end', () => {
  test('RV64I and M are emitted as IR, everything else runs as a helper', () => {
    const cpu = new RvCpu(0, new Memory('rv-fe'), new Reservations());
    for (const row of RV_ROWS) {
      const i = decodeWord(row.match, row.match, 4, 0x1000);
      assert.equal(i.row, row, `${row.name}: its match word decodes to it`);
      const b = new IrBuilder<RvInsn>(0x1000);
      b.begin(i, i.addr, i.next);
      assert.equal(riscv64FrontEnd.emit(b, i, cpu), NATIVE.has(row.name), row.name);
    }
  });

  for (const fault of [null, 'ret', 'rs1', 'sum'] as const) test(`a directed program in lockstep equals the interpreter${fault === null ? '' : `, jalr fault: ${fault}`}`, () => {
    const { words, pairs, bias } = directedProgram(fault);
    const run = (translate: boolean) => {
      const mem = new Memory('rv-fe-directed');
      mem.map(CODE, 0x10000, PERM_R | PERM_W | PERM_X, 'text');
      mem.map(DATA, 0x40000, PERM_R | PERM_W, 'data');
      mem.writeBytes(CODE, new Uint8Array(Uint32Array.from(words).buffer));
      pairs.forEach(([a, b], k) => { mem.write64(DATA + 16 * k, a); mem.write64(DATA + 16 * k + 8, b); });
      const cpu = new RvCpu(0, mem, new Reservations());
      if (translate) cpu.jit = translatorFor('riscv64', riscv64.jit as FrontEnd<unknown, never>, 'lockstep') as unknown as RvCpu['jit'];
      cpu.setPc(BigInt(CODE));
      cpu.setX(8, BigInt(DATA)); // s0: the operands
      cpu.setX(9, BigInt(DATA + RESULTS)); // s1: the results
      cpu.setX(5, BigInt(pairs.length)); // t0: the count
      bias.forEach(([r, v]) => cpu.setX(r, v)); // the jalr targets' offsets in the last round
      const r = cpu.run(1_000_000);
      if (fault === null) assert.equal(r.trap?.kind, 'breakpoint');
      else assert.notEqual(r.trap?.kind ?? 'none', 'breakpoint', 'the last round faults');
      return { trap: r.trap?.kind, ctx: cpu.saveContext(), bytes: mem.readBytes(DATA, 0x40000), instret: cpu.instret };
    };
    const before = stats('lockstep')?.translatedInsns ?? 0;
    const jit = run(true);
    const translated = (stats('lockstep')?.translatedInsns ?? 0) - before;
    const interp = run(false);
    assert.equal(jit.trap, interp.trap);
    assert.equal(jit.instret, interp.instret);
    assert.deepEqual(jit.ctx, interp.ctx);
    assert.ok(Buffer.from(jit.bytes).equals(Buffer.from(interp.bytes)), 'data memory');
    assert.ok(translated > interp.instret / 2, `translated ${translated} of ${interp.instret}`);
  });

  test("a translated store drops another hart's reservation, as the interpreter's does", () => {
    const A0 = 10, A1 = 11, A3 = 13, T0 = 5;
    const enc = new Encoder();
    // hart 0: 100 times sd zero, 0(a0), then ebreak
    const storer = [enc.S('sd', 0, A0, 0), enc.I('addi', T0, T0, -1), enc.B('bne', T0, 0, -8), EBREAK];
    // hart 1: lr.d zero, (a0); sc.d a3, a1, (a0); ebreak (run one instruction at a time: a trap drops the reservation)
    const reserver = [enc.R('lr.d', 0, A0, 0), enc.R('sc.d', A3, A0, A1), EBREAK];
    for (const mode of ['off', 'lockstep', 'on'] as const) {
      // hart 0 stores into the reserved granule (sc fails) or the next one (sc succeeds)
      for (const [offset, sc] of [[0, 1n], [8, 0n]] as const) {
        const mem = new Memory('rv-fe-reservation');
        mem.map(CODE, 0x10000, PERM_R | PERM_W | PERM_X, 'text');
        mem.map(DATA, 0x10000, PERM_R | PERM_W, 'data');
        mem.writeBytes(CODE, new Uint8Array(Uint32Array.from(storer).buffer));
        mem.writeBytes(CODE + 0x1000, new Uint8Array(Uint32Array.from(reserver).buffer));
        const set = new Reservations();
        const [storerCpu, reserverCpu] = [new RvCpu(0, mem, set), new RvCpu(1, mem, set)];
        const t = translatorFor('riscv64', riscv64.jit as FrontEnd<unknown, never>, mode);
        // a 100-iteration loop: translated after as few arrivals as in lockstep (the default waits for JIT_HOT_ARRIVALS)
        if (t) t.hotArrivals = JIT_HOT_ARRIVALS_LOCKSTEP;
        for (const c of [storerCpu, reserverCpu]) c.jit = t as unknown as RvCpu['jit'];
        const storeLoop = (at: number) => {
          storerCpu.setPc(BigInt(CODE));
          storerCpu.setX(A0, BigInt(at));
          storerCpu.setX(T0, 100n);
          assert.equal(storerCpu.run(1000).trap?.kind, 'breakpoint');
        };
        // the loop becomes hot (translated) before the reservation: hart 0's stores would be translated ones
        const before = stats(mode)?.translatedInsns ?? 0;
        storeLoop(DATA + 64);
        if (mode !== 'off') assert.ok((stats(mode)?.translatedInsns ?? 0) > before, 'the loop ran translated');
        reserverCpu.setPc(BigInt(CODE + 0x1000));
        reserverCpu.setX(A0, BigInt(DATA));
        assert.equal(reserverCpu.run(1).trap, null);
        storeLoop(DATA + offset);
        assert.equal(reserverCpu.run(1).trap, null);
        assert.equal(reserverCpu.x(A3), sc, `${mode}, store at +${offset}: sc.d ${sc === 0n ? 'succeeds' : 'fails'}`);
      }
    }
  });
});

describe('riscv64 conformance programs: lockstep vs the interpreter', () => {
  const bin = 'test/conformance/bin/riscv64';
  // calls and returns (jalr), string loops, integer and M operations, unoptimised code (the whole set runs in lockstep under npm test)
  const programs = ['recursion-gcc-O2.elf', 'strings-clang-O2.elf', 'intops-gcc-Os.elf', 'control-clang-O0.elf'];
  let translated = 0;
  for (const f of programs) {
    test(f, () => {
      const before = stats('lockstep')?.translatedInsns ?? 0;
      const lock = runUser(`${bin}/${f}`, [`${bin}/${f}`], { translate: 'lockstep' });
      translated += (stats('lockstep')?.translatedInsns ?? 0) - before;
      const off = runUser(`${bin}/${f}`, [`${bin}/${f}`], { translate: 'off' });
      assert.equal(lock.stderr, off.stderr);
      assert.equal(lock.stdout.toString('latin1'), off.stdout.toString('latin1'));
      assert.deepEqual(lock.exit, off.exit);
    });
  }
  test('translated code ran', () => {
    const present = new Set(readdirSync(repoPath(bin)));
    for (const f of programs) assert.ok(present.has(f), `${f} is built`);
    assert.ok(translated > 1_000_000, `${translated} instructions translated`);
  });
});

// ---------------------------------------------------------------- the directed program
const CODE = 0x400000, DATA = 0x600000, RESULTS = 0x8000;
/** bytes of results per operand pair */
const STRIDE = 488;

const M64 = (1n << 64n) - 1n;
function operandPairs(): [bigint, bigint][] {
  const corners = [0n, 1n, 2n, 7n, M64, M64 - 6n, 1n << 63n, (1n << 63n) - 1n, 0xffffffffn, 0x80000000n, 0x7fffffffn,
    0xffffffff80000000n, 0x100000000n, 0x123456789abcdef0n, 31n, 63n];
  const out: [bigint, bigint][] = [];
  for (const a of corners) for (const b of corners) out.push([a, b]);
  let seed = 7;
  const rnd = (): bigint => {
    let v = 0n;
    for (let k = 0; k < 4; k++) { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; v = (v << 16n) | BigInt(seed >>> 16); }
    return v;
  };
  for (let k = 0; k < 64; k++) out.push([rnd(), rnd()]);
  return out;
}

/**
 * The program: for each pair (a0, a1) at s0, every native operation's
 * result stored at s1 (STRIDE bytes per pair), branch outcomes summed in
 * s2; then the next pair (t0 counts). Encoded from the decoder's table rows.
 * Three jalr each skip one instruction; in the last round their targets are
 * offset by the bias registers (a6, a7, t1: set by the test, 0 unless
 * `fault` names the jalr to make fault).
 */
function directedProgram(fault: null | 'ret' | 'rs1' | 'sum'): { words: number[]; pairs: [bigint, bigint][]; bias: [number, bigint][] } {
  const { R, I, S, B, U, J } = new Encoder();
  const A0 = 10, A1 = 11, A2 = 12, A3 = 13, A4 = 14, A5 = 15, A6 = 16, A7 = 17, S0 = 8, S1 = 9, S2 = 18, T0 = 5, T1 = 6, RA = 1;
  const w: number[] = [];
  let slot = 0;
  const result = (insn: number) => { w.push(insn, S('sd', A2, S1, slot)); slot += 8; };
  w.push(I('ld', A0, S0, 0), I('ld', A1, S0, 8));
  for (const n of ['add', 'sub', 'sll', 'slt', 'sltu', 'xor', 'srl', 'sra', 'or', 'and', 'addw', 'subw', 'sllw', 'srlw', 'sraw',
    'mul', 'mulh', 'mulhsu', 'mulhu', 'div', 'divu', 'rem', 'remu', 'mulw', 'divw', 'divuw', 'remw', 'remuw']) result(R(n, A2, A0, A1));
  for (const [n, imm] of [['addi', -2048], ['slti', -1], ['sltiu', -1], ['xori', -1], ['ori', 2047], ['andi', -16], ['slli', 63],
    ['srli', 33], ['srai', 1], ['addiw', 2047], ['slliw', 31], ['srliw', 1], ['sraiw', 31]] as const) result(I(n, A2, A0, imm));
  // loads at odd offsets: misaligned
  for (const [n, off] of [['lb', 1], ['lh', 3], ['lw', 5], ['lbu', 7], ['lhu', 9], ['lwu', 11], ['ld', 4]] as const) result(I(n, A2, S0, off));
  // misaligned stores (some cross a page: STRIDE is not a divisor of 4096)
  w.push(S('sb', A1, S1, slot + 1), S('sh', A1, S1, slot + 7), S('sw', A1, S1, slot + 13), S('sd', A0, S1, slot + 19));
  slot += 32;
  result(U('lui', A2, 0x80000));
  result(U('auipc', A2, 0xfffff));
  // x0 as destination stays 0
  w.push(R('add', 0, A0, A1), I('lw', 0, S0, 0), S('sd', 0, S1, slot));
  slot += 8;
  // compressed: c.mv a3, a0 (0x86aa); c.addi a3, -7 (0x16e5)
  w.push(0x86aa | (0x16e5 << 16), S('sd', A3, S1, slot));
  slot += 8;
  // every branch, taken or not: a not-taken branch adds its bit to s2
  let bit = 1;
  for (const n of ['beq', 'bne', 'blt', 'bge', 'bltu', 'bgeu']) { w.push(B(n, A0, A1, 8), I('addi', S2, S2, bit)); bit <<= 1; }
  w.push(J(RA, 8), I('addi', S2, S2, bit), S('sd', RA, S1, slot));
  slot += 8;
  bit <<= 1;
  // jalr: a5 = all ones in the last round (t0 == 1), else 0
  w.push(I('addi', A5, T0, -1), I('sltiu', A5, A5, 1), R('sub', A5, 0, A5));
  const CANON = 1n << 47n;
  const bias: [number, bigint][] = [];
  // rs1 = (the auipc's address + 25 - imm) + (bias & a5); jalr rd, imm(rs1): to the auipc + 24 (bit 0 of the sum cleared), skipping the addi
  const jalr = (rd: number, rs1: number, imm: number, biasReg: number, at: (q: bigint) => bigint | null) => {
    const q = BigInt(CODE + 4 * w.length);
    const rs1Value = q + 25n - BigInt(imm);
    const last = at(q);
    bias.push([biasReg, last === null ? 0n : BigInt.asUintN(64, last - rs1Value)]);
    w.push(U('auipc', rs1, 0), R('and', A3, A5, biasReg), R('add', rs1, rs1, A3), I('addi', rs1, rs1, 25 - imm),
      I('jalr', rd, rs1, imm), I('addi', S2, S2, bit), S('sd', rd === 0 ? rs1 : rd, S1, slot));
    bit <<= 1;
    slot += 8;
  };
  // a call: rs1 not canonical (bit 47 set) in the last round, its sum canonical (the interpreter faults on rs1)
  jalr(RA, A4, -16, A6, () => (fault === 'rs1' ? CANON + 4n : null));
  // rd == rs1, an odd immediate; last round: rs1 canonical, the sum not
  jalr(A4, A4, 13, A7, () => (fault === 'sum' ? CANON - 8n : null));
  // a ret (jalr x0, 0(ra)); last round: to a non-canonical address (below the canonical range)
  jalr(0, RA, 0, T1, () => (fault === 'ret' ? -CANON - 0x1000n : null));
  if (slot > STRIDE) throw new Error(`results take ${slot} bytes`);
  w.push(I('addi', S0, S0, 16), I('addi', S1, S1, STRIDE), I('addi', T0, T0, -1));
  w.push(B('bne', T0, 0, -4 * w.length));
  w.push(EBREAK);
  return { words: w, pairs: operandPairs(), bias };
}

const EBREAK = 0x00100073;

/** 32-bit encodings from the decoder's table rows (match word plus fields) */
class Encoder {
  private match(name: string): number {
    const r = RV_ROWS.find(x => x.name === name);
    if (r === undefined) throw new Error(`no row ${name}`);
    return r.match;
  }
  readonly R = (n: string, rd: number, rs1: number, rs2: number): number => this.match(n) | (rd << 7) | (rs1 << 15) | (rs2 << 20);
  readonly I = (n: string, rd: number, rs1: number, imm: number): number => this.match(n) | (rd << 7) | (rs1 << 15) | ((imm & 0xfff) << 20);
  readonly S = (n: string, rs2: number, rs1: number, imm: number): number =>
    this.match(n) | (((imm >> 5) & 0x7f) << 25) | (rs2 << 20) | (rs1 << 15) | ((imm & 31) << 7);
  readonly B = (n: string, rs1: number, rs2: number, imm: number): number => this.match(n) | (((imm >> 12) & 1) << 31)
    | (((imm >> 5) & 0x3f) << 25) | (rs2 << 20) | (rs1 << 15) | (((imm >> 1) & 15) << 8) | (((imm >> 11) & 1) << 7);
  readonly U = (n: string, rd: number, imm20: number): number => this.match(n) | (rd << 7) | (imm20 << 12);
  readonly J = (rd: number, imm: number): number => this.match('jal') | (((imm >> 20) & 1) << 31) | (((imm >> 1) & 0x3ff) << 21)
    | (((imm >> 11) & 1) << 20) | (((imm >> 12) & 0xff) << 12) | (rd << 7);
}
