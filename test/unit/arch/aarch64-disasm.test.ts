/**
 * aarch64 disassembler against llvm-objdump: every distinct instruction of
 * the aarch64 sample kernel and the aarch64 differential programs
 * (test/fixtures/a64/objdump-golden.txt, made by make-disasm-golden.sh).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { repoPath } from '../../util/paths';
import { aarch64 } from '../../../emulator/arch/aarch64/index';

const norm = (s: string): string => s.replace(/\s+/g, ' ').trim();

describe('aarch64 disassembly goldens (llvm-objdump)', () => {
  const lines = readFileSync(repoPath('test/fixtures/a64/objdump-golden.txt'), 'utf8').split('\n').filter(l => l !== '');
  test('the golden covers the kernel and the programs', () => {
    assert.ok(lines.length > 10000, `only ${lines.length} lines`);
  });
  test('every instruction disassembles as llvm-objdump prints it', () => {
    const bad: string[] = [];
    for (const line of lines) {
      const m = /^([0-9a-f]+) ([0-9a-f]{8})\t(.*)$/.exec(line);
      assert.ok(m, `malformed golden line: ${line}`);
      const addr = BigInt('0x' + m[1]), w = parseInt(m[2], 16);
      const bytes = Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24);
      const d = aarch64.decodeBytes(bytes, addr);
      const got = d ? norm(`${d.mnemonic} ${d.operands}`) : '<undecodable>';
      const want = norm(m[3].replace('\t', ' '));
      if (got !== want) bad.push(`${m[1]} ${m[2]}: got "${got}", want "${want}"`);
    }
    assert.deepEqual(bad.slice(0, 40), [], `${bad.length} of ${lines.length} differ`);
  });
  test('instructions assembled by llvm-mc (LSE, exclusive pairs, system registers, aliases) print back the same', () => {
    const mc = readFileSync(repoPath('test/fixtures/a64/llvm-mc-golden.txt'), 'utf8').split('\n').filter(l => l !== '');
    assert.ok(mc.length >= 80, `only ${mc.length} lines`);
    const bad: string[] = [];
    for (const line of mc) {
      const parts = line.split('\t');
      const w = parseInt(parts.pop() ?? '', 16);
      const want = norm(parts.join(' '));
      const d = aarch64.decodeBytes(Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24), 0x400000n);
      const got = d ? norm(`${d.mnemonic} ${d.operands}`) : '<undecodable>';
      if (got !== want) bad.push(`${w.toString(16)}: got "${got}", want "${want}"`);
    }
    assert.deepEqual(bad, []);
  });
  test('flow classification of branches', () => {
    const at = (w: number, a = 0x400000n) => aarch64.decodeBytes(Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24), a);
    assert.equal(at(0x94000002)?.flow, 'call');
    assert.equal(at(0x94000002)?.target, 0x400008n);
    assert.equal(at(0x17ffffff)?.flow, 'jump');
    assert.equal(at(0x17ffffff)?.target, 0x3ffffcn);
    assert.equal(at(0xd65f03c0)?.flow, 'ret');
    assert.equal(at(0x54000040)?.flow, 'condJump');
    assert.equal(at(0xd4200080)?.mnemonic, 'brk');
    assert.equal(at(0x00000000), null, 'udf #0 is undefined');
    assert.equal(at(0x94000002, 0x400002n), null, 'misaligned address');
  });
});
