/**
 * Tests of material fetched from Debian or built by a script (busybox,
 * Linux's source, Debian's kernel, the toolchain's output): without it a
 * test skips with `why`, saying what to run; under CI, whose .ci/run
 * fetches and builds all of it before the tests, the same case fails.
 */
import assert from 'node:assert/strict';

export function unfetched(t: { skip(msg: string): void }, why: string, ci = 'CI: .ci/run fetches and builds it before the tests'): void {
  if (process.env.CI) assert.fail(`${why} (${ci})`);
  t.skip(why);
}
