/**
 * riscv64 RV64I units: bytes in (llvm-mc encodings), registers out — shifts
 * by 0 and 63, carries, sign extension, W forms, x0, branches, jumps, loads
 * and stores, misaligned accesses (they complete) and unmapped ones.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, run, get, gets, set, CODE, DATA } from './riscv64-harness';

const M64 = (1n << 64n) - 1n;

describe('rv64 RV64I ALU', () => {
  test('immediate shifts by 0 and 63', () => {
    // li a0,-1; srli a1,a0,0; srli a2,a0,63; srai a3,a0,63; slli a4,a0,63; slli a5,a0,0; ebreak
    const { cpu } = machine('13 05 f0 ff 93 55 05 00 13 56 f5 03 93 56 f5 43 13 17 f5 03 93 17 05 00 73 00 10 00');
    assert.equal(run(cpu).trap?.kind, 'breakpoint');
    assert.equal(get(cpu, 'a1'), M64);
    assert.equal(get(cpu, 'a2'), 1n);
    assert.equal(get(cpu, 'a3'), M64);
    assert.equal(get(cpu, 'a4'), 1n << 63n);
    assert.equal(get(cpu, 'a5'), M64);
  });
  test('register shifts use the low 6 bits of rs2', () => {
    // sll a2,a0,a1; srl a3,a0,a1; sra a4,a0,a1; ebreak
    const code = '33 16 b5 00 b3 56 b5 00 33 57 b5 40 73 00 10 00';
    for (const [sh, eff] of [[0n, 0n], [1n, 1n], [31n, 31n], [32n, 32n], [33n, 33n], [63n, 63n], [64n, 0n], [0x7fn, 63n]] as const) {
      const { cpu } = machine(code);
      const a = 0x8123456789abcdefn;
      set(cpu, 'a0', a); set(cpu, 'a1', sh);
      run(cpu);
      assert.equal(get(cpu, 'a2'), (a << eff) & M64, `sll ${sh}`);
      assert.equal(get(cpu, 'a3'), a >> eff, `srl ${sh}`);
      assert.equal(gets(cpu, 'a4'), BigInt.asIntN(64, a) >> eff, `sra ${sh}`);
    }
  });
  test('add/sub carry and borrow across the halves; slt/sltu', () => {
    // add a2,a0,a1; sub a3,a0,a1; sltu a4,a0,a1; slt a5,a0,a1; ebreak
    const cases: [bigint, bigint][] = [[0xffffffffn, 1n], [0x100000000n, 1n], [M64, 1n], [0n, 1n], [1n << 63n, 1n], [0x7fffffffffffffffn, M64]];
    for (const [a, b] of cases) {
      const { cpu } = machine('33 06 b5 00 b3 06 b5 40 33 37 b5 00 b3 27 b5 00 73 00 10 00');
      set(cpu, 'a0', a); set(cpu, 'a1', b);
      run(cpu);
      assert.equal(get(cpu, 'a2'), (a + b) & M64);
      assert.equal(get(cpu, 'a3'), (a - b) & M64);
      assert.equal(get(cpu, 'a4'), a < b ? 1n : 0n);
      assert.equal(get(cpu, 'a5'), BigInt.asIntN(64, a) < BigInt.asIntN(64, b) ? 1n : 0n);
    }
  });
  test('W forms compute on 32 bits and sign-extend', () => {
    // addw a2,a0,a1; subw a3,a0,a1; sllw a4,a0,a1; srlw a5,a0,a1; sraw a6,a0,a1; addiw a7,a0,0 (sext.w); ebreak
    const { cpu } = machine('3b 06 b5 00 bb 06 b5 40 3b 17 b5 00 bb 57 b5 00 3b 58 b5 40 9b 08 05 00 73 00 10 00');
    set(cpu, 'a0', 0x123456787fffffffn); set(cpu, 'a1', 0xffffffff00000021n); // shift amount 33 & 31 = 1
    run(cpu);
    assert.equal(gets(cpu, 'a2'), -0x7fffffe0n); // 0x7fffffff + 0x21 = 0x80000020 -> sign-extended
    assert.equal(gets(cpu, 'a3'), 0x7fffffden);
    assert.equal(gets(cpu, 'a4'), -2n); // 0x7fffffff << 1 = 0xfffffffe
    assert.equal(gets(cpu, 'a5'), 0x3fffffffn);
    assert.equal(gets(cpu, 'a6'), 0x3fffffffn);
    assert.equal(gets(cpu, 'a7'), 0x7fffffffn);
  });
  test('W immediate shifts by 0 and 31', () => {
    // slliw a2,a0,31; srliw a3,a0,0; sraiw a4,a0,31; srliw a5,a0,31; ebreak
    const { cpu } = machine('1b 16 f5 01 9b 56 05 00 1b 57 f5 41 9b 57 f5 01 73 00 10 00');
    set(cpu, 'a0', 0xffffffff80000001n);
    run(cpu);
    assert.equal(gets(cpu, 'a2'), -(1n << 31n));
    assert.equal(gets(cpu, 'a3'), -0x7fffffffn); // srliw by 0 still sign-extends bit 31
    assert.equal(gets(cpu, 'a4'), -1n);
    assert.equal(gets(cpu, 'a5'), 1n);
  });
  test('lui sign-extends; immediates are sign-extended 12-bit', () => {
    // lui a0,0x80000; lui a1,0x7ffff; addi a1,a1,2047; xori a2,a0,-1; ori a3,zero,-2048; andi a4,a0,-1; slti a5,a0,0; sltiu a6,a0,-1; ebreak
    const { cpu } = machine('37 05 00 80 b7 f5 ff 7f 93 85 f5 7f 13 46 f5 ff 93 66 00 80 13 77 f5 ff 93 27 05 00 13 38 f5 ff 73 00 10 00');
    run(cpu);
    assert.equal(gets(cpu, 'a0'), -0x80000000n);
    assert.equal(get(cpu, 'a1'), 0x7ffff7ffn);
    assert.equal(get(cpu, 'a2'), 0x7fffffffn);
    assert.equal(gets(cpu, 'a3'), -2048n);
    assert.equal(gets(cpu, 'a4'), -0x80000000n);
    assert.equal(get(cpu, 'a5'), 1n);
    assert.equal(get(cpu, 'a6'), 1n); // sltiu with -1 compares against 2^64-1
  });
  test('x0 stays zero', () => {
    // addi zero,zero,5; add a0,zero,zero; lui zero,1; ebreak
    const { cpu } = machine('13 00 50 00 33 05 00 00 37 10 00 00 73 00 10 00');
    set(cpu, 'a0', 7n);
    run(cpu);
    assert.equal(cpu.x(0), 0n);
    assert.equal(get(cpu, 'a0'), 0n);
  });
  test('auipc adds to the instruction address', () => {
    // auipc a0,0; auipc a1,0xfffff; ebreak
    const { cpu } = machine('17 05 00 00 97 f5 ff ff 73 00 10 00');
    run(cpu);
    assert.equal(get(cpu, 'a0'), BigInt(CODE));
    assert.equal(get(cpu, 'a1'), BigInt(CODE + 4 - 0x1000));
  });
});

describe('rv64 RV64I control flow', () => {
  test('signed and unsigned branches', () => {
    // li a0,-1; li a1,1; li a2,0; blt a0,a1,8; li a2,99; bltu a0,a1,8; addi a2,a2,1; bge a0,a0,8; li a2,77; bgeu a1,a0,8; addi a2,a2,2; ebreak
    const { cpu } = machine('13 05 f0 ff 93 05 10 00 13 06 00 00 63 44 b5 00 13 06 30 06 63 64 b5 00 13 06 16 00 63 54 a5 00 13 06 d0 04 63 f4 a5 00 13 06 26 00 73 00 10 00');
    run(cpu);
    assert.equal(get(cpu, 'a2'), 3n);
  });
  test('jal links the next address', () => {
    // jal ra,8; ebreak; ebreak
    const { cpu } = machine('ef 00 80 00 73 00 10 00 73 00 10 00');
    const r = run(cpu);
    assert.deepEqual(r.trap, { kind: 'breakpoint', pc: BigInt(CODE + 8) });
    assert.equal(get(cpu, 'ra'), BigInt(CODE + 4));
  });
  test('jalr clears bit 0 of the target and links after reading rs1 (rd = rs1)', () => {
    // auipc t0,0; jalr t0,13(t0); ebreak; ebreak; ebreak
    const { cpu } = machine('97 02 00 00 e7 82 d2 00 73 00 10 00 73 00 10 00 73 00 10 00');
    const r = run(cpu);
    assert.deepEqual(r.trap, { kind: 'breakpoint', pc: BigInt(CODE + 12) });
    assert.equal(get(cpu, 't0'), BigInt(CODE + 8));
  });
});

describe('rv64 RV64I loads and stores', () => {
  test('loads sign- or zero-extend', () => {
    // lb a1; lbu a2; lh a3; lhu a4; lw a5; lwu a6; ld a7 (all 0(a0)); ebreak
    const { cpu, mem } = machine('83 05 05 00 03 46 05 00 83 16 05 00 03 57 05 00 83 27 05 00 03 68 05 00 83 38 05 00 73 00 10 00');
    mem.write64(DATA, 0x8899aabbccddeeffn);
    set(cpu, 'a0', BigInt(DATA));
    run(cpu);
    assert.equal(gets(cpu, 'a1'), -1n);
    assert.equal(get(cpu, 'a2'), 0xffn);
    assert.equal(gets(cpu, 'a3'), BigInt.asIntN(16, 0xeeffn));
    assert.equal(get(cpu, 'a4'), 0xeeffn);
    assert.equal(gets(cpu, 'a5'), BigInt.asIntN(32, 0xccddeeffn));
    assert.equal(get(cpu, 'a6'), 0xccddeeffn);
    assert.equal(get(cpu, 'a7'), 0x8899aabbccddeeffn);
  });
  test('stores write their width', () => {
    // sb a1,0(a0); sh a1,2(a0); sw a1,4(a0); sd a1,8(a0); ebreak
    const { cpu, mem } = machine('23 00 b5 00 23 11 b5 00 23 22 b5 00 23 34 b5 00 73 00 10 00');
    set(cpu, 'a0', BigInt(DATA)); set(cpu, 'a1', 0x0102030405060708n);
    run(cpu);
    assert.equal(mem.read64(DATA), 0x0506070807080008n);
    assert.equal(mem.read64(DATA + 8), 0x0102030405060708n);
  });
  test('misaligned loads and stores complete (Linux emulates them for user code; qemu-user agrees)', () => {
    // lw a1,2(a0); ebreak
    const { cpu, mem } = machine('83 25 25 00 73 00 10 00');
    mem.write64(DATA, 0x1122334455667788n);
    set(cpu, 'a0', BigInt(DATA));
    assert.equal(run(cpu).trap?.kind, 'breakpoint');
    assert.equal(get(cpu, 'a1'), 0x33445566n);
    // sd a1,4(a0); ebreak
    const m2 = machine('23 32 b5 00 73 00 10 00');
    set(m2.cpu, 'a0', BigInt(DATA)); set(m2.cpu, 'a1', 0x0102030405060708n);
    run(m2.cpu);
    assert.equal(m2.mem.read64(DATA), 0x0506070800000000n);
    assert.equal(m2.mem.read32(DATA + 8), 0x01020304);
  });
  test('a store running past the end of its region faults and writes nothing; the pc stays on it', () => {
    // sd a1,4(a0); ebreak  with a0 + 4 = 4 bytes before the end of the data region
    const { cpu, mem } = machine('23 32 b5 00 73 00 10 00');
    set(cpu, 'a0', BigInt(DATA + 0x10000 - 8)); set(cpu, 'a1', -1n);
    const r = run(cpu);
    assert.deepEqual(r.trap, { kind: 'pageFault', pc: BigInt(CODE), addr: BigInt(DATA + 0x10000), access: 'write', present: false, user: false });
    assert.equal(r.executed, 0);
    assert.equal(mem.read32(DATA + 0x10000 - 4), 0);
  });
  test('unmapped and non-canonical addresses', () => {
    // ld a1,0(a0); ebreak
    const { cpu } = machine('83 35 05 00 73 00 10 00');
    set(cpu, 'a0', 0x10000n);
    const r = run(cpu);
    assert.deepEqual(r.trap, { kind: 'pageFault', pc: BigInt(CODE), addr: 0x10000n, access: 'read', present: false, user: false });
    const m2 = machine('83 35 05 00 73 00 10 00');
    set(m2.cpu, 'a0', 0x0123000000000000n);
    assert.equal(run(m2.cpu).trap?.kind, 'generalProtection');
  });
});
