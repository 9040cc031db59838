/**
 * Bench section "kprobes": host time per probe hit with an empty handler,
 * for k (kprobe), r (kretprobe) and kr (both on the same function), against
 * the probe-less baseline. Workload: the x86_64 sample kernel run to power
 * off, probes on fib() (its hottest function). Best of N runs each.
 *   npx esbuild scripts/bench/kprobes.ts --bundle --platform=node --outfile=/tmp/kb.js && node /tmp/kb.js
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { KprobesEngine, Kprobe, Kretprobe } from '../../emulator/kprobes';

const RUNS = 5;
const TARGET = 'fib';

function repoRoot(): string {
  let d = process.cwd();
  while (!existsSync(join(d, 'examples', 'kernel', 'build', 'kernel-x86_64.elf'))) {
    const up = join(d, '..');
    if (up === d) throw new Error('run from inside the kprobe-debug repository');
    d = up;
  }
  return d;
}

type Mode = 'none' | 'k' | 'r' | 'kr';

function once(mode: Mode): { ms: number; hits: number; insns: number } {
  const image = loadElf(join(repoRoot(), 'examples', 'kernel', 'build', 'kernel-x86_64.elf'));
  const m = new Machine(image, { cpus: 2 });
  // the 2.6 configuration (no jump optimization, no boosters): overhead.ts has the full table
  const e = new KprobesEngine(m.kernel, { optimization: false, kprobeBooster: false, kretprobeBooster: false });
  const kp: Kprobe = { symbol_name: TARGET, pre_handler: () => 0 };
  const rp: Kretprobe = { kp: { symbol_name: TARGET }, maxactive: 64, handler: () => 0 };
  if (mode === 'k' || mode === 'kr') e.registerKprobe(kp);
  if (mode === 'r' || mode === 'kr') e.registerKretprobe(rp);
  const t0 = process.hrtime.bigint();
  const exit = m.run();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (exit.reason !== 'poweroff') throw new Error(`bench run ended with ${exit.reason}: ${exit.detail}`);
  const hits = mode === 'none' ? 0 : mode === 'k' ? kp.hits ?? 0 : rp.kp.hits ?? 0;
  return { ms, hits, insns: exit.instructions };
}

export function benchKprobes(): string[] {
  const best = (mode: Mode): { ms: number; hits: number; insns: number } => {
    let b = once(mode);
    for (let i = 1; i < RUNS; i++) { const r = once(mode); if (r.ms < b.ms) b = r; }
    return b;
  };
  once('none'); // warm-up (JIT)
  const base = best('none');
  const out = [`kprobes: sample kernel x86_64, 2 CPUs, probes on ${TARGET}(), best of ${RUNS}`];
  out.push(`  baseline      ${base.ms.toFixed(1)} ms  (${base.insns} insns, ${(base.insns / base.ms / 1000).toFixed(1)} M insn/s)`);
  for (const mode of ['k', 'r', 'kr'] as const) {
    const r = best(mode);
    const per = ((r.ms - base.ms) * 1000) / Math.max(1, r.hits);
    out.push(`  ${mode.padEnd(2)} ${String(r.hits).padStart(6)} hits  ${r.ms.toFixed(1)} ms  ${per.toFixed(2)} us/hit  ${(r.hits / ((r.ms - base.ms) / 1000) / 1e6).toFixed(2)} M hits/s (overhead only)`);
  }
  return out;
}

if (require.main === module) {
  for (const l of benchKprobes()) console.log(l);
}
