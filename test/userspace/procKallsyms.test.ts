/**
 * /proc/kallsyms leaves out the symbols Linux's scripts/kallsyms.c
 * (is_ignored_symbol) never puts in the kernel's table: the ARM and RISC-V
 * mapping symbols ("$x", "$d", "$x.0"...) and local labels (".L..."). Linux's
 * ftrace selftest probepoint.tc takes the symbols either side of a function
 * from `grep -A1 -B1 FUNC /proc/kallsyms`: a mapping symbol at the function's
 * own address would make its "previous symbol" the function itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { openPseudo } from '../../emulator/kernel/fs/pseudo';
import { repoPath } from '../util/paths';

for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
  test(`${arch}: /proc/kallsyms has no mapping symbols or local labels; every function of the image is listed, one name per address around tracefs_create_dir`, () => {
    const image = loadElf(repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`));
    const m = new Machine(image);
    const r = m.kernel.fs.lookup('/proc/kallsyms', m.kernel.fs.root);
    assert.ok(r.ok && r.inode.pseudo);
    const dev = openPseudo(r.inode.pseudo, 0);
    assert.ok(typeof dev !== 'number');
    const lines = new TextDecoder().decode(dev.read(1 << 24) as Uint8Array).split('\n').slice(0, -1);
    const names = lines.map(l => l.split(' ')[2]);
    assert.deepEqual(names.filter(n => n.startsWith('$') || n.startsWith('.L')), []);
    for (const s of image.symbols.all()) {
      if (s.type === 'func' && !s.name.startsWith('$') && !s.name.startsWith('.L')) assert.ok(names.includes(s.name), `${arch}: ${s.name} is listed`);
    }
    const at = names.indexOf('tracefs_create_dir');
    assert.ok(at > 0, `${arch}: tracefs_create_dir is listed`);
    const addr = (i: number): string => lines[i].split(' ')[0];
    assert.ok(addr(at - 1) < addr(at) && addr(at) < addr(at + 1), lines.slice(at - 1, at + 2).join('\n'));
  });
}
