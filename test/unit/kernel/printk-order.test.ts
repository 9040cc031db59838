/**
 * printk record order (emulator/kernel/printk.ts ORDER; the console and the
 * Debug Console read it): records come in execution order, as Linux's ring
 * buffer keeps them; each CPU's stamps never go back, and a stamp going back
 * between CPUs does so by less than one quantum (two CPUs of the same round).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../../emulator/machine';
import type { PrintkRecord } from '../../../emulator/kernel/types';
import { SAMPLE_X86, image } from '../../fixtures/kernel/harness';

describe('printk record order', () => {
  for (const quantum of [100, 1000, 10_000]) {
    test(`quantum ${quantum}: per-CPU stamps non-decreasing, cross-CPU steps back less than one quantum`, () => {
      const m = new Machine(image(SAMPLE_X86), { cpus: 2, quantum });
      const recs: PrintkRecord[] = [];
      m.onPrintk(r => recs.push(r));
      m.run();
      assert.ok(new Set(recs.map(r => r.cpu)).size >= 2, 'both CPUs print');
      // the listeners saw exactly what the log stored, in the same order
      assert.deepEqual(recs, m.printkRecords);
      const lastOf = new Map<number, bigint>();
      let back = 0;
      for (let i = 0; i < recs.length; i++) {
        const r = recs[i];
        const prev = lastOf.get(r.cpu);
        assert.ok(prev === undefined || r.timeNs >= prev, `CPU ${r.cpu} went back: ${prev} -> ${r.timeNs} at "${r.text}"`);
        lastOf.set(r.cpu, r.timeNs);
        if (i > 0 && r.timeNs < recs[i - 1].timeNs) {
          back++;
          assert.notEqual(r.cpu, recs[i - 1].cpu);
          assert.ok(recs[i - 1].timeNs - r.timeNs < BigInt(quantum), `"${recs[i - 1].text}" -> "${r.text}"`);
        }
      }
      // the sample kernel's two CPUs print in the same rounds: the case the Debug Console shows
      if (quantum >= 1000) assert.ok(back > 0, 'a cross-CPU step back happens with this quantum');
    });
  }
});
