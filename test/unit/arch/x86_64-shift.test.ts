/**
 * x86_64 shifts and rotates (shl shr sar rol ror rcl rcr by cl / imm8 / 1,
 * shld shrd): results and defined flags vs real hardware; undefined flags
 * are masked as the SDM says (see gen-flags.c).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { replayOps } from '../../fixtures/x86/flagCases';
import { machine, getReg, setReg } from '../../fixtures/x86/harness';
import { CF, OF } from '../../../emulator/arch/x86_64/flags';

describe('x86 shifts vs hardware', () => {
  for (const op of ['shl', 'shr', 'sar', 'rol', 'ror', 'rcl', 'rcr', 'shl_imm', 'sar_imm', 'ror_imm', 'shr_1', 'rcl_1', 'shld', 'shrd']) {
    test(`${op}: results and defined flags match the real CPU`, () => {
      const { failures, count } = replayOps([op]);
      assert.ok(count >= 50, `${count} cases`);
      assert.deepEqual(failures, []);
    });
  }
});

describe('x86 shift forms', () => {
  test('count 0 leaves flags alone but zero-extends a 32-bit register', () => {
    // stc ; shl eax, cl (cl = 0)
    const { cpu } = machine('f9 d3 e0 f4');
    setReg(cpu, 'rax', 0xffffffff00000001n); setReg(cpu, 'rcx', 0n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 1n);
    assert.ok(cpu.getRflags() & CF);
  });
  test('64-bit shifts across the halves', () => {
    // shl rax, 36 ; sar rbx, 40 ; shr rdx, 1 ; rol rsi, 32
    const { cpu } = machine('48 c1 e0 24 48 c1 fb 28 48 d1 ea 48 c1 c6 20 f4');
    setReg(cpu, 'rax', 0x123n); setReg(cpu, 'rbx', 0x8000000000000000n);
    setReg(cpu, 'rdx', 0x8000000000000001n); setReg(cpu, 'rsi', 0x1122334455667788n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 0x123n << 36n);
    assert.equal(getReg(cpu, 'rbx'), 0xffffffffff800000n);
    assert.equal(getReg(cpu, 'rdx'), 0x4000000000000000n);
    assert.equal(getReg(cpu, 'rsi'), 0x5566778811223344n);
  });
  test('shr by one sets OF to the old sign bit', () => {
    const { cpu } = machine('d1 e8 f4');
    setReg(cpu, 'rax', 0x80000000n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 0x40000000n);
    assert.ok(cpu.getRflags() & OF);
  });
});
