/**
 * The one guest-write path: write observers on a Memory see every write
 * (CPU stores, copy_to_user, the kprobes engine's native pt_regs frames,
 * the loader, textPoke) with its source, after it happened, and never a
 * read or an instruction fetch.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Memory, PERM_R, PERM_U, PERM_W, PERM_X } from '../../../emulator/memory/memory';
import { Backing } from '../../../emulator/memory/backing';
import { textPoke } from '../../../emulator/memory/textPoke';
import { HARDWARE_VISIBLE, WriteSource } from '../../../emulator/memory/writeSource';
import { copyFromUser, copyToUser } from '../../../emulator/kernel/user/uaccess';
import { mapImage } from '../../../emulator/kernel/imageLoader';
import { loadElf } from '../../../emulator/elf/elfFile';
import { x86_64 } from '../../../emulator/arch/x86_64/index';
import { X86Cpu } from '../../../emulator/arch/x86_64/cpu';
import { nativeEnter, nativeLeave, PT_SLOT } from '../../../emulator/arch/x86_64/kprobes/nativeFrame';
import { regIndex } from '../../../emulator/arch/types';
import { repoPath } from '../../util/paths';

interface Seen { addr: number; len: number; source: WriteSource }

/** Record the writes to `mem`. */
function watch(mem: Memory): Seen[] {
  const seen: Seen[] = [];
  mem.addWriteObserver((addr, len, source) => seen.push({ addr, len, source }));
  return seen;
}

const CODE = 0x400000, DATA = 0x600000, STACK_TOP = 0x800000;

function space(user = false): Memory {
  const u = user ? PERM_U : 0;
  const m = new Memory('t');
  m.map(CODE, 0x1000, PERM_R | PERM_X | u, 'text');
  m.map(DATA, 0x1000, PERM_R | PERM_W | u, 'data');
  m.map(STACK_TOP - 0x1000, 0x1000, PERM_R | PERM_W | u, 'stack');
  return m;
}

function x86(mem: Memory): X86Cpu {
  const c = x86_64.createCpu(0, mem);
  assert.ok(c instanceof X86Cpu);
  return c;
}

describe('write observers', () => {
  test('see CPU stores (mov, push) with address, length and source, and neither loads nor fetches', () => {
    const m = space();
    // mov eax,[rbx] ; mov [rbx+8],eax ; mov [rbx+16],rax ; mov byte [rbx+3],al ; push rax ; hlt
    m.writeBytes(CODE, Uint8Array.of(0x8b, 0x03, 0x89, 0x43, 0x08, 0x48, 0x89, 0x43, 0x10, 0x88, 0x43, 0x03, 0x50, 0xf4), 'loader');
    const seen = watch(m);
    const cpu = x86(m);
    cpu.setReg(regIndex(x86_64, 'bx'), BigInt(DATA));
    cpu.setReg(regIndex(x86_64, 'sp'), BigInt(STACK_TOP));
    cpu.setPc(BigInt(CODE));
    assert.equal(cpu.run(20).trap?.kind, 'halt');
    // a 64-bit store is one 8-byte write (write64Halves: the debug registers see one access)
    assert.deepEqual(seen.map(s => [s.addr - (s.addr >= STACK_TOP - 0x1000 ? STACK_TOP : DATA), s.len, s.source]), [
      [8, 4, 'cpu'], // mov [rbx+8],eax
      [16, 8, 'cpu'], // mov [rbx+16],rax
      [3, 1, 'cpu'], // mov [rbx+3],al
      [-8, 8, 'cpu'], // push rax
    ]);
  });

  test('write64Halves: one 8-byte write; across a region end the high half first, and a fault changes nothing', () => {
    const m = space();
    const seen = watch(m);
    m.write64Halves(DATA + 8, 0x55667788, 0x11223344);
    assert.equal(m.read64(DATA + 8), 0x1122334455667788n);
    assert.deepEqual(seen, [{ addr: DATA + 8, len: 8, source: 'cpu' }]);
    seen.length = 0;
    assert.throws(() => m.write64Halves(DATA + 0xffc, 1, 2), /unmapped write at 0x601000/);
    assert.equal(m.read32(DATA + 0xffc), 0);
    m.map(DATA + 0x1000, 0x1000, PERM_R | PERM_W, 'data2');
    m.write64Halves(DATA + 0xffc, -1, 0x7f);
    assert.deepEqual([...m.readBytes(DATA + 0xffc, 8)], [0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0]);
    assert.deepEqual(seen, [{ addr: DATA + 0x1000, len: 4, source: 'cpu' }, { addr: DATA + 0xffc, len: 4, source: 'cpu' }]);
  });

  test('are told after the write: the observer reads the new value', () => {
    const m = space();
    const got: number[] = [];
    m.addWriteObserver(addr => got.push(m.read32(addr)));
    m.write32(DATA + 4, 0xcafef00d);
    assert.deepEqual(got, [0xcafef00d]);
  });

  test('stop when removed; reads, fetches, readBytes and copy_from_user are never reported', () => {
    const m = space(true);
    const seen: Seen[] = [];
    const stop = m.addWriteObserver((addr, len, source) => seen.push({ addr, len, source }));
    m.read8(DATA); m.read16(DATA); m.read32(DATA); m.read64(DATA); m.fetch8(CODE);
    m.readBytes(DATA, 16); m.readCString(DATA);
    assert.ok(copyFromUser(m, BigInt(DATA), 8));
    assert.deepEqual(seen, []);
    m.write8(DATA, 1);
    stop();
    m.write8(DATA, 2);
    m.writeBytes(DATA, Uint8Array.of(3));
    assert.deepEqual(seen, [{ addr: DATA, len: 1, source: 'cpu' }]);
  });

  test("see copy_to_user as 'uaccess' (hardware would), and not a refused one", () => {
    const m = space(true);
    const seen = watch(m);
    assert.equal(copyToUser(m, BigInt(DATA + 0x10), Uint8Array.of(1, 2, 3, 4, 5)), true);
    assert.equal(copyToUser(m, BigInt(CODE), Uint8Array.of(1)), false, 'text is not writable');
    assert.equal(copyToUser(m, BigInt(DATA + 0xffe), Uint8Array.of(1, 2, 3, 4)), false, 'runs off the mapping');
    assert.deepEqual(seen, [{ addr: DATA + 0x10, len: 5, source: 'uaccess' }]);
    assert.equal(HARDWARE_VISIBLE.uaccess, true);
  });

  test('writeBytes writes nothing (and reports nothing) when part of the range is unmapped', () => {
    const m = space();
    const seen = watch(m);
    assert.throws(() => m.writeBytes(DATA + 0xffc, Uint8Array.of(9, 9, 9, 9, 9, 9, 9, 9)), /unmapped write at 0x601000/);
    assert.deepEqual([...m.readBytes(DATA + 0xffc, 4)], [0, 0, 0, 0]);
    assert.deepEqual(seen, []);
  });

  test("see the kprobes engine's native pt_regs frame as 'engine' writes, and only the slots it writes", () => {
    const m = space();
    const cpu = x86(m);
    const SP0 = STACK_TOP - 0x100;
    for (let r = 0; r < 16; r++) { cpu.lo[r] = 0x1000 + r; cpu.hi[r] = 0x77; }
    cpu.setRegAddr(4, SP0);
    cpu.rip = CODE + 1; // just past the native entry's int3
    const seen = watch(m);
    const f = nativeEnter(cpu, CODE + 0x80, 'kretprobe');
    assert.ok(f, 'the frame is written natively');
    const frame = SP0 - 20 * 8;
    assert.deepEqual(seen, [{ addr: frame, len: 20 * 8, source: 'engine' }]);
    // the bytes are the template's pushes: r15 in slot 0, rdi (GPR 7) in its slot, sp = sp0
    assert.equal(m.read64(frame), 0x77_0000100fn);
    assert.equal(m.read64(frame + PT_SLOT.di * 8), 0x77_00001007n);
    assert.equal(m.read64(frame + PT_SLOT.sp * 8), BigInt(SP0));
    seen.length = 0;
    cpu.lo[7] = 0x4242; // a handler changed rdi
    nativeLeave(f, CODE + 0x90, 0x401234, 0, CODE + 0x20); // the return address as its 32-bit halves
    assert.deepEqual(seen, [
      { addr: frame, len: 15 * 8, source: 'engine' }, // the GPR slots
      { addr: frame + PT_SLOT.flags * 8, len: 8, source: 'engine' },
      { addr: frame + PT_SLOT.sp * 8, len: 8, source: 'engine' }, // the return address into the sp slot
    ]);
    assert.equal(m.read64(frame + PT_SLOT.di * 8), 0x77_00004242n);
    assert.equal(m.read64(frame + PT_SLOT.sp * 8), 0x401234n);
    assert.equal(HARDWARE_VISIBLE.engine, true);
  });

  test("see the loader as 'loader' and textPoke as 'textPoke' (writes hardware watchpoints would not see)", () => {
    const img = loadElf(repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf'));
    const m = new Memory('kernel');
    const seen = watch(m);
    const loaded = mapImage(m, img, false);
    assert.ok(seen.length > 0);
    assert.ok(seen.every(s => s.source === 'loader'));
    assert.equal(seen.length, loaded.regions.length - img.segments.filter(s => s.type === 1 && s.filesz === 0n && s.memsz > 0n).length);
    seen.length = 0;
    const text = loaded.regions.find(r => r.perms & PERM_X)!;
    textPoke(m, text.base, Uint8Array.of(0xcc));
    assert.deepEqual(seen, [{ addr: text.base, len: 1, source: 'textPoke' }]);
    assert.equal(HARDWARE_VISIBLE.loader, false);
    assert.equal(HARDWARE_VISIBLE.textPoke, false);
  });

  test('are per address space: a store through another mapping of a shared page is not reported here', () => {
    const page = Backing.anonymous(0x1000);
    const a = new Memory('a'), b = new Memory('b');
    a.mapBacking(DATA, 0x1000, PERM_R | PERM_W, 'shared', page, 0);
    b.mapBacking(0x900000, 0x1000, PERM_R | PERM_W, 'shared', page, 0);
    const seenA = watch(a), seenB = watch(b);
    b.write32(0x900010, 5);
    assert.deepEqual(seenA, []);
    assert.deepEqual(seenB, [{ addr: 0x900010, len: 4, source: 'cpu' }]);
    assert.equal(a.read32(DATA + 0x10), 5);
  });
});
