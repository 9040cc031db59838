/**
 * Bench section "overhead": the kprobes documentation's overhead table —
 * k, b, o, r, rb, ro (today's x86 table) and kr, j, jr (the 2.6 table) —
 * per probe hit with an empty handler, against the probe-less baseline.
 * - Emulated cycles (emulator/arch/x86_64/cycles.ts model; also shown in us
 *   at the documentation's 2.33 GHz): the x86_64 sample kernel on 1 CPU run to
 *   power-off, probes on fib() (its hottest function, whose entry is boostable
 *   and optimizable). Deterministic: one run per mode.
 * - Host ns: the benchmark image test/fixtures/kernel/bench/bench.elf on 1 CPU
 *   (bench_target() called 400,000 times, same prologue as fib), each mode
 *   timed against the probe-less run in interleaved rounds, median and
 *   min..max of the rounds (test/fixtures/kernel/bench/hostTime.ts). The
 *   sample kernel's 18,712 fib hits in a ~17 ms run are too few for host
 *   time: its run-to-run noise is tens of ns per hit.
 *   the modes (k b o r rb ro kr j jr, and rk rt): scripts/bench/lib/overheadModes.ts
 * Everything is printed twice, translator off and on (the default), each
 * setting measured in a process of its own.
 * Standalone:
 *   npx esbuild scripts/bench/overhead.ts --bundle --platform=node --outfile=/tmp/ov.js && node /tmp/ov.js [--quick]
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { loadElf } from '../../emulator/elf/elfFile';
import type { ElfImage } from '../../emulator/elf/types';
import { Machine } from '../../emulator/machine';
import type { KprobesEngine } from '../../emulator/kprobes';
import { type Mode, registerMode } from './lib/overheadModes';
import { CycleCounter, BreakpointKind, codeCycles, KPROBE_PATH_CYCLES } from '../../emulator/arch/x86_64/cycles';
import { BENCH_TARGET, benchImage, checkBenchOutput, formatHostPerHit, hostPerHit, TimedRun } from '../../test/fixtures/kernel/bench/hostTime';

const TARGET = 'fib';
/** interleaved host-time rounds per mode (--quick: 3) */
const ROUNDS = 7;
const GHZ = 2.33;

export type { Mode };
const MODES: Exclude<Mode, 'none'>[] = ['k', 'b', 'o', 'r', 'rb', 'ro', 'kr', 'j', 'jr'];
/**
 * --modes only (no table row): rb taken apart, a kretprobe whose entry kprobe is boosted but returns through the
 * breakpoint trampoline (rk), and one whose entry is single-stepped but returns through the booster's (rt)
 */
const SPLIT_MODES: Exclude<Mode, 'none'>[] = ['rk', 'rt'];

/** documentation figures (us): today's x86-64 table (Xeon E5410 2.33 GHz) and the 2.6 table (Opteron 246, 1.994 GHz) */
const DOC_US: Partial<Record<Mode, string>> = {
  k: '0.99', b: '0.43', o: '0.06', r: '1.24', rb: '0.68', ro: '0.30', kr: '0.82 (2.6)', j: '0.76 (2.6)', jr: '1.07 (2.6)',
};

function repoRoot(): string {
  let d = process.cwd();
  while (!existsSync(join(d, 'examples', 'kernel', 'build', 'kernel-x86_64.elf'))) {
    const up = join(d, '..');
    if (up === d) throw new Error('run from inside the kprobe-debug repository');
    d = up;
  }
  return d;
}

interface RunOut { hostNs: number; hits: number; cycles: number; insns: number; extra: number }

function setup(image: ElfImage, mode: Mode, target = TARGET): { m: Machine; e: KprobesEngine; hits: () => number; extraCycles: () => number } {
  const m = new Machine(image, { cpus: 1 });
  const e = m.kprobes;
  const { rp, jp, hasR, hasJ, hits } = registerMode(m, image, mode, target);
  // C paths of handlers the engine runs as TypeScript (charged per entry hit), and the
  // detour / booster templates the engine runs natively (charged per native run, by their instructions)
  const tpl = e.hooks.optprobes?.nativeTemplates;
  const optTpl = tpl ? codeCycles(m.arch, tpl.optprobe) : 0;
  const kretTpl = tpl ? codeCycles(m.arch, tpl.kretprobe) : 0;
  const ftraceTpl = tpl ? codeCycles(m.arch, tpl.ftrace) : 0;
  const extraCycles = (): number => (hasR ? (rp.kp.hits ?? 0) - (rp.nmissed ?? 0) : 0) * KPROBE_PATH_CYCLES.kretprobeEntry
    + (hasJ ? (jp.kp.hits ?? 0) * KPROBE_PATH_CYCLES.jprobe : 0)
    + e.stats.nativeOptFrames * optTpl + e.stats.nativeKretFrames * kretTpl + e.stats.nativeFtraceFrames * ftraceTpl;
  return { m, e, hits, extraCycles };
}

function run(image: ElfImage, mode: Mode, countCycles: boolean, target = TARGET): RunOut {
  const { m, e, hits, extraCycles } = setup(image, mode, target);
  let counter: CycleCounter | null = null;
  if (countCycles) {
    counter = new CycleCounter(m.arch, (a): BreakpointKind => {
      const s = e.breakpointSite(a);
      return s === 'nestedReturn' || s === 'none' ? 'other' : s;
    });
    counter.attach(m.cpus);
  }
  const t0 = process.hrtime.bigint();
  const exit = m.run();
  const hostNs = Number(process.hrtime.bigint() - t0);
  if (exit.reason !== 'poweroff') throw new Error(`bench run (${mode}) ended with ${exit.reason}: ${exit.detail}`);
  return { hostNs, hits: hits(), cycles: (counter?.cycles ?? 0) + extraCycles(), insns: exit.instructions, extra: extraCycles() };
}

/**
 * Emulated cycles of one run (the cost model; deterministic: no host
 * time involved): total cycles, probe hits, retired instructions. Probes on
 * `target` (default fib, the sample kernel's).
 */
export function measureCycles(image: ElfImage, mode: Mode, target = TARGET): { cycles: number; hits: number; insns: number } {
  const r = run(image, mode, true, target);
  return { cycles: r.cycles, hits: r.hits, insns: r.insns };
}

/**
 * The process CPU time (user + system, ns) of each hostRun, in call order:
 * on a host shared with other work, wall time also counts the time this
 * process waited for a core; CPU time does not.
 */
const cpuNsLog: number[] = [];

/** One host-timed run of the benchmark image (no cycle counter attached); bench.elf (x86_64) unless another image is given. */
function hostRun(mode: Mode, image: ElfImage = benchImage()): TimedRun {
  const { m, hits } = setup(image, mode, BENCH_TARGET);
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const exit = m.run();
  const ns = Number(process.hrtime.bigint() - t0);
  const c = process.cpuUsage(c0);
  cpuNsLog.push((c.user + c.system) * 1000);
  if (exit.reason !== 'poweroff') throw new Error(`bench.elf run (${mode}) ended with ${exit.reason}: ${exit.detail}`);
  const calls = checkBenchOutput(m, `bench.elf (${mode})`);
  if (mode !== 'none' && hits() !== calls) throw new Error(`bench.elf (${mode}): ${hits()} hits for ${calls} calls`);
  return { ns, hits: hits() };
}

export function benchOverhead(quick = false): string[] {
  const sample = loadElf(join(repoRoot(), 'examples', 'kernel', 'build', 'kernel-x86_64.elf'));
  const rounds = quick ? 3 : ROUNDS;
  const baseCycles = run(sample, 'none', true);
  const base = (): TimedRun => hostRun('none');
  const out = [
    `overhead: x86_64, 1 CPU, empty handlers; per hit vs the probe-less run`,
    `  cycles: sample kernel, probes on ${TARGET}() (emulator/arch/x86_64/cycles.ts model, us at ${GHZ} GHz)`,
    `  host:   bench.elf, probes on ${BENCH_TARGET}(); median of ${rounds} interleaved rounds [min..max]`,
    `  doc:    kprobes.rst x86-64 Xeon E5410 / 2.6 Opteron 246`,
    `  baseline: ${baseCycles.cycles} cycles, ${baseCycles.insns} insns (sample kernel)`,
    `  mode      hits   cycles/hit   us/hit@2.33   doc us       ${quick ? '' : 'bench.elf cycles/hit   '}host per hit (bench.elf)`,
  ];
  // the same cost model on bench.elf (skipped with --quick): shows that the host column and the
  // cycles column describe the same probe path (bench_target and fib share their prologue)
  const benchBase = quick ? null : run(benchImage(), 'none', true, BENCH_TARGET);
  let baseNs = 0, hostHits = 0;
  const hostMedian: Partial<Record<Mode, number>> = {};
  const cpuMedian: Partial<Record<Mode, number>> = {};
  for (const mode of MODES) {
    const c = run(sample, mode, true);
    const cyc = (c.cycles - baseCycles.cycles) / Math.max(1, c.hits);
    cpuNsLog.length = 0;
    const h = hostPerHit(() => hostRun(mode), base, rounds);
    baseNs = h.baselineNs;
    hostHits = h.hits;
    hostMedian[mode] = h.median;
    cpuMedian[mode] = cpuPerHit(h.hits);
    let benchCyc = '';
    if (benchBase) {
      const bc = run(benchImage(), mode, true, BENCH_TARGET);
      benchCyc = `${((bc.cycles - benchBase.cycles) / Math.max(1, bc.hits)).toFixed(0).padStart(16)}       `;
    }
    out.push(`  ${mode.padEnd(4)} ${String(c.hits).padStart(8)} ${cyc.toFixed(0).padStart(12)} ${(cyc / GHZ / 1000).toFixed(3).padStart(13)}   ${(DOC_US[mode] ?? '').padEnd(12)} ${benchCyc}${formatHostPerHit(h)}`);
  }
  out.push(`  host baseline: bench.elf ${(baseNs / 1e6).toFixed(1)} ms for ${hostHits} calls (${(baseNs / hostHits).toFixed(0)} ns per call of the loop)`);
  // the documentation's claims as host-time ratios: optimization makes a hit cheaper (o/k < 1), boosting a return probe too (rb/r, ro/r < 1)
  const ratios = (t: Partial<Record<Mode, number>>): string => {
    const q = (a: Mode, b: Mode): string => ((t[a] ?? NaN) / (t[b] ?? NaN)).toFixed(2);
    return `o/k ${q('o', 'k')}  b/k ${q('b', 'k')}  rb/r ${q('rb', 'r')}  ro/r ${q('ro', 'r')}`;
  };
  out.push(`  host ratios (medians): ${ratios(hostMedian)}`);
  out.push(`  host CPU time per hit (process user+system, the same runs' rounds, median): ${MODES.map(m => `${m} ${(cpuMedian[m] ?? NaN).toFixed(0)}`).join('  ')} ns`);
  out.push(`  host CPU time ratios: ${ratios(cpuMedian)}`);
  out.push(...benchOverheadArches(rounds));
  return out;
}

/**
 * Median over the rounds of (mode - baseline) CPU ns / hits, from the CPU
 * times hostRun logged while hostPerHit ran one mode: one unmeasured run
 * of the baseline and of the mode, then per round the pair B M (even
 * rounds) or M B (odd rounds), as hostPerHit documents.
 */
function cpuPerHit(hits: number): number {
  const per: number[] = [];
  for (let i = 0; 3 + 2 * i < cpuNsLog.length; i++) {
    const first = cpuNsLog[2 + 2 * i], second = cpuNsLog[3 + 2 * i];
    per.push((i % 2 === 0 ? second - first : first - second) / hits);
  }
  const s = [...per].sort((x, y) => x - y), h = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/**
 * Host ns per hit of k, b, o, r and kr on every arch with kprobes: the
 * same bench.c loop built for each (test/fixtures/kernel/bench/bench-<arch>.elf;
 * x86_64 is bench.elf), b and o only where the arch has the kprobe booster
 * and jump optimization (arm64 and riscv have neither: n/a), each mode
 * against its arch's probe-less run, as wall time and as process CPU time
 * (--modes=k,r: only those modes, for an A/B of one path; rk and rt, rb taken apart, only there). Each arch is
 * measured in a process of its own, as kprobe-run and the debug adapter run
 * one machine per process: in one process shared by three CPU models the
 * engine's call sites see all three and run slower than any session would.
 */
function benchOverheadArches(rounds: number): string[] {
  const dir = join(repoRoot(), 'test', 'fixtures', 'kernel', 'bench');
  const arches = ['x86_64', ...['aarch64', 'riscv64'].filter(a => existsSync(join(dir, `bench-${a}.elf`)))];
  const out = [`\noverhead per arch: host ns per hit on bench-<arch>.elf (${BENCH_TARGET}(), 1 CPU, empty handlers; b and o where the arch has the booster and jump optimization), median of ${rounds} rounds, one process per arch; then the process CPU time per hit (user+system, median of the same rounds: less disturbed by other work on the host)`,
    `  arch      ${ARCH_MODES.map(m => m.padEnd(26)).join('')}baseline ns/call`];
  for (const arch of arches) {
    const r = spawnSync(process.execPath, [...process.execArgv, process.argv[1], `--one-arch=${arch}`, `--rounds=${rounds}`], { encoding: 'utf8', env: process.env });
    const line = (r.stdout ?? '').split('\n').find(l => l.startsWith(ARCH_ROW));
    if (r.status !== 0 || line === undefined) throw new Error(`overhead per arch: ${arch} failed (exit ${r.status ?? r.signal}): ${r.stderr}`);
    out.push(line.slice(ARCH_ROW.length));
  }
  return out;
}

/** the modes of the per-arch rows (b and o where the arch has the kprobe booster and jump optimization) */
const ARCH_MODES = ['k', 'b', 'o', 'r', 'kr'] as const;

/** the row a --one-arch child prints (after this marker) */
const ARCH_ROW = 'overhead-arch-row:';

/** One arch's row of benchOverheadArches (the child process's work). */
function archRow(arch: string, rounds: number, modes: readonly string[] = ARCH_MODES): string {
  const image = arch === 'x86_64' ? benchImage() : loadElf(join(repoRoot(), 'test', 'fixtures', 'kernel', 'bench', `bench-${arch}.elf`));
  const base = (): TimedRun => hostRun('none', image);
  const cells: string[] = [];
  let baseNs = 0, calls = 1;
  const cpu: string[] = [];
  const hooks = new Machine(image, { cpus: 1 }).kprobes.hooks;
  // --modes may name any mode (rb, ro, ... too) for an A/B of one path; the rows print ARCH_MODES
  for (const mode of (modes === ARCH_MODES ? ARCH_MODES : [...MODES, ...SPLIT_MODES].filter(m => modes.includes(m)))) {
    if (((mode === 'b' || mode === 'rb' || mode === 'rk' || mode === 'rt') && !hooks.canBoost) || ((mode === 'o' || mode === 'ro') && !hooks.optprobes)) {
      cells.push('n/a'.padEnd(26));
      cpu.push(`${mode} n/a`);
      continue;
    }
    cpuNsLog.length = 0;
    const h = hostPerHit(() => hostRun(mode, image), base, rounds);
    baseNs = h.baselineNs; calls = h.hits;
    cells.push(formatHostPerHit(h).padEnd(26));
    cpu.push(`${mode} ${cpuPerHit(h.hits).toFixed(0)}`);
  }
  return `  ${arch.padEnd(8)}  ${cells.join('')}${(baseNs / calls).toFixed(0)}   CPU ns/hit: ${cpu.join('  ')}`;
}

// run as a script (its own bundle), not when a test bundle (test/**/*.test.ts) imports measureCycles
const oneArch = process.argv.find(a => a.startsWith('--one-arch='));
if (require.main === module && oneArch !== undefined) {
  // a child of benchOverheadArches: one arch's row (KPROBE_TRANSLATE is the parent's)
  const rounds = Number(process.argv.find(a => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? ROUNDS);
  // --modes=k,r: only those modes (A/B comparisons of one path)
  const modes = process.argv.find(a => a.startsWith('--modes='))?.slice('--modes='.length).split(',');
  console.log(ARCH_ROW + archRow(oneArch.slice('--one-arch='.length), rounds, modes));
} else if (require.main === module && process.argv.includes('--one-translator')) {
  // a child of the run below: one translator setting's tables (KPROBE_TRANSLATE is the parent's)
  for (const l of benchOverhead(process.argv.includes('--quick'))) console.log(l);
} else if (require.main === module && !/\.test\.[cm]?[jt]s$/.test(process.argv[1] ?? '')) {
  // host cost per hit with the interpreter alone (before the translator) and with the translator (the default), each
  // setting in a process of its own, as a session runs one: in a process that ran the interpreter's paths first, the
  // engine's code stays compiled for both and a translated hit costs ~40 ns more than any session's
  for (const mode of ['off', 'on']) {
    console.log(`\n--- translator ${mode}${mode === 'off' ? ' (--no-translate: the interpreter alone)' : ' (the default)'} ---`);
    const args = [...process.execArgv, process.argv[1], '--one-translator', ...(process.argv.includes('--quick') ? ['--quick'] : [])];
    const r = spawnSync(process.execPath, args, { encoding: 'utf8', env: { ...process.env, KPROBE_TRANSLATE: mode }, maxBuffer: 1 << 24 });
    process.stdout.write(r.stdout ?? '');
    if (r.status !== 0) throw new Error(`overhead, translator ${mode}: failed (exit ${r.status ?? r.signal}): ${r.stderr}`);
  }
}
