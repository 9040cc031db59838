// A/B of the per-arch hit path figures of two or more builds of the overhead
// bench section, on a host shared with other work: each build's bundle runs
// `--one-arch=ARCH --rounds=R --modes=M` in a process of its own, the builds
// interleaved (A B C, then C B A, ...) ITER times per arch, and the process
// CPU time per hit each run prints (user+system: time spent waiting for a core
// is not in it) is summed up as the median over the runs per build and mode.
//
//   npx esbuild scripts/bench/overhead.ts --bundle --platform=node --target=node20 \
//     --format=cjs --external:vscode --outfile=/tmp/new.js      (likewise in the other tree)
//   node scripts/bench/overheadAb.mjs ITER ROUNDS ARCHES MODES LABEL=BUNDLE@CWD ...
//   e.g. node scripts/bench/overheadAb.mjs 6 5 aarch64,riscv64 k,r,kr \
//          before=/tmp/old/ov.js@/tmp/old new=/tmp/new.js@.
//
// CWD is the tree the bundle was built from (the bench finds its images from
// there). Not a bench section (bench.mjs runs the .ts files only).
import { spawnSync } from 'node:child_process';

const [iter, rounds, arches, modes, ...specs] = process.argv.slice(2);
if (!iter || !rounds || !arches || !modes || specs.length === 0) {
  console.error('usage: node scripts/bench/overheadAb.mjs ITER ROUNDS ARCHES MODES LABEL=BUNDLE@CWD ...');
  process.exit(2);
}
const builds = specs.map(s => {
  const m = /^([^=]+)=([^@]+)@(.+)$/.exec(s);
  if (!m) { console.error(`overheadAb: ${s}: expected LABEL=BUNDLE@CWD`); process.exit(2); }
  return { label: m[1], bundle: m[2], cwd: m[3] };
});
const median = xs => { const s = [...xs].sort((a, b) => a - b), h = s.length >> 1; return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2; };
const figures = new Map();
let failed = false;
for (let i = 0; i < Number(iter); i++) {
  for (const arch of arches.split(',')) {
    for (const b of i % 2 ? [...builds].reverse() : builds) {
      const r = spawnSync(process.execPath, ['--expose-gc', b.bundle, `--one-arch=${arch}`, `--rounds=${rounds}`, `--modes=${modes}`],
        { cwd: b.cwd, encoding: 'utf8', maxBuffer: 1 << 24 });
      const line = (r.stdout ?? '').split('\n').find(l => l.includes('CPU ns/hit:'));
      if (r.status !== 0 || line === undefined) {
        console.error(`overheadAb: ${b.label} ${arch} failed (exit ${r.status ?? r.signal}): ${(r.stderr ?? '').slice(0, 2000)}`);
        failed = true;
        continue;
      }
      const cells = [...line.slice(line.indexOf('CPU ns/hit:') + 'CPU ns/hit:'.length).matchAll(/(\w+) (-?\d+)/g)];
      const key = `${arch} ${b.label}`;
      if (!figures.has(key)) figures.set(key, new Map());
      for (const [, mode, ns] of cells) {
        const per = figures.get(key);
        if (!per.has(mode)) per.set(mode, []);
        per.get(mode).push(Number(ns));
      }
      console.log(`${i} ${key}  ${cells.map(c => `${c[1]} ${c[2]}`).join('  ')}`);
    }
  }
}
console.log(`\nCPU ns per hit, median of ${iter} processes (each the median of ${rounds} rounds):`);
for (const [key, per] of figures) console.log(`  ${key.padEnd(24)} ${[...per].map(([m, xs]) => `${m} ${median(xs)}`).join('  ')}`);
process.exit(failed ? 1 : 0);
