/**
 * Bench section "hitLog": host cost of recording one probe hit in the hit
 * log (HitLog.hit, emulator/trace/hitLog.ts), apart from everything else a
 * hit does. Each round records hits into a fresh log of the default size,
 * as every new Machine does, so the cost of the log's first fill (its
 * columns appearing as the ring fills) is counted with the hits:
 *  - hot:   400,000 kprobe hits of one probe by one task (the overhead
 *           section's bench.elf run: the ring fills, then wraps);
 *  - kernel: the hot case through Kernel.probeHit (numbering, the task,
 *           the clock and instruction count read for the record);
 *  - mixed: 400,000 hits of 1,000 probes by 100 tasks, a kretprobe return
 *           every fourth (latency histograms), in a 4,096-record ring that
 *           wraps ~100 times;
 *  - read:  records() of a full default-size ring, per record.
 * Figures: median of the rounds, process CPU ns (user + system) per hit.
 * Standalone:
 *   npx esbuild scripts/bench/hitLog.ts --bundle --platform=node --outfile=/tmp/hl.js && node /tmp/hl.js [--quick]
 */
import { DEFAULT_HIT_LOG_SIZE, HitLog } from '../../emulator/trace/hitLog';
import type { HitKind } from '../../emulator/kernel/types';
import type { Kernel } from '../../emulator/kernel/kernel';
import { Machine } from '../../emulator/machine';
import { benchImage } from '../../test/fixtures/kernel/bench/hostTime';

const HITS = 400_000;

// the loops take the log as an argument (never a closure's constant: optimized code specialized
// to one round's log would be thrown away with it, and the next round would pay the compiler again)

function cpuNs(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) * 1000;
}

function hotHits(log: HitLog, comm: string, probe: string, addr: bigint): void {
  for (let s = 1; s <= HITS; s++) log.hit(s, 1000 + 17 * s, 3 * s, 0, 1, comm, 'kprobe', 1, probe, addr, NaN);
}

/**
 * The previous round's log, kept until the next one is made: with no log
 * left, the collector may free the logs' hidden class, and the next log's
 * new one throws the compiled hit() away (a process's first machine lives
 * as long as its session, so that cost is not the hit's).
 */
let previous: HitLog | null = null;

function hot(): number {
  const log = previous = new HitLog(DEFAULT_HIT_LOG_SIZE);
  const c0 = cpuNs();
  hotHits(log, 'bench', 'bench_target+0x0', 0xffffffff81000123n);
  return (cpuNs() - c0) / HITS;
}

/** the hot case through Kernel.probeHit of a machine that has not run (its CPU idle: comm swapper/0), one machine for all rounds */
let machine: Machine | null = null;

function kernelHits(k: Kernel, addr: bigint, probe: string): void {
  for (let s = 1; s <= HITS; s++) k.probeHit('kprobe', 0, 1, addr, probe);
}

function kernel(): number {
  machine ??= new Machine(benchImage(), { cpus: 1 });
  const c0 = cpuNs();
  kernelHits(machine.kernel, 0xffffffff81000123n, 'bench_target+0x0');
  return (cpuNs() - c0) / HITS;
}

const PROBES = Array.from({ length: 1000 }, (_, i) => `func_${i}+0x${(i % 16).toString(16)}`);
const COMMS = Array.from({ length: 100 }, (_, i) => `task${i}`);
const ADDRS = PROBES.map((_, i) => 0xffffffff81000000n + BigInt(i * 64));

function mixedHits(log: HitLog): void {
  for (let s = 1; s <= HITS; s++) {
    const p = (s * 7) % PROBES.length, t = (s >> 3) % COMMS.length;
    const ret = (s & 3) === 0;
    const kind: HitKind = ret ? 'kretprobe-return' : 'kprobe';
    log.hit(s, 1000 + 17 * s, 3 * s, s & 1, 100 + t, COMMS[t], kind, p, PROBES[p], ADDRS[p], ret ? 100 + (s & 1023) : NaN);
  }
}

function mixed(): number {
  const c0 = cpuNs();
  mixedHits(new HitLog(4096));
  return (cpuNs() - c0) / HITS;
}

function read(): number {
  const log = new HitLog(DEFAULT_HIT_LOG_SIZE);
  for (let s = 1; s <= DEFAULT_HIT_LOG_SIZE; s++) log.hit(s, s, s, 0, 1, COMMS[s % 100], 'kprobe', s % 1000, PROBES[s % 1000], ADDRS[s % 1000], NaN);
  const c0 = cpuNs();
  const n = log.records().length;
  return (cpuNs() - c0) / n;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

const rounds = process.argv.includes('--quick') ? 5 : 15;
/** --only=hot|mixed|read: that case alone (profiling) */
const only = process.argv.find(a => a.startsWith('--only='))?.slice('--only='.length);
const gc = (globalThis as { gc?: () => void }).gc;
const fig: Record<string, number[]> = { hot: [], kernel: [], mixed: [], read: [] };
for (let r = 0; r < rounds + 1; r++) {
  const row: [string, () => number][] = [['hot', hot], ['kernel', kernel], ['mixed', mixed], ['read', read]];
  for (const [name, f] of row.filter(([n]) => only === undefined || n === only)) {
    gc?.();
    const v = f();
    if (r > 0) fig[name].push(v); // the first round warms the JIT up
  }
}
console.log(`hit log: CPU ns per hit (records() per record), median of ${rounds} rounds`);
console.log(`  ${Object.entries(fig).filter(([, xs]) => xs.length > 0).map(([n, xs]) => `${n} ${median(xs).toFixed(1)}`).join('  ')}`);
