/**
 * The code-cache start-up of dist/cli.js and dist/adapter.js
 * (scripts/bootstrap/codeCache.ts): a cache that is missing, corrupt, written
 * for other source, or in a directory that cannot be written never changes
 * what runs, only how fast; the bundle runs as the bootstrap's own module
 * (`require.main === module`); with source maps enabled stack traces are
 * mapped; and the shipped CLI prints the same bytes with the cache off,
 * missing, accepted and corrupt.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import { cacheFileName, cacheKey, GROWTH_CHECK_MAX_HEAP } from '../../scripts/bootstrap/codeCache';
import { repoPath } from '../util/paths';

const FIXTURE = `'use strict';
function twice(x) { return x * 2; }
exports.answer = twice(21);
exports.isMain = require.main === module;
exports.filename = __filename;
exports.self = this === module.exports;
`;

interface FixtureExports { answer: number; isMain: boolean; filename: string; self: boolean }

describe('code cache loader (scripts/bootstrap/codeCache.ts)', () => {
  let root: string;
  let bundle: string;
  /** the fixture's cache file name */
  let cacheName: string;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'kprobe-codecache-'));
    bundle = join(root, 'bundle.js');
    writeFileSync(bundle, FIXTURE);
    cacheName = cacheFileName(cacheKey('fixture', Buffer.from(FIXTURE)));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  /**
   * Load the fixture in a fresh node (V8 keeps what one process compiled and
   * would not even look at the cache for the same source again) as a module
   * whose require.main is itself, as the bootstrap is when node runs it;
   * `flushes`: how many times to call flush() after the load, with the results.
   */
  function load(dirs: string[], file = bundle, flushes = 1, env: Record<string, string> = {}): { state: string; flushed: boolean[]; exports: FixtureExports } {
    const script = `
      const { loadBundle } = require(${JSON.stringify(require.resolve('../../scripts/bootstrap/codeCache'))});
      const mod = { exports: {} };
      const req = Object.assign((id) => require(id), { main: mod });
      const l = loadBundle(mod, req, { file: ${JSON.stringify(file)}, name: 'fixture', writeAtExit: false }, { dirs: ${JSON.stringify(dirs)}, env: {} });
      const flushed = [];
      for (let i = 0; i < ${flushes}; i++) flushed.push(l.flush());
      process.stdout.write(JSON.stringify({ state: l.state, flushed, exports: mod.exports }));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, ...env } });
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
    return JSON.parse(r.stdout) as { state: string; flushed: boolean[]; exports: FixtureExports };
  }

  function checkExports(e: FixtureExports, file = bundle): void {
    assert.deepEqual(e, { answer: 42, isMain: true, filename: file, self: true });
  }

  test('missing cache: runs from source, flush writes it once, the next load accepts it', () => {
    const dir = join(root, 'missing', 'kprobe-debug');
    const a = load([dir], bundle, 0);
    assert.equal(a.state, 'missing');
    checkExports(a.exports);
    assert.equal(existsSync(join(dir, cacheName)), false, 'nothing is written before the run ends');
    const b = load([dir], bundle, 2);
    assert.equal(b.state, 'missing');
    assert.deepEqual(b.flushed, [true, false], 'written once');
    assert.ok(statSync(join(dir, cacheName)).size > 0);
    assert.deepEqual(readdirSync(dir), [cacheName], 'no temporary file is left');
    const c = load([dir]);
    assert.equal(c.state, 'accepted');
    checkExports(c.exports);
    assert.deepEqual(c.flushed, [false], 'an accepted cache is not written again');
  });

  test('corrupt cache (garbage, truncated, empty): not used, runs from source, rewritten', () => {
    const dir = join(root, 'corrupt');
    assert.deepEqual(load([dir]).flushed, [true]);
    const file = join(dir, cacheName);
    const good = readFileSync(file);
    for (const bad of [Buffer.from('not a V8 code cache at all'), good.subarray(0, good.length >> 1), Buffer.alloc(0)]) {
      writeFileSync(file, bad);
      const a = load([dir]);
      assert.equal(a.state, bad.length ? 'rejected' : 'missing', `${bad.length} bytes`);
      checkExports(a.exports);
      assert.deepEqual(a.flushed, [true]);
      assert.equal(load([dir]).state, 'accepted');
    }
  });

  test('other source has another key; a cache made for other source under its key is rejected', () => {
    const dir = join(root, 'other-source');
    assert.deepEqual(load([dir]).flushed, [true]);
    const other = join(root, 'other', 'bundle.js');
    mkdirSync(join(root, 'other'));
    const otherText = FIXTURE.replace('twice(21)', 'twice(20) + 2');
    writeFileSync(other, otherText);
    const otherName = cacheFileName(cacheKey('fixture', Buffer.from(otherText)));
    assert.notEqual(otherName, cacheName);
    assert.equal(load([dir], other, 0).state, 'missing');
    writeFileSync(join(dir, otherName), readFileSync(join(dir, cacheName)));
    const a = load([dir], other);
    assert.equal(a.state, 'rejected');
    checkExports(a.exports, other);
  });

  test('an accepted cache is written again by a run that compiled much more than the one that wrote it', () => {
    const dir = join(root, 'growth');
    const file = join(root, 'growth.js');
    // a --help run first, then the real work: 4000 functions only run when FIXTURE_BIG is set
    const fns = Array.from({ length: 4000 }, (_, i) => `function f${i}(x) { return x > ${i} ? x - ${i} : [x, ${i}].length; }`).join('\n');
    const calls = Array.from({ length: 4000 }, (_, i) => `f${i}(${i})`).join(' + ');
    writeFileSync(file, `${FIXTURE}${fns}\nif (process.env.FIXTURE_BIG) exports.big = ${calls};\n`);
    const name = cacheFileName(cacheKey('fixture', readFileSync(file)));
    assert.deepEqual(load([dir], file).flushed, [true]);
    const small = statSync(join(dir, name)).size;
    const big = load([dir], file, 1, { FIXTURE_BIG: '1' });
    assert.equal(big.state, 'accepted');
    assert.deepEqual(big.flushed, [true], 'rewritten: the run compiled much more');
    assert.ok(statSync(join(dir, name)).size > small * 2, `the new cache holds the big run's functions (${small} -> ${statSync(join(dir, name)).size} bytes)`);
    assert.deepEqual(load([dir], file, 1, { FIXTURE_BIG: '1' }).flushed, [false], 'a like run does not write it again');
    assert.deepEqual(load([dir], file).flushed, [false], 'nor does a smaller one');
  });

  test('a run whose heap is over GROWTH_CHECK_MAX_HEAP leaves the growth check (a walk of its whole heap) to ordinary runs', () => {
    const dir = join(root, 'big-heap');
    const file = join(root, 'big-heap.js');
    const fns = Array.from({ length: 4000 }, (_, i) => `function g${i}(x) { return x > ${i} ? x - ${i} : [x, ${i}].length; }`).join('\n');
    const calls = Array.from({ length: 4000 }, (_, i) => `g${i}(${i})`).join(' + ');
    // FIXTURE_HEAP: the run keeps about twice GROWTH_CHECK_MAX_HEAP of objects alive to its end
    const keep = `if (process.env.FIXTURE_HEAP) globalThis.kept = Array.from({ length: ${Math.ceil(GROWTH_CHECK_MAX_HEAP / 16)} }, (_, i) => ({ i }));`;
    writeFileSync(file, `${FIXTURE}${fns}\nif (process.env.FIXTURE_BIG) exports.big = ${calls};\n${keep}\n`);
    const name = cacheFileName(cacheKey('fixture', readFileSync(file)));
    assert.deepEqual(load([dir], file).flushed, [true]);
    const small = readFileSync(join(dir, name));
    const huge = load([dir], file, 1, { FIXTURE_BIG: '1', FIXTURE_HEAP: '1' });
    assert.equal(huge.state, 'accepted');
    const { big, ...rest } = huge.exports as FixtureExports & { big?: number };
    checkExports(rest, file);
    assert.equal(typeof big, 'number', 'the big run ran');
    assert.deepEqual(huge.flushed, [false], 'not checked, not written: its heap is large');
    assert.ok(readFileSync(join(dir, name)).equals(small), 'the cache is the one the first run wrote');
    assert.deepEqual(load([dir], file, 1, { FIXTURE_BIG: '1' }).flushed, [true], 'a run of the same code with an ordinary heap writes it');
  });

  test('unwritable cache directory: falls back to the next one, and silently to no cache at all', () => {
    const blocker = join(root, 'a-file');
    writeFileSync(blocker, 'x');
    const unusable = join(blocker, 'kprobe-debug');     // ENOTDIR, even for root
    const fallback = join(root, 'fallback');
    const a = load([unusable, fallback]);
    assert.equal(a.state, 'missing');
    checkExports(a.exports);
    assert.deepEqual(a.flushed, [true]);
    assert.ok(existsSync(join(fallback, cacheName)));
    assert.equal(load([unusable, fallback]).state, 'accepted', 'read from the fallback directory');

    const none = load([unusable, join(blocker, 'other')]);
    assert.equal(none.state, 'missing');
    checkExports(none.exports);
    assert.deepEqual(none.flushed, [false]);
  });

  test('a shared (not first) directory others can write is neither read nor written', { skip: process.platform === 'win32' ? 'POSIX modes' : false }, () => {
    const shared = join(root, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const unusable = join(root, 'a-file-2', 'x');
    writeFileSync(join(root, 'a-file-2'), 'x');
    assert.deepEqual(load([unusable, shared]).flushed, [false]);
    assert.deepEqual(readdirSync(shared), []);
    // a file planted there is ignored
    const own = join(root, 'own');
    assert.deepEqual(load([own]).flushed, [true]);
    writeFileSync(join(shared, cacheName), readFileSync(join(own, cacheName)));
    assert.equal(load([unusable, shared], bundle, 0).state, 'missing');
  });

  test('caches of other builds beyond the newest few are dropped when one is written; other nodes\' are kept', () => {
    const dir = join(root, 'stale');
    mkdirSync(dir);
    const names = ['fixture-aaaaaaaaaaaaaaa1', 'fixture-aaaaaaaaaaaaaaa2', 'fixture-aaaaaaaaaaaaaaa3', 'fixture-aaaaaaaaaaaaaaa4', 'fixture-aaaaaaaaaaaaaaa5']
      .map(cacheFileName);
    const key = cacheName.slice(0, cacheName.indexOf(`-${process.version}`));
    names.forEach((n, i) => { writeFileSync(join(dir, n), 'x'); const t = new Date(Date.now() - (10 - i) * 60_000); utimesSync(join(dir, n), t, t); });
    const otherNode = `${key}-v0.0.0-${process.arch}.v8cache`;
    writeFileSync(join(dir, otherNode), 'x');
    writeFileSync(join(dir, 'unrelated.txt'), 'x');
    assert.deepEqual(load([dir]).flushed, [true]);
    assert.deepEqual(readdirSync(dir).sort(), [cacheName, otherNode, ...names.slice(2), 'unrelated.txt'].sort());
  });

  test('with source maps enabled the bundle is loaded by node (no cache) and stack traces are mapped', async () => {
    const dir = join(root, 'maps');
    mkdirSync(dir);
    await build({
      stdin: { contents: 'export function boom(): never {\n  // the throw is on line 3 of orig.ts\n  throw new Error("boom");\n}\nboom();\n', sourcefile: 'orig.ts', loader: 'ts', resolveDir: dir },
      bundle: true, platform: 'node', format: 'cjs', sourcemap: true, outfile: join(dir, 'bundle.js'), logLevel: 'silent',
    });
    const boot = join(dir, 'boot.js');
    writeFileSync(boot, `require(${JSON.stringify(require.resolve('../../scripts/bootstrap/codeCache'))}).loadBundle(module, require, { file: ${JSON.stringify(join(dir, 'bundle.js'))}, name: 'maps' }, { dirs: [${JSON.stringify(join(dir, 'cache'))}] });\n`);
    const mapped = spawnSync(process.execPath, ['--enable-source-maps', boot], { encoding: 'utf8' });
    assert.notEqual(mapped.status, 0);
    assert.match(mapped.stderr, /orig\.ts:3/);
    assert.equal(existsSync(join(dir, 'cache')), false, 'no cache with source maps');
    const plain = spawnSync(process.execPath, [boot], { encoding: 'utf8' });
    assert.match(plain.stderr, /bundle\.js:\d+/, 'without source maps the bundle\'s own lines');
    assert.ok(existsSync(join(dir, 'cache', cacheFileName(cacheKey('maps', readFileSync(join(dir, 'bundle.js')))))), 'a run that throws still leaves its cache');
  });
});

describe('shipped CLI through the code cache (dist/cli.js)', () => {
  const CLI = repoPath('dist', 'cli.js');
  let root: string;
  before(() => { root = mkdtempSync(join(tmpdir(), 'kprobe-codecache-cli-')); });
  after(() => rmSync(root, { recursive: true, force: true }));

  function run(env: Record<string, string>, args = ['run', '--list', '--no-translate', '--max-instructions', '20000']): { status: number | null; stdout: string; stderr: string } {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, KPROBE_CODE_CACHE: '', ...env }, cwd: repoPath() });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  test('same output with the cache off, missing, accepted, corrupt and unwritable', () => {
    assert.ok(existsSync(CLI), `${CLI} does not exist: run \`npm run build\` first`);
    const xdg = join(root, 'xdg');
    const tmp = join(root, 'tmp');
    mkdirSync(tmp);
    const env = { XDG_CACHE_HOME: xdg, TMPDIR: tmp, TEMP: tmp, TMP: tmp };
    const off = run({ ...env, KPROBE_CODE_CACHE: '0' });
    assert.equal(existsSync(xdg), false, 'KPROBE_CODE_CACHE=0 writes nothing');
    assert.ok(off.stdout.length > 0);
    const same = (r: ReturnType<typeof run>, what: string): void => {
      assert.equal(r.stderr, off.stderr, what);
      assert.equal(r.status, off.status, what);
      assert.equal(r.stdout, off.stdout, what);
    };
    same(run(env), 'missing');
    const dir = join(xdg, 'kprobe-debug');
    const files = readdirSync(dir);
    assert.equal(files.length, 1);
    assert.match(files[0], /^cli-[0-9a-f]{16}-v.*\.v8cache$/);
    const file = join(dir, files[0]);
    same(run(env), 'accepted');
    writeFileSync(file, 'garbage');
    same(run(env), 'corrupt');
    assert.ok(statSync(file).size > 100, 'the corrupt cache was rewritten');
    const blocker = join(root, 'blocker');
    writeFileSync(blocker, 'x');
    same(run({ XDG_CACHE_HOME: join(blocker, 'x'), TMPDIR: blocker, TEMP: blocker, TMP: blocker }), 'unwritable');
    same(run({ ...env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --enable-source-maps` }), 'source maps');
  });

  test('required as a module, dist/cli.js does not run the CLI (require.main is not it)', () => {
    const r = spawnSync(process.execPath, ['-e', `const m = require(${JSON.stringify(CLI)}); process.stdout.write(typeof m.runCli)`], { encoding: 'utf8', env: { ...process.env, XDG_CACHE_HOME: join(root, 'req') } });
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, 'function');
  });
});
