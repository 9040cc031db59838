/**
 * The bench's v86 peer (scripts/bench/cpu.ts) is honest only if v86 does
 * the same work: the image it runs (scripts/bench/v86/loopbench-i386.elf,
 * loopbench.c built for 32-bit x86 as a multiboot kernel) must print
 * exactly what the x86_64 build prints under qemu-user (the golden), and
 * exit 0. Runs the image in v86 (the npm dev dependency) on Debian's
 * SeaBIOS, as the bench does (.ci/run installs seabios).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { repoPath } from '../util/paths';

test('v86 peer: loopbench built for i386 prints the x86_64 golden and exits 0 in v86', { timeout: 180_000 }, t => {
  const r = spawnSync(process.execPath, [repoPath('scripts', 'bench', 'v86', 'run.mjs'), repoPath('scripts', 'bench', 'v86', 'loopbench-i386.elf')],
    { encoding: 'utf8', timeout: 170_000 });
  assert.equal(r.status, 0, r.stderr);
  const o = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { skip?: string; instructions?: number; output?: string; exit?: number };
  if (o.skip !== undefined) { t.skip(o.skip); return; }
  assert.equal(o.output, readFileSync(repoPath('test', 'conformance', 'golden', 'loopbench-clang-O2.out'), 'latin1'));
  assert.equal(o.exit, 0);
  // the i386 build does the 64-bit arithmetic in 32-bit instructions: more of them than the x86_64 build's ~211 million
  assert.ok((o.instructions ?? 0) > 300_000_000, `${o.instructions} instructions`);
});
