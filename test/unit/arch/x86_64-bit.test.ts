/**
 * x86_64 bit operations: bt bts btr btc (register and imm8), bsf bsr tzcnt
 * lzcnt popcnt, BMI1 andn blsr blsmsk blsi vs real hardware, plus bit
 * strings in memory and the BMI2 forms.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { replayOps } from '../../fixtures/x86/flagCases';
import { machine, getReg, setReg, DATA } from '../../fixtures/x86/harness';
import { CF, ZF } from '../../../emulator/arch/x86_64/flags';

describe('x86 bit operations vs hardware', () => {
  for (const op of ['bt', 'bts', 'btr', 'btc', 'bt_imm', 'btc_imm', 'bsf', 'bsr', 'tzcnt', 'lzcnt', 'popcnt', 'andn', 'blsr', 'blsmsk', 'blsi']) {
    test(`${op}: results and defined flags match the real CPU`, () => {
      const { failures, count } = replayOps([op]);
      assert.ok(count >= 50, `${count} cases`);
      assert.deepEqual(failures, []);
    });
  }
});

describe('x86 bit forms', () => {
  test('bts with a register offset addresses beyond the memory operand', () => {
    // bts qword ptr [rdi], rcx with rcx = 67 -> bit 3 of the second qword; then bt with -1 -> bit 63 of qword at -8
    const { cpu, mem } = machine('48 0f ab 0f 48 0f a3 17 f4');
    setReg(cpu, 'rdi', BigInt(DATA + 8)); setReg(cpu, 'rcx', 67n); setReg(cpu, 'rdx', BigInt.asUintN(64, -1n));
    mem.write32(DATA + 4, 0x80000000);
    cpu.run(10);
    assert.equal(mem.read8(DATA + 16), 8);
    assert.ok(cpu.getRflags() & CF, 'bit -1 (bit 63 of the previous qword) is set');
  });
  test('bsf with a zero source sets ZF and leaves the destination', () => {
    const { cpu } = machine('48 0f bc c1 f4');
    setReg(cpu, 'rax', 1234n); setReg(cpu, 'rcx', 0n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 1234n);
    assert.ok(cpu.getRflags() & ZF);
  });
  test('BMI2 shlx/sarx/rorx/bzhi/pdep/pext/mulx', () => {
    const { cpu } = machine([
      'c4 e2 f1 f7 c2', // shlx rax, rdx, rcx
      'c4 e2 f2 f7 da', // sarx rbx, rdx, rcx
      'c4 e3 fb f0 f2 08', // rorx rsi, rdx, 8
      'c4 62 f0 f5 c2', // bzhi r8, rdx, rcx
      'c4 62 eb f5 cf', // pdep r9, rdx, rdi
      'c4 62 ea f5 d7', // pext r10, rdx, rdi
      'c4 62 9b f6 d9', // mulx r11, r12, rcx  (r11:r12 = rdx * rcx)
      'f4',
    ].join(' '));
    setReg(cpu, 'rdx', 0x80000000000000f1n); setReg(cpu, 'rcx', 4n); setReg(cpu, 'rdi', 0xff00n);
    cpu.run(7);
    assert.equal(getReg(cpu, 'rax'), 0xf10n);
    assert.equal(getReg(cpu, 'rbx'), 0xf80000000000000fn);
    assert.equal(getReg(cpu, 'rsi'), 0xf180000000000000n);
    assert.equal(getReg(cpu, 'r8'), 1n);
    assert.equal(getReg(cpu, 'r9'), 0xf100n);
    assert.equal(getReg(cpu, 'r10'), 0n);
    assert.equal(getReg(cpu, 'r11'), 2n);
    assert.equal(getReg(cpu, 'r12'), 0x3c4n);
  });
});
