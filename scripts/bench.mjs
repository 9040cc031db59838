// `npm run bench` (after `npm run build`): bundles every scripts/bench/*.ts
// with esbuild into out-bench/ and runs them one after another in name
// order, each in its own node process, printing their output. Add a section
// by adding a file scripts/bench/<name>.ts. Arguments are passed to every
// section (e.g. `npm run bench -- --quick`).
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const dir = 'scripts/bench';
const files = readdirSync(dir).filter(f => f.endsWith('.ts')).sort();
let status = 0;
for (const f of files) {
  const out = join('out-bench', f.replace(/\.ts$/, '.js'));
  await build({
    entryPoints: [join(dir, f)], outfile: out, bundle: true, platform: 'node', target: 'node20',
    format: 'cjs', sourcemap: true, external: ['vscode'], logLevel: 'warning',
  });
  console.log(`\n=== ${f.replace(/\.ts$/, '')} ===`);
  const r = spawnSync(process.execPath, ['--enable-source-maps', '--expose-gc', out, ...process.argv.slice(2)], { stdio: 'inherit' });
  if ((r.status ?? 1) !== 0) {
    console.error(`bench: ${f} failed (exit ${r.status ?? r.signal})`);
    status = 1;
  }
}
process.exit(status);
