/**
 * The sample kernel's lib/ helpers (examples/kernel/lib/: Linux's string,
 * kstrtox, bitmap/find_bit, sort/list_sort/bsearch, rbtree, math, crc,
 * llist/plist, uuid/ucs2/seq_buf/kfifo, siphash/xxhash, parser, extable/
 * timerqueue helpers, under Linux's names) are checked by the kernel itself
 * at the end of every boot (lib/test_lib.c, as Linux's lib/test_*.c
 * modules check theirs): each CHECK compares a helper's result with the
 * value Linux's kernel-doc or the algorithm's published check value gives
 * (CRC catalogue values over "123456789", SipHash-2-4's reference vectors,
 * xxHash's values for "" and "abc", kstrto*'s -ERANGE/-EINVAL rules...),
 * and a failing one prints its line. Here, on each arch, every CHECK of
 * the source ran and none failed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';

const SOURCE = repoPath('examples', 'kernel', 'lib', 'test_lib.c');

for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
  test(`${arch}: lib_selftest runs every CHECK of lib/test_lib.c and none fails`, () => {
    const checks = readFileSync(SOURCE, 'utf8').split('\n').filter(l => /^\tCHECK\(/.test(l)).length;
    assert.ok(checks > 150, `${checks} CHECKs in the source`);
    const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`)));
    m.run();
    const lines = m.printkRecords.map(r => r.text).filter(t => t.startsWith('lib_selftest:'));
    assert.deepEqual(lines, [`lib_selftest: ${checks} checks, 0 failed`]);
  });
}
