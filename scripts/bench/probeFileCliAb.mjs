// A/B of `kprobe-run run --probes FILE` between builds on a host shared with
// other work: every build's dist/cli.js runs every case in a process of its
// own, the builds interleaved (A B, then B A, ...) ROUNDS times, and the
// child's CPU time (user + system, from the kernel's rusage: time spent
// waiting for a core is not in it) and peak RSS are printed as min / median
// per build and case. The probe files come from the bench section:
//
//   npx esbuild scripts/bench/probeFileCli.ts --bundle --platform=node --target=node20 \
//     --format=cjs --external:vscode --outfile=out-bench/probeFileCli.js
//   node --expose-gc out-bench/probeFileCli.js --write-files=/tmp/pf
//   node scripts/bench/probeFileCliAb.mjs ROUNDS DIR LABEL=DIST ...
//   e.g. node scripts/bench/probeFileCliAb.mjs 5 /tmp/pf before=/tmp/old/dist after=dist
//
// DIST is a build's dist folder (copy one before rebuilding). Cases: many.elf
// with 0 and 10,000 probes (and with --list), each arch's sample kernel with
// 0 and 10,000 probes, armed and with --kprobes-enabled 0. Not a bench
// section (bench.mjs runs the .ts files only).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const [rounds, dir, ...specs] = process.argv.slice(2);
if (!rounds || !dir || specs.length === 0) {
  console.error('usage: node scripts/bench/probeFileCliAb.mjs ROUNDS DIR LABEL=DIST ...');
  process.exit(2);
}
const builds = specs.map(s => {
  const m = /^([^=]+)=(.+)$/.exec(s);
  if (!m) { console.error(`probeFileCliAb: ${s}: expected LABEL=DIST`); process.exit(2); }
  return { label: m[1], cli: join(m[2], 'cli.js') };
});
const N = 10000;
const cases = [
  ['many 0', 'many-0.kprobe', []], [`many ${N}`, `many-${N}.kprobe`, []], [`many ${N} --list`, `many-${N}.kprobe`, ['--list']],
  ...['x86_64', 'aarch64', 'riscv64'].flatMap(a => [
    [`${a} 0`, `${a}-0.kprobe`, []], [`${a} ${N}`, `${a}-${N}.kprobe`, []], [`${a} ${N} unarmed`, `${a}-${N}.kprobe`, ['--kprobes-enabled', '0']],
  ]),
];
// the child's own rusage, printed by /usr/bin/time's format: user, system, max RSS (KB)
const TIME = '/usr/bin/time';
const runs = new Map();
for (const b of builds) spawnSync(process.execPath, [b.cli, 'run', '--probes', join(dir, 'many-0.kprobe')]); // writes its code cache
for (let r = 0; r < Number(rounds); r++) {
  for (const [name, file, extra] of cases) {
    for (const b of r % 2 ? [...builds].reverse() : builds) {
      const res = spawnSync(TIME, ['-f', 'ab-cpu %U %S %M', process.execPath, b.cli, 'run', '--probes', join(dir, file), ...extra], { encoding: 'utf8', maxBuffer: 1 << 26 });
      const m = /ab-cpu ([\d.]+) ([\d.]+) (\d+)/.exec(res.stderr ?? '');
      if (!m) { console.error(`probeFileCliAb: ${b.label} ${name} failed (exit ${res.status}): ${(res.stderr ?? '').slice(-400)}`); process.exit(1); }
      const key = `${name}\t${b.label}`;
      if (!runs.has(key)) runs.set(key, []);
      runs.get(key).push({ cpu: Number(m[1]) + Number(m[2]), rss: Number(m[3]) / 1024 });
    }
  }
}
const median = xs => { const s = [...xs].sort((a, b) => a - b), h = s.length >> 1; return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2; };
console.log(`kprobe-run run --probes FILE, CPU s (user + system) min / median of ${rounds}, peak RSS MB median`);
console.log(`${'case'.padEnd(26)}${builds.map(b => b.label.padStart(22)).join('')}`);
for (const [name] of cases) {
  const cells = builds.map(b => {
    const xs = runs.get(`${name}\t${b.label}`);
    const cpu = xs.map(x => x.cpu);
    return `${Math.min(...cpu).toFixed(2)} / ${median(cpu).toFixed(2)}  ${median(xs.map(x => x.rss)).toFixed(0).padStart(4)}`.padStart(22);
  });
  console.log(`${name.padEnd(26)}${cells.join('')}`);
}
