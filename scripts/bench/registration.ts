/**
 * Registration cost and the hit cost of many armed probes (targets: 10,000
 * probes registered in <= 1 s; the hit cost with 10,000 probes within 10 % of
 * one probe).
 * 1. Sample kernel (x86_64): kprobes on every instruction start of its
 *    functions (up to N = 100, 1000, all), registered one by one through
 *    register_kprobe, then unregistered in one batch.
 * 2. many.elf (test/fixtures/kernel/many: bench.elf plus 1,600 functions
 *    nothing calls): 10,000 kprobes on distinct instruction starts of the
 *    cold functions, one by one and through one register_kprobes() call;
 *    then the host ns per hit of a kprobe on bench_target (400,000 hits)
 *    alone and with the 10,000 cold probes armed, each against the
 *    probe-less run (median of interleaved rounds, --quick: 3).
 * Standalone: node scripts/bench.mjs (section registration).
 */
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf';
import type { ElfImage } from '../../emulator/elf/types';
import { Machine } from '../../emulator/machine';
import type { Kprobe } from '../../emulator/kprobes';
import { formatHostPerHit, hostPerHit, TimedRun } from '../../test/fixtures/kernel/bench/hostTime';
import { repoRoot } from './lib/root';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 7;
const MANY = 10_000;


const root = repoRoot('registration');
const sample = loadElf(join(root, 'examples/kernel/build/kernel-x86_64.elf'));
const many = loadElf(join(root, 'test/fixtures/kernel/many/many.elf'));

/** instruction starts of the image's sized functions whose name passes `keep`, ascending */
function starts(image: ElfImage, keep: (name: string) => boolean = () => true): bigint[] {
  const m = new Machine(image, { cpus: 1 });
  const out: bigint[] = [];
  const fns = [...image.symbols.functions()].filter(f => f.size > 0n && keep(f.name)).sort((a, b) => (a.value < b.value ? -1 : 1));
  for (const s of fns) {
    for (let p = s.value; p < s.value + s.size;) {
      const d = m.arch.decode(m.kernel.mem, p);
      if (!d) break;
      out.push(p);
      p += BigInt(d.length);
    }
  }
  return out;
}

const ms = (t: number): string => t.toFixed(0);

console.log('registration: register_kprobe on instruction starts of the sample kernel (x86_64), then one unregister_kprobes');
console.log('       N   register ms   ms/probe   unregister ms');
const sampleStarts = starts(sample);
for (const n of [100, 1000, Infinity]) {
  const m = new Machine(sample, { cpus: 1 });
  const addrs = sampleStarts.slice(0, n === Infinity ? undefined : n);
  const kps: Kprobe[] = addrs.map(addr => ({ addr, pre_handler: () => 0 }));
  const t0 = performance.now();
  for (const kp of kps) m.kprobes.registerKprobe(kp);
  const t1 = performance.now();
  m.kprobes.unregisterKprobes(kps);
  const t2 = performance.now();
  console.log(`${String(addrs.length).padStart(8)}  ${ms(t1 - t0).padStart(12)}  ${((t1 - t0) / addrs.length).toFixed(3).padStart(9)}  ${ms(t2 - t1).padStart(14)}`);
}

const coldStarts = starts(many, n => n.startsWith('cold_'));
if (coldStarts.length < MANY) throw new Error(`many.elf has ${coldStarts.length} cold instruction starts, fewer than ${MANY}`);
const coldAddrs = coldStarts.slice(0, MANY);
const coldProbes = (): Kprobe[] => coldAddrs.map(addr => ({ addr, pre_handler: () => 0 }));

console.log(`\nregistration: ${MANY} kprobes on distinct instruction starts of many.elf (cold functions), x86_64`);
console.log('  how                     register ms   ms/probe   optimized   unregister ms');
for (const how of ['register_kprobe x N', 'register_kprobes'] as const) {
  const m = new Machine(many, { cpus: 1 });
  const kps = coldProbes();
  const t0 = performance.now();
  if (how === 'register_kprobes') {
    const r = m.kprobes.registerKprobes(kps);
    if (r !== 0) throw new Error(`register_kprobes failed: ${r}`);
  } else {
    for (const kp of kps) { const r = m.kprobes.registerKprobe(kp); if (r !== 0) throw new Error(`register_kprobe failed: ${r}`); }
  }
  const t1 = performance.now();
  const optimized = kps.filter(k => m.kprobes.optimizer.status(k.addr as bigint).state === 'optimized' || m.kprobes.optimizer.status(k.addr as bigint).state === 'queued').length;
  m.kprobes.unregisterKprobes(kps);
  const t2 = performance.now();
  console.log(`  ${how.padEnd(22)}  ${ms(t1 - t0).padStart(11)}  ${((t1 - t0) / MANY).toFixed(4).padStart(9)}  ${String(optimized).padStart(10)}  ${ms(t2 - t1).padStart(14)}`);
}

const target = many.symbols.lookup('bench_target');
if (!target) throw new Error('many.elf has no bench_target');
function hostRun(kind: 'none' | 'one' | 'many'): TimedRun {
  const m = new Machine(many, { cpus: 1 });
  let hits = 0;
  if (kind !== 'none') {
    const r = m.kprobes.registerKprobe({ addr: (target as { value: bigint }).value, pre_handler: () => { hits++; return 0; } });
    if (r !== 0) throw new Error(`register_kprobe(bench_target) failed: ${r}`);
  }
  if (kind === 'many') {
    const r = m.kprobes.registerKprobes(coldProbes());
    if (r !== 0) throw new Error(`register_kprobes(cold) failed: ${r}`);
  }
  const t0 = process.hrtime.bigint();
  const exit = m.run();
  const ns = Number(process.hrtime.bigint() - t0);
  if (exit.reason !== 'poweroff') throw new Error(`many.elf run (${kind}) ended with ${exit.reason}: ${exit.detail}`);
  return { ns, hits };
}
console.log(`\nhit cost: kprobe on bench_target (many.elf, 1 CPU, empty handler), host ns per hit vs the probe-less run, median of ${ROUNDS} rounds`);
const base = (): TimedRun => hostRun('none');
const one = hostPerHit(() => hostRun('one'), base, ROUNDS);
const all = hostPerHit(() => hostRun('many'), base, ROUNDS);
console.log(`  1 probe:                 ${formatHostPerHit(one)}  (${one.hits} hits)`);
console.log(`  + ${MANY} cold probes:   ${formatHostPerHit(all)}  (${((all.median / one.median - 1) * 100).toFixed(1)} % vs 1 probe)`);
