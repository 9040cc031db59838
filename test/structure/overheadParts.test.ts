/**
 * scripts/bench/overheadParts.mjs measures a probe hit part by part with
 * builds that leave parts of the hit path out, made by text edits applied at
 * bundle time. Each edit names code by its text: when that code changes, the
 * edit must change with it, or the measurement would silently measure
 * something else (the script refuses an edit whose text is not found exactly
 * once). This keeps every edit applying to the sources as they are.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { repoPath } from '../util/paths';

test('every measurement build of overheadParts.mjs applies to the present sources', () => {
  const r = spawnSync(process.execPath, [repoPath('scripts', 'bench', 'overheadParts.mjs'), '--check'], { cwd: repoPath(), encoding: 'utf8' });
  assert.equal(r.status, 0, `overheadParts.mjs --check failed: ${r.stderr}`);
  const builds = r.stdout.trim().split('\n').map(l => /^(\w+): (\d+) edit\(s\) apply$/.exec(l)?.slice(1));
  // the o ladder's rungs, the hit-log build and the kretprobe frame build, each with the edits it declares
  assert.deepEqual(builds, [['full', '0'], ['nolog', '1'], ['frame', '1'], ['envelope', '1'], ['helper', '1'], ['call', '1'], ['save', '1'], ['transitions', '1'], ['kretframe', '2']]);
});
