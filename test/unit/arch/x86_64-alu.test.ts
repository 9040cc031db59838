/**
 * x86_64 ALU: add or adc sbb and sub xor cmp test xadd cmpxchg not neg inc
 * dec — results and EXACT flags replayed from real-hardware goldens
 * (test/fixtures/x86/flags.json.gz, see gen-flags.c), plus memory forms.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { replayOps } from '../../fixtures/x86/flagCases';
import { machine, getReg, setReg, DATA } from '../../fixtures/x86/harness';
import { CF, ZF, SF, OF, PF, AF } from '../../../emulator/arch/x86_64/flags';

describe('x86 ALU flags vs hardware', () => {
  for (const op of ['add', 'or', 'adc', 'sbb', 'and', 'sub', 'xor', 'cmp', 'test', 'xadd', 'cmpxchg', 'not', 'neg', 'inc', 'dec',
    'add_i8', 'sub_i8', 'cmp_i8', 'and_i8', 'add_i32', 'sub_i32', 'cmp_i32', 'and_i32']) {
    test(`${op}: results and defined flags match the real CPU`, () => {
      const { failures, count } = replayOps([op]);
      assert.ok(count >= 100, `${count} cases`);
      assert.deepEqual(failures, []);
    });
  }
});

describe('x86 ALU forms', () => {
  test('add qword ptr [rip+disp], imm8 and memory operands', () => {
    // 48 83 05 f9 0f 20 00 05 : add qword ptr [rip + 0x200ff9], 5  (rip-relative -> DATA)
    // operand address = next(0x400008) + 0x1ffff8 = 0x600000
    const { cpu, mem } = machine('48 83 05 f8 ff 1f 00 05 f4');
    mem.write32(DATA, 0xfffffffe); mem.write32(DATA + 4, 0xffffffff);
    cpu.run(10);
    assert.equal(mem.read32(DATA), 3);
    assert.equal(mem.read32(DATA + 4), 0);
    assert.ok(cpu.getRflags() & CF);
  });
  test('sub with 32-bit destination zero-extends; 8-bit high registers', () => {
    // mov rax, -1 ; sub eax, 1 ; mov ebx, 0x1234 ; add bh, bl  (bh = 0x12 + 0x34)
    const { cpu } = machine('48 c7 c0 ff ff ff ff 83 e8 01 bb 34 12 00 00 00 df f4');
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 0xfffffffen);
    assert.equal(getReg(cpu, 'rbx'), 0x4634n);
  });
  test('add with REX uses spl/bpl/sil/dil, not ah..bh', () => {
    // mov esi, 0x80 ; 40 00 f6 : add sil, sil
    const { cpu } = machine('be 80 00 00 00 40 00 f6 f4');
    cpu.run(10);
    assert.equal(getReg(cpu, 'rsi'), 0n);
    const f = cpu.getRflags();
    assert.equal(f & (CF | ZF | OF | PF), CF | ZF | OF | PF);
    assert.equal(f & (SF | AF), 0);
  });
  test('adc/sbb chain computes a 128-bit subtraction', () => {
    // rax:rdx = 0x1_0000000000000000 - 1 : sub rax, rcx ; sbb rdx, rbx
    const { cpu } = machine('48 29 c8 48 19 da f4');
    setReg(cpu, 'rax', 0n); setReg(cpu, 'rdx', 1n); setReg(cpu, 'rcx', 1n); setReg(cpu, 'rbx', 0n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 0xffffffffffffffffn);
    assert.equal(getReg(cpu, 'rdx'), 0n);
    assert.ok(cpu.getRflags() & ZF);
  });
  test('lock xadd / lock cmpxchg on memory', () => {
    // lock xadd qword ptr [rdi], rax ; lock cmpxchg dword ptr [rdi+8], ecx (eax == mem -> store)
    const { cpu, mem } = machine('f0 48 0f c1 07 b8 07 00 00 00 f0 0f b1 4f 08 f4');
    setReg(cpu, 'rdi', BigInt(DATA)); setReg(cpu, 'rax', 5n); setReg(cpu, 'rcx', 99n);
    mem.write32(DATA, 10); mem.write32(DATA + 8, 7);
    cpu.run(10);
    assert.equal(mem.read32(DATA), 15);
    assert.equal(mem.read32(DATA + 8), 99);
    assert.ok(cpu.getRflags() & ZF);
  });
  test('inc/dec preserve CF', () => {
    // stc ; inc eax ; dec eax
    const { cpu } = machine('f9 ff c0 ff c8 f4');
    cpu.run(10);
    assert.ok(cpu.getRflags() & CF);
    assert.ok(cpu.getRflags() & ZF);
  });
});
