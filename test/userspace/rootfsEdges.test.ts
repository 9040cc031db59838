/**
 * What a fuzzed rootfs and initramfs hold, taken as Linux takes it
 * (kprobe-run exec --rootfs DIR --initramfs FILE, programs/rootfs.c):
 *
 *   an archive entry under a non-directory ("a" a file, then "a/b"):
 *   skipped, as Linux's unpacker skips it, the rest unpacked;
 *   a host file of 3 GiB: read in pieces from the host (read, pread,
 *   lseek, a private mapping of its last page); what cannot be held in the
 *   machine's memory (a shared mapping of all its pages) is -ENOMEM with
 *   the reason in the kernel log, a file grown past it -EFBIG;
 *   a host file name that is not UTF-8: the run goes on, the program opens
 *   it by its bytes;
 *   a gzip bomb: unpacked while it fits the machine's memory (1 GiB), held
 *   once on the host while unpacking (the files' zero pages untouched);
 *   beyond that, one clear line.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { Vfs, S_IFDIR, S_IFREG } from '../../emulator/kernel/fs/vfs';
import { RootfsError, populateFromCpio } from '../../emulator/kernel/fs/populate';
import { repoPath } from '../util/paths';
import { cpio } from './cpio';

const PROG = repoPath('test', 'userspace', 'bin', 'edge', 'rootfs-x86_64.elf');
const CLI = repoPath('dist', 'cli.js');
const MiB = 1 << 20;
const LAST16 = 'the last 16 byte';

/** a gzip member of `n` MiB of zeros, concatenated `times` times (gunzip reads the members one after another) */
function zeroMembers(n: number, times: number): Buffer {
  const m = gzipSync(Buffer.alloc(n * MiB), { level: 9 });
  return Buffer.concat(Array.from({ length: times }, () => m));
}

/** a cpio newc header for a regular file of `size` bytes (its data follows) */
function fileHeader(name: string, size: number): Buffer {
  const hex = (v: number): string => v.toString(16).padStart(8, '0');
  const nm = Buffer.from(name + '\0');
  const head = '070701' + [1, S_IFREG | 0o644, 0, 0, 1, 0, size, 0, 0, 0, 0, nm.length, 0].map(hex).join('');
  return Buffer.concat([Buffer.from(head), nm, Buffer.alloc((4 - ((110 + nm.length) % 4)) % 4)]);
}

describe('rootfs and initramfs contents a fuzzer made', () => {
  test('kprobe-run exec: an entry under a file skipped, a 3 GiB host file read in pieces, a non-UTF-8 name, a file too large to grow', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kprobe-rootfs-edges-'));
    try {
      const root = join(dir, 'root');
      spawnSync('mkdir', [root]);
      writeFileSync(Buffer.concat([Buffer.from(root + '/caf'), Buffer.of(0xe9), Buffer.from('.txt')]), 'latin-1 name\n');
      const fd = openSync(join(root, 'big'), 'w');
      ftruncateSync(fd, 3 * 1024 * MiB);
      writeSync(fd, LAST16, 3 * 1024 * MiB - 16);
      closeSync(fd);
      const initramfs = join(dir, 'initramfs.cpio');
      writeFileSync(initramfs, cpio([
        { name: 'a', mode: S_IFREG | 0o644, data: 'file a' },
        { name: 'a/b', mode: S_IFREG | 0o644, data: 'under a file' },
        { name: 'a/c', mode: S_IFDIR | 0o755 },
        { name: 'etc', mode: S_IFDIR | 0o755 },
        { name: 'etc/motd', mode: S_IFREG | 0o644, data: 'after them' },
      ]));
      const r = spawnSync(process.execPath, [CLI, 'exec', '--rootfs', root, '--initramfs', initramfs, PROG], { timeout: 120_000 });
      const out = r.stdout.toString(), err = r.stderr.toString();
      assert.equal(out, [
        '/a [file a]',
        'open /a/b -20',
        '/caf\\xe9.txt [latin-1 name\n]',
        'open /big ok 1',
        `/big size ${3 * 1024 * MiB}`,
        `pread at 3 GiB - 16: 16 [${LAST16}]`,
        'read at 0 16',
        'zero 1',
        'lseek to 2 GiB 1',
        'read at 2 GiB 16',
        'mmap private last page ok 1',
        `its last bytes [${LAST16}]`,
        'mmap shared -12',
        'pwrite at 4 GiB -27',
        'ftruncate 2 GiB -27',
        'ftruncate 1 MiB 0',
        'done',
        '',
      ].join('\n'), err);
      assert.equal(r.status, 0, err);
      assert.doesNotMatch(err, /internal error|greater than 2 GiB|lstat/);
      assert.match(err, /mmap: \/big: has 3221225472 bytes, more than the 1024 MiB of the machine's memory can hold as pages: -ENOMEM/);
      assert.match(err, /\/tmp\/grow: would grow to 4294967297 bytes, .*: -EFBIG/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an archive entry under a file, or a file over a non-empty directory, is skipped; the rest is unpacked', () => {
    const fs = new Vfs();
    populateFromCpio(fs, cpio([
      { name: 'a', mode: S_IFREG | 0o644, data: 'file a' },
      { name: 'a/b', mode: S_IFREG | 0o644, data: 'x' },
      { name: 'a/d/e', mode: S_IFDIR | 0o755 },
      { name: 'd', mode: S_IFDIR | 0o755 },
      { name: 'd/f', mode: S_IFREG | 0o644, data: 'in d' },
      { name: 'd', mode: S_IFREG | 0o644, data: 'd as a file' },
      { name: 'e', mode: S_IFDIR | 0o755 },
      { name: 'e', mode: S_IFREG | 0o644, data: 'e was empty' },
      { name: 'z', mode: S_IFREG | 0o644, data: 'last' },
    ]), 'x.cpio');
    const text = (p: string): string => {
      const r = fs.lookup(p, fs.root);
      assert.ok(r.ok && r.inode.isReg, p);
      return new TextDecoder().decode(r.inode.data());
    };
    assert.equal(text('/a'), 'file a');
    assert.equal(text('/d/f'), 'in d');
    assert.equal(text('/e'), 'e was empty');
    assert.equal(text('/z'), 'last');
    assert.deepEqual(fs.lookup('/a/b', fs.root), { ok: false, errno: 20 });
  });

  test('a gzip bomb: 512 MiB of zeros unpacked with one host copy of them (the file\'s pages stay untouched); more than the machine\'s 1 GiB refused in one line', () => {
    const size = 512 * MiB;
    const bomb = Buffer.concat([
      gzipSync(fileHeader('zeros', size)), zeroMembers(64, size / (64 * MiB)),
      gzipSync(cpio([{ name: 'after', mode: S_IFREG | 0o644, data: 'ok' }])),
    ]);
    assert.ok(bomb.length < MiB, `${bomb.length} bytes of archive`);
    const fs = new Vfs();
    const before = process.memoryUsage().rss;
    populateFromCpio(fs, bomb, 'bomb.cpio.gz');
    const grown = process.memoryUsage().rss - before;
    const zeros = fs.lookup('/zeros', fs.root);
    assert.ok(zeros.ok);
    assert.equal(zeros.inode.size, size);
    assert.ok(fs.lookup('/after', fs.root).ok, 'the entry after the big one');
    // what remains resident: the unpacked archive until it is collected, not a second copy in the file's pages
    assert.ok(grown < size + 128 * MiB, `resident memory grew by ${Math.round(grown / MiB)} MiB`);

    const huge = Buffer.concat([gzipSync(fileHeader('zeros', 0x7fffffff)), zeroMembers(64, 17)]);
    assert.throws(() => populateFromCpio(new Vfs(), huge, 'huge.cpio.gz'), (e: unknown) => e instanceof RootfsError
      && e.message === 'initramfs huge.cpio.gz: unpacks to more than 1024 MiB, the machine\'s memory (1024 MiB RAM)');
  });
});
