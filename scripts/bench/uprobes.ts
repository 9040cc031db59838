/**
 * Bench section "uprobes": host time per uprobe hit and per uretprobe hit,
 * per architecture, on test/uprobes/bin/uprobed-<arch>-gcc-O2.elf (2 CPUs:
 * pid 1, a forked child and an exec'd image; leaf() is called 30 times and
 * bump() 25 times per run). Modes:
 *   none  no probes (the baseline)
 *   idle  a consumer on memset, in the same page, never called: every
 *         process pays the private page copy and the insertion at fork /
 *         exec, and nothing is hit
 *   u     a consumer with an empty handler on leaf and bump
 *   ur    a consumer with an empty handler and an empty ret_handler on both
 * The program is only ~2,200 instructions and a run's time has a long tail
 * (GC): a mode's time is the median of REPS runs (fresh machines, probes
 * registered before the clock starts, modes interleaved run by run), best
 * of N rounds (N = 3, --quick 1).
 *   ns/hit        = (mode - none) / entry hits (all-in)
 *   ns/hit steady = (mode - idle) / entry hits (the hits themselves)
 *   ret           = (ur - u) / return hits (what a uretprobe adds)
 *   npx esbuild scripts/bench/uprobes.ts --bundle --platform=node --outfile=/tmp/ub.js && node --expose-gc /tmp/ub.js [--quick]
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import type { ElfImage } from '../../emulator/elf/types';
import { Machine } from '../../emulator/machine';
import type { UprobeConsumer } from '../../emulator/uprobes';

function repoRoot(): string {
  for (const start of [__dirname, process.cwd()]) {
    for (let d = resolve(start); ; d = dirname(d)) {
      if (existsSync(join(d, 'test', 'uprobes', 'bin'))) return d;
      if (dirname(d) === d) break;
    }
  }
  throw new Error('bench/uprobes: cannot find the repository (test/uprobes/bin)');
}

const root = repoRoot();
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 1 : 3;
const REPS = quick ? 40 : 150;
const PROBED = ['leaf', 'bump'];
/** a function in the probed page that the program never calls */
const IDLE = 'memset';
const golden = readFileSync(join(root, 'test', 'uprobes', 'golden', 'uprobed-x86_64-gcc-O2.out'), 'utf8');

type Mode = 'none' | 'idle' | 'u' | 'ur';
interface Run { ns: number; hits: number; rets: number }

function once(img: ElfImage, path: string, mode: Mode): Run {
  let out = '';
  const m = Machine.forUserProgram(img, [path], { stdout: b => { out += Buffer.from(b).toString(); }, stderr: () => undefined }, { cpus: 2 });
  if (mode !== 'none') {
    const inode = m.kernel.processes.get(1)!.exe!;
    const seg = img.segments.find(s => s.type === 1 && (s.flags & 1))!;
    const uc: UprobeConsumer = mode === 'ur' ? { handler: () => 0, ret_handler: () => 0 } : { handler: () => 0 };
    for (const name of mode === 'idle' ? [IDLE] : PROBED) {
      const r = m.uprobes.register(inode, img.symbols.lookup(name)!.value - seg.vaddr + seg.offset, uc);
      if (r.errno) throw new Error(`bench/uprobes: ${name}: ${r.reason}`);
    }
  }
  const t0 = process.hrtime.bigint();
  const e = m.run();
  const ns = Number(process.hrtime.bigint() - t0);
  if (e.reason !== 'poweroff' || e.code !== 0 || out !== golden) throw new Error(`bench/uprobes: ${path} (${mode}) ran wrong: ${e.reason} ${e.code}`);
  const s = m.uprobes.stats;
  if (mode === 'idle' && s.hits) throw new Error(`bench/uprobes: ${IDLE} was hit`);
  return { ns, hits: s.hits, rets: s.retHits };
}

const median = (xs: number[]): number => { const a = [...xs].sort((x, y) => x - y); return a.length % 2 ? a[a.length >> 1] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2; };

function table(head: string[], rows: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map(r => r[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i < 2 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  return [line(head), w.map(n => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}

const rows: string[][] = [];
for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
  const path = join(root, 'test', 'uprobes', 'bin', `uprobed-${arch}-gcc-O2.elf`);
  const img = loadElf(path);
  const modes: Mode[] = ['none', 'idle', 'u', 'ur'];
  for (let i = 0; i < 10; i++) for (const mode of modes) once(img, path, mode); // warm-up (JIT)
  const best = new Map<Mode, Run>();
  for (let r = 0; r < ROUNDS; r++) {
    const runs = new Map<Mode, Run[]>(modes.map(m => [m, []]));
    for (let i = 0; i < REPS; i++) for (const mode of modes) runs.get(mode)!.push(once(img, path, mode));
    for (const mode of modes) {
      const rs = runs.get(mode)!;
      const s: Run = { ns: median(rs.map(x => x.ns)), hits: rs[0].hits, rets: rs[0].rets };
      const b = best.get(mode);
      if (!b || s.ns < b.ns) best.set(mode, s);
    }
  }
  const none = best.get('none')!, idle = best.get('idle')!, u = best.get('u')!, ur = best.get('ur')!;
  const us = (s: Run): string => (s.ns / 1e3).toFixed(0);
  const per = (s: Run, base: Run, n: number): string => (n ? ((s.ns - base.ns) / n).toFixed(0) : '-');
  rows.push([arch, 'none', us(none), '0', '0', '-', '-', '-']);
  rows.push([arch, `idle (${IDLE}, never hit)`, us(idle), '0', '0', '-', '-', `${idle.ns >= none.ns ? '+' : ''}${((idle.ns - none.ns) / 1e3).toFixed(0)} us/run`]);
  rows.push([arch, 'u    (handler)', us(u), String(u.hits), '0', per(u, none, u.hits), per(u, idle, u.hits), '-']);
  rows.push([arch, 'ur   (handler + ret_handler)', us(ur), String(ur.hits), String(ur.rets), per(ur, none, ur.hits), per(ur, idle, ur.hits), `ret ${per(ur, u, ur.rets)} ns`]);
}
console.log(`uprobes: uprobed-<arch>-gcc-O2.elf, 2 CPUs, empty handlers on ${PROBED.join(' and ')} (55 calls per run);`);
console.log(`  median host time of m.run() over ${REPS} interleaved runs per mode, best of ${ROUNDS} round${ROUNDS > 1 ? 's' : ''};`);
console.log('  ns/hit = (mode - none) / entry hits (all-in: page copies, XOL areas, insertions at fork / exec);');
console.log(`  ns/hit steady = (mode - idle) / entry hits (idle: a probe on ${IDLE}, in the same page, never called: the same setup, no hit);`);
console.log('  ret = (ur - u) / return hits: what the uretprobe adds per return');
console.log(table(['arch', 'mode', 'us/run', 'hits/run', 'rets/run', 'ns/hit', 'ns/hit steady', 'extra'], rows));
