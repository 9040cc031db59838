/**
 * The x86_64 optimizer keeps its scan of a function (instruction starts,
 * branches, relocation verdicts) between the probes registered in it and
 * trusts it while memory's textWrites and tlbGeneration say that nothing
 * could have changed the function's original bytes. Code rewritten after
 * the scan (the debugger's writeMemory, the kernel writing its text) must
 * be scanned again: a probe registered afterwards gets the verdict a fresh
 * machine with the same bytes gives, and one on unchanged code in a scanned
 * function the same verdict as alone.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import type { WriteSource } from '../../emulator/memory/writeSource';
import { mustVAddr } from '../../emulator/memory/address';
import { SAMPLE_IMAGE, sampleImage, starts } from './helpers';

type Verdict = { state: string; reason?: string };
const verdict = (m: Machine, addr: bigint): Verdict => {
  const s = m.kprobes.optimizer.status(addr);
  return { state: s.state, reason: s.reason };
};

/**
 * A function of the sample kernel with two probe addresses a < b that the
 * optimizer takes when each is alone, and an instruction c after both
 * regions that is not the function's last: an int3 written at c is not
 * padding, so the function can no longer be optimized anywhere.
 */
function pick(): { fn: string; a: bigint; b: bigint; c: bigint } {
  const m = new Machine(sampleImage(), { cpus: 1 });
  const fns = [...m.kernel.image.symbols.functions()].filter(f => f.size > 64n).sort((x, y) => (x.value < y.value ? -1 : 1));
  for (const f of fns) {
    const xs = starts(m, f.name);
    if (xs.length < 12) continue;
    const good: bigint[] = [];
    for (const x of xs.slice(0, 6)) {
      const t = new Machine(sampleImage(), { cpus: 1 });
      if (t.kprobes.registerKprobe({ addr: x, pre_handler: () => 0 }) === 0 && verdict(t, x).state !== 'none') good.push(x);
      if (good.length === 2) break;
    }
    if (good.length === 2) return { fn: f.name, a: good[0], b: good[1], c: xs[xs.length - 3] };
  }
  throw new Error('no function of the sample kernel has two optimizable probe addresses');
}

describe('x86_64 optimizer: the cached scan of a function', () => {
  const { fn, a, b, c } = pick();

  for (const source of ['debugger', 'kernel', 'loader'] as WriteSource[]) {
    test(`code rewritten after the scan (${source} write) is scanned again (${fn})`, () => {
      const m = new Machine(sampleImage(), { cpus: 1 });
      assert.equal(m.kprobes.registerKprobe({ addr: a, pre_handler: () => 0 }), 0);
      assert.notEqual(verdict(m, a).state, 'none', 'the first probe is optimizable: its function was scanned');
      m.kernel.mem.writeBytes(mustVAddr(c), new Uint8Array([0xcc]), source);
      assert.equal(m.kprobes.registerKprobe({ addr: b, pre_handler: () => 0 }), 0);
      // a fresh machine with the same bytes
      const fresh = new Machine(loadElf(SAMPLE_IMAGE), { cpus: 1 });
      fresh.kernel.mem.writeBytes(mustVAddr(c), new Uint8Array([0xcc]), source);
      assert.equal(fresh.kprobes.registerKprobe({ addr: b, pre_handler: () => 0 }), 0);
      const want = verdict(fresh, b);
      assert.equal(want.state, 'none');
      assert.match(want.reason ?? '', /int3 in the function/);
      assert.deepEqual(verdict(m, b), want);
    });
  }

  test('the engine\'s own patches (breakpoints, jumps) keep the scan: the second probe is optimized as when alone', () => {
    const m = new Machine(sampleImage(), { cpus: 1 });
    const before = m.kernel.mem.textWrites;
    assert.equal(m.kprobes.registerKprobe({ addr: a, pre_handler: () => 0 }), 0);
    assert.equal(m.kprobes.registerKprobe({ addr: b, pre_handler: () => 0 }), 0);
    assert.equal(m.kernel.mem.textWrites, before, 'arming is a textPoke');
    const alone = new Machine(sampleImage(), { cpus: 1 });
    alone.kprobes.registerKprobe({ addr: b, pre_handler: () => 0 });
    assert.deepEqual(verdict(m, b), verdict(alone, b));
  });

  test('code put back by a write is optimizable again', () => {
    const m = new Machine(sampleImage(), { cpus: 1 });
    const orig = m.kernel.mem.readBytes(mustVAddr(c), 1);
    m.kernel.mem.writeBytes(mustVAddr(c), new Uint8Array([0xcc]), 'debugger');
    assert.equal(m.kprobes.registerKprobe({ addr: a, pre_handler: () => 0 }), 0);
    assert.equal(verdict(m, a).state, 'none');
    m.kernel.mem.writeBytes(mustVAddr(c), orig, 'debugger');
    assert.equal(m.kprobes.registerKprobe({ addr: b, pre_handler: () => 0 }), 0);
    assert.notEqual(verdict(m, b).state, 'none', JSON.stringify(verdict(m, b)));
  });
});
