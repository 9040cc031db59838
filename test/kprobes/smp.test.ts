/**
 * "Different CPUs run handlers concurrently": the control block is per CPU.
 * With a quantum of a few instructions the two CPUs interleave finely, so
 * one CPU reaches a probe while the other is still inside the handling of
 * its own hit (between the breakpoint and the end of the single-step).
 * Neither counts as a reentry.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KPROBE_ARCHES, rig } from './harness';
import { KprobeStatus, type Kprobe } from '../../emulator/kprobes';

for (const arch of KPROBE_ARCHES) describe(arch, () => {
  describe('SMP: per-CPU control blocks', () => {
    test('CPU 1 runs its handlers while CPU 0 is mid-kprobe (HIT_SS); nmissed stays 0', () => {
      // single-stepped probes (no booster, no optimization; a post_handler keeps them so anyway)
      const r = rig({ arch, cpus: 2, quantum: 1, engine: { optimization: false, kprobeBooster: false } });
      const other: { status: KprobeStatus; probe: Kprobe | null }[] = [];
      const seenOn = [0, 0];
      let posts = 0, wrongOwnStatus = 0;
      const mk = (name: string): Kprobe => ({
        symbol_name: name,
        pre_handler: (_p, regs) => {
          const me = regs.cpu.id;
          seenOn[me]++;
          if (r.engine.percpu.ctlblk(me).status !== KprobeStatus.HIT_ACTIVE) wrongOwnStatus++; // (a throw here would be a handler fault)
          const k0 = r.engine.percpu.ctlblk(0);
          if (me === 1 && k0.current !== null) other.push({ status: k0.status, probe: k0.current });
          return 0;
        },
        post_handler: () => { posts++; },
      });
      const kps = ['fib', 'vfs_read', 'do_fork', 'kprobe_target', 'kprobe_target2', 'sys_open'].map(mk);
      assert.equal(r.engine.registerKprobes(kps), 0);
      for (let i = 0; i < 4000 && other.length === 0; i++) {
        const s = r.machine.runSlice(2_000);
        if (s.kind === 'exited') break;
      }
      assert.ok(other.length > 0, `CPU 0 was seen inside a kprobe by CPU 1's pre_handler (hits: cpu0 ${seenOn[0]}, cpu1 ${seenOn[1]})`);
      assert.equal(other[0].status, KprobeStatus.HIT_SS, 'CPU 0 between its breakpoint and its single-step');
      assert.ok(kps.includes(other[0].probe as Kprobe));
      r.run();
      assert.ok(seenOn[0] > 0 && seenOn[1] > 0);
      assert.equal(wrongOwnStatus, 0, 'each CPU sees its own control block HIT_ACTIVE in its pre_handler');
      for (const k of kps) assert.equal(k.nmissed, 0, `${k.symbol_name}: no hit counted as a reentry`);
      assert.equal(posts, seenOn[0] + seenOn[1], 'every hit on either CPU ran its post_handler');
    });
  });
});
