// Do two builds of the CLI print the same for probe files? For every case,
// `kprobe-run run --probes FILE` and `run --probes FILE --list` run with each
// build's dist/cli.js (from the repository root, one process each) and their
// stdout, stderr and exit code are compared byte for byte. Cases: the
// probe-file bench's 10,000-probe files (many.elf and each arch's sample
// kernel, written by `node --expose-gc out-bench/probeFileCli.js
// --write-files=DIR`, see probeFileCliAb.mjs), and every repository
// .kprobe / .kp file under examples/ and test/ (git ls-files).
//
//   node scripts/bench/probeFileCliSame.mjs DIR A_DIST B_DIST
//   e.g. node scripts/bench/probeFileCliSame.mjs /tmp/pf /tmp/start/dist dist
//
// Prints one line per case and run (same / DIFFERENT with the first
// difference) and exits 1 when any differs. Not a bench section.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const [dir, distA, distB] = process.argv.slice(2);
if (!dir || !distA || !distB) {
  console.error('usage: node scripts/bench/probeFileCliSame.mjs DIR A_DIST B_DIST');
  process.exit(2);
}
const files = [
  ...['many', 'x86_64', 'aarch64', 'riscv64'].map(n => join(dir, `${n}-10000.kprobe`)),
  ...spawnSync('git', ['ls-files', 'examples', 'test'], { encoding: 'utf8' }).stdout.split('\n').filter(f => /\.(kprobe|kp)$/.test(f)),
];
const run = (dist, args) => {
  const r = spawnSync(process.execPath, [join(dist, 'cli.js'), ...args], { encoding: 'utf8', maxBuffer: 1 << 28, timeout: 300_000 });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status, signal: r.signal };
};
/** where two texts first differ, with a little context */
const firstDiff = (a, b) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const line = a.slice(0, i).split('\n').length;
  return `line ${line}: ${JSON.stringify(a.slice(Math.max(0, i - 40), i + 80))} vs ${JSON.stringify(b.slice(Math.max(0, i - 40), i + 80))}`;
};
let differ = 0, cases = 0;
for (const f of files) {
  for (const extra of [[], ['--list']]) {
    const args = ['run', '--probes', f, ...extra];
    const a = run(distA, args), b = run(distB, args);
    cases++;
    const what = [];
    if (a.status !== b.status || a.signal !== b.signal) what.push(`exit ${a.status ?? a.signal} vs ${b.status ?? b.signal}`);
    if (a.stdout !== b.stdout) what.push(`stdout ${firstDiff(a.stdout, b.stdout)}`);
    if (a.stderr !== b.stderr) what.push(`stderr ${firstDiff(a.stderr, b.stderr)}`);
    if (what.length) differ++;
    console.log(`${what.length ? 'DIFFERENT' : 'same     '} ${args.slice(1).join(' ')} (exit ${a.status ?? a.signal}, ${a.stdout.length} + ${a.stderr.length} bytes)${what.length ? `: ${what.join('; ')}` : ''}`);
  }
}
console.log(`${cases - differ} of ${cases} runs print the same`);
process.exit(differ ? 1 : 0);
