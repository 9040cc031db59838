/**
 * x86_64 mul / imul (1, 2 and 3 operands) / div / idiv, incl. #DE for
 * division by zero and quotient overflow, vs real hardware.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { replayOps, loadFlagCases } from '../../fixtures/x86/flagCases';
import { machine, getReg, setReg, CODE } from '../../fixtures/x86/harness';

describe('x86 mul/div vs hardware', () => {
  for (const op of ['mul', 'imul1', 'imul2', 'div', 'idiv']) {
    test(`${op}: results, CF/OF and #DE match the real CPU`, () => {
      const { failures, count } = replayOps([op]);
      assert.ok(count >= 100, `${count} cases`);
      assert.deepEqual(failures, []);
    });
  }
  test('the goldens include divide errors at every size', () => {
    const de = loadFlagCases().filter(c => c.out === null);
    assert.deepEqual([...new Set(de.map(c => c.size))].sort(), [1, 2, 4, 8]);
    assert.ok(de.some(c => c.op === 'idiv') && de.some(c => c.op === 'div'));
  });
});

describe('x86 mul/div forms', () => {
  test('imul r64, r/m64, imm32 and imm8', () => {
    // imul rax, rcx, -3 (6b) ; imul rdx, rcx, 0x10000 (69)
    const { cpu } = machine('48 6b c1 fd 48 69 d1 00 00 01 00 f4');
    setReg(cpu, 'rcx', 7n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), BigInt.asUintN(64, -21n));
    assert.equal(getReg(cpu, 'rdx'), 0x70000n);
  });
  test('div by zero: #DE at the instruction, registers untouched', () => {
    const { cpu } = machine('48 f7 f1 f4');
    setReg(cpu, 'rax', 10n); setReg(cpu, 'rdx', 0n); setReg(cpu, 'rcx', 0n);
    const r = cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'divide', pc: BigInt(CODE) });
    assert.equal(r.executed, 0);
    assert.equal(getReg(cpu, 'rax'), 10n);
  });
  test('idiv INT64_MIN / -1 overflows to #DE', () => {
    const { cpu } = machine('48 99 48 f7 f9 f4'); // cqo ; idiv rcx
    setReg(cpu, 'rax', 0x8000000000000000n); setReg(cpu, 'rcx', BigInt.asUintN(64, -1n));
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'divide');
    assert.equal(r.trap?.pc, BigInt(CODE + 2));
    assert.equal(r.executed, 1);
  });
});
