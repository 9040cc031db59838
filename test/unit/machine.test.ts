/** The Machine API the debugger and the kprobes engine use: stops, registers, exec area, blacklist, layout, stepping. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../emulator/machine';
import { regIndex } from '../../emulator/arch/types';
import { PAGE_SIZE } from '../../emulator/kernel/kernel';
import { SAMPLE_X86, boot, image, transcript } from '../fixtures/kernel/harness';
import { loadElf } from '../../emulator/elf';
import { ImageError } from '../../emulator/elf/types';
import { repoPath } from '../util/paths';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('Machine', () => {
  test('a trap hook can request a stop: runSlice returns it, resuming gives the same transcript', () => {
    const ref = boot(SAMPLE_X86);
    const m = new Machine(image(SAMPLE_X86));
    const recs: string[] = [];
    m.onPrintk(r => recs.push(`${r.timeNs} ${r.cpu} ${r.source} ${r.text}`));
    let hypercalls = 0;
    m.kernel.addTrapHook((cpu, trap) => {
      if (trap.kind === 'hypercall' && ++hypercalls % 10 === 0) {
        m.kernel.requestStop(cpu.id, { reason: 'breakpoint', description: `hypercall #${hypercalls}`, reportPc: trap.pc });
      }
      return false; // not consumed: the kernel still handles it
    });
    const stops: string[] = [];
    for (;;) {
      const r = m.runSlice(1e9);
      if (r.kind === 'stopped') { stops.push(`${r.cpu}:${r.request.description}`); continue; }
      assert.equal(r.kind, 'exited');
      break;
    }
    assert.ok(stops.length >= 3, stops.join());
    assert.equal(stops[0].split(':')[1], 'hypercall #10');
    assert.deepEqual(recs, transcript(ref.records));
  });

  test('taskRegisters: the CPU for the running task, the saved context for a waiting one', () => {
    const m = new Machine(image(SAMPLE_X86), { cpus: 1 });
    const arch = m.arch;
    const ip = regIndex(arch, 'ip'), sp = regIndex(arch, 'sp');
    let seen = false;
    m.kernel.addTrapHook((cpu, trap) => {
      if (seen || trap.kind !== 'hypercall' || m.kernel.tasks().length < 3) return false;
      seen = true;
      m.kernel.requestStop(cpu.id, { reason: 'pause', description: 'look' });
      return false;
    });
    let r = m.runSlice(1e9);
    while (r.kind === 'running') r = m.runSlice(1e9);
    assert.equal(r.kind, 'stopped');
    const cur = m.kernel.current(0)!;
    const regs = m.taskRegisters(cur.pid)!;
    assert.equal(regs[ip], m.cpus[0].getPc());
    const waiting = m.kernel.tasks().find(t => t !== cur && t.state === 'runnable')!;
    const wr = m.taskRegisters(waiting.pid)!;
    assert.ok(wr[sp] > waiting.stackBase && wr[sp] <= waiting.stackTop, 'saved sp lies in its own kernel stack');
    assert.equal(m.taskRegisters(12345), undefined);
  });

  test('layout: exec area within rel32 reach of the text, guarded 16 KiB stacks, thread-return page', () => {
    const m = new Machine(image(SAMPLE_X86), { cpus: 2 });
    const k = m.kernel;
    assert.equal(k.layout.execArea, 0xffffffffa0000000n);
    assert.equal(k.layout.stackArea, 0xffffc90000000000n);
    assert.equal(k.layout.stackSize, 16384);
    assert.equal(k.threadReturnAddress(), 0xffffffffa0000000n);
    const init = k.tasks()[0];
    assert.equal(init.stackBase, 0xffffc90000000000n);
    assert.equal(init.stackTop - init.stackBase, 16384n);
    const rsp = m.taskRegisters(1)![regIndex(m.arch, 'sp')];
    assert.equal(k.mem.read64(Number(BigInt.asIntN(64, rsp))), k.threadReturnAddress(), 'start_kernel returns to the thread-return page');
    assert.ok(!k.mem.isMapped(Number(BigInt.asIntN(64, init.stackTop)), 1), 'guard gap after the stack');
    assert.ok(!k.mem.isMapped(Number(BigInt.asIntN(64, init.stackBase)) - 1, 1), 'nothing right below it');
    // segments mapped with their p_flags
    const text = k.mem.regionAt(Number(BigInt.asIntN(64, m.image.entry)))!;
    assert.equal(text.perms & 7, 1 | 4, 'text is R+X');
  });

  test('allocExec: bump allocation inside the exec area, aligned, never the thread-return page', () => {
    // no kprobes engine: its trampolines would take the first exec bytes at boot
    const m = new Machine(image(SAMPLE_X86), { kprobes: false });
    const k = m.kernel;
    const a = k.allocExec(5);
    const b = k.allocExec(16, 64);
    assert.equal(a, k.layout.execArea + BigInt(PAGE_SIZE));
    assert.equal(b % 64n, 0n);
    assert.ok(b >= a + 5n);
    assert.ok(k.mem.isMapped(Number(BigInt.asIntN(64, b)), 16));
    assert.throws(() => k.allocExec(k.layout.execAreaSize), /exec area exhausted/);
    assert.throws(() => k.allocExec(8, 3), /bad alignment/);
  });

  test('blacklist: NOKPROBE_SYMBOL(notify_die) as its function range', () => {
    const m = new Machine(image(SAMPLE_X86));
    const sym = m.image.symbols.lookup('notify_die')!;
    assert.deepEqual(m.kernel.blacklist(), [{ start: sym.value, end: sym.value + sym.size, name: 'notify_die' }]);
  });

  test('onTaskExit sees every thread end with its code', () => {
    const m = new Machine(image(SAMPLE_X86));
    const ended: string[] = [];
    m.kernel.onTaskExit(t => ended.push(`${t.pid}:${t.exitCode}`));
    m.run();
    assert.deepEqual(ended.sort(), ['1:0', '2:0', '3:1', '4:0', '5:3']);
  });

  test('stepCpu runs exactly the requested instructions on one CPU', () => {
    const m = new Machine(image(SAMPLE_X86));
    assert.deepEqual(m.stepCpu(0, 1), { kind: 'running' });
    assert.equal(m.totalInstructions, 1);
    m.stepCpu(0, 99);
    assert.equal(m.totalInstructions, 100);
    assert.equal(m.kernel.timeNs(), 100n);
  });

  test('options and images are checked with clear errors', () => {
    // one wording for every front end (emulator/machineOptions.ts)
    assert.throws(() => new Machine(image(SAMPLE_X86), { cpus: 0 }), /"cpus" must be an integer from 1 to 64, got 0/);
    assert.throws(() => new Machine(image(SAMPLE_X86), { quantum: 0 }), /"quantum" must be an integer from 1 to/);
    assert.throws(() => new Machine(image(SAMPLE_X86), { maxInstructions: -1 }), /maxInstructions/);
    // every port has a CPU now: an image whose e_machine names an architecture without one (ppc64)
    const ppc = join(mkdtempSync(join(tmpdir(), 'kp-machine-')), 'ppc64.elf');
    const bytes = readFileSync(repoPath('examples/kernel/build/kernel-riscv64.elf'));
    bytes.writeUInt16LE(21 /* EM_PPC64 */, 18);
    writeFileSync(ppc, bytes);
    assert.throws(() => new Machine(loadElf(ppc)), (e: unknown) => e instanceof ImageError && /unsupported machine ppc64: no CPU emulator for this architecture yet/.test(e.message));
  });
});
