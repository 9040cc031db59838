// Runs every compiled test file (out/test/**/*.test.js) with node's test
// runner, then the headless VS Code integration suite. Exit code is non-zero
// if any level fails.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function find(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const only = process.argv.slice(2);
let files = find('out/test');
if (only.length) files = files.filter(f => only.some(o => f.includes(o)));
let status = 0;
if (files.length) {
  const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...files], { stdio: 'inherit' });
  status = r.status ?? 1;
}
// the translator's proof: the differential suite, the kprobes and the adapter tests, the full-system CPU's tests
// again with every translated block checked against the interpreter (lockstep), and with the interpreter alone
// (off; time travel too). test/system/cpu/bootLockstep (a window of Debian's kernel booting, in lockstep whatever
// the mode) runs once, in the first pass. The adapter tests that boot Debian's kernel (they use
// test/system/linuxFiles) are left out of the lockstep pass: a whole boot in lockstep costs minutes of CPU each,
// and the system CPU's translation is checked there by test/system/cpu and bootLockstep's window.
if (!only.length) {
  const pick = dirs => files.filter(f => dirs.some(d => f.startsWith(d)) && !f.includes('bootLockstep'));
  const bootsDebian = f => f.startsWith('out/test/adapter/') && readFileSync(f, 'utf8').includes('system/linuxFiles');
  for (const [mode, set] of [['lockstep', pick(['out/test/conformance/differential', 'out/test/kprobes/', 'out/test/adapter/', 'out/test/jit/', 'out/test/system/cpu/']).filter(f => !bootsDebian(f))],
    ['off', pick(['out/test/conformance/differential', 'out/test/kprobes/', 'out/test/adapter/', 'out/test/timetravel/', 'out/test/system/cpu/'])]]) {
    console.log(`\n=== KPROBE_TRANSLATE=${mode}: ${set.length} files ===`);
    const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=dot', ...set], { stdio: 'inherit', env: { ...process.env, KPROBE_TRANSLATE: mode } });
    if ((r.status ?? 1) !== 0) status = r.status ?? 1;
  }
}
if (!only.length && existsSync('test/vscode/run.mjs')) {
  const r = spawnSync(process.execPath, ['test/vscode/run.mjs'], { stdio: 'inherit' });
  if ((r.status ?? 1) !== 0) status = r.status ?? 1;
}
process.exit(status);
