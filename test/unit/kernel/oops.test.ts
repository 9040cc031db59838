/** Oops reports from kernel-mode faults: Linux-shaped text, the CPU stops, other CPUs go on, nothing throws. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../../emulator/machine';
import { boot, fixture, image } from '../../fixtures/kernel/harness';

const REG_LINE = /^[A-Z0-9_]+: [0-9a-f]{16}( [A-Z0-9_]+: [0-9a-f]{16}){0,2}$/;

function reportOf(lines: string[], first: string): string[] {
  const i = lines.findIndex(l => l.startsWith(first));
  assert.ok(i >= 0, `no line starting with ${first}`);
  const end = lines.findIndex((l, j) => j > i && l.startsWith('---[ end trace'));
  assert.ok(end > i, 'report ends with the end-trace line');
  return lines.slice(i, end + 1);
}

describe('oops', () => {
  test('NULL dereference on CPU 1: report with symbol+off/size, code bytes, registers; CPU 0 powers off', () => {
    const r = boot(fixture('oops-null'), { cpus: 2 });
    assert.equal(r.exit.reason, 'poweroff');
    assert.equal(r.exit.code, 7);
    const rep = reportOf(r.lines, 'BUG: kernel NULL pointer dereference');
    assert.equal(rep[0], 'BUG: kernel NULL pointer dereference, address: 0000000000000000');
    assert.equal(rep[1], '#PF: supervisor read access in kernel mode');
    assert.equal(rep[2], '#PF: error_code(0x0000) - not-present page');
    assert.equal(rep[3], 'Oops: 0000 [#1] SMP');
    assert.equal(rep[4], 'CPU: 1 PID: 2 Comm: crasher Not tainted');
    const sym = r.machine.image.symbols.lookup('bad_read')!;
    const pc = r.machine.cpus[1].getPc();
    assert.equal(rep[5], `RIP: bad_read+0x${(pc - sym.value).toString(16)}/0x${sym.size.toString(16)}`);
    // the faulting instruction is mov (%rdi),%rax = 48 8b 07, marked as Linux does; bad_read starts
    // the text, so the line starts at the first mapped byte (push %rbp) instead of 43 bytes before
    assert.match(rep[6], /^Code: 55 48 89 e5 ([0-9a-f]{2} ){11}<48> 8b 07( [0-9a-f]{2}){18}$/);
    const regs = rep.slice(7, -1);
    assert.ok(regs.every(l => REG_LINE.test(l)), regs.join('\n'));
    const all = regs.join(' ');
    for (const name of ['RAX', 'RBX', 'RCX', 'RDX', 'RSI', 'RDI', 'RBP', 'RSP', 'R08', 'R15', 'EFLAGS', 'CS', 'SS']) {
      assert.match(all, new RegExp(`(^| )${name}: `), name);
    }
    assert.match(all, /RDI: 0000000000000000/, 'the NULL argument');
    assert.ok(r.records.filter(x => x.source === 'emulator').length === rep.length, 'report lines are emulator records');
    assert.ok(r.lines.indexOf('cpu0: still running') > r.lines.indexOf(rep[0]), 'CPU 0 ran on after the oops');
    assert.ok(!r.lines.includes('crasher: survived?!'));
    assert.equal(r.machine.kernel.oopsCount, 1);
  });

  test('ud2 in start_kernel: invalid opcode report, machine halts (nothing else can run)', () => {
    const r = boot(fixture('oops-ud2'), { cpus: 2 });
    assert.equal(r.exit.reason, 'halted');
    assert.equal(r.exit.code, 1);
    assert.match(r.exit.detail, /1 oops/);
    const rep = reportOf(r.lines, 'invalid opcode');
    assert.equal(rep[0], 'invalid opcode: 0000 [#1] SMP');
    assert.equal(rep[1], 'CPU: 0 PID: 1 Comm: init Not tainted');
    assert.match(rep[2], /^RIP: bad_insn\+0x[0-9a-f]+\/0x[0-9a-f]+$/);
    assert.match(rep[3], / <0f> 0b /);
    assert.ok(!r.lines.includes('after ud2?!'));
  });

  test('unclaimed int3: int3 report (pc after the int3, as x86 reports it)', () => {
    const r = boot(fixture('oops-int3'), { cpus: 1 });
    assert.equal(r.exit.reason, 'halted');
    const rep = reportOf(r.lines, 'int3');
    assert.equal(rep[0], 'int3: 0000 [#1] SMP');
    assert.match(rep[2], /^RIP: hit_int3\+0x[0-9a-f]+\/0x[0-9a-f]+$/);
    assert.match(rep[3], / cc <[0-9a-f]{2}> /);
  });

  test('a CPU internal error becomes an oops naming it, never an exception', () => {
    const m = new Machine(image(fixture('oops-null')), { cpus: 1 });
    const cpu0 = m.cpus[0];
    const realRun = cpu0.run.bind(cpu0);
    let calls = 0;
    cpu0.run = (budget: number) => {
      if (++calls === 3) throw new Error('decoder exploded');
      return realRun(budget);
    };
    const lines: string[] = [];
    m.onPrintk(r => lines.push(r.text));
    const exit = m.run();
    assert.equal(exit.reason, 'halted');
    assert.ok(lines.some(l => l === 'kprobe-debug: internal emulator error: decoder exploded: 0000 [#1] SMP'), lines.join('\n'));
    assert.ok(lines.some(l => l.startsWith('CPU: 0 PID: 1 Comm: init')));
  });

  test('a trap hook that throws is reported as an oops', () => {
    const m = new Machine(image(fixture('oops-null')), { cpus: 1 });
    m.kernel.addTrapHook(() => { throw new Error('handler bug'); });
    const lines: string[] = [];
    m.onPrintk(r => lines.push(r.text));
    assert.equal(m.run().reason, 'halted');
    assert.ok(lines.includes('kprobe-debug: trap hook failed: handler bug: 0000 [#1] SMP'), lines.join('\n'));
  });

  test('KernelApi.oops from a hook stops only that CPU', () => {
    const m = new Machine(image(fixture('oops-null')), { cpus: 2 });
    let reported = false;
    m.kernel.addTrapHook((cpu, trap) => {
      if (trap.kind === 'pageFault' && !reported) {
        reported = true;
        m.kernel.oops(cpu, trap, 'kprobe: fault in handler');
        return true;
      }
      return false;
    });
    const lines: string[] = [];
    m.onPrintk(r => lines.push(r.text));
    const exit = m.run();
    assert.equal(exit.code, 7);
    assert.ok(lines.includes('kprobe: fault in handler: 0000 [#1] SMP'));
    assert.ok(!lines.some(l => l.startsWith('BUG:')), 'the kernel did not report it again');
  });
});
