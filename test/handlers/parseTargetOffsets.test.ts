/**
 * parseTarget reads a `symbol+off` offset through a number when it is short
 * (probeFile.ts smallBigInt): every spelling gives the offset BigInt reads
 * from the same digits, at the length boundaries too, and the 32-bit limit
 * of an offset still holds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTarget } from '../../emulator/handlers';

test('symbol+offset: the offset is BigInt(digits) for decimal, 0x and 0X forms of every length', () => {
  const digits = ['0', '7', '00', '010', '99', '4294967295', '4294967296', '000000000012', '0000000000012', '00000000000000000000019'];
  const hexes = ['0x0', '0X1f', '0xffffffff', '0x100000000', '0x0000000000ff', '0x00000000000ff', '0x0000000000000000000001', '0xFfFf'];
  for (const d of [...digits, ...hexes]) {
    const want = BigInt(d);
    const t = parseTarget(`do_fork+${d}`);
    if (want > 0xffffffffn) { assert.equal(t, undefined, d); continue; }
    assert.deepEqual(t, { kind: 'symbol', name: 'do_fork', offset: want }, d);
  }
  assert.deepEqual(parseTarget('do_fork'), { kind: 'symbol', name: 'do_fork', offset: 0n });
  assert.deepEqual(parseTarget('do_fork+0x10@0xffffffff81000010'), { kind: 'symbol', name: 'do_fork', offset: 16n, addr: 0xffffffff81000010n });
});
