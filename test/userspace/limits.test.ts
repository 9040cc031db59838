/**
 * User memory and signal masks at the edges (programs/limits.c, built by
 * test/userspace/build.sh into bin/edge for x86_64, aarch64 and riscv64):
 *
 *   fork of a 1 GiB anonymous mapping and of a 512 MiB heap, each written
 *   in two pages: the child sees the parent's pages, each side keeps its
 *   own later writes, and the host copies only the written pages (the
 *   kernel's count of bytes fork copied, and the test process's resident
 *   memory, stay far below the mapped size);
 *   mmap / brk / mprotect to writable beyond the machine's RAM (1 GiB,
 *   what sysinfo reports): -ENOMEM / the break unchanged, not an internal
 *   error;
 *   rt_sigsuspend / rt_sigprocmask / rt_sigaction with a sigsetsize other
 *   than 8: -EINVAL at once.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';

const BIN = repoPath('test', 'userspace', 'bin', 'edge');
const MiB = 1 << 20;

const EXPECTED = [
  'mmap 1 GiB ok 1',
  'mmap 1 GiB: child saw the parent\'s pages, exit 7',
  'mmap 1 GiB: parent kept its own pages 1',
  'brk +512 MiB 1',
  'brk 512 MiB: child saw the parent\'s pages, exit 7',
  'brk 512 MiB: parent kept its own pages 1',
  'mmap 5000 MiB -12',
  'mmap 2 GiB -12',
  'mmap shared 2 GiB -12',
  'mmap 16 GiB -12',
  'mmap PROT_NONE 2 GiB ok 1',
  'mprotect it writable -12',
  'mprotect 1 MiB of it writable 0',
  'brk +4 GiB unchanged 1',
  'brk +5000 MiB unchanged 1',
  'rt_sigsuspend size 4 -22',
  'rt_sigsuspend size 16 -22',
  'rt_sigprocmask size 4 -22',
  'rt_sigaction size 0 -22',
  'done',
  '',
].join('\n');

describe('user memory and signal masks at the edges', () => {
  for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
    test(`${arch}: fork copies only written pages, too much memory is -ENOMEM, a wrong sigsetsize is -EINVAL`, () => {
      const path = join(BIN, `limits-${arch}.elf`);
      let out = '', err = '';
      const m = Machine.forUserProgram(loadElf(path), [path], {
        stdout: b => { out += Buffer.from(b).toString(); },
        stderr: b => { err += Buffer.from(b).toString(); },
      }, { cpus: 2 });
      const rss = process.memoryUsage().rss;
      const exit = m.run();
      const grown = process.memoryUsage().rss - rss;
      assert.equal(err, '', 'nothing on stderr');
      assert.equal(out, EXPECTED);
      assert.equal(exit.code, 0);
      // the two forks wrote 4 pages each in 1.5 GiB; what else fork copied is the program's data and live stack
      const copied = m.kernel.forkCopiedBytes;
      assert.ok(copied > 0 && copied < 1 * MiB, `fork copied ${copied} bytes`);
      assert.ok(grown < 256 * MiB, `host resident memory grew by ${Math.round(grown / MiB)} MiB for 1.5 GiB forked`);
    });
  }
});
