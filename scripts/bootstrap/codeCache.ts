/**
 * Start-up of the node entry points that are started once per use
 * (dist/cli.js, dist/adapter.js): scripts/build.mjs makes each of them a tiny
 * bootstrap that loads the real bundle (dist/bundle/NAME.js) through this
 * loader, with a V8 code cache, so that a cold process neither parses the
 * whole 1.5 MB bundle nor compiles again the functions the previous run
 * compiled lazily.
 *
 * - The bundle runs as the bootstrap's own module: `module`, `require`,
 *   `exports` are the bootstrap's, so `require.main === module` holds exactly
 *   when the bootstrap is node's main script, as it did before the split.
 *   `__filename` / `__dirname` are the bundle's (its source map sits next to it).
 * - The cache file is keyed by a hash of the bundle's content (sha1, ~1 ms),
 *   node's version and the CPU architecture: V8 itself checks only its
 *   version and flags and the source's length, and would run the old
 *   bytecode of a same-length edit. It rejects what does not fit.
 * - A missing or rejected cache is written after the run (at exit, so that
 *   the functions compiled lazily during the run are in it; a long-lived
 *   process also writes it once `flushAfterMs` after start, in case it is
 *   killed without an exit, as VS Code does to adapters on Windows). An
 *   accepted cache is written again only by a run that compiled much more
 *   than the one that wrote it (which may have been a `--help`); only a run
 *   whose heap is at most GROWTH_CHECK_MAX_HEAP asks (V8's code statistics
 *   walk the whole heap). Writing goes through a temporary file
 *   and a rename, so concurrent processes never read half a file; caches of
 *   older builds beyond the newest few are removed then.
 * - Where: $XDG_CACHE_HOME/kprobe-debug or ~/.cache/kprobe-debug, else
 *   os.tmpdir()/kprobe-debug-UID, used only if it is this user's and nobody
 *   else can write it (a planted cache would be code run in this process).
 * - Every failure (no cache directory, unreadable, corrupt, rejected,
 *   unwritable) falls back silently to compiling from source.
 * - KPROBE_CODE_CACHE=0 turns the cache off. With source maps enabled
 *   (--enable-source-maps, NODE_OPTIONS, process.setSourceMapsEnabled) the
 *   bundle is loaded the ordinary way (node only maps stack traces of modules
 *   its own loader compiled) and no cache is used.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import * as buffer from 'node:buffer';
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type * as v8 from 'node:v8';
import { Script } from 'node:vm';

export interface BundleSpec {
  /** absolute path of the real bundle */
  file: string;
  /** the bundle's name in cache file names (the key adds a hash of its content, computed on load) */
  name: string;
  /** long-lived processes: also write a missing cache this long after start (unref'd timer) */
  flushAfterMs?: number;
  /** default true: write a missing or rejected cache when the process exits */
  writeAtExit?: boolean;
}

/** What happened to the cache on load. */
export type CacheState = 'off' | 'sourceMaps' | 'missing' | 'accepted' | 'rejected';

export interface LoadedBundle {
  state: CacheState;
  /** the cache file used (undefined when off) */
  cacheFile?: string;
  /**
   * Write the cache now if it is missing or was rejected, or if this run
   * compiled much more than the run that wrote it; once. True if written.
   */
  flush(): boolean;
}

type Env = Record<string, string | undefined>;

/** Directories the cache may live in, preferred first: $XDG_CACHE_HOME/kprobe-debug or ~/.cache/kprobe-debug, then a per-user one under os.tmpdir(). */
export function cacheDirs(env: Env = process.env): string[] {
  const dirs: string[] = [];
  let home: string | undefined;
  try { home = homedir(); } catch { home = undefined; }
  const base = env.XDG_CACHE_HOME || (home ? join(home, '.cache') : undefined);
  if (base) dirs.push(join(base, 'kprobe-debug'));
  let user = 'user';
  try { user = typeof process.getuid === 'function' ? String(process.getuid()) : basename(home ?? '') || 'user'; } catch { /* keep 'user' */ }
  dirs.push(join(tmpdir(), `kprobe-debug-${user}`));
  return dirs;
}

function asciiOnly(bytes: Buffer): boolean {
  const isAscii = (buffer as { isAscii?: (b: Buffer) => boolean }).isAscii;   // node >= 18.15 / 19.6
  return isAscii !== undefined && isAscii(bytes);
}

/** The cache key of a bundle: its name and a hash of its content. */
export function cacheKey(name: string, content: Uint8Array): string {
  return `${name}-${createHash('sha1').update(content).digest('hex').slice(0, 16)}`;
}

/** The cache's file name for a bundle key in this node. */
export function cacheFileName(key: string): string {
  return `${key}-${process.version}-${process.arch}.v8cache`;
}

export function sourceMapsEnabled(): boolean {
  const p = process as NodeJS.Process & { sourceMapsEnabled?: boolean };
  if (typeof p.sourceMapsEnabled === 'boolean') return p.sourceMapsEnabled;
  return process.execArgv.includes('--enable-source-maps') || /(^|\s)--enable-source-maps(\s|$)/.test(process.env.NODE_OPTIONS ?? '');
}

export function cacheDisabled(env: Env = process.env): boolean {
  const v = (env.KPROBE_CODE_CACHE ?? '').trim().toLowerCase();
  return v === '0' || v === 'false' || v === 'off' || v === 'no';
}

/**
 * A directory shared with other users (the temporary one) is used only if it
 * is this user's and nobody else can write it: a planted cache would be code
 * run in this process.
 */
function safeDir(dir: string, shared: boolean): boolean {
  if (!shared || typeof process.getuid !== 'function') return true;
  const s = statSync(dir);
  return s.isDirectory() && s.uid === process.getuid() && (s.mode & 0o022) === 0;
}

function readCache(dirs: string[], name: string): { file: string; data?: Buffer } | undefined {
  for (let i = 0; i < dirs.length; i++) {
    const file = join(dirs[i], name);
    try {
      if (!existsSync(file) || !safeDir(dirs[i], i > 0)) continue;
      return { file, data: readFileSync(file) };
    } catch { /* unreadable: try the next, else compile from source */ }
  }
  return undefined;
}

function writeCache(dirs: string[], name: string, key: string, data: Buffer): string | undefined {
  for (let i = 0; i < dirs.length; i++) {
    const dir = dirs[i];
    const tmp = join(dir, `${name}.${process.pid}.tmp`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (!safeDir(dir, i > 0)) continue;
      const fd = openSync(tmp, 'w', 0o600);
      try { writeSync(fd, data); } finally { closeSync(fd); }
      renameSync(tmp, join(dir, name));
      removeStale(dir, name, key);
      return join(dir, name);
    } catch {
      try { unlinkSync(tmp); } catch { /* nothing to clean up */ }
    }
  }
  return undefined;
}

/** How many caches of one bundle (builds of it) are kept per node: a user may run two checkouts, or an installed extension and a development one. */
const KEEP = 4;

/** Caches of other builds of the same bundle for the same node beyond the newest KEEP are dropped when a new one is written; other nodes' are left alone. */
function removeStale(dir: string, keep: string, key: string): void {
  const prefix = key.slice(0, key.lastIndexOf('-') + 1);
  const suffix = cacheFileName('');
  if (!prefix) return;
  try {
    const others = readdirSync(dir).filter(f => f !== keep && f.startsWith(prefix) && f.endsWith(suffix))
      .map(f => ({ f, t: statSync(join(dir, f)).mtimeMs })).sort((a, b) => b.t - a.t);
    for (const { f } of others.slice(KEEP - 1)) {
      try { unlinkSync(join(dir, f)); } catch { /* another process's: leave it */ }
    }
  } catch { /* best effort */ }
}

/**
 * A cache file: MAGIC, the heap's bytecode size when it was written
 * (uint32 LE), then V8's data. A run whose heap ends with REWRITE_GROWTH
 * times that much bytecode writes the cache again.
 */
const MAGIC = Buffer.from('KPCC\0\0\0\x01', 'latin1');
const REWRITE_GROWTH = 1.08;

/**
 * The heap size (bytes in use) up to which a run checks whether it compiled
 * more than the cache holds. V8's code statistics walk the whole heap (about
 * 0.2 ms per MB: 20 ms at the exit of a 10,000-probe run), while what a run
 * compiles does not grow with the data it made (a run of 10 probes and one
 * of 10,000 run the same code): runs above this leave the check to ordinary ones.
 */
export const GROWTH_CHECK_MAX_HEAP = 32 * 1024 * 1024;

/** node:v8, loaded when asked: at exit, not at start-up */
function nodeV8(): typeof v8 {
  return require('node:v8') as typeof v8;
}

/** the heap's bytecode */
function bytecodeSize(): number {
  return nodeV8().getHeapCodeStatistics().bytecode_and_metadata_size;
}

function pack(bytecode: number, data: Buffer): Buffer {
  const head = Buffer.alloc(MAGIC.length + 4);
  MAGIC.copy(head);
  head.writeUInt32LE(Math.min(bytecode, 0xffffffff), MAGIC.length);
  return Buffer.concat([head, data]);
}

function unpack(file: Buffer): { bytecode: number; data: Buffer } | undefined {
  if (file.length <= MAGIC.length + 4 || !file.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  return { bytecode: file.readUInt32LE(MAGIC.length), data: file.subarray(MAGIC.length + 4) };
}

/** The CommonJS wrapper, on its own line so that the bundle's lines keep their numbers (lineOffset -1). */
const WRAP_HEAD = '(function (exports, require, module, __filename, __dirname) {\n';
const WRAP_TAIL = '\n})';

interface CompilingModule extends NodeJS.Module {
  _compile(content: string, filename: string): unknown;
}

/**
 * Load and run the bundle `spec.file` as module `mod` (whose `require` is
 * `req`). `dirs`: where the cache may be, preferred first; every one but the
 * first is taken as shared with other users (see safeDir).
 */
export function loadBundle(mod: NodeJS.Module, req: NodeJS.Require, spec: BundleSpec, opts: { env?: Env; dirs?: string[] } = {}): LoadedBundle {
  const env = opts.env ?? process.env;
  const bytes = readFileSync(spec.file);
  // pure ASCII (scripts/build.mjs makes it so): latin1, a one-byte string for V8 and no UTF-8 decoding
  const source = bytes.toString(asciiOnly(bytes) ? 'latin1' : 'utf8');
  if (cacheDisabled(env) || sourceMapsEnabled()) {
    (mod as CompilingModule)._compile(source, spec.file);
    return { state: cacheDisabled(env) ? 'off' : 'sourceMaps', flush: () => false };
  }
  const dirs = opts.dirs ?? cacheDirs(env);
  const key = cacheKey(spec.name, bytes);
  const name = cacheFileName(key);
  const cached = readCache(dirs, name);
  const packed = cached?.data?.length ? unpack(cached.data) : undefined;
  // V8 checks the data's header (magic, its version and flags, the source's length, the payload's length) and rejects what does not fit
  const script = new Script(WRAP_HEAD + source + WRAP_TAIL, { filename: spec.file, lineOffset: -1, cachedData: packed?.data });
  // an empty file gives nothing to reject: take it as missing so that it is written
  const state: CacheState = !cached?.data?.length ? 'missing' : packed && script.cachedDataRejected === false ? 'accepted' : 'rejected';
  let done = false;
  let early = false;
  const write = (): boolean => {
    let data: Buffer;
    try { data = pack(bytecodeSize(), script.createCachedData()); } catch { return false; }
    const file = writeCache(dirs, name, key, data);
    if (file) loaded.cacheFile = file;
    return file !== undefined;
  };
  const loaded: LoadedBundle = {
    state,
    cacheFile: cached?.file ?? join(dirs[0], name),
    flush(): boolean {
      if (done) return false;
      done = true;
      // an accepted cache is written again only when this run compiled much more than the run that wrote it
      // (that one may have been a `--help`): the new data holds both runs' functions
      if (state === 'accepted') {
        if (nodeV8().getHeapStatistics().used_heap_size > GROWTH_CHECK_MAX_HEAP) return false;
        if (!(bytecodeSize() > (packed?.bytecode ?? 0) * REWRITE_GROWTH)) return false;
      }
      return write();
    },
  };
  if (spec.writeAtExit !== false) process.once('exit', () => { loaded.flush(); });
  // the early write does not count as the run's: the exit writes again, with what was compiled since
  if (state !== 'accepted' && spec.flushAfterMs !== undefined) setTimeout(() => { if (!done && !early) { early = true; write(); } }, spec.flushAfterMs).unref();
  const fn = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: NodeJS.Module, filename: string, dirname: string) => void;
  fn.call(mod.exports, mod.exports, req, mod, spec.file, dirname(spec.file));
  return loaded;
}
