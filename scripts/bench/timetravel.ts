/**
 * The cost of recording for reverse execution (emulator/timetravel), with
 * the debugger's defaults (a snapshot every 1M instructions at most, and at
 * most one tenth of the run spent taking them; 512 MiB ceiling):
 *
 * - run time with recording off and on (the sample kernel with the
 *   documentation's probes; loopbench-gcc-O2, a long user program), best of 3;
 * - snapshot memory at the end, and per minute of recorded run;
 * - a reverse step's time at random points of the sample kernel run
 *   (instruction step back) and a reverse continue's (previous probe hit).
 *
 * `--quick`: the sample kernel only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';
import { repoRoot } from './lib/root';
import { probesOf } from '../../emulator/probes/attach';
import { recordMachine } from '../../emulator/timetravel/recorder';

const root = repoRoot('timetravel');
const quick = process.argv.includes('--quick');
const gc = (globalThis as { gc?: () => void }).gc;

function sampleKernel(): Machine {
  const m = new Machine(loadElf(join(root, 'examples/kernel/build/kernel-x86_64.elf')));
  for (const f of ['kprobe_example', 'kretprobe_example', 'jprobe_example']) {
    probesOf(m).addProbeFile(readFileSync(join(root, `examples/probes/${f}.kprobe`), 'utf8'), `${f}.kprobe`);
  }
  return m;
}

function loopbench(): Machine {
  const elf = join(root, 'test/conformance/bin/loopbench-gcc-O2.elf');
  return Machine.forUserProgram(loadElf(elf), [elf], { stdout: () => undefined, stderr: () => undefined });
}

/** run in debugger-sized slices (what the run controller does) */
function runAll(m: Machine): void {
  for (;;) {
    const r = m.runSlice(200_000);
    if (r.kind === 'exited' || r.kind === 'limit') return;
  }
}

interface Timing { seconds: number; instructions: number; snapshots: number; bytes: number; first: number; captureMs: number }

function once(make: () => Machine, record: boolean): Timing {
  gc?.();
  const m = make();
  const tt = record ? recordMachine(m) : null;
  const t0 = performance.now();
  runAll(m);
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, instructions: m.totalInstructions, snapshots: tt?.snapshotCount ?? 0, bytes: tt?.snapshotBytes ?? 0, first: tt?.stats.firstSnapshotBytes ?? 0, captureMs: tt?.stats.captureMs ?? 0 };
}

/** best of 4 each, off and on alternating (so that warming up favours neither) */
function timed(make: () => Machine): { off: Timing; on: Timing } {
  let off: Timing | undefined, on: Timing | undefined;
  for (let k = 0; k < 4; k++) {
    const a = once(make, false), b = once(make, true);
    if (!off || a.seconds < off.seconds) off = a;
    if (!on || b.seconds < on.seconds) on = b;
  }
  return { off: off!, on: on! };
}

const MB = 1024 * 1024;
console.log('workload                      off s     on s   cost   snapshots   MiB (first)   MiB added/min   capture ms');
for (const [name, make] of [['sample kernel + probes', sampleKernel], ...(quick ? [] : [['loopbench-gcc-O2 (user)', loopbench]])] as [string, () => Machine][]) {
  const { off, on } = timed(make);
  const perMin = (on.bytes - on.first) / MB / on.seconds * 60;
  console.log(`${name.padEnd(28)} ${off.seconds.toFixed(3).padStart(7)} ${on.seconds.toFixed(3).padStart(8)} ${((on.seconds / off.seconds - 1) * 100).toFixed(0).padStart(5)}%` +
    ` ${String(on.snapshots).padStart(11)} ${`${(on.bytes / MB).toFixed(1)} (${(on.first / MB).toFixed(1)})`.padStart(13)} ${perMin.toFixed(1).padStart(15)} ${on.captureMs.toFixed(1).padStart(12)}`);
}

// reverse moves on the sample kernel, recorded with the defaults
{
  const m = sampleKernel();
  const tt = recordMachine(m);
  runAll(m);
  const recs = m.hitLog.records();
  let seed = 1;
  const rnd = (n: number): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
  const steps: number[] = [];
  for (let i = 0; i < 20; i++) {
    const cpu = rnd(m.cpus.length);
    const target = 1 + rnd(Math.max(1, m.retired[cpu] - 1));
    const t0 = performance.now();
    const r = tt.seek({ kind: 'retired', cpu, retired: target });
    if (!r.ok) continue;
    const t1 = performance.now();
    tt.stepBack(cpu);
    steps.push(performance.now() - t1);
    void t0;
  }
  // back to the end, then reverse continue hit by hit
  runAll(m);
  const conts: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    const r = tt.reverseToHit(recs);
    conts.push(performance.now() - t0);
    if (!r.ok || r.description === 'the start of the recording') break;
  }
  const stat = (xs: number[]): string => xs.length ? `mean ${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length})` : 'none';
  console.log(`\nsample kernel (${m.totalInstructions} instructions, ${tt.snapshotCount} snapshots, ${(tt.snapshotBytes / MB).toFixed(1)} MiB):`);
  console.log(`  step back one instruction at random points: ${stat(steps)}`);
  console.log(`  reverse continue to the previous hit:        ${stat(conts)}`);
}
