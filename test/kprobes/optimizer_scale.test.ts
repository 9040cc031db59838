/**
 * The optimizer with many probes (10,000 armed probes must not change a hot
 * probe's cost), on many.elf (test/fixtures/kernel/many: bench_target called
 * 400,000 times, plus 1,600 functions nothing calls):
 * - 10,000 armed probes in the cold functions do not change what a hot
 *   probe does: bench_target's probe is optimized by the delayed optimizer
 *   even though every trap happens with the CPU inside its region (the
 *   optimizer also runs at timer ticks, as delayed work), counts every call,
 *   and the kernel's results are unchanged;
 * - the per-function scan the optimizer keeps is dropped when the
 *   function's original bytes change (a debugger write): a jump into the
 *   region written after a first verdict refuses optimization.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { DebugMemory } from '../../emulator/debug/memory';
import type { Kprobe } from '../../emulator/kprobes';
import { checkBenchOutput } from '../fixtures/kernel/bench/hostTime';
import { repoPath } from '../util/paths';
import { mustVAddr } from '../../emulator/memory/address';

const image = loadElf(repoPath('test', 'fixtures', 'kernel', 'many', 'many.elf'));

function sym(name: string): bigint {
  const s = image.symbols.lookup(name);
  assert.ok(s, name);
  return s.value;
}

/** instruction starts of the cold functions, ascending */
function coldStarts(m: Machine, n: number): bigint[] {
  const out: bigint[] = [];
  for (const f of [...image.symbols.functions()].filter(s => s.name.startsWith('cold_')).sort((a, b) => (a.value < b.value ? -1 : 1))) {
    for (let p = f.value; p < f.value + f.size && out.length < n;) {
      const d = m.arch.decode(m.kernel.mem, p);
      assert.ok(d, `decode at ${p.toString(16)}`);
      out.push(p);
      p += BigInt(d.length);
    }
  }
  return out;
}

describe('optimizer with 10,000 probes (many.elf)', () => {
  test('a hot probe among 10,000 armed cold probes is optimized, counts every call, and the results are unchanged', () => {
    const m = new Machine(image, { cpus: 1 });
    const target = sym('bench_target');
    let hits = 0;
    assert.equal(m.kprobes.registerKprobe({ addr: target, pre_handler: () => { hits++; return 0; } }), 0);
    const cold: Kprobe[] = coldStarts(m, 10_000).map(addr => ({ addr, pre_handler: () => 0 }));
    assert.equal(cold.length, 10_000);
    assert.equal(m.kprobes.registerKprobes(cold), 0);
    const exit = m.run();
    assert.equal(exit.reason, 'poweroff');
    const calls = checkBenchOutput(m, 'many.elf');
    assert.equal(hits, calls);
    assert.equal(m.kprobes.optimizer.status(target).state, 'optimized');
    assert.ok(cold.every(k => (k.hits ?? 0) === 0), 'nothing calls the cold functions');
    // the probes are still all there, and the text comes back byte for byte
    const fnBytes = (m2: Machine): Uint8Array => m2.kprobes.arming.readTextWithoutProbes(m2.kernel.mem, sym('cold_0'), 4096);
    const pristine = fnBytes(new Machine(image, { cpus: 1 }));
    assert.deepEqual(fnBytes(m), pristine);
    m.kprobes.unregisterKprobes(cold);
    assert.deepEqual(m.kernel.mem.readBytes(mustVAddr(sym('cold_0')), 4096), pristine, 'unregistered: memory holds the original text');
  });

  test('the kept function scan is redone when the function\'s original bytes change', () => {
    const m = new Machine(image, { cpus: 1, kprobes: { optimizeDelayNs: 0 } });
    const target = sym('bench_target');
    const kp: Kprobe = { addr: target, pre_handler: () => 0 };
    assert.equal(m.kprobes.registerKprobe(kp), 0);
    const first = m.kprobes.optimizer.status(target);
    assert.notEqual(first.state, 'none', first.reason);
    const size = first.size as number;
    assert.ok(size >= 5);
    m.kprobes.unregisterKprobe(kp);
    // a later instruction of bench_target becomes `jmp rel8` back into the detoured region
    const at = target + BigInt(size);
    const view = DebugMemory.of(m);
    const rel = Number(target + 2n - (at + 2n));
    view.write(at, new Uint8Array([0xeb, rel & 0xff]));
    const kp2: Kprobe = { addr: target, pre_handler: () => 0 };
    assert.equal(m.kprobes.registerKprobe(kp2), 0);
    const second = m.kprobes.optimizer.status(target);
    assert.equal(second.state, 'none');
    assert.match(second.reason ?? '', /jumps into the detoured region/);
  });
});
