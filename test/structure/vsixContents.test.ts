/**
 * The .vsix carries what the README's examples use: every `examples/...`
 * path the README names (a file, a directory, a glob) that the repository
 * holds is in the package `vsce ls` lists (the files .vscodeignore lets
 * through), so a user who installed the extension can run them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { repoPath, repoRoot } from '../util/paths';

function globRe(pattern: string): RegExp {
  const re = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
  return new RegExp(`^${re}$`);
}

test('.vsix: every examples/ path the README uses is packaged', () => {
  const root = repoRoot();
  const packaged = execFileSync(repoPath('node_modules', '.bin', 'vsce'), ['ls', '--no-dependencies'], { cwd: root, encoding: 'utf8' })
    .split('\n').map(l => l.trim()).filter(Boolean);
  const tracked = execFileSync('git', ['ls-files', 'examples'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  const named = [...new Set(readFileSync(repoPath('README.md'), 'utf8').match(/examples\/[\w./*-]*/g) ?? [])]
    .map(p => p.replace(/[.]+$/, '').replace(/\/$/, ''))
    .filter(p => p !== 'examples');
  assert.ok(named.some(p => p.endsWith('.ko')) && named.some(p => p.startsWith('examples/rootfs')), named.join(' '));
  const missing: string[] = [];
  for (const p of named) {
    const re = p.includes('*') ? globRe(p) : undefined;
    const holds = (f: string): boolean => (re ? re.test(f) : f === p || f.startsWith(`${p}/`));
    const inRepo = tracked.filter(holds);
    if (!inRepo.length) continue;
    // a file or a glob: all of it; a directory: everything under it the repository holds
    for (const f of inRepo) if (!packaged.includes(f)) missing.push(`${f} (README: ${p})`);
  }
  assert.deepEqual(missing, []);
});
