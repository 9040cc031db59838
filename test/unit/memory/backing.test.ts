/**
 * Memory with backing identity: one page frame mapped by several address
 * spaces (Memory instances) at different virtual addresses with their own
 * permissions; code writes and textPoke address the page, so every space
 * that executes it drops its decoded instructions; file-backed regions
 * report (inode, offset).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Memory, MemoryFault, PERM_R, PERM_W, PERM_X } from '../../../emulator/memory/memory';
import { Backing } from '../../../emulator/memory/backing';
import { textPoke } from '../../../emulator/memory/textPoke';
import { x86_64 } from '../../../emulator/arch/x86_64/index';
import { regIndex, Cpu } from '../../../emulator/arch/types';
import { readFileSync } from 'node:fs';
import { mustVAddr } from '../../../emulator/memory/address';
import { mapImage } from '../../../emulator/kernel/imageLoader';
import { loadElf } from '../../../emulator/elf/elfFile';
import { fixture } from '../../fixtures/elf/goldens';

const AX = regIndex(x86_64, 'ax');
const BX = regIndex(x86_64, 'bx');

/** mov eax, imm32 ; hlt */
const MOV_EAX_HLT = (imm: number): Uint8Array => Uint8Array.of(0xb8, imm & 0xff, (imm >> 8) & 0xff, 0, 0, 0xf4);

/** Run `cpu` from `pc` to its hlt; the value of eax. */
function runFrom(cpu: Cpu, pc: number): bigint {
  cpu.setPc(BigInt(pc));
  const r = cpu.run(100);
  assert.equal(r.trap?.kind, 'halt', `halted at 0x${pc.toString(16)}`);
  return cpu.getReg(AX) & 0xffffffffn;
}

/** One anonymous page frame holding `code`, mapped at 0x400000 in space `a` and at `atB` in space `b`. */
function sharedFrame(code: Uint8Array, permsA: number, atB: number, permsB: number): { a: Memory; b: Memory } {
  const frame = Backing.anonymous(0x1000);
  frame.bytes.set(code);
  const a = new Memory('a'), b = new Memory('b');
  a.mapBacking(0x400000, 0x1000, permsA, 'text', frame, 0);
  b.mapBacking(atB, 0x1000, permsB, 'alias', frame, 0);
  return { a, b };
}

describe('shared page frames', () => {
  test('a write through one address space is read through the other, at another address', () => {
    const page = Backing.anonymous(0x1000);
    const a = new Memory('a'), b = new Memory('b');
    a.mapBacking(0x400000, 0x1000, PERM_R | PERM_W, 'shared', page, 0);
    b.mapBacking(0x7f0000000000, 0x1000, PERM_R | PERM_W, 'shared', page, 0);
    a.write32(0x400010, 0xdeadbeef);
    assert.equal(b.read32(0x7f0000000010), 0xdeadbeef);
    b.writeBytes(0x7f0000000020, Uint8Array.of(1, 2, 3));
    assert.deepEqual([...a.readBytes(0x400020, 3)], [1, 2, 3]);
    b.write64(0x7f0000000ff8, 0x1122334455667788n);
    assert.equal(a.read64(0x400ff8), 0x1122334455667788n);
  });

  test('a window maps part of a backing: offsets line up, and a window past the end is refused', () => {
    const obj = Backing.anonymous(0x3000);
    const a = new Memory('a'), b = new Memory('b');
    a.mapBacking(0x400000, 0x3000, PERM_R | PERM_W, 'all', obj, 0);
    b.mapBacking(0x500000, 0x1000, PERM_R, 'middle', obj, 0x1000);
    a.write8(0x401234, 0x5a);
    assert.equal(b.read8(0x500234), 0x5a);
    assert.throws(() => b.mapBacking(0x600000, 0x2000, PERM_R, 'tail', obj, 0x2000),
      /region tail: window \[0x2000, \+0x2000\) is outside its backing \(0x3000 bytes\)/);
  });

  test('permissions are per mapping: one RX and one RW mapping of the same frame', () => {
    const frame = Backing.anonymous(0x1000);
    const a = new Memory('a'), b = new Memory('b');
    a.mapBacking(0x400000, 0x1000, PERM_R | PERM_X, 'text', frame, 0);
    b.mapBacking(0x600000, 0x1000, PERM_R | PERM_W, 'alias', frame, 0);
    assert.throws(() => a.write8(0x400000, 0x90), (e: unknown) => e instanceof MemoryFault && e.present && e.access === 'write');
    assert.throws(() => b.fetch8(0x600000), (e: unknown) => e instanceof MemoryFault && e.present && e.access === 'exec');
    b.write8(0x600000, 0x90);
    assert.equal(a.fetch8(0x400000), 0x90);
    // the RW alias is now also code (through the RX window): its stores notify the RX space only
    assert.equal(b.regionAt(0x600000)!.codeMapped, true);
    const seenA: number[] = [], seenB: number[] = [];
    a.codeWriteListeners.push(addr => seenA.push(addr));
    b.codeWriteListeners.push(addr => seenB.push(addr));
    b.write16(0x600100, 0x1234);
    assert.deepEqual(seenA, [0x400100]);
    assert.deepEqual(seenB, [], 'the RW space executes nothing there');
  });

  test('a code write through one space invalidates the decode caches of both (x86 CPUs)', () => {
    const { a, b } = sharedFrame(MOV_EAX_HLT(1), PERM_R | PERM_X, 0x500000, PERM_R | PERM_X);
    const ca = x86_64.createCpu(0, a), cb = x86_64.createCpu(1, b);
    assert.equal(runFrom(ca, 0x400000), 1n);
    assert.equal(runFrom(cb, 0x500000), 1n); // both caches now hold `mov eax, 1`
    textPoke(a, 0x400001, Uint8Array.of(2));
    assert.equal(runFrom(ca, 0x400000), 2n);
    assert.equal(runFrom(cb, 0x500000), 2n, 'the other address space decoded the patched bytes');
  });

  test('a CPU store into an RW alias invalidates the instruction decoded through the RX mapping', () => {
    const { a: text, b: writer } = sharedFrame(MOV_EAX_HLT(7), PERM_R | PERM_X, 0x600000, PERM_R | PERM_W);
    // the writer's own code: mov byte ptr [rbx], 9 ; hlt
    writer.map(0x800000, 0x1000, PERM_R | PERM_X, 'writer-text');
    writer.writeBytes(0x800000, Uint8Array.of(0xc6, 0x03, 0x09, 0xf4));
    const exec = x86_64.createCpu(0, text), store = x86_64.createCpu(1, writer);
    assert.equal(runFrom(exec, 0x400000), 7n);
    store.setReg(BX, 0x600001n);
    store.setPc(0x800000n);
    assert.equal(store.run(10).trap?.kind, 'halt');
    assert.equal(runFrom(exec, 0x400000), 9n);
  });

  test('codeMeaningChanged: every space executing the bytes is told, as after a write; nothing for bytes no space executes', () => {
    const frame = Backing.anonymous(0x1000);
    const a = new Memory('a'), b = new Memory('b');
    a.mapBacking(0x400000, 0x1000, PERM_R | PERM_X, 'text', frame, 0);
    b.mapBacking(0x500000, 0x1000, PERM_R | PERM_X, 'text', frame, 0);
    a.map(0x600000, 0x1000, PERM_R | PERM_W, 'data');
    const seen: string[] = [];
    a.codeWriteListeners.push((addr, len) => seen.push(`a:${addr.toString(16)}+${len}`));
    b.codeWriteListeners.push((addr, len) => seen.push(`b:${addr.toString(16)}+${len}`));
    const before = Uint8Array.from(a.readBytes(0x400020, 4));
    a.codeMeaningChanged(0x400020, 1);
    assert.deepEqual(seen, ['a:400020+1', 'b:500020+1']);
    assert.deepEqual(a.readBytes(0x400020, 4), before, 'nothing written');
    a.codeMeaningChanged(0x600020, 1);
    a.codeMeaningChanged(0x700000, 1);
    assert.equal(seen.length, 2, 'data and unmapped addresses: nobody is told');
  });

  test('after unmapping, a space is no longer told about writes to the frame', () => {
    const frame = Backing.anonymous(0x1000);
    const a = new Memory('a'), b = new Memory('b');
    a.mapBacking(0x400000, 0x1000, PERM_R | PERM_W | PERM_X, 'text', frame, 0);
    const rb = b.mapBacking(0x500000, 0x1000, PERM_R | PERM_X, 'text', frame, 0);
    const seen: number[] = [];
    b.codeWriteListeners.push(addr => seen.push(addr));
    a.write8(0x400004, 1);
    b.unmap(rb);
    a.write8(0x400008, 1);
    assert.deepEqual(seen, [0x500004]);
    assert.deepEqual(frame.mappings().map(r => r.name), ['text']);
    assert.equal(frame.aliases(0, 0x1000).length, 1);
  });

  test('a region shared by addRegion is one mapping seen from both spaces', () => {
    const a = new Memory('a'), b = new Memory('b');
    const r = a.map(0x400000, 0x1000, PERM_R | PERM_X, 'shared-text');
    b.addRegion(r);
    const seen: string[] = [];
    a.codeWriteListeners.push(addr => seen.push(`a:${addr.toString(16)}`));
    b.codeWriteListeners.push(addr => seen.push(`b:${addr.toString(16)}`));
    textPoke(a, 0x400010, Uint8Array.of(0xcc));
    assert.deepEqual(seen, ['a:400010', 'b:400010']);
    assert.throws(() => b.addRegion(r), /region shared-text .* overlaps shared-text/);
  });
});

describe('file-backed regions', () => {
  const INODE = 4242n;
  /** a "file" of 3 pages; its page cache keeps one Backing per inode */
  function file(): Backing {
    const bytes = new Uint8Array(0x3000);
    bytes.set(MOV_EAX_HLT(3), 0x1010);
    return Backing.file(INODE, '/bin/prog', bytes);
  }

  test('report (inode, offset) for every mapped byte; anonymous memory reports anonymous', () => {
    const f = file();
    const a = new Memory('a');
    a.mapBacking(0x401000, 0x1000, PERM_R | PERM_X, '/bin/prog', f, 0x1000);
    const anon = a.map(0x600000, 0x1000, PERM_R | PERM_W, '[heap]');
    const id = a.identityAt(0x401010);
    assert.deepEqual(id, { kind: 'file', inode: INODE, path: '/bin/prog', offset: 0x1010n });
    const an = a.identityAt(0x600123);
    assert.equal(an?.kind, 'anonymous');
    assert.ok(an?.kind === 'anonymous' && an.backing === anon.backing && an.offset === 0x123);
    assert.equal(a.identityAt(0x900000), undefined);
  });

  test('a file page maps into two processes; (inode, offset) finds every mapping', () => {
    const f = file();
    const p1 = new Memory('p1'), p2 = new Memory('p2');
    p1.mapBacking(0x401000, 0x2000, PERM_R | PERM_X, '/bin/prog', f, 0x1000);
    p2.mapBacking(0x7f1234561000, 0x1000, PERM_R | PERM_X, '/bin/prog', f, 0x1000);
    const found = f.aliases(f.offsetOfFile(0x1010n), 1).map(x => [x.memory.name, x.vaddr]);
    assert.deepEqual(found, [['p1', 0x401010], ['p2', 0x7f1234561010]]);
    assert.deepEqual(f.aliases(f.offsetOfFile(0x2000n), 1).map(x => x.memory.name), ['p1']);
    // from a virtual address of one process: every mapping of those bytes, clipped to the windows
    assert.deepEqual(p1.aliasesOf(0x401ffe, 4).map(x => [x.memory.name, x.vaddr, x.len]),
      [['p1', 0x401ffe, 4], ['p2', 0x7f1234561ffe, 2]]);
    assert.throws(() => f.offsetOfFile(0x3000n), /file offset 0x3000 is outside \/bin\/prog \(inode 4242\)/);
  });

  test('textPoke of a file page is visible in every mapping, and each space hears of it at its own address', () => {
    const f = file();
    const p1 = new Memory('p1'), p2 = new Memory('p2');
    p1.mapBacking(0x401000, 0x1000, PERM_R | PERM_X, '/bin/prog', f, 0x1000);
    p2.mapBacking(0x7f1234561000, 0x1000, PERM_R | PERM_X, '/bin/prog', f, 0x1000);
    const c1 = x86_64.createCpu(0, p1), c2 = x86_64.createCpu(1, p2);
    assert.equal(runFrom(c1, 0x401010), 3n);
    assert.equal(runFrom(c2, 0x7f1234561010), 3n);
    const pokes: string[] = [];
    p1.textPokeListeners.push((addr, old, now) => pokes.push(`p1 ${addr.toString(16)} ${old[0]}->${now[0]}`));
    p2.textPokeListeners.push((addr, old, now) => pokes.push(`p2 ${addr.toString(16)} ${old[0]}->${now[0]}`));
    const old = textPoke(p2, 0x7f1234561011, Uint8Array.of(5));
    assert.deepEqual([...old], [3]);
    assert.deepEqual(pokes, ['p2 7f1234561011 3->5', 'p1 401011 3->5']);
    assert.equal(p1.read8(0x401011), 5);
    assert.equal(runFrom(c1, 0x401010), 5n);
    assert.equal(runFrom(c2, 0x7f1234561010), 5n);
  });

  test('bad file mappings are refused with a message naming them', () => {
    const f = file();
    const a = new Memory('a');
    assert.throws(() => a.mapBacking(0x401800, 0x800, PERM_R, '/bin/prog', f, 0x1000),
      /region \/bin\/prog: \/bin\/prog offset 0x1000 cannot be mapped at 0x401800 \(not congruent modulo the page size\)/);
    assert.throws(() => Backing.file(1n, '/x', new Uint8Array(16), 0x10n), /file backing \/x: offset 0x10 is not page-aligned/);
    assert.throws(() => Backing.anonymous(-1), /anonymous memory: bad size -1/);
    assert.throws(() => a.mapBacking(0x401000, 0x1000, PERM_R, 'frac', f, 0.5), /region frac: bad offset 0.5 in its backing/);
    assert.equal(a.allRegions().length, 0, 'nothing mapped');
  });
});

describe('the image loader with the file\'s pages', () => {
  const path = fixture('x86_64.elf');
  const TEXT = mustVAddr(0xffffffff81000000n), BSS = mustVAddr(0xffffffff81300000n);

  test('read-only segments become windows onto the file (shared, (inode, offset)); writable ones stay private', () => {
    const img = loadElf(path);
    const pages = Backing.file(9n, path, new Uint8Array(readFileSync(path)));
    const a = new Memory('a'), b = new Memory('b');
    mapImage(a, img, false, pages);
    mapImage(b, img, false, pages);
    assert.deepEqual(a.identityAt(TEXT + 4), { kind: 'file', inode: 9n, path, offset: 0x1004n });
    assert.equal(a.identityAt(BSS)?.kind, 'anonymous');
    assert.notEqual(a.regionAt(BSS)!.backing, b.regionAt(BSS)!.backing, 'each space has its own data');
    assert.deepEqual(pages.aliases(pages.offsetOfFile(0x1000n), 1).map(x => x.memory.name), ['a', 'b']);
    textPoke(a, TEXT, Uint8Array.of(0xcc));
    assert.equal(b.read8(TEXT), 0xcc, 'the text page is shared');
    a.write32(BSS, 7);
    assert.equal(b.read32(BSS), 0);
    // without the file's pages: copies, anonymous
    const c = new Memory('c');
    mapImage(c, img, false);
    assert.equal(c.identityAt(TEXT)?.kind, 'anonymous');
    assert.equal(c.read8(TEXT), img.segments.find(s => s.vaddr === 0xffffffff81000000n)!.data[0]);
  });

  test('file pages that do not hold the segment are refused, naming the segment', () => {
    const img = loadElf(path);
    const wrong = Backing.file(9n, path, new Uint8Array(readFileSync(path).length));
    assert.throws(() => mapImage(new Memory('a'), img, false, wrong),
      /PT_LOAD segment 1 at 0x200000: the file pages given \(inode 9\) do not hold the segment's bytes at offset 0x0/);
  });
});
