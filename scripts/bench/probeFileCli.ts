/**
 * A .kprobe file of 10,000 kprobes (distinct instruction starts of many.elf's
 * cold functions, each `pre { return 0; }`) through the CLI: `kprobe-run run
 * --probes big.kprobe` (dist/cli.js as a child; host CPU time, user + system,
 * best of the rounds) against the same run with an empty probe file, and the
 * CLI path's stages in this process (CPU ms): the image header, compiling
 * the file, registering its probes, and of that the engine's register_kprobe
 * of the same addresses alone, and the heap the compiled and registered
 * probes keep alive (bytes per probe, after a full collection). Then the
 * same on each arch's sample kernel (examples/kernel/build/kernel-ARCH.elf):
 * 10,000 probes at the first instruction starts of its functions in address
 * order, a run where many of them are hit, and the same file with
 * `--kprobes-enabled 0` (registered, never armed: no hits). Needs
 * `npm run build` (dist/cli.js).
 * Standalone: node scripts/bench.mjs (section probeFileCli).
 * `--write-files=DIR`: only write the probe files into DIR (many-N.kprobe,
 * ARCH-0.kprobe, ARCH-N.kprobe) for an A/B of two builds
 * (scripts/bench/probeFileCliAb.mjs) and exit.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';
import { parseProbeFileImage } from '../../emulator/handlers';
import { repoRoot } from './lib/root';
import { probesOf } from '../../emulator/probes/attach';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 1 : 3;
const N = 10_000;

const root = repoRoot('probeFileCli');
const imagePath = join(root, 'test/fixtures/kernel/many/many.elf');
const image = loadElf(imagePath);

/** the first n instruction starts of the image's sized functions (whose name starts with `prefix`), in address order */
function instructionStarts(img: ReturnType<typeof loadElf>, n: number, prefix: string): string[] {
  const m = new Machine(img, { cpus: 1 });
  const out: string[] = [];
  const fns = [...img.symbols.functions()].filter(f => f.size > 0n && f.name.startsWith(prefix)).sort((a, b) => (a.value < b.value ? -1 : 1));
  for (const s of fns) {
    for (let p = s.value; p < s.value + s.size && out.length < n;) {
      const d = m.arch.decode(m.kernel.mem, p);
      if (!d) break;
      out.push(`${s.name}+0x${(p - s.value).toString(16)}`);
      p += BigInt(d.length);
    }
  }
  if (out.length < n) throw new Error(`${img.path} has ${out.length} instruction starts${prefix ? ` in ${prefix}* functions` : ''}, fewer than ${n}`);
  return out;
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** heap bytes in use after a full collection: what the stages keep alive */
const heapKept = (): number => { gc(); return process.memoryUsage().heapUsed; };
const cpuMs = (): number => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
const targets = instructionStarts(image, N, 'cold_');
const writeTo = process.argv.find(a => a.startsWith('--write-files='))?.slice('--write-files='.length);
if (writeTo !== undefined) {
  mkdirSync(writeTo, { recursive: true });
  const row = (t: string): string => `kprobe ${t} { pre { return 0; } }\n`;
  for (const n of [0, 2000, N]) writeFileSync(join(writeTo, `many-${n}.kprobe`), `image "${imagePath}"\n${targets.slice(0, n).map(row).join('')}`);
  for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
    const kernel = join(root, `examples/kernel/build/kernel-${arch}.elf`);
    writeFileSync(join(writeTo, `${arch}-0.kprobe`), `image "${kernel}"\n`);
    writeFileSync(join(writeTo, `${arch}-${N}.kprobe`), `image "${kernel}"\n${instructionStarts(loadElf(kernel), N, '').map(row).join('')}`);
  }
  console.log(`probe files written to ${writeTo}`);
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'kprobe-bench-'));
const header = `image "${imagePath}"\n`;
const files: Record<string, string> = {
  '0': header,
  '2000': header + targets.slice(0, 2000).map(t => `kprobe ${t} { pre { return 0; } }\n`).join(''),
  [String(N)]: header + targets.map(t => `kprobe ${t} { pre { return 0; } }\n`).join(''),
};
for (const [n, text] of Object.entries(files)) writeFileSync(join(dir, `p${n}.kprobe`), text);
// the child reports its own CPU time (all its threads) when it exits
const preload = join(dir, 'cpu.js');
writeFileSync(preload, "process.on('exit', () => { const c = process.cpuUsage(); process.stderr.write(`kprobe-bench-cpu ${(c.user + c.system) / 1e6}\\n`); });\n");

/** kprobe-run run --probes FILE [extra]: the best CPU and wall seconds of the rounds */
function cliRun(file: string, extra: readonly string[] = []): { cpu: number; wall: number } {
  let best = Infinity, wall = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    const res = spawnSync(process.execPath, ['--require', preload, join(root, 'dist/cli.js'), 'run', '--probes', file, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (res.status !== 0) throw new Error(`kprobe-run failed (${res.status}): ${res.stderr.toString().slice(0, 400)}`);
    wall = Math.min(wall, (performance.now() - t0) / 1000);
    best = Math.min(best, childCpu(res));
  }
  return { cpu: best, wall };
}

console.log(`probe file through the CLI: kprobe-run run --probes FILE (many.elf), host CPU s (user + system of the child), best of ${ROUNDS}`);
console.log('   probes   cpu s   wall s');
for (const n of Object.keys(files)) {
  const { cpu, wall } = cliRun(join(dir, `p${n}.kprobe`));
  console.log(`${n.padStart(9)}  ${cpu.toFixed(2).padStart(6)}  ${wall.toFixed(2).padStart(7)}`);
}

console.log(`\neach arch's sample kernel: an empty probe file, ${N} probes (hit as the kernel runs), the same never armed (--kprobes-enabled 0); host CPU s, best of ${ROUNDS}`);
console.log('  arch        empty   probes   unarmed');
for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
  const kernel = join(root, `examples/kernel/build/kernel-${arch}.elf`);
  const head = `image "${kernel}"\n`;
  const empty = join(dir, `${arch}-0.kprobe`), full = join(dir, `${arch}-${N}.kprobe`);
  writeFileSync(empty, head);
  writeFileSync(full, head + instructionStarts(loadElf(kernel), N, '').map(t => `kprobe ${t} { pre { return 0; } }\n`).join(''));
  const cells = [cliRun(empty), cliRun(full), cliRun(full, ['--kprobes-enabled', '0'])].map(r => r.cpu.toFixed(2).padStart(8));
  console.log(`  ${arch.padEnd(9)}${cells.join(' ')}`);
}

/** The child's CPU seconds, as its preload printed them on stderr. */
function childCpu(res: ReturnType<typeof spawnSync>): number {
  const m = /kprobe-bench-cpu ([0-9.]+)/.exec(res.stderr?.toString() ?? '');
  return m ? Number(m[1]) : NaN;
}

console.log(`\nthe CLI path's stages in one process for ${N} probes, CPU ms`);
const text = readFileSync(join(dir, `p${N}.kprobe`), 'utf8');
let t = cpuMs();
const lap = (): string => { const n = cpuMs(); const d = n - t; t = n; return d.toFixed(0).padStart(6); };
parseProbeFileImage(text, 'big.kprobe');
console.log(`  image header     ${lap()}`);
const m = new Machine(image, { cpus: 1 });
const kept0 = heapKept();
lap();
const c = probesOf(m).compileProbeFile(text, 'big.kprobe');
console.log(`  compile          ${lap()}`);
const kept1 = heapKept();
lap();
const r = probesOf(m).addProbeSpecs(c.specs, 'big.kprobe');
if (r.errors.length) throw new Error(r.errors[0]);
console.log(`  register         ${lap()}`);
const kept2 = heapKept();
const perProbe = (a: number, b: number): string => ((b - a) / N).toFixed(0).padStart(6);
console.log(`  heap kept per probe, bytes: compiled ${perProbe(kept0, kept1)}, registered ${perProbe(kept1, kept2)} (the list of ${r.probes.length} probes included)`);
lap();
const m2 = new Machine(image, { cpus: 1 });
const addrs = targets.map(tg => { const [s, off] = tg.split('+'); return (image.symbols.lookup(s)?.value ?? 0n) + BigInt(off); });
lap();
for (const addr of addrs) m2.kprobes.registerKprobe({ addr, pre_handler: () => 0 });
console.log(`  of which engine  ${lap()}  (register_kprobe of the same addresses on a fresh machine)`);
rmSync(dir, { recursive: true, force: true });
