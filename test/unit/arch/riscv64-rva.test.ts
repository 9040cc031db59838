/**
 * riscv64 A extension units: lr/sc on one hart (success, sc without a
 * reservation), across two harts sharing memory (a store by the other hart
 * breaks the reservation), every AMO at both widths against a sequential
 * model, and the alignment rule.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, memory, hexBytes, run, get, set, CODE, DATA } from './riscv64-harness';
import { Reservations } from '../../../emulator/arch/riscv64/reservation';

const M64 = (1n << 64n) - 1n;
// lr.d a1,(a0); addi a1,a1,1; sc.d a2,a1,(a0); ebreak
const INC = 'af 35 05 10 93 85 15 00 2f 36 b5 18 73 00 10 00';

/** Two harts sharing memory and a reservation set: hart 0 runs INC at CODE, hart 1 `sd a3,0(a0); ebreak` at CODE+0x100. */
function twoHarts() {
  const mem = memory();
  mem.writeBytes(CODE, hexBytes(INC));
  mem.writeBytes(CODE + 0x100, hexBytes('23 30 d5 00 73 00 10 00'));
  const res = new Reservations();
  const h0 = machine('', { mem, id: 0, reservations: res }).cpu;
  const h1 = machine('', { mem, id: 1, reservations: res }).cpu;
  h1.setPc(BigInt(CODE + 0x100));
  return { mem, h0, h1 };
}

describe('rv64 LR/SC', () => {
  test('lr then sc succeeds (rd = 0) and stores', () => {
    const { cpu, mem } = machine(INC);
    mem.write64(DATA, 41n);
    set(cpu, 'a0', BigInt(DATA));
    run(cpu);
    assert.equal(get(cpu, 'a2'), 0n);
    assert.equal(mem.read64(DATA), 42n);
  });
  test('sc without a reservation fails (rd = 1) and stores nothing', () => {
    // sc.d a2,a3,(a0); ebreak
    const { cpu, mem } = machine('2f 36 d5 18 73 00 10 00');
    set(cpu, 'a0', BigInt(DATA)); set(cpu, 'a3', 5n);
    run(cpu);
    assert.equal(get(cpu, 'a2'), 1n);
    assert.equal(mem.read64(DATA), 0n);
  });
  test('lr.w sign-extends; sc.w succeeds once, then the reservation is gone', () => {
    // lr.w a1,(a0); sc.w a2,a3,(a0); ebreak  — run twice from the sc
    const { cpu, mem } = machine('af 25 05 10 2f 26 d5 18 73 00 10 00');
    mem.write32(DATA, 0x80000000);
    set(cpu, 'a0', BigInt(DATA)); set(cpu, 'a3', 9n);
    run(cpu);
    assert.equal(get(cpu, 'a1'), 0xffffffff80000000n);
    assert.equal(get(cpu, 'a2'), 0n);
    assert.equal(mem.read32(DATA), 9);
    cpu.setPc(BigInt(CODE + 4));
    set(cpu, 'a3', 10n);
    run(cpu);
    assert.equal(get(cpu, 'a2'), 1n);
    assert.equal(mem.read32(DATA), 9);
  });
  test('two harts: a store by the other hart between lr and sc makes the sc fail', () => {
    const { mem, h0, h1 } = twoHarts();
    for (const h of [h0, h1]) set(h, 'a0', BigInt(DATA));
    set(h1, 'a3', 100n);
    mem.write64(DATA, 1n);
    assert.equal(h0.run(1).executed, 1); // lr.d
    assert.equal(h1.run(10).trap?.kind, 'breakpoint'); // the other hart stores
    h0.run(10);
    assert.equal(get(h0, 'a2'), 1n, 'sc failed');
    assert.equal(mem.read64(DATA), 100n, 'the other hart\'s value stays');
    // retry without interference: succeeds
    h0.setPc(BigInt(CODE));
    h0.run(10);
    assert.equal(get(h0, 'a2'), 0n);
    assert.equal(mem.read64(DATA), 101n);
  });
  test('a store by the other hart to a different granule keeps the reservation', () => {
    const { h0, h1, mem } = twoHarts();
    set(h0, 'a0', BigInt(DATA)); set(h1, 'a0', BigInt(DATA + 8));
    h0.run(1); h1.run(10); h0.run(10);
    assert.equal(get(h0, 'a2'), 0n);
    assert.equal(mem.read64(DATA), 1n);
  });
});

type Op = (m: bigint, r: bigint) => bigint;
const s = (v: bigint, bits: number): bigint => BigInt.asIntN(bits, v);
const OPS: [string, Op][] = [
  ['swap', (_m, r) => r], ['add', (m, r) => m + r], ['xor', (m, r) => m ^ r], ['and', (m, r) => m & r], ['or', (m, r) => m | r],
  ['min', (m, r) => m], ['max', (m, r) => m], ['minu', (m, r) => (m < r ? m : r)], ['maxu', (m, r) => (m > r ? m : r)],
];

describe('rv64 AMOs', () => {
  for (const [bits, code] of [
    // amoswap a2; amoadd a3; amoxor a4; amoand a5; amoor a6; amomin a7; amomax s2; amominu s3; amomaxu s4 (all a1,(a0)); ebreak
    [32, '2f 26 b5 08 af 26 b5 00 2f 27 b5 20 af 27 b5 60 2f 28 b5 40 af 28 b5 80 2f 29 b5 a0 af 29 b5 c0 2f 2a b5 e0 73 00 10 00'],
    [64, '2f 36 b5 0e af 36 b5 00 2f 37 b5 20 af 37 b5 60 2f 38 b5 40 af 38 b5 80 2f 39 b5 a0 af 39 b5 c0 2f 3a b5 e0 73 00 10 00'],
  ] as const) {
    test(`every AMO at ${bits} bits returns the old value and stores op(old, rs2)`, () => {
      for (const [m0, r] of [[0x8000000000000005n, 0x7n], [3n, 0xfffffffffffffff0n], [0x12345678ffffffffn, 0x80000000n]]) {
        const { cpu, mem } = machine(code);
        const mask = bits === 32 ? 0xffffffffn : M64;
        if (bits === 32) mem.write32(DATA, Number(m0 & mask)); else mem.write64(DATA, m0);
        set(cpu, 'a0', BigInt(DATA)); set(cpu, 'a1', r);
        run(cpu);
        let m = m0 & mask;
        const rr = r & mask;
        const regs = ['a2', 'a3', 'a4', 'a5', 'a6', 'a7', 's2', 's3', 's4'];
        OPS.forEach(([name, op], k) => {
          const want = BigInt.asUintN(64, s(m, bits)); // the old value, sign-extended
          assert.equal(get(cpu, regs[k]), want, `amo${name} returns ${m.toString(16)}`);
          const sm = s(m, bits), sr = s(rr, bits);
          const v = name === 'min' ? (sm < sr ? m : rr) : name === 'max' ? (sm > sr ? m : rr) : op(m, rr);
          m = v & mask;
        });
        assert.equal(bits === 32 ? BigInt(mem.read32(DATA)) : mem.read64(DATA), m);
      }
    });
  }
  test('a misaligned AMO is a fault and changes nothing', () => {
    // amoadd.w a2,a1,(a0); ebreak
    const { cpu, mem } = machine('2f 26 b5 00 73 00 10 00');
    set(cpu, 'a0', BigInt(DATA + 2)); set(cpu, 'a1', 1n);
    const r = run(cpu);
    assert.equal(r.trap?.kind, 'pageFault');
    assert.equal(mem.read64(DATA), 0n);
  });
});

describe('rv64 reservation and traps', () => {
  test('a trap between lr and sc drops the reservation (page fault, then retry of the sc fails)', () => {
    // lr.d a1,(a0); ld a4,0(a5); sc.d a2,a1,(a0); ebreak — a5 unmapped: the ld faults
    const { cpu, mem } = machine('af 35 05 10 03 b7 07 00 2f 36 b5 18 73 00 10 00');
    set(cpu, 'a0', BigInt(DATA)); set(cpu, 'a5', 0x10000n);
    assert.equal(run(cpu).trap?.kind, 'pageFault');
    set(cpu, 'a5', BigInt(DATA + 8));
    assert.equal(run(cpu).trap?.kind, 'breakpoint');
    assert.equal(get(cpu, 'a2'), 1n);
    assert.equal(mem.read64(DATA), 0n);
  });
});
