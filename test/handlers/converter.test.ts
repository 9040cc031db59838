/**
 * converter(t) gives the C conversion of a 64-bit value to type t; the
 * functions are shared between handlers (one per width and signedness, a
 * compiled handler keeps them), so the one a type gets must still be its
 * own conversion: every integer type, bool, pointers, aggregates and void,
 * on edge and random values.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { T, converter, ptrTo, charType } from '../../emulator/handlers/ctypes';
import type { CType, IntType } from '../../emulator/handlers/ctypes';
import { mulberry32 as prng } from '../util/prng';

const rand = prng(0x636f6e76);
const r64 = (): bigint => (BigInt(Math.floor(rand() * 2 ** 32)) << 32n) | BigInt(Math.floor(rand() * 2 ** 32));
const VALUES = [0n, 1n, -1n, 0x7fn, 0x80n, 0xffn, 0x100n, 0x7fffn, 0x8000n, 0xffffn, 0x7fffffffn, 0x80000000n, 0xffffffffn,
  0x100000000n, 0x7fffffffffffffffn, 0x8000000000000000n, 0xffffffffffffffffn, -0x80n, -0x8000n, -0x80000000n, -(2n ** 63n),
  ...Array.from({ length: 200 }, r64), ...Array.from({ length: 50 }, () => -r64())];

/** what C does, written out */
function expected(t: CType, v: bigint): bigint {
  if (t.kind === 'void') return 0n;
  if (t.kind !== 'int') return BigInt.asUintN(64, v); // pointers and aggregates (their address)
  const it = t as IntType;
  if (it.bool) return v !== 0n ? 1n : 0n;
  return it.signed ? BigInt.asIntN(it.size * 8, v) : BigInt.asUintN(it.size * 8, v);
}

describe('converter', () => {
  const types: CType[] = [...Object.values(T), charType(false), ptrTo(T.int), ptrTo(T.void)];
  test('every type converts as C does, whichever type asked for its function first', () => {
    for (const order of [types, [...types].reverse()]) {
      for (const t of order) for (const v of VALUES) assert.equal(converter(t)(v), expected(t, v), `${JSON.stringify(t)} ${v}`);
    }
  });
  test('types of one width and signedness share one function; others do not', () => {
    assert.equal(converter(T.int), converter(T.s32));
    assert.equal(converter(T.ulong), converter(T.u64));
    assert.notEqual(converter(T.int), converter(T.uint));
    assert.notEqual(converter(T.u8), converter(T.bool));
    assert.notEqual(converter(T.schar), converter(T.short));
  });
});
