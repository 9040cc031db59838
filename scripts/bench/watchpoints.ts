/**
 * The cost of watching: the interpreter's speed on loopbench (and on the
 * sample kernel) with no debug register armed, with 4 data watchpoints
 * armed on addresses the program never touches (the price every load and
 * store pays while something is watched), and with 4 execute breakpoints
 * armed on addresses it never reaches (the per-instruction test), per
 * architecture whose CPU has debug registers. Best of three runs each.
 * `--quick`: the sample kernel only.
 */
import { existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';
import type { HwBpType } from '../../emulator/hwbp';
import { Row, fmt } from './lib/table';

function repoRoot(): string {
  let d = resolve(__dirname);
  for (;;) {
    if (existsSync(join(d, 'examples', 'kernel', 'build'))) return d;
    const up = dirname(d);
    if (up === d) throw new Error('bench/watchpoints: cannot find the repository (examples/kernel/build)');
    d = up;
  }
}

const root = repoRoot();
const quick = process.argv.includes('--quick');
/** far from anything the programs map: canonical user addresses nobody reads or runs */
const IDLE_BASE = 0x7f0000000000n;

function arm(m: Machine, n: number, type: HwBpType): string {
  for (let i = 0; i < n; i++) {
    const r = m.hwbp.register('debugger', { addr: IDLE_BASE + BigInt(i) * 0x1000n, len: type === 'x' ? (m.arch.name === 'x86_64' ? 1 : 4) : 8, type }, { handler: () => undefined });
    if (!('index' in r)) throw new Error(`bench/watchpoints: ${m.arch.name}: ${r.reason}`);
  }
  return n ? `${n} ${type === 'x' ? 'execute' : 'data'}` : 'none';
}

function best(make: () => Machine, n: number, type: HwBpType, name: string): Row {
  let row: Row | undefined;
  for (let k = 0; k < 3; k++) {
    const m = make();
    const armed = arm(m, n, type);
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
  best(mk, 0, 'w', 'warm-up');
  for (const [n, t] of [[0, 'w'], [4, 'w'], [4, 'x']] as const) rows.push(best(mk, n, t, 'sample kernel'));
  const loop = join(root, dir, 'loopbench-gcc-O2.elf');
  if (!quick && existsSync(loop)) {
    const img = loadElf(loop);
    const mu = (): Machine => Machine.forUserProgram(img, [loop], { stdout: () => undefined, stderr: () => undefined });
    for (const [n, t] of [[0, 'w'], [4, 'w'], [4, 'x']] as const) rows.push(best(mu, n, t, 'loopbench-gcc-O2'));
  }
  console.log(`\n--- ${arch} ---`);
  console.log(fmt(rows, 'run, armed'));
}
