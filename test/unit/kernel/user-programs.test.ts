/** User programs on the Machine: initial stack, brk, faults as signals, unknown syscalls. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../../emulator/machine';
import { regIndex } from '../../../emulator/arch/types';
import { PERM_U } from '../../../emulator/memory/memory';
import { fixture, image, runUser } from '../../fixtures/kernel/harness';
import { AT_ENTRY, AT_EXECFN, AT_NULL, AT_PAGESZ, AT_PHDR, AT_PHENT, AT_PHNUM, AT_PLATFORM, AT_RANDOM } from '../../../emulator/kernel/user/initialStack';

const PROG = 'test/conformance/bin/exitcode-gcc-O0.elf';
const noIo = { stdout: () => undefined, stderr: () => undefined };

describe('user programs', () => {
  test('the initial stack is Linux-shaped: argc, argv, envp, auxv with AT_PHDR/PHENT/PHNUM/PAGESZ/ENTRY/RANDOM/NULL', () => {
    const img = image(PROG);
    const m = Machine.forUserProgram(img, ['prog', 'a1', 'arg two'], noIo, { env: ['A=1', 'B=two'] });
    const mm = m.kernel.tasks()[0].mm;
    const sp = m.taskRegisters(1)![regIndex(m.arch, 'sp')];
    assert.equal(sp % 16n, 0n);
    const v = (a: bigint): number => Number(BigInt.asIntN(64, a));
    const word = (i: number): bigint => mm.read64(v(sp) + 8 * i);
    const str = (a: bigint): string => mm.readCString(v(a));
    assert.equal(word(0), 3n);
    assert.deepEqual([str(word(1)), str(word(2)), str(word(3))], ['prog', 'a1', 'arg two']);
    assert.equal(word(4), 0n);
    assert.deepEqual([str(word(5)), str(word(6))], ['A=1', 'B=two']);
    assert.equal(word(7), 0n);
    const aux = new Map<number, bigint>();
    let i = 8;
    for (;; i += 2) {
      aux.set(Number(word(i)), word(i + 1));
      if (word(i) === BigInt(AT_NULL)) break;
    }
    assert.equal(aux.get(AT_PAGESZ), 4096n);
    assert.equal(aux.get(AT_ENTRY), img.entry);
    assert.equal(aux.get(AT_PHENT), 56n);
    assert.equal(aux.get(AT_PHNUM), BigInt(img.segments.length));
    const phdr = aux.get(AT_PHDR)!;
    assert.equal(mm.read32(v(phdr)), img.segments[0].type, 'AT_PHDR points at the program headers');
    assert.equal(mm.readBytes(v(aux.get(AT_RANDOM)!), 16).length, 16);
    assert.equal(str(aux.get(AT_PLATFORM)!), 'x86_64');
    assert.equal(str(aux.get(AT_EXECFN)!), img.path);
    const stackRegion = mm.regionAt(v(sp))!;
    assert.ok(stackRegion.perms & PERM_U);
  });

  test('brk starts page-aligned after the highest segment, grows and keeps its contents', () => {
    const img = image(PROG);
    const m = Machine.forUserProgram(img, ['p'], noIo);
    const proc = m.kernel.processes.get(1)!;
    const end = Math.max(...img.segments.filter(s => s.type === 1).map(s => Number(BigInt.asIntN(64, s.vaddr + s.memsz))));
    assert.equal(proc.brk, Math.ceil(end / 4096) * 4096);
    const b0 = proc.brk;
    assert.equal(proc.setBrk(b0 + 100), b0 + 100);
    proc.mm.write8(b0 + 99, 0x5a);
    assert.equal(proc.setBrk(b0 + 3 * 4096 + 1), b0 + 3 * 4096 + 1);
    assert.equal(proc.mm.read8(b0 + 99), 0x5a);
    assert.ok(proc.mm.isMapped(b0 + 3 * 4096, 1));
    assert.ok(!proc.mm.isMapped(b0 + 4 * 4096, 1));
    assert.equal(proc.setBrk(b0 - 1), proc.brk, 'below the start: unchanged');
  });

  test('a NULL store kills the process like SIGSEGV: exit status 139, message on stderr', () => {
    const r = runUser(fixture('user-segv'));
    assert.equal(r.stdout.toString(), 'about to fault\n');
    assert.equal(r.exit.reason, 'poweroff');
    assert.equal(r.exit.code, 139);
    assert.match(r.stderr, /Segmentation fault \(unmapped write at 0x0\) at pc 0x[0-9a-f]+/);
  });

  test('an unknown syscall returns -ENOSYS and is reported once, in the kernel log (the program\'s stderr stays its own)', () => {
    const r = runUser(fixture('user-enosys'));
    assert.equal(r.stdout.toString(), 'enosys: 38\n');
    assert.equal(r.exit.code, 3);
    assert.equal(r.stderr, '');
    const lines = r.machine.printkRecords.map(x => x.text).filter(t => t.includes('unimplemented syscall'));
    assert.equal(lines.length, 1);
    assert.match(lines[0], /\[1\]: unimplemented syscall 999 at pc 0x[0-9a-f]+: returning -ENOSYS$/);
  });

  test('a kernel image is refused as a user program with a clear error', () => {
    assert.throws(() => Machine.forUserProgram(image('examples/kernel/build/kernel-x86_64.elf'), ['x'], noIo),
      /kernel-x86_64.elf: PT_LOAD segment at 0xffffffff81000000 is outside the user address space/);
  });
});
