/**
 * The DWARF name index kept on disk between sessions
 * (emulator/elf/dwarf/nameIndexCache.ts): what is saved reads back equal
 * (every type and variable, on the sample kernel's index); a damaged or
 * foreign file is ignored; small programs are not cached; and on Debian's
 * vmlinux (when fetched) a second session opening the same image gets the
 * index from the file, equal to the one the first session built.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { loadElf } from '../../../emulator/elf';
import { debugInfoOf } from '../../../emulator/elf/dwarf/info';
import { nameIndex } from '../../../emulator/elf/dwarf/nameIndex';
import { loadNameIndex, nameIndexCachePath, saveNameIndex } from '../../../emulator/elf/dwarf/nameIndexCache';
import { typeNamed } from '../../../emulator/elf/dwarf/ctype';
import { repoPath } from '../../util/paths';
import { unfetched } from '../../util/fetched';

const withDir = <T>(f: (dir: string) => T): T => {
  const dir = mkdtempSync(join(tmpdir(), 'dwarf-cache-'));
  const before = process.env.KPROBE_DWARF_CACHE_DIR;
  process.env.KPROBE_DWARF_CACHE_DIR = dir;
  try { return f(dir); } finally {
    if (before === undefined) delete process.env.KPROBE_DWARF_CACHE_DIR; else process.env.KPROBE_DWARF_CACHE_DIR = before;
    rmSync(dir, { recursive: true, force: true });
  }
};

test('a saved name index reads back equal; a damaged file is ignored; a small program is not cached', () => withDir(dir => {
  const image = loadElf(repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf'));
  const di = debugInfoOf(image);
  assert.equal(nameIndexCachePath(di.infoBytes), null, 'the sample kernel is below the size worth caching');
  const idx = nameIndex(di);
  assert.ok(idx.types.size > 10 && idx.variables.size > 10);
  const file = join(dir, 'names.json');
  saveNameIndex(file, idx);
  assert.deepEqual(loadNameIndex(file), idx);
  writeFileSync(file, '{"format": 1, "types": [');
  assert.equal(loadNameIndex(file), undefined);
  writeFileSync(file, JSON.stringify({ format: 99, types: [], variables: [] }));
  assert.equal(loadNameIndex(file), undefined);
  assert.equal(loadNameIndex(join(dir, 'absent.json')), undefined);
  process.env.KPROBE_DWARF_CACHE_DIR = 'off';
  assert.equal(nameIndexCachePath(new Uint8Array(32 << 20)), null, 'off: no cache');
}));

test('Debian\'s vmlinux: the second session reads the index the first one saved', (t) => withDir(dir => {
  const path = repoPath('test', 'linux', 'dbg', 'cache', 'vmlinux');
  if (!existsSync(path)) { unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh): the sample kernel part ran'); return; }
  const first = debugInfoOf(loadElf(path));
  const file = nameIndexCachePath(first.infoBytes) ?? assert.fail('a vmlinux gets a cache file');
  assert.ok(file.startsWith(dir));
  assert.equal(existsSync(file), false);
  const built = nameIndex(first);
  assert.ok(existsSync(file), 'saved');
  const image2 = loadElf(path);
  const second = nameIndex(debugInfoOf(image2));
  assert.notEqual(second, built, 'a new session has its own index object');
  assert.deepEqual(second, built);
  const kp = typeNamed(image2, 'struct', 'kprobe');
  assert.ok(kp?.kind === 'struct' && kp.members().some(m => m.name === 'flags'), 'types found through the loaded index');
}));
