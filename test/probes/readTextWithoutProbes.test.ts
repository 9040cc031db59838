/**
 * readTextWithoutProbes (what the debugger and registration read as the
 * code) puts back every armed probe's saved bytes that overlap the read,
 * those of probes starting before it included (a 4-byte brk read from its
 * third byte), and the optimized probes' jumps: any window of a function
 * in which every instruction is probed reads as the image's bytes. On each
 * arch's sample kernel.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { mustVAddr } from '../../emulator/memory/address';
import { repoPath } from '../util/paths';

describe('readTextWithoutProbes over densely probed code', () => {
  for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
    test(`${arch}: every window of a function probed at each instruction reads as the image`, () => {
      const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`)), { cpus: 1 });
      const fn = m.kernel.image.symbols.lookup('kprobe_target');
      assert.ok(fn && fn.size > 16n);
      const lo = fn.value, size = Number(fn.size);
      const before = m.kernel.mem.readBytes(mustVAddr(lo), size);
      let probes = 0;
      for (let p = lo; p < lo + fn.size;) {
        const d = m.arch.decode(m.kernel.mem, p);
        if (!d) break;
        if (m.kprobes.registerKprobe({ addr: p, pre_handler: () => 0 }) === 0) probes++;
        p += BigInt(d.length);
      }
      m.kprobes.waitForOptimizer();
      assert.ok(probes > 4, `${probes} probes`);
      assert.notDeepEqual(m.kernel.mem.readBytes(mustVAddr(lo), size), before, 'the probes changed the text');
      for (let off = 0; off < size; off++) {
        for (let len = 1; len <= 16 && off + len <= size; len++) {
          const got = m.kprobes.arming.readTextWithoutProbes(m.kernel.mem, lo + BigInt(off), len);
          assert.deepEqual(got, before.subarray(off, off + len), `+${off} len ${len}`);
        }
      }
    });
  }
});
