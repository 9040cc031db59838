/**
 * How x86_64 trap-style instructions end Cpu.run() without a JS exception
 * (X86Cpu.stop / the run loop's limit), and the inline breakpoint fast
 * path (X86Cpu.inlineBreakpoint): handled int3s retire without a trap,
 * runs nested inside the int3 keep the outer run's budget and count,
 * endRun(), retiredInRun(), and TF / unclaimed int3s still trapping.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, getReg, setReg, CODE } from '../../fixtures/x86/harness';
import { TF } from '../../../emulator/arch/x86_64/flags';
import type { X86Cpu } from '../../../emulator/arch/x86_64/cpu';

const NESTED = CODE + 0x100;

describe('x86 trap-style instructions end the run', () => {
  test('every kind, in a row on one CPU: trap, pc, executed and instret', () => {
    // int3 ; vmcall ; ud2 (#UD, not retired) ; then hlt after skipping the ud2
    const { cpu } = machine('cc 0f 01 c1 0f 0b f4');
    let r = cpu.run(100);
    assert.deepEqual(r, { executed: 1, trap: { kind: 'breakpoint', pc: BigInt(CODE + 1) } });
    r = cpu.run(100);
    assert.deepEqual(r, { executed: 1, trap: { kind: 'hypercall', pc: BigInt(CODE + 4) } });
    r = cpu.run(100);
    assert.deepEqual(r, { executed: 0, trap: { kind: 'undefined', pc: BigInt(CODE + 4) } });
    assert.equal(cpu.getPc(), BigInt(CODE + 4), 'a fault leaves rip at the instruction');
    cpu.setPc(BigInt(CODE + 6));
    r = cpu.run(100);
    assert.deepEqual(r, { executed: 1, trap: { kind: 'halt', pc: BigInt(CODE + 7) } });
    assert.equal(cpu.instret, 3);
  });
  test('int n other than 3 is a #GP at the instruction; int 3 (cd 03) a breakpoint after it', () => {
    const { cpu } = machine('90 cd 80');
    let r = cpu.run(100);
    assert.deepEqual(r, { executed: 1, trap: { kind: 'generalProtection', pc: BigInt(CODE + 1), reason: 'int 0x80: no interrupt gate' } });
    const m2 = machine('cd 03 90').cpu;
    r = m2.run(100);
    assert.deepEqual(r, { executed: 1, trap: { kind: 'breakpoint', pc: BigInt(CODE + 2) } });
  });
  test('a stop does not leak into the next run: the budget is honoured after a trap', () => {
    const { cpu } = machine('cc 90 90 90 90 f4');
    assert.equal(cpu.run(10).trap?.kind, 'breakpoint');
    const r = cpu.run(2);
    assert.deepEqual(r, { executed: 2, trap: null });
    assert.equal(cpu.getPc(), BigInt(CODE + 3));
  });
  test('TF: a faulting trap instruction reports the fault, not a single-step', () => {
    const { cpu } = machine('0f 0b');
    cpu.setRflags(0x2 | TF);
    assert.deepEqual(cpu.run(10), { executed: 0, trap: { kind: 'undefined', pc: BigInt(CODE) } });
  });
});

/** install a hook; returns the addresses it was asked about */
function hook(cpu: X86Cpu, fn: (cpu: X86Cpu, at: number) => boolean): number[] {
  const asked: number[] = [];
  cpu.inlineBreakpoint = (c, at) => { asked.push(at); return fn(c, at); };
  return asked;
}

describe('x86 inline breakpoint (host fast path)', () => {
  test('handled int3 retires without a trap and the run goes on where the hook put rip', () => {
    // int3 ; (skipped: ud2) ; inc rax ; hlt
    const { cpu } = machine('cc 0f 0b 48 ff c0 f4');
    const asked = hook(cpu, c => { c.rip = CODE + 3; return true; });
    const r = cpu.run(100);
    assert.deepEqual(r, { executed: 3, trap: { kind: 'halt', pc: BigInt(CODE + 7) } });
    assert.deepEqual(asked, [CODE]);
    assert.equal(getReg(cpu, 'rax'), 1n);
    assert.equal(cpu.instret, 3);
  });
  test('unclaimed int3 traps as before (pc after the int3)', () => {
    const { cpu } = machine('90 cc 90');
    const asked = hook(cpu, () => false);
    assert.deepEqual(cpu.run(100), { executed: 2, trap: { kind: 'breakpoint', pc: BigInt(CODE + 2) } });
    assert.deepEqual(asked, [CODE + 1]);
  });
  test('TF set: the hook is not consulted, the int3 traps (no single-step after it)', () => {
    const { cpu } = machine('cc 90');
    const asked = hook(cpu, () => true);
    cpu.setRflags(0x2 | TF);
    assert.deepEqual(cpu.run(100), { executed: 1, trap: { kind: 'breakpoint', pc: BigInt(CODE + 1) } });
    assert.deepEqual(asked, []);
  });
  test('retiredInRun counts this run\'s instructions before the int3', () => {
    const { cpu } = machine('90 90 90 cc f4');
    cpu.run(1); // one nop in an earlier run
    let seen = -1;
    hook(cpu, c => { seen = c.retiredInRun(); return true; });
    assert.equal(cpu.run(100).trap?.kind, 'halt');
    assert.equal(seen, 2);
  });
  test('endRun: the run returns right after the int3 with no trap', () => {
    const { cpu } = machine('cc 90 90 f4');
    hook(cpu, c => { c.endRun(); return true; });
    assert.deepEqual(cpu.run(100), { executed: 1, trap: null });
    assert.equal(cpu.getPc(), BigInt(CODE + 1));
    assert.deepEqual(cpu.run(100), { executed: 3, trap: { kind: 'halt', pc: BigInt(CODE + 4) } }, 'the next run goes on');
  });

  /**
   * Outer code: int3 ; inc rax ; inc rax ; hlt. The hook runs nested code
   * (inc rbx x3 ; int3 at its end, not claimed: a trap of the nested run)
   * and comes back after the outer int3, as a handler's nested kernel call does.
   */
  function nestedRig(): { cpu: X86Cpu; nested: { executed: number; kind: string | undefined }[] } {
    const code = new Uint8Array(0x110);
    code.set([0xcc, 0x48, 0xff, 0xc0, 0x48, 0xff, 0xc0, 0xf4], 0);
    code.set([0x48, 0xff, 0xc3, 0x48, 0xff, 0xc3, 0x48, 0xff, 0xc3, 0xcc], 0x100);
    const { cpu } = machine(code);
    const nested: { executed: number; kind: string | undefined }[] = [];
    cpu.inlineBreakpoint = (c, at) => {
      if (at !== CODE) return false;
      const saved = c.saveContext();
      c.rip = NESTED;
      const r = c.run(1000);
      nested.push({ executed: r.executed, kind: r.trap?.kind });
      const rbx = getReg(c, 'rbx');
      c.restoreContext(saved);
      setReg(c, 'rbx', rbx);
      return true;
    };
    return { cpu, nested };
  }

  test('a run nested in the int3: its own count and trap; the outer count and budget exclude it', () => {
    const { cpu, nested } = nestedRig();
    const r = cpu.run(4);
    assert.deepEqual(nested, [{ executed: 4, kind: 'breakpoint' }]);
    assert.deepEqual(r, { executed: 4, trap: { kind: 'halt', pc: BigInt(CODE + 8) } }, 'int3 + 2 inc + hlt, in a budget of 4');
    assert.equal(getReg(cpu, 'rax'), 2n);
    assert.equal(getReg(cpu, 'rbx'), 3n);
    assert.equal(cpu.instret, 8, 'instret counts every instruction, nested ones included');
  });
  test('the outer budget is still honoured after a nested run (stops after 2 outer instructions)', () => {
    const { cpu, nested } = nestedRig();
    const r = cpu.run(2);
    assert.equal(nested.length, 1);
    assert.deepEqual(r, { executed: 2, trap: null });
    assert.equal(cpu.getPc(), BigInt(CODE + 4));
    assert.deepEqual(cpu.run(10), { executed: 2, trap: { kind: 'halt', pc: BigInt(CODE + 8) } });
  });
  test('a nested run ending on its budget or a fault leaves the outer run unaffected', () => {
    const code = new Uint8Array(0x110);
    code.set([0xcc, 0x90, 0xf4], 0);
    code.set([0x90, 0x90, 0x0f, 0x0b], 0x100);
    const { cpu } = machine(code);
    const results: unknown[] = [];
    cpu.inlineBreakpoint = c => {
      const saved = c.saveContext();
      c.rip = NESTED;
      results.push(c.run(1));
      results.push(c.run(100));
      c.restoreContext(saved);
      return true;
    };
    assert.deepEqual(cpu.run(100), { executed: 3, trap: { kind: 'halt', pc: BigInt(CODE + 3) } });
    assert.deepEqual(results, [
      { executed: 1, trap: null },
      { executed: 1, trap: { kind: 'undefined', pc: BigInt(NESTED + 2) } },
    ]);
    assert.equal(cpu.instret, 5);
  });
});
