/**
 * Bench section "kprobes": host time per probe hit with an empty handler,
 * for k (kprobe), r (kretprobe) and kr (both on the same function), against
 * the probe-less baseline, in the 2.6 configuration (no jump optimization,
 * no boosters; overhead.ts has the full table). Workload: the benchmark image
 * test/fixtures/kernel/bench/bench.elf on 2 CPUs (bench_target() called
 * 400,000 times), probes on bench_target(). Each mode is timed against the
 * probe-less run in interleaved rounds; median and min..max of the rounds
 * (test/fixtures/kernel/bench/hostTime.ts).
 *   npx esbuild scripts/bench/kprobes.ts --bundle --platform=node --outfile=/tmp/kb.js && node /tmp/kb.js [--quick]
 */
import { Machine } from '../../emulator/machine';
import { Kprobe, Kretprobe } from '../../emulator/kprobes';
import { BENCH_TARGET, benchImage, checkBenchOutput, formatHostPerHit, hostPerHit, TimedRun } from '../../test/fixtures/kernel/bench/hostTime';

/** interleaved rounds per mode (--quick: 3) */
const ROUNDS = 7;

type Mode = 'none' | 'k' | 'r' | 'kr';

function once(mode: Mode, insns?: { n: number }): TimedRun {
  // the 2.6 configuration (no jump optimization, no boosters): overhead.ts has the full table
  const m = new Machine(benchImage(), { cpus: 2, kprobes: { optimization: false, kprobeBooster: false, kretprobeBooster: false } });
  const e = m.kprobes;
  const kp: Kprobe = { symbol_name: BENCH_TARGET, pre_handler: () => 0 };
  const rp: Kretprobe = { kp: { symbol_name: BENCH_TARGET }, maxactive: 64, handler: () => 0 };
  if ((mode === 'k' || mode === 'kr') && e.registerKprobe(kp) !== 0) throw new Error('register_kprobe failed');
  if ((mode === 'r' || mode === 'kr') && e.registerKretprobe(rp) !== 0) throw new Error('register_kretprobe failed');
  const t0 = process.hrtime.bigint();
  const exit = m.run();
  const ns = Number(process.hrtime.bigint() - t0);
  if (exit.reason !== 'poweroff') throw new Error(`bench run (${mode}) ended with ${exit.reason}: ${exit.detail}`);
  const calls = checkBenchOutput(m, `bench.elf (${mode})`);
  const hits = mode === 'none' ? 0 : mode === 'k' ? kp.hits ?? 0 : rp.kp.hits ?? 0;
  if (mode !== 'none' && hits !== calls) throw new Error(`bench.elf (${mode}): ${hits} hits for ${calls} calls`);
  if (mode === 'kr' && (kp.hits ?? 0) !== calls) throw new Error(`bench.elf (kr): kprobe ${kp.hits} hits for ${calls} calls`);
  if (insns) insns.n = exit.instructions;
  return { ns, hits };
}

export function benchKprobes(quick = false): string[] {
  const rounds = quick ? 3 : ROUNDS;
  const insns = { n: 0 };
  once('none', insns);
  const out = [
    `kprobes: bench.elf x86_64, 2 CPUs, empty handlers on ${BENCH_TARGET}(), 2.6 configuration;`,
    `  host ns per hit vs the probe-less run: median of ${rounds} interleaved rounds [min..max]`,
  ];
  let baseNs = 0;
  const rows: string[] = [];
  for (const mode of ['k', 'r', 'kr'] as const) {
    const h = hostPerHit(() => once(mode), () => once('none'), rounds);
    baseNs = h.baselineNs;
    rows.push(`  ${mode.padEnd(2)} ${String(h.hits).padStart(7)} hits  ${formatHostPerHit(h)}  ${(1000 / Math.max(h.median, 1)).toFixed(2)} M hits/s (overhead only)`);
  }
  out.push(`  baseline  ${(baseNs / 1e6).toFixed(1)} ms  (${insns.n} insns, ${(insns.n / baseNs * 1000).toFixed(1)} M insn/s)`);
  return out.concat(rows);
}

if (require.main === module) {
  for (const l of benchKprobes(process.argv.includes('--quick'))) console.log(l);
}
