/**
 * The cycle cost model: instruction classes from DecodedInsn, trap charging
 * by breakpoint kind, and the overhead table's ordering measured in
 * emulated cycles on the sample kernel.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { x86_64 } from '../../emulator/arch/x86_64';
import { cycleClass, KPROBE_PATH_CYCLES, TRAP_CYCLES, trapCycles, INSN_CYCLES } from '../../emulator/arch/x86_64/cycles';
import { measureCycles, Mode } from '../../scripts/bench/overhead';
import { sampleImage } from './harness';

const CASES: [number[], string][] = [
  [[0x55], 'push'], [[0x5d], 'pop'], [[0x48, 0x89, 0xe5], 'mov'], [[0x48, 0x01, 0xc3], 'alu'],
  [[0x48, 0x8b, 0x07], 'load'], [[0x48, 0x89, 0x07], 'store'], [[0x48, 0x01, 0x07], 'rmw'], [[0x48, 0xf7, 0xf1], 'div'],
  [[0x48, 0x0f, 0xaf, 0xc1], 'mul'], [[0xe8, 0, 0, 0, 0], 'call'], [[0xc3], 'ret'], [[0x74, 0x00], 'condJump'],
  [[0xff, 0xe0], 'indirect'], [[0x9c], 'pushf'], [[0x9d], 'popf'], [[0xcc], 'trapInsn'], [[0x0f, 0xa2], 'serializing'],
  [[0xf0, 0x48, 0x0f, 0xc1, 0x06], 'locked'], [[0x0f, 0x1f, 0x00], 'nop'],
];

// x86_64 only: the cycle cost model is the x86 CPU's (emulator/arch/x86_64/cycles.ts)
describe('cycle model', () => {
  for (const [b, cls] of CASES) {
    test(`${b.map(x => x.toString(16)).join(' ')} -> ${cls}`, () => {
      const d = x86_64.decodeBytes(Uint8Array.from(b), 0xffffffff81000000n);
      assert.ok(d);
      assert.equal(cycleClass(d), cls);
    });
  }
  test('a probe breakpoint is an exception plus the int3 path; the detour callback is a call', () => {
    const bp = { kind: 'breakpoint', pc: 0n } as const;
    assert.equal(trapCycles(bp, 'kprobe'), TRAP_CYCLES.breakpoint + KPROBE_PATH_CYCLES.int3Handler);
    assert.equal(trapCycles(bp, 'optprobeCallback'), INSN_CYCLES.call + INSN_CYCLES.ret + KPROBE_PATH_CYCLES.optimizedCallback);
    assert.ok(trapCycles({ kind: 'singleStep', pc: 0n }, 'other') > trapCycles(bp, 'optprobeCallback') * 5);
  });
});

describe('emulated cycles per hit on the sample kernel (scripts/bench/overhead.ts, 1 CPU, empty handlers on fib)', () => {
  test('k > b > o and r > rb > ro, deterministic run to run', () => {
    const image = sampleImage();
    const base = measureCycles(image, 'none');
    const per = (mode: Mode): number => {
      const m = measureCycles(image, mode);
      assert.ok(m.hits > 1000, `${mode}: fib is hot (${m.hits} hits)`);
      return (m.cycles - base.cycles) / m.hits;
    };
    const c: Partial<Record<Mode, number>> = {};
    for (const mode of ['k', 'b', 'o', 'r', 'rb', 'ro'] as const) c[mode] = per(mode);
    const f = JSON.stringify(c);
    assert.ok((c.k as number) > (c.b as number) && (c.b as number) > (c.o as number), `kprobe: ${f}`);
    assert.ok((c.r as number) > (c.rb as number) && (c.rb as number) > (c.ro as number), `kretprobe: ${f}`);
    assert.ok((c.o as number) > 0, 'an optimized probe still costs something');
    // same inputs, same cycles (no host time in the model)
    assert.deepEqual(measureCycles(image, 'o'), measureCycles(image, 'o'));
  });
});
