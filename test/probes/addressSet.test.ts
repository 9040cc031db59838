/**
 * AddressSet (the engine's armed and prepared addresses in ascending
 * order) answers lowerBound from near its last answer first: whatever the
 * order of the questions and of the changes, every answer, within() and
 * the order must be those of a plain sorted list.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AddressSet } from '../../emulator/kprobes/probeTable';

/** a small deterministic generator (xorshift32) */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x; };
}

const lowerBound = (xs: readonly bigint[], a: bigint): number => { let i = 0; while (i < xs.length && xs[i] < a) i++; return i; };

describe('AddressSet', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    test(`lowerBound, within and the order equal a sorted list's under random changes and questions (seed ${seed})`, () => {
      const r = rng(seed);
      const set = new AddressSet();
      const ref: bigint[] = [];
      // kernel addresses (above 2^63) and low ones, clustered so that neighbouring questions are common
      const base = seed % 2 ? 0xffffffff81000000n : 0x400000n;
      for (let step = 0; step < 4000; step++) {
        const a = base + BigInt(r() % 600);
        const op = r() % 5;
        if (op === 0) {
          set.delete(a);
          const i = ref.indexOf(a);
          if (i >= 0) ref.splice(i, 1);
        } else if (op === 1 || op === 2) {
          set.add(a);
          if (!ref.includes(a)) { ref.splice(lowerBound(ref, a), 0, a); }
        } else {
          // a question near the last one or anywhere
          const q = op === 3 ? a : base + BigInt(r() % 700) - 50n;
          assert.equal(set.lowerBound(q), lowerBound(ref, q), `lowerBound(${q.toString(16)}) at step ${step}`);
          const hi = q + BigInt(r() % 40);
          assert.deepEqual(set.within(q, hi), ref.filter(x => x >= q && x < hi));
        }
      }
      assert.equal(set.size, ref.length);
      assert.deepEqual([...set], ref);
      for (let k = 0; k < ref.length; k++) assert.equal(set.at(k), ref[k]);
    });
  }
});
