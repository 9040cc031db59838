/**
 * Call frame programs built by hand for what compilers rarely emit:
 * remember/restore_state, restore, def_cfa_sf, val_offset, register,
 * same_value, undefined, CFA expressions (rejected by the unwinder, not the
 * parser), an unsupported opcode, .eh_frame pc-relative addresses, and
 * malformed sections (ImageError naming the entry).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ImageError } from '../../../emulator/elf/types';
import { CfiUnwinder, formatRow, parseFrameSection, unwindRows } from '../../../emulator/unwind';
import type { FrameSectionKind } from '../../../emulator/unwind';
import { dwarfRegNames } from '../../fixtures/elf/frameGoldens';

const name = dwarfRegNames('elf64-x86-64');
const u32 = (v: number): number[] => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
const u64 = (v: bigint): number[] => Array.from({ length: 8 }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn));
/** a length-prefixed entry */
const entry = (body: number[]): number[] => [...u32(body.length), ...body];
const BASE = 0xffffffff81000000n;

function debugFrame(fdePrograms: number[][]): Uint8Array {
  const cie = entry([...u32(0xffffffff), 4, 0, 8, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1]);
  const out = [...cie];
  fdePrograms.forEach((p, i) => out.push(...entry([...u32(0), ...u64(BASE + BigInt(i) * 0x100n), ...u64(0x100n), ...p])));
  return Uint8Array.from(out);
}

const opts = (kind: FrameSectionKind, sectionAddr = 0n) => ({ kind, little: true, addressSize: 8, sectionAddr, file: 'k.elf' });

describe('CFA programs', () => {
  const prog = [
    0x41, 0x0e, 16, 0x86, 2, // +1: def_cfa_offset 16; offset rbp at CFA-16
    0x41, 0x0a, 0x12, 7, 0x7c, 0x14, 3, 3, 0x09, 12, 13, 0x08, 14, 0x07, 15, // +1: remember; def_cfa_sf rsp 32; val_offset rbx; r12 in r13; same r14; undefined r15
    0x41, 0x0b, 0xc6, // +1: restore_state; restore rbp
    0x41, 0x0f, 2, 0x77, 8, // +1: def_cfa_expression (DW_OP_breg7 8)
  ];
  const sec = parseFrameSection(debugFrame([prog, [0x41, 0x2d]]), opts('.debug_frame'));
  const fde = sec.fdes[0];

  test('rows: remember/restore_state, restore, def_cfa_sf, val_offset, register, same_value, undefined, CFA expression', () => {
    assert.deepEqual(unwindRows(fde, true).map((r) => `${r.loc - BASE}: ${formatRow(r, name)}`), [
      '0: CFA=RSP+8: RIP=[CFA-8]',
      '1: CFA=RSP+16: RBP=[CFA-16], RIP=[CFA-8]',
      '2: CFA=RSP+32: RBX=CFA-24, RBP=[CFA-16], R12=R13, R14=same, R15=undefined, RIP=[CFA-8]',
      '3: CFA=RSP+16: RIP=[CFA-8]',
      '4: CFA=<expression>: RIP=[CFA-8]',
    ]);
  });

  test('one unwind step applies every rule; an expression CFA and an unknown opcode fail the step with a reason', () => {
    const un = new CfiUnwinder([sec], true, 8);
    const sp = 0xffffc90000001000n;
    const mem = new Map<bigint, bigint>([[sp + 24n, BASE + 0x555n]]);
    const regs = new Map<number, bigint>([[7, sp], [3, 1n], [12, 2n], [13, 3n], [14, 4n], [15, 5n], [6, 6n]]);
    const s = un.step(BASE + 2n, regs, (a) => mem.get(a), 7);
    assert.equal(s.kind, 'ok');
    if (s.kind !== 'ok') return;
    assert.equal(s.cfa, sp + 32n);
    assert.equal(s.ra, BASE + 0x555n);
    assert.equal(s.regs.get(7), sp + 32n, 'caller sp = CFA');
    assert.equal(s.regs.get(3), sp + 8n, 'val_offset');
    assert.equal(s.regs.get(12), 3n, 'register rule');
    assert.equal(s.regs.get(14), 4n, 'same value');
    assert.equal(s.regs.has(15), false, 'undefined');
    assert.equal(s.regs.get(6), undefined, 'RBP=[CFA-16] unreadable: dropped');
    const x = un.step(BASE + 4n, regs, (a) => mem.get(a), 7);
    assert.deepEqual(x.kind === 'failed' ? x.reason : x.kind, 'the CFA is a DWARF expression (not supported)');
    const bad = un.step(BASE + 0x100n, regs, (a) => mem.get(a), 7);
    assert.equal(bad.kind, 'failed');
    assert.match(bad.kind === 'failed' ? bad.reason : '', /unsupported call frame instruction 0x2d/);
    assert.equal(un.step(BASE + 0x1000n, regs, (a) => mem.get(a), 7).kind, 'noFde');
  });

  test('.eh_frame: zR augmentation, pc-relative sdata4 addresses, self-relative CIE pointer, terminator', () => {
    const addr = 0xffffffff81001010n;
    const cie = entry([...u32(0), 1, 0x7a, 0x52, 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1]);
    const fdeAt = cie.length;
    // pc_begin field sits at fdeAt + 8; it holds target - (addr + fdeAt + 8)
    const rel = Number(BASE - (addr + BigInt(fdeAt + 8)));
    const fde = entry([...u32(fdeAt + 4), ...u32(rel >>> 0), ...u32(0x40), 0, 0x44, 0x0e, 64]);
    const s = parseFrameSection(Uint8Array.from([...cie, ...fde, 0, 0, 0, 0]), opts('.eh_frame', addr));
    assert.equal(s.fdes.length, 1);
    assert.deepEqual([s.fdes[0].pcBegin, s.fdes[0].pcEnd, s.fdes[0].cie.augmentation], [BASE, BASE + 0x40n, 'zR']);
    assert.deepEqual(unwindRows(s.fdes[0], true).map((r) => formatRow(r, name)), ['CFA=RSP+8: RIP=[CFA-8]', 'CFA=RSP+64: RIP=[CFA-8]']);
  });

  test('malformed sections: ImageError naming the section and entry offset', () => {
    const good = debugFrame([[0x41]]);
    const cut = good.slice(0, good.length - 3);
    assert.throws(() => parseFrameSection(cut, opts('.debug_frame')), (e: unknown) =>
      e instanceof ImageError && /^k\.elf: malformed \.debug_frame entry at offset 0x14: length \d+ runs past the end/.test(e.message));
    const v9 = good.slice(); v9[8] = 9;
    assert.throws(() => parseFrameSection(v9, opts('.debug_frame')), /malformed \.debug_frame entry at offset 0x0: unsupported CIE version 9/);
    const badPtr = good.slice(); badPtr[0x14 + 4] = 0x40;
    assert.throws(() => parseFrameSection(badPtr, opts('.debug_frame')), /entry at offset 0x14: CIE pointer 0x40 outside the section/);
  });
});
