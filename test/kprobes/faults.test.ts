/**
 * Handler fault paths: a post_handler that faults reaches the probe's
 * fault_handler (kprobe_fault_handler in HIT_SSDONE), and jprobe_return()
 * called where no jprobe entry handler runs oopses the CPU (Linux: the
 * int3 of jprobe_return() is nobody's breakpoint) — in both cases no JS
 * exception leaves the machine.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KPROBE_ARCHES, portInfo, rig } from './harness';
import { KprobeStatus, type Jprobe, type Kprobe, type Kretprobe } from '../../emulator/kprobes';

const RAND1 = 0x2545f491n;
const TARGET_CALLS = 1 + 4 * 24;
const UNMAPPED = 0x10;

for (const arch of KPROBE_ARCHES) describe(arch, () => {
  const PF = portInfo(arch).abi.trapNumbers.pageFault;
  describe('a fault in a post_handler', () => {
    test('goes to the probe\'s fault_handler (page fault trapnr, HIT_SSDONE); handled: the kernel runs on unchanged', () => {
      const r = rig({ arch });
      const seen: { trapnr: number; status: KprobeStatus; current: boolean }[] = [];
      let posts = 0;
      const kp: Kprobe = {
        symbol_name: 'kprobe_target',
        post_handler: (_p, regs) => { posts++; regs.cpu.mem.read64(UNMAPPED); },
        fault_handler: (p, regs, trapnr) => {
          const kcb = r.engine.percpu.ctlblk(regs.cpu.id);
          seen.push({ trapnr, status: kcb.status, current: kcb.current === p });
          return 1;
        },
      };
      assert.equal(r.engine.registerKprobe(kp), 0);
      const lines = r.run();
      assert.equal(posts, TARGET_CALLS);
      assert.equal(seen.length, TARGET_CALLS);
      assert.ok(seen.every(s => s.trapnr === PF && s.status === KprobeStatus.HIT_SSDONE && s.current), JSON.stringify(seen[0]));
      assert.equal(kp.nmissed, TARGET_CALLS, 'a handler fault counts as missed');
      assert.ok(lines.includes(`selftest: kprobe_target(${RAND1}) = ${RAND1 / 3n}`));
      assert.ok(!lines.some(l => /Oops|BUG/.test(l)));
      assert.equal(r.machine.kernel.oopsCount, 0);
    });

    test('not handled (fault_handler returns 0): the CPU oopses with the page fault, the machine run returns', () => {
      const r = rig({ arch });
      let faults = 0;
      const kp: Kprobe = {
        symbol_name: 'kprobe_target',
        post_handler: (_p, regs) => { regs.cpu.mem.read64(UNMAPPED); },
        fault_handler: () => { faults++; return 0; },
      };
      assert.equal(r.engine.registerKprobe(kp), 0);
      const lines = r.run();
      assert.ok(faults >= 1);
      assert.ok(lines.some(l => /BUG: unable to handle page fault for address: 0x10 in a kprobe handler \(kprobe_target\+0x0\)/.test(l)), lines.join('\n'));
      assert.ok(r.machine.kernel.oopsCount >= 1);
    });
  });

  describe('jprobe_return() outside a jprobe', () => {
    test('called from a kprobe pre_handler: oops naming the probe, no exception out of the run', () => {
      const r = rig({ arch });
      const kp: Kprobe = { symbol_name: 'kprobe_target', pre_handler: () => r.engine.jprobeReturn() };
      assert.equal(r.engine.registerKprobe(kp), 0);
      const lines = r.run();
      assert.ok(lines.some(l => l.includes('jprobe_return() called outside a jprobe handler (kprobe_target+0x0)')), lines.join('\n'));
      assert.ok(r.machine.kernel.oopsCount >= 1);
      assert.equal(r.engine.percpu.ctlblk(0).current, null, 'control blocks reset');
      assert.equal(r.engine.percpu.ctlblk(1).current, null);
    });

    test('a jprobe entry\'s jprobe_return() kept and called later from a return handler: oops, no exception', () => {
      const r = rig({ arch });
      let later: (() => never) | null = null;
      let entries = 0;
      const jp: Jprobe = {
        kp: { symbol_name: 'kprobe_target' },
        entry: () => { entries++; later = () => r.engine.jprobeReturn(); r.engine.jprobeReturn(); },
      };
      const rp: Kretprobe = { kp: { symbol_name: 'kprobe_target2' }, handler: () => { if (later) later(); return 0; } };
      assert.equal(r.engine.registerJprobe(jp), 0);
      assert.equal(r.engine.registerKretprobe(rp), 0);
      const lines = r.run();
      assert.ok(entries >= 1);
      assert.ok(lines.some(l => l.includes('jprobe_return() called outside a jprobe handler (kprobe_target2+0x0)')), lines.join('\n'));
      assert.ok(r.machine.kernel.oopsCount >= 1);
    });
  });
});
