/**
 * CPU emulation speed: emulated instructions per second on the sample kernel
 * and on every conformance program (loopbench above all), per architecture
 * with a CPU (x86_64: test/conformance/bin, aarch64: bin/aarch64), and,
 * when qemu-user for that architecture is installed, its wall time on the
 * same ELF and the ratio. `--quick` leaves out loopbench.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';
import { Row, fmt } from './lib/table';

function repoRoot(): string {
  let d = resolve(__dirname);
  for (;;) {
    if (existsSync(join(d, 'examples', 'kernel', 'build'))) return d;
    const up = dirname(d);
    if (up === d) throw new Error('bench/cpu: cannot find the repository (examples/kernel/build)');
    d = up;
  }
}


const root = repoRoot();
const quick = process.argv.includes('--quick');
const hasQemu = (qemu: string): boolean => spawnSync(qemu, ['--version'], { stdio: 'ignore' }).status === 0;

function timeQemu(qemu: string, elf: string): number | undefined {
  if (!hasQemu(qemu)) return undefined;
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const r = spawnSync(qemu, [elf], { stdio: ['ignore', 'ignore', 'ignore'] });
    const t = (performance.now() - t0) / 1000;
    if (r.error) return undefined;
    best = Math.min(best, t);
  }
  return best;
}

function benchKernel(rel: string, cpus: number): Row {
  const m = new Machine(loadElf(join(root, rel)), { cpus });
  const t0 = performance.now();
  const exit = m.run();
  return { name: `${rel.split('/').pop()} (--cpus ${cpus})`, instructions: m.totalInstructions, seconds: (performance.now() - t0) / 1000, ok: `${exit.reason} ${exit.code}` };
}

function benchUser(dir: string, file: string, qemu: string): Row {
  const elf = join(root, dir, file);
  const m = Machine.forUserProgram(loadElf(elf), [elf], { stdout: () => undefined, stderr: () => undefined });
  const t0 = performance.now();
  const exit = m.run();
  const seconds = (performance.now() - t0) / 1000;
  return { name: file.replace(/\.elf$/, ''), instructions: m.totalInstructions, seconds, qemu: timeQemu(qemu, elf), ok: `exit ${exit.code}` };
}


/** The architectures with a CPU: kernel image, conformance ELFs, qemu-user binary. */
const ARCHES = [
  { arch: 'x86_64', dir: 'test/conformance/bin', qemu: 'qemu-x86_64' },
  { arch: 'aarch64', dir: 'test/conformance/bin/aarch64', qemu: 'qemu-aarch64' },
  { arch: 'riscv64', dir: 'test/conformance/bin/riscv64', qemu: 'qemu-riscv64' },
].filter(a => existsSync(join(root, a.dir)));

for (const { arch, dir, qemu } of ARCHES) {
  const kernel = `examples/kernel/build/kernel-${arch}.elf`;
  const rows: Row[] = [];
  benchKernel(kernel, 2); // warm-up (JIT), not reported
  rows.push(benchKernel(kernel, 1));
  rows.push(benchKernel(kernel, 2));
  const progs = readdirSync(join(root, dir)).filter(f => f.endsWith('.elf')).sort()
    .filter(f => !quick || !f.startsWith('loopbench'));
  // loopbench first: it is the figure that matters
  progs.sort((a, b) => Number(!a.startsWith('loopbench')) - Number(!b.startsWith('loopbench')) || a.localeCompare(b));
  for (const p of progs) rows.push(benchUser(dir, p, qemu));
  console.log(`\n--- ${arch} ---`);
  console.log(fmt(rows));
  const tot = rows.reduce((acc, r) => ({ i: acc.i + r.instructions, s: acc.s + r.seconds }), { i: 0, s: 0 });
  const q = rows.filter(r => r.qemu !== undefined).reduce((acc, r) => ({ e: acc.e + r.seconds, q: acc.q + (r.qemu ?? 0) }), { e: 0, q: 0 });
  console.log(`\n${arch} total: ${tot.i} instructions in ${tot.s.toFixed(2)} s = ${(tot.i / tot.s / 1e6).toFixed(2)} M insn/s` +
    (hasQemu(qemu) ? `; emulator / ${qemu} on the programs: ${(q.e / q.q).toFixed(1)}x (qemu best of 3, includes its start-up)` : `; ${qemu} not installed: no comparison`));
}
