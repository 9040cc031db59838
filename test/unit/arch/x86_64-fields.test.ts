/**
 * x86_64 decoder field layout (InsnLayout): where prefixes, REX, VEX,
 * opcode, ModRM, SIB, displacement and immediate lie in the instruction's
 * bytes, for a spread of encodings, and that the fields tile every golden
 * instruction exactly.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { repoPath } from '../../util/paths';
import { decodeBytes } from '../../../emulator/arch/x86_64/decoder';
import { mnemonicOf } from '../../../emulator/arch/x86_64/disasm';
import type { InsnLayout } from '../../../emulator/arch/x86_64/insn';
import { hexBytes } from '../../fixtures/x86/harness';
import { mustVAddr } from '../../../emulator/memory/address';

const AT = 0xffffffff81000000n;

type Want = Partial<InsnLayout> & { mnem: string };

const NONE = {
  rexOff: -1, vexOff: -1, vexLen: 0, modrmOff: -1, sibOff: -1, dispOff: -1, dispLen: 0, immOff: -1, immLen: 0, ripRel: false,
};

const cases: [string, string, Want][] = [
  ['lock + REX.W, two-byte opcode', 'f0 48 0f b1 0e',
    { ...NONE, mnem: 'lock cmpxchg', prefixLen: 2, rexOff: 1, opcodeOff: 2, opcodeLen: 2, modrmOff: 4 }],
  ['gs: + REX.W, SIB without base (disp32 absolute)', '65 48 8b 04 25 28 00 00 00',
    { ...NONE, mnem: 'mov', prefixLen: 2, rexOff: 1, opcodeOff: 2, opcodeLen: 1, modrmOff: 3, sibOff: 4, dispOff: 5, dispLen: 4 }],
  ['REX followed by a legacy prefix is not in effect', '48 66 89 c8',
    { ...NONE, mnem: 'mov', prefixLen: 2, opcodeOff: 2, opcodeLen: 1, modrmOff: 3 }],
  ['SIB without base, index*4', '8b 04 8d 00 10 00 00',
    { ...NONE, mnem: 'mov', prefixLen: 0, opcodeOff: 0, opcodeLen: 1, modrmOff: 1, sibOff: 2, dispOff: 3, dispLen: 4 }],
  ['SIB with base and disp8', '48 8b 44 24 08',
    { ...NONE, mnem: 'mov', prefixLen: 1, rexOff: 0, opcodeOff: 1, opcodeLen: 1, modrmOff: 2, sibOff: 3, dispOff: 4, dispLen: 1 }],
  ['disp8 off a base', '48 8b 45 f8',
    { ...NONE, mnem: 'mov', prefixLen: 1, rexOff: 0, opcodeOff: 1, opcodeLen: 1, modrmOff: 2, dispOff: 3, dispLen: 1 }],
  ['rip-relative load', '48 8b 05 10 00 00 00',
    { ...NONE, mnem: 'mov', prefixLen: 1, rexOff: 0, opcodeOff: 1, opcodeLen: 1, modrmOff: 2, dispOff: 3, dispLen: 4, ripRel: true }],
  ['rip-relative store of an imm32', '48 c7 05 10 00 00 00 2a 00 00 00',
    {
      ...NONE, mnem: 'mov', prefixLen: 1, rexOff: 0, opcodeOff: 1, opcodeLen: 1, modrmOff: 2, dispOff: 3, dispLen: 4,
      immOff: 7, immLen: 4, ripRel: true,
    }],
  ['imm64 mov (movabs)', '48 b8 88 77 66 55 44 33 22 11',
    { ...NONE, mnem: 'movabs', prefixLen: 1, rexOff: 0, opcodeOff: 1, opcodeLen: 1, immOff: 2, immLen: 8 }],
  ['operand-size prefix, imm16', '66 c7 00 34 12',
    { ...NONE, mnem: 'mov', prefixLen: 1, opcodeOff: 1, opcodeLen: 1, modrmOff: 2, immOff: 3, immLen: 2 }],
  ['VEX3, map 0f38 (andn)', 'c4 e2 78 f2 c1',
    { ...NONE, mnem: 'andn', prefixLen: 0, vexOff: 0, vexLen: 3, opcodeOff: 3, opcodeLen: 1, modrmOff: 4 }],
  ['VEX3, map 0f3a with imm8 (rorx)', 'c4 e3 fb f0 c1 05',
    { ...NONE, mnem: 'rorx', prefixLen: 0, vexOff: 0, vexLen: 3, opcodeOff: 3, opcodeLen: 1, modrmOff: 4, immOff: 5, immLen: 1 }],
  ['mandatory f3 prefix (popcnt)', 'f3 48 0f b8 c1',
    { ...NONE, mnem: 'popcnt', prefixLen: 2, rexOff: 1, opcodeOff: 2, opcodeLen: 2, modrmOff: 4 }],
  ['jcc rel8', '74 10', { ...NONE, mnem: 'je', prefixLen: 0, opcodeOff: 0, opcodeLen: 1, immOff: 1, immLen: 1 }],
  ['jcc rel32', '0f 85 00 01 00 00', { ...NONE, mnem: 'jne', prefixLen: 0, opcodeOff: 0, opcodeLen: 2, immOff: 2, immLen: 4 }],
  ['call rel32', 'e8 fb 0f 00 00', { ...NONE, mnem: 'call', prefixLen: 0, opcodeOff: 0, opcodeLen: 1, immOff: 1, immLen: 4 }],
  ['enter: two immediates', 'c8 10 00 01', { ...NONE, mnem: 'enter', prefixLen: 0, opcodeOff: 0, opcodeLen: 1, immOff: 1, immLen: 3 }],
  ['no operands', 'c3', { ...NONE, mnem: 'ret', prefixLen: 0, opcodeOff: 0, opcodeLen: 1 }],
  ['indirect jmp through a table (SIB, no base)', 'ff 24 c5 00 10 00 81',
    { ...NONE, mnem: 'jmp', prefixLen: 0, opcodeOff: 0, opcodeLen: 1, modrmOff: 1, sibOff: 2, dispOff: 3, dispLen: 4 }],
];

describe('x86 decoder: field offsets', () => {
  for (const [name, hb, want] of cases) {
    test(`${name}: ${hb}`, () => {
      const bytes = hexBytes(hb);
      const i = decodeBytes(bytes, mustVAddr(AT));
      assert.ok(i, 'decodes');
      assert.equal(i.len, bytes.length);
      assert.equal(mnemonicOf(i), want.mnem);
      const { mnem: _m, ...fields } = want;
      const got: Record<string, unknown> = {};
      for (const k of Object.keys(fields)) got[k] = i.layout[k as keyof InsnLayout];
      assert.deepEqual(got, fields);
    });
  }

  test('the rip-relative displacement at dispOff is the raw disp32; Insn.disp is the absolute operand address', () => {
    const i = decodeBytes(hexBytes('48 8b 05 10 00 00 00'), mustVAddr(AT));
    assert.ok(i);
    const dv = new DataView(i.bytes.buffer);
    assert.equal(dv.getInt32(i.layout.dispOff, true), 0x10);
    assert.equal(i.disp, i.next + 0x10);
  });

  test('legacy 0f 38 / 0f 3a maps have no entries: undecodable, not mis-sized', () => {
    assert.equal(decodeBytes(hexBytes('0f 38 f0 06'), mustVAddr(AT)), null, 'movbe is not in the table');
  });

  test('bytes running past the buffer give null', () => {
    assert.equal(decodeBytes(hexBytes('48 c7 05 10 00 00'), mustVAddr(AT)), null);
  });

  test('in every golden instruction the fields tile the bytes in order, with nothing left over', () => {
    const dir = repoPath('test/fixtures/x86/disasm');
    const failures: string[] = [];
    let count = 0;
    for (const f of readdirSync(dir).filter(n => n.endsWith('.txt'))) {
      for (const line of readFileSync(`${dir}/${f}`, 'utf8').split('\n')) {
        if (!line) continue;
        const [a, hb] = line.split('\t');
        const i = decodeBytes(hexBytes(hb), mustVAddr(BigInt('0x' + a)));
        if (!i) continue;
        count++;
        const l = i.layout;
        const parts: [number, number][] = [[0, l.prefixLen], [l.vexOff, l.vexLen], [l.opcodeOff, l.opcodeLen],
          [l.modrmOff, l.modrmOff >= 0 ? 1 : 0], [l.sibOff, l.sibOff >= 0 ? 1 : 0], [l.dispOff, l.dispLen], [l.immOff, l.immLen]];
        let pos = 0;
        let ok = true;
        for (const [off, len] of parts) {
          if (len === 0) { if (off > 0) ok = false; continue; }
          if (off !== pos) ok = false;
          pos = off + len;
        }
        if (pos !== i.len) ok = false;
        if (l.rexOff >= 0 && (l.rexOff >= l.prefixLen || (i.bytes[l.rexOff] & 0xf0) !== 0x40)) ok = false;
        if (!ok && failures.length < 10) failures.push(`${f} ${a}: ${hb} ${JSON.stringify(l)}`);
      }
    }
    assert.ok(count > 10000, `${count} instructions`);
    assert.deepEqual(failures, []);
  });
});
