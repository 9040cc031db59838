#!/usr/bin/env node
// x86_64 CPU micro-benchmark: bundles test/fixtures/x86/bench.ts with esbuild
// and runs it.  Usage: node scripts/bench-cpu.mjs
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'out-quick', 'bench-cpu.js');
await build({
  entryPoints: [join(root, 'test/fixtures/x86/bench.ts')],
  bundle: true, platform: 'node', target: 'node20', format: 'cjs', outfile: out, logLevel: 'warning',
});
execFileSync(process.execPath, [out], { stdio: 'inherit', cwd: root });
