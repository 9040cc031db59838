import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { Stepper, StepOutcome } from '../../emulator/debug/stepper';
import { KERNEL } from './dapHarness';

/** A fresh 1-CPU machine with init scheduled on CPU 0 (pc = start_kernel). */
function machine(): Machine {
  const m = new Machine(loadElf(KERNEL), { cpus: 1 });
  m.kernel.sched.schedule(0);
  return m;
}

function stepper(m: Machine, kind: 'over' | 'in' | 'out' | 'instruction', budget?: number, returnAddress?: bigint): Stepper {
  return new Stepper(m, 0, kind, {
    pc: m.cpus[0].getPc(), readCode: (a, n) => m.kernel.mem.readBytes(Number(BigInt.asIntN(64, a)), n),
    where: a => m.image.symbols.format(a, false), budget, returnAddress,
  });
}

function finish(s: Stepper): StepOutcome {
  for (;;) {
    const r = s.runChunk();
    if (r) return r;
  }
}

describe('adapter stepper (one CPU)', () => {
  test('a line step ends on another line; the same step with one instruction less of budget ends at the budget', () => {
    const m = machine();
    const start = m.image.lines!.lineForAddress(m.cpus[0].getPc())!;
    const s = stepper(m, 'over');
    const r = finish(s);
    assert.equal(r.kind, 'done', JSON.stringify(r));
    const now = m.image.lines!.lineForAddress(m.cpus[0].getPc())!;
    assert.notEqual(`${now.file}:${now.line}`, `${start.file}:${start.line}`);
    const n = s.instructions;
    assert.ok(n > 1, `the first line of start_kernel (prologue) takes ${n} instructions`);
    const m2 = machine();
    const r2 = finish(stepper(m2, 'over', n - 1));
    assert.equal(r2.kind, 'budget');
    assert.match(r2.kind === 'budget' ? r2.description : '', new RegExp(`^Step over did not finish within ${n - 1} instructions; stopped at start_kernel\\+0x[0-9a-f]+$`));
  });

  test('instruction steps are one instruction; stepping out with no caller frame degrades to one instruction', () => {
    const m = machine();
    const s = stepper(m, 'instruction');
    assert.deepEqual(finish(s), { kind: 'done', description: 'Stepped one instruction' });
    assert.equal(s.instructions, 1);
    const o = stepper(m, 'out');
    assert.equal(o.effectiveKind, 'instruction');
  });

  test('step out runs to the given return address in the same frame', () => {
    const m = machine();
    // step in until inside a callee of start_kernel, then step out to the call site's return address
    let s = stepper(m, 'in');
    let frames = 0;
    while (m.image.symbols.resolve(m.cpus[0].getPc())?.sym.name === 'start_kernel' && frames++ < 200) {
      finish(s);
      s = stepper(m, 'in');
    }
    const fn = m.image.symbols.resolve(m.cpus[0].getPc())!.sym.name;
    assert.notEqual(fn, 'start_kernel');
    // at a callee's first instruction the return address is on top of the stack (x86_64)
    const sp = m.cpus[0].getReg(m.arch.abi.spReg);
    const ret = m.cpus[0].mem.read64(Number(BigInt.asIntN(64, sp)));
    const out = finish(stepper(m, 'out', undefined, BigInt.asUintN(64, ret)));
    assert.equal(out.kind, 'done', JSON.stringify(out));
    assert.equal(m.cpus[0].getPc(), BigInt.asUintN(64, ret));
    assert.match(m.image.symbols.format(m.cpus[0].getPc(), false), /^start_kernel\+0x[0-9a-f]+$/);
  });
});
