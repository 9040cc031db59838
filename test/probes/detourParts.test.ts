/**
 * What a prepared detour buffer keeps of its own is small: the optimizer's
 * handlers are shared by every buffer, each finds its probe through its
 * code's data, its native entry and route are made when first asked, and
 * the x86 jump and saved bytes when the optimizer or a text read wants
 * them. What anyone sees of a buffer must be its own probe's: its name,
 * its sites, its status; an optimized probe is hit through its own native
 * entry with the hits the breakpoint gives, and its original bytes come
 * back when it is unoptimized and unregistered.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../emulator/machine';
import { mustVAddr } from '../../emulator/memory/address';
import { addFile, probeRig, runAll, sampleImage, starts, sym } from './helpers';

/** the image's own bytes at [addr, addr + n) */
function imageBytes(addr: bigint, n: number): number[] {
  const m = new Machine(sampleImage(), { cpus: 1 });
  return [...m.kernel.mem.readBytes(mustVAddr(addr), n)];
}

describe('detour buffers: shared handlers, each buffer its own probe', () => {
  test('a probe at every instruction of functions: each prepared buffer is named after its probe, its first byte is its callback site, its status the same as alone', () => {
    const m = new Machine(sampleImage(), { cpus: 1 });
    const fns = [...m.kernel.image.symbols.functions()].filter(f => f.size >= 32n).sort((a, b) => (a.value < b.value ? -1 : 1)).slice(0, 12);
    // the instructions a kprobe may be put on (the others are refused, the same with or without neighbours)
    const addrs = fns.flatMap(f => starts(m, f.name)).filter(a => m.kprobes.registerKprobe({ addr: a, pre_handler: () => 0 }) === 0);
    let prepared = 0;
    for (const a of addrs) {
      const s = m.kprobes.optimizer.status(a);
      if (s.state === 'none') continue;
      prepared++;
      const buf = s.buffer as bigint;
      const r = m.kernel.image.symbols.resolve(a);
      assert.ok(r);
      const name = r.offset === 0n ? r.sym.name : `${r.sym.name}+0x${r.offset.toString(16)}`;
      assert.equal(m.kprobes.code.symbolize(buf), `optprobe_detour[${name}]+0x0`);
      assert.equal(m.kprobes.code.symbolize(buf + 0x10n), `optprobe_detour[${name}]+0x10`);
      assert.equal(m.kprobes.breakpointSite(buf), 'optprobeCallback', 'the native entry');
      assert.equal(m.kprobes.breakpointSite(buf + 1n), 'none');
      // the same probe alone on a fresh machine: the same verdict and region
      const alone = new Machine(sampleImage(), { cpus: 1 });
      assert.equal(alone.kprobes.registerKprobe({ addr: a, pre_handler: () => 0 }), 0);
      const s1 = alone.kprobes.optimizer.status(a);
      assert.equal(s1.state, 'queued');
      assert.equal(s1.size, s.size);
    }
    assert.ok(prepared > 10, `${prepared} of ${addrs.length} addresses prepared`);
  });

  test('an optimized probe is hit through its native entry as often as its breakpoint is hit; its bytes come back', () => {
    const at = sym('fib');
    const run = (optimize: boolean): { hits: number; rig: ReturnType<typeof probeRig> } => {
      const rig = probeRig({ cpus: 1 });
      if (!optimize) rig.machine.kprobes.optimizer.setEnabled(false);
      const r = addFile(rig.mgr, 'kprobe fib { pre { return 0; } }\n');
      assert.deepEqual(r.errors, []);
      runAll(rig.machine);
      const row = rig.mgr.listRows().find(p => p.target === 'fib');
      assert.ok(row);
      return { hits: row.hits, rig };
    };
    const plain = run(false);
    const opt = run(true);
    assert.ok(plain.hits > 0);
    assert.equal(opt.hits, plain.hits);
    const { machine, mgr } = opt.rig;
    const engine = machine.kprobes;
    assert.equal(engine.optimizer.status(at).state, 'optimized');
    assert.ok(engine.stats.inlineOptEntries + engine.stats.fusedNativeHits + engine.stats.nativeOptFrames > 0, 'hits went through the native entry');
    assert.match(mgr.debugfsList(), /fib\+0x0\s+\[OPTIMIZED\]/);
    // the jump is written; text reads without probes show the original bytes (the saved bytes under the jump)
    const want = imageBytes(at, 16);
    assert.notDeepEqual([...machine.kernel.mem.readBytes(mustVAddr(at), 5)], want.slice(0, 5));
    assert.deepEqual([...engine.arming.readTextWithoutProbes(machine.kernel.mem, at, 16)], want);
    // unoptimized (sysctl 0): the breakpoint and the saved bytes; unregistered: the image's bytes
    engine.optimizer.setEnabled(false);
    const after = [...machine.kernel.mem.readBytes(mustVAddr(at), 5)];
    assert.deepEqual(after.slice(1), want.slice(1, 5));
    assert.deepEqual([...engine.arming.readTextWithoutProbes(machine.kernel.mem, at, 16)], want);
    for (const p of mgr.list()) mgr.remove(p.id);
    assert.deepEqual([...machine.kernel.mem.readBytes(mustVAddr(at), 16)], want);
  });
});
