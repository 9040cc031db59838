/**
 * The cost of watching: the interpreter's speed on loopbench (and on the
 * sample kernel) with no debug register armed, with 4 data watchpoints
 * armed on addresses the program never touches (the price every load and
 * store pays while something is watched), and with 4 execute breakpoints
 * armed on addresses it never reaches (the per-instruction test), per
 * architecture whose CPU has debug registers. "near": the 4 addresses are
 * near the program's own (one page below it and far above), so the unit's
 * quick span test passes and every access / instruction compares against
 * each slot: the worst case. Best of three runs each.
 * `--quick`: the sample kernel only.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';
import type { HwBpType } from '../../emulator/hwbp';
import { Row, fmt } from './lib/table';
import { repoRoot } from './lib/root';


const root = repoRoot('watchpoints');
const quick = process.argv.includes('--quick');
/** far from anything the programs map: canonical user addresses nobody reads or runs */
const IDLE_BASE = 0x7f0000000000n;

/** the first page of a user program's image / the kernel's text: "near" watches go one page below it */
const NEAR_LOW: Record<string, bigint> = { user: 0x1000n, kernel: 0xffff800000000000n };

function arm(m: Machine, n: number, type: HwBpType, near: boolean, space: 'user' | 'kernel'): string {
  for (let i = 0; i < n; i++) {
    // near: two below everything, two far above (the span covers the whole working set)
    const addr = near ? (i < 2 ? NEAR_LOW[space] + BigInt(i) * 0x100n : IDLE_BASE + BigInt(i) * 0x1000n) : IDLE_BASE + BigInt(i) * 0x1000n;
    const r = m.hwbp.register('debugger', { addr, len: type === 'x' ? (m.arch.name === 'x86_64' ? 1 : 4) : 8, type }, { handler: () => undefined });
    if (!('index' in r)) throw new Error(`bench/watchpoints: ${m.arch.name}: ${r.reason}`);
  }
  return n ? `${n} ${type === 'x' ? 'execute' : 'data'}${near ? ' near' : ''}` : 'none';
}

function best(make: () => Machine, n: number, type: HwBpType, near: boolean, space: 'user' | 'kernel', name: string): Row {
  let row: Row | undefined;
  for (let k = 0; k < 3; k++) {
    const m = make();
    const armed = arm(m, n, type, near, space);
    const t0 = performance.now();
    const exit = m.run();
    const seconds = (performance.now() - t0) / 1000;
    if (!row || seconds < row.seconds) row = { name: `${name}, ${armed}`, instructions: m.totalInstructions, seconds, ok: `${exit.reason} ${exit.code}` };
  }
  return row!;
}

const ARCHES = [
  { arch: 'x86_64', dir: 'test/conformance/bin' },
  { arch: 'aarch64', dir: 'test/conformance/bin/aarch64' },
  { arch: 'riscv64', dir: 'test/conformance/bin/riscv64' },
];

for (const { arch, dir } of ARCHES) {
  const kernelPath = join(root, `examples/kernel/build/kernel-${arch}.elf`);
  const kernel = loadElf(kernelPath);
  const probe = new Machine(kernel, { cpus: 1 });
  if (probe.hwbp.unavailable) { console.log(`\n--- ${arch} ---\n${probe.hwbp.unavailable}`); continue; }
  const rows: Row[] = [];
  const mk = (): Machine => new Machine(kernel, { cpus: 1 });
  const CASES = [[0, 'w', false], [4, 'w', false], [4, 'x', false], [4, 'w', true], [4, 'x', true]] as const;
  best(mk, 0, 'w', false, 'kernel', 'warm-up');
  for (const [n, t, near] of CASES) rows.push(best(mk, n, t, near, 'kernel', 'sample kernel'));
  const loop = join(root, dir, 'loopbench-gcc-O2.elf');
  if (!quick && existsSync(loop)) {
    const img = loadElf(loop);
    const mu = (): Machine => Machine.forUserProgram(img, [loop], { stdout: () => undefined, stderr: () => undefined });
    for (const [n, t, near] of CASES) rows.push(best(mu, n, t, near, 'user', 'loopbench-gcc-O2'));
  }
  console.log(`\n--- ${arch} ---`);
  console.log(fmt(rows, 'run, armed'));
}
