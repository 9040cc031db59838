/**
 * CPU emulation speed: emulated instructions per second on the sample kernel
 * and on every conformance program (loopbench above all), per architecture
 * with a CPU (x86_64: test/conformance/bin, aarch64: bin/aarch64, riscv64:
 * bin/riscv64), side by side: the interpreter alone (--no-translate), the
 * block translator (the default), and, when qemu-user for that architecture
 * is installed, its wall time on the same ELF. The translator's figures
 * (translations, modules, code-cache bytes, compile time) follow each arch.
 * v86, the fastest JavaScript-hosted PC emulator (npm package `v86`, a dev
 * dependency, with its wasm JIT), is a peer on loopbench: its CPU has no
 * long mode (copy/v86 issue #133), so it runs the same C built for 32-bit
 * x86 as a multiboot image (scripts/bench/v86/build.sh), booted from
 * Debian's SeaBIOS (package seabios), and the bench checks that it prints
 * exactly what the x86_64 build prints (the golden) — the same work, in
 * more instructions (64-bit arithmetic on a 32-bit CPU); both the M insn/s
 * and the seconds for the work are shown. Without v86 or the BIOS the line
 * says so. `--quick` leaves out loopbench (and so v86).
 * First, the main job end to end (`npm run demo`'s command): in a fresh
 * node process (what a user waits for) and inside this process.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';
import { allTranslators } from '../../emulator/jit';
import { repoRoot } from './lib/root';


const root = repoRoot('cpu');
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

interface Timed { instructions: number; seconds: number; ok: string }
interface Row { name: string; interp: Timed; jit: Timed; qemu?: number }

function kernelRun(rel: string, cpus: number, translate: boolean): Timed {
  const m = new Machine(loadElf(join(root, rel)), { cpus, translate });
  const t0 = performance.now();
  const exit = m.run();
  return { instructions: m.totalInstructions, seconds: (performance.now() - t0) / 1000, ok: `${exit.reason} ${exit.code}` };
}

function userRun(elf: string, translate: boolean): Timed {
  let out = '';
  const m = Machine.forUserProgram(loadElf(elf), [elf], { stdout: b => { out += Buffer.from(b).toString('latin1'); }, stderr: () => undefined }, { translate });
  const t0 = performance.now();
  const exit = m.run();
  const seconds = (performance.now() - t0) / 1000;
  return { instructions: m.totalInstructions, seconds, ok: `exit ${exit.code} out ${out.length}` };
}

/** both modes; the best of two runs each (the first run of a program also pays for translation) */
function both(f: (translate: boolean) => Timed): { interp: Timed; jit: Timed } {
  const best = (a: Timed, b: Timed): Timed => (a.seconds <= b.seconds ? a : b);
  const interp = best(f(false), f(false));
  const jit = best(f(true), f(true));
  if (interp.instructions !== jit.instructions || interp.ok !== jit.ok) {
    throw new Error(`translator and interpreter differ: ${interp.instructions} insns ${interp.ok} vs ${jit.instructions} insns ${jit.ok}`);
  }
  return { interp, jit };
}

const mips = (t: Timed): number => t.instructions / t.seconds / 1e6;

function fmt(rows: Row[]): string {
  const head = ['program', 'instructions', 'interp M/s', 'transl M/s', 'speed-up', 'qemu-user s', 'transl / qemu', 'result'];
  const body = rows.map(r => [
    r.name, String(r.jit.instructions), mips(r.interp).toFixed(1), mips(r.jit).toFixed(1), `${(r.interp.seconds / r.jit.seconds).toFixed(1)}x`,
    r.qemu === undefined ? '-' : r.qemu.toFixed(3), r.qemu === undefined ? '-' : `${(r.jit.seconds / r.qemu).toFixed(1)}x`, r.jit.ok,
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map(b => b[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 || i === 7 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  return [line(head), w.map(n => '-'.repeat(n)).join('  '), ...body.map(line)].join('\n');
}

/** The architectures with a CPU: kernel image, conformance ELFs, qemu-user binary. */
const ARCHES = [
  { arch: 'x86_64', dir: 'test/conformance/bin', qemu: 'qemu-x86_64' },
  { arch: 'aarch64', dir: 'test/conformance/bin/aarch64', qemu: 'qemu-aarch64' },
  { arch: 'riscv64', dir: 'test/conformance/bin/riscv64', qemu: 'qemu-riscv64' },
].filter(a => existsSync(join(root, a.dir)));

/**
 * Between programs: collect garbage and let the finalizers run, so that the
 * guest arena (memory/guestRam.ts) gets the finished machines' pages back
 * (bench.mjs runs sections with --expose-gc).
 */
function settle(): Promise<void> {
  (globalThis as { gc?: () => void }).gc?.();
  return new Promise(r => setTimeout(r, 0));
}

/** the main job: `kprobe-run run` of the x86_64 sample kernel with the documentation's three probe files (as `npm run demo`) */
const DEMO = ['run', '--probes', 'examples/probes/kprobe_example.kprobe', '--probes', 'examples/probes/kretprobe_example.kprobe',
  '--probes', 'examples/probes/jprobe_example.kprobe', '--list'];

/** wall seconds of a fresh `node dist/cli.js` process running the demo (best of 5), or undefined without dist/ */
function coldDemo(translate: boolean): number | undefined {
  const cli = join(root, 'dist', 'cli.js');
  if (!existsSync(cli)) return undefined;
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [cli, ...DEMO, ...(translate ? [] : ['--no-translate'])], { cwd: root, stdio: ['ignore', 'ignore', 'ignore'] });
    if (r.status !== 0) throw new Error(`demo run failed (exit ${r.status})`);
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  return best;
}

/** seconds of the demo inside this process (loading the image and the probe files, registering, running, the report), best of 5 after 3 warm-up runs */
async function warmDemo(translate: boolean): Promise<number> {
  const { runCli } = await import('../../emulator/cli/main');
  const { captureIo } = await import('../../emulator/cli/io');
  const prev = process.cwd();
  process.chdir(root);
  try {
    let best = Infinity;
    for (let i = 0; i < 8; i++) {
      const io = captureIo();
      const t0 = performance.now();
      const code = await runCli([...DEMO, ...(translate ? [] : ['--no-translate'])], io.io);
      if (code !== 0) throw new Error(`demo run failed (exit ${code}): ${io.stderr()}`);
      if (i >= 3) best = Math.min(best, (performance.now() - t0) / 1000);
    }
    return best;
  } finally { process.chdir(prev); }
}

/**
 * v86 on loopbench built for i386 (scripts/bench/v86), best of 3 fresh runs
 * (each in scripts/bench/v86/run.mjs: the time between the image's start and
 * exit lines, the BIOS left out), next to this translator on the x86_64
 * build (`loop`); a line saying why when v86 or the BIOS is missing.
 */
function v86Peer(loop: Row): string {
  const dir = join(root, 'scripts', 'bench', 'v86');
  const golden = readFileSync(join(root, 'test', 'conformance', 'golden', 'loopbench-clang-O2.out'), 'latin1');
  let best: { instructions: number; seconds: number } | undefined;
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(process.execPath, [join(dir, 'run.mjs'), join(dir, 'loopbench-i386.elf')], { encoding: 'utf8', cwd: root, timeout: 180_000 });
    const last = (r.stdout ?? '').trim().split('\n').pop() ?? '';
    const o = (last.startsWith('{') ? JSON.parse(last) : {}) as { skip?: string; instructions?: number; seconds?: number; output?: string; exit?: number };
    if (o.skip !== undefined) return `v86 peer: not run (${o.skip})`;
    if (r.status !== 0 || o.instructions === undefined || o.seconds === undefined) throw new Error(`v86 peer: run.mjs failed (exit ${r.status ?? r.signal}): ${r.stderr}`);
    if (o.output !== golden || o.exit !== 0) throw new Error(`v86 peer: loopbench-i386 printed other than the x86_64 golden (exit ${o.exit}):\n${o.output}`);
    if (best === undefined || o.seconds < best.seconds) best = { instructions: o.instructions, seconds: o.seconds };
  }
  const b = best as { instructions: number; seconds: number };
  const version = (JSON.parse(readFileSync(join(root, 'node_modules', 'v86', 'package.json'), 'utf8')) as { version: string }).version;
  return `v86 peer (npm v86 ${version}, its wasm JIT; loopbench built for i386, same C and output): ${b.instructions} instructions in ${b.seconds.toFixed(3)} s = ${(b.instructions / b.seconds / 1e6).toFixed(0)} M insn/s\n`
    + `  this translator, ${loop.name} (x86_64): ${loop.jit.instructions} instructions in ${loop.jit.seconds.toFixed(3)} s = ${mips(loop.jit).toFixed(0)} M insn/s; `
    + `the same work takes v86 ${(b.seconds / loop.jit.seconds).toFixed(1)}x as long`;
}

async function main(): Promise<void> {
console.log(`machine: ${process.arch}, node ${process.version}; best of 2 runs per mode`);
{
  const coldOff = coldDemo(false), coldOn = coldDemo(true);
  const warmOff = await warmDemo(false), warmOn = await warmDemo(true);
  const f = (x: number | undefined): string => (x === undefined ? '-' : `${(x * 1000).toFixed(0)} ms`);
  console.log('\nthe main job end to end (`npm run demo`: x86_64 sample kernel, the documentation\'s kprobe, kretprobe and jprobe samples):');
  console.log(`  fresh process (node dist/cli.js, best of 5):  interpreter ${f(coldOff)}   translator ${f(coldOn)}${coldOff === undefined ? '   (no dist/: npm run build)' : ''}`);
  console.log(`  in a warm process (runCli, best of 5):         interpreter ${f(warmOff)}   translator ${f(warmOn)}`);
}
for (const { arch, dir, qemu } of ARCHES) {
  const kernel = `examples/kernel/build/kernel-${arch}.elf`;
  const rows: Row[] = [];
  kernelRun(kernel, 2, false); kernelRun(kernel, 2, true); // warm-up (the host JIT), not reported
  rows.push({ name: `${kernel.split('/').pop()} (--cpus 1)`, ...both(t => kernelRun(kernel, 1, t)) });
  rows.push({ name: `${kernel.split('/').pop()} (--cpus 2)`, ...both(t => kernelRun(kernel, 2, t)) });
  const progs = readdirSync(join(root, dir)).filter(f => f.endsWith('.elf')).sort()
    .filter(f => !quick || !f.startsWith('loopbench'));
  // loopbench first: it is the figure that matters
  progs.sort((a, b) => Number(!a.startsWith('loopbench')) - Number(!b.startsWith('loopbench')) || a.localeCompare(b));
  for (const p of progs) {
    const elf = join(root, dir, p);
    rows.push({ name: p.replace(/\.elf$/, ''), ...both(t => userRun(elf, t)), qemu: timeQemu(qemu, elf) });
    await settle();
  }
  console.log(`\n--- ${arch} ---`);
  console.log(fmt(rows));
  if (arch === 'x86_64') {
    const loop = rows.find(r => r.name === 'loopbench-clang-O2');
    console.log(loop === undefined ? 'v86 peer: --quick leaves it out (it runs loopbench)' : v86Peer(loop));
  }
  const sum = (f: (r: Row) => number): number => rows.reduce((a, r) => a + f(r), 0);
  const insns = sum(r => r.jit.instructions), si = sum(r => r.interp.seconds), sj = sum(r => r.jit.seconds);
  const withQ = rows.filter(r => r.qemu !== undefined);
  const qs = withQ.reduce((a, r) => a + (r.qemu ?? 0), 0), js = withQ.reduce((a, r) => a + r.jit.seconds, 0);
  console.log(`\n${arch} total: ${insns} instructions; interpreter ${si.toFixed(2)} s = ${(insns / si / 1e6).toFixed(1)} M insn/s; translator ${sj.toFixed(2)} s = ${(insns / sj / 1e6).toFixed(1)} M insn/s (${(si / sj).toFixed(1)}x)` +
    (hasQemu(qemu) ? `; translator / ${qemu} on the programs: ${(js / qs).toFixed(1)}x (qemu best of 3, includes its start-up)` : `; ${qemu} not installed: no comparison`));
  const t = allTranslators().get(`${arch}:on`);
  if (t) {
    const s = t.stats;
    console.log(`${arch} translator: ${s.translations} translations (${s.compileMs.toFixed(0)} ms compiling, ${(s.compileMs * 1000 / Math.max(1, s.translations)).toFixed(0)} us each), ` +
      `${s.modules} modules live, ${(s.codeBytes / 1024).toFixed(0)} KiB of WebAssembly in the cache, ${s.invalidations} invalidations, ${s.flushes} flushes; ` +
      `${s.entries} entries from the interpreter, ${s.calls} calls into the hub (the rest of the ${s.translatedInsns} translated instructions' block transitions stayed in WebAssembly)`);
  }
}
}

void main();
