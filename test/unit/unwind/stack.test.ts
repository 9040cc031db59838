/**
 * Stack walks (walkFrames) with call frame information: on the sample kernel
 * (built with frame pointers) a CFI-only walk gives the same frames as the
 * frame-pointer walk, at a breakpoint deep in a recursion and in a function
 * prologue; on the -fomit-frame-pointer fixtures (.debug_frame, .eh_frame)
 * only CFI finds the callers.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadElf } from '../../../emulator/elf';
import type { ElfImage } from '../../../emulator/elf/types';
import { Machine } from '../../../emulator/machine';
import { walkFrames } from '../../../emulator/kernel/stack';
import type { WalkOptions } from '../../../emulator/kernel/stack';
import { cfiError, cfiFor } from '../../../emulator/unwind';
import { fixture, FIXTURE_DIR } from '../../fixtures/elf/goldens';
import { marker, sampleImage } from '../../probes/helpers';
import { probesOf } from '../../../emulator/probes/attach';

interface Walks { auto: bigint[]; cfi: bigint[]; fp: bigint[]; names: string[] }

/** Run `image` with a breakpoint at `target`; at the `nth` stop (1-based) walk the stack three ways. */
function walksAt(image: ElfImage, target: string, nth = 1): Walks {
  const machine = new Machine(image, { cpus: 1, maxInstructions: 50_000_000 });
  const mgr = probesOf(machine);
  const e = mgr.addBreakpoint({ target });
  assert.equal(e.verified, true, e.message);
  let stops = 0;
  for (;;) {
    const r = machine.runSlice(1_000_000);
    if (r.kind === 'stopped') {
      if (++stops < nth) continue;
      const cpu = machine.cpus[r.cpu];
      const task = machine.kernel.current(r.cpu);
      const walk = (unwind: WalkOptions['unwind']): bigint[] => walkFrames(machine.kernel, cpu, task, { pc: r.request.reportPc, unwind });
      const auto = walk('auto');
      return { auto, cfi: walk('cfi'), fp: walk('fp'), names: auto.map((a) => image.symbols.format(a)) };
    }
    assert.fail(`no stop #${nth} at ${target} (run ended: ${r.kind})`);
  }
}

const fn = (s: string): string => s.replace(/\+0x[0-9a-f]+(\/0x[0-9a-f]+)?$/, '');

describe('walkFrames: CFI and frame pointers agree on the sample kernel', () => {
  const img = sampleImage();

  test('the sample kernel has call frame information covering its functions', () => {
    const cfi = cfiFor(img);
    assert.ok(cfi, cfiError(img) ?? 'no .debug_frame');
    for (const f of img.symbols.functions()) {
      if (f.size > 0n) assert.ok(cfi.findFde(f.value), `${f.name} has an FDE`);
    }
  });

  test('deep in a recursion (fib base case): CFI-only walk == frame-pointer walk', () => {
    const m = marker('fib_base');
    const w = walksAt(img, `${m.file}:${m.line}`, 1);
    assert.ok(w.cfi.length >= 5, `frames: ${w.names.join(' <- ')}`);
    assert.deepEqual(w.cfi, w.fp);
    assert.deepEqual(w.auto, w.fp);
    const names = w.names.map(fn);
    assert.ok(names.filter((n) => n === names[0]).length >= 2, `recursive frames: ${names.join(' <- ')}`);
  });

  test('at a function entry and right after push rbp: CFI-only walk == frame-pointer walk', () => {
    const entry = walksAt(img, 'kprobe_target', 1);
    assert.ok(entry.cfi.length >= 3, entry.names.join(' <- '));
    assert.deepEqual(entry.cfi, entry.fp);
    const afterPush = walksAt(img, 'kprobe_target+0x1', 1);
    assert.deepEqual(afterPush.cfi, afterPush.fp);
    assert.deepEqual(afterPush.cfi.slice(1), entry.cfi.slice(1), 'same callers');
  });
});

describe('walkFrames: -fomit-frame-pointer images need CFI', () => {
  const src = readFileSync(`${FIXTURE_DIR}/src/omitfp.c`, 'utf8').split('\n');
  const line = src.findIndex((l) => l.includes('#BP leaf_body')) + 1;
  assert.ok(line > 0);
  for (const name of ['omitfp-debug_frame.elf', 'omitfp-eh_frame.elf']) {
    test(`${name}: leaf_work <- middle <- outer <- start_kernel from CFI; the frame-pointer walk misses them`, () => {
      const image = loadElf(fixture(name));
      assert.ok(cfiFor(image), cfiError(image) ?? 'no call frame information');
      const w = walksAt(image, `omitfp.c:${line}`, 2);
      assert.deepEqual(w.names.slice(0, 4).map(fn), ['leaf_work', 'middle', 'outer', 'start_kernel'], w.names.join(' <- '));
      assert.deepEqual(w.cfi, w.auto);
      const fpNames = w.fp.map((a) => fn(image.symbols.format(a)));
      assert.notDeepEqual(fpNames.slice(0, 4), ['leaf_work', 'middle', 'outer', 'start_kernel'], `fp walk: ${fpNames.join(' <- ')}`);
      assert.ok(!fpNames.slice(1).includes('middle'), `fp walk: ${fpNames.join(' <- ')}`);
    });
  }
});
