/**
 * CPU emulation speed: emulated instructions per second on the sample kernel
 * and on every conformance program (loopbench above all), and, when
 * qemu-x86_64 is installed, qemu-user's wall time on the same ELF and the
 * ratio. `--quick` leaves out loopbench.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';

function repoRoot(): string {
  let d = resolve(__dirname);
  for (;;) {
    if (existsSync(join(d, 'examples', 'kernel', 'build'))) return d;
    const up = dirname(d);
    if (up === d) throw new Error('bench/cpu: cannot find the repository (examples/kernel/build)');
    d = up;
  }
}

interface Row { name: string; instructions: number; seconds: number; qemu?: number; ok: string }

const root = repoRoot();
const quick = process.argv.includes('--quick');
const hasQemu = spawnSync('qemu-x86_64', ['--version'], { stdio: 'ignore' }).status === 0;

function timeQemu(elf: string): number | undefined {
  if (!hasQemu) return undefined;
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const r = spawnSync('qemu-x86_64', [elf], { stdio: ['ignore', 'ignore', 'ignore'] });
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

function benchUser(file: string): Row {
  const elf = join(root, 'test/conformance/bin', file);
  const m = Machine.forUserProgram(loadElf(elf), [elf], { stdout: () => undefined, stderr: () => undefined });
  const t0 = performance.now();
  const exit = m.run();
  const seconds = (performance.now() - t0) / 1000;
  return { name: file.replace(/\.elf$/, ''), instructions: m.totalInstructions, seconds, qemu: timeQemu(elf), ok: `exit ${exit.code}` };
}

function fmt(rows: Row[]): string {
  const head = ['program', 'instructions', 'seconds', 'M insn/s', 'qemu-user s', 'ratio', 'result'];
  const body = rows.map(r => [
    r.name, String(r.instructions), r.seconds.toFixed(3), (r.instructions / r.seconds / 1e6).toFixed(2),
    r.qemu === undefined ? '-' : r.qemu.toFixed(3), r.qemu === undefined ? '-' : `${(r.seconds / r.qemu).toFixed(1)}x`, r.ok,
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map(b => b[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 || i === 6 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  return [line(head), w.map(n => '-'.repeat(n)).join('  '), ...body.map(line)].join('\n');
}

const rows: Row[] = [];
benchKernel('examples/kernel/build/kernel-x86_64.elf', 2); // warm-up (JIT), not reported
rows.push(benchKernel('examples/kernel/build/kernel-x86_64.elf', 1));
rows.push(benchKernel('examples/kernel/build/kernel-x86_64.elf', 2));
const progs = readdirSync(join(root, 'test/conformance/bin')).filter(f => f.endsWith('.elf')).sort()
  .filter(f => !quick || !f.startsWith('loopbench'));
// loopbench first: it is the figure that matters
progs.sort((a, b) => Number(!a.startsWith('loopbench')) - Number(!b.startsWith('loopbench')) || a.localeCompare(b));
for (const p of progs) rows.push(benchUser(p));
console.log(fmt(rows));
const tot = rows.reduce((a, r) => ({ i: a.i + r.instructions, s: a.s + r.seconds }), { i: 0, s: 0 });
console.log(`\ntotal: ${tot.i} instructions in ${tot.s.toFixed(2)} s = ${(tot.i / tot.s / 1e6).toFixed(2)} M insn/s` +
  (hasQemu ? '; ratio = emulator seconds / qemu-user seconds (qemu best of 3, includes its start-up)' : '; qemu-x86_64 not installed: no comparison'));
