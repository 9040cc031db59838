/**
 * Building modules the way a user does, with the headers' Kbuild-like
 * Makefile (make -C examples/include M=DIR MO=OUT ARCH=ARCH), for the tests
 * that load C modules built at test time; and the rule for a missing tool
 * chain: outside CI the test says what is missing and skips, in CI
 * (CI=true, where clang and lld are installed) it fails.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath } from '../util/paths';
import { unfetched } from '../util/fetched';

export const KBUILD_ARCHES = ['x86_64', 'aarch64', 'riscv64'] as const;

/** skip with the reason, or fail in CI where everything needed is there */
export function unavailable(t: { skip(msg: string): void }, why: string): void {
  unfetched(t, why, "CI installs clang and lld and fetches Linux's source first");
}

/** the build tools that are not installed */
function missingTools(): string[] {
  return [['make', '--version'], ['clang', '--version'], ['ld.lld', '--version']]
    .filter(([tool, arg]) => spawnSync(tool, [arg], { stdio: 'ignore' }).status !== 0).map(([tool]) => tool);
}

/**
 * `make -C examples/include M=dir MO=<fresh dir> ARCH=arch vars...`: the
 * output directory; { missing } when a tool is not installed; a build that
 * fails with the tools there is an assertion failure (the headers are what
 * is tested).
 */
export function kbuild(dir: string, arch: string, vars: readonly string[] = []): { out: string } | { missing: string } {
  const tools = missingTools();
  if (tools.length) return { missing: `${tools.join(', ')} not installed (Debian: apt-get install make clang lld)` };
  const out = mkdtempSync(join(tmpdir(), `kbuild-${arch}-`));
  const r = spawnSync('make', ['-s', '-C', repoPath('examples', 'include'), `M=${dir}`, `MO=${out}`, `ARCH=${arch}`, ...vars],
    { encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, `make -C examples/include M=${dir} ARCH=${arch} ${vars.join(' ')} failed:\n${r.stderr}${r.error?.message ?? ''}`);
  return { out };
}

/** the module a kbuild() output holds, or why not */
export function builtModule(out: string, name: string): string {
  const ko = join(out, `${name}.ko`);
  assert.ok(existsSync(ko), `${ko} was not built`);
  return ko;
}
