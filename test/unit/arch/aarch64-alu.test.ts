/**
 * aarch64 data processing: bytes in, registers and NZCV out — add/sub
 * flags at both widths, shifts by 0/63, bitfield aliases, extr,
 * multiplies, divide by zero, clz/cls/rbit/rev, conditional select and
 * compare, extended-register operands.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { runWords, getX, nzcv } from '../../fixtures/a64/harness';

const M64 = (1n << 64n) - 1n;
function one(word: number, regs: Record<string, bigint>): { x0: bigint; flags: number } {
  const { cpu, res } = runWords([word], regs);
  assert.equal(res.executed, 1);
  assert.equal(res.trap, null);
  return { x0: getX(cpu, 'x0'), flags: nzcv(cpu) };
}

describe('a64 add/sub and NZCV', () => {
  test('adds x0, x1, x2: unsigned carry and signed overflow', () => {
    assert.deepEqual(one(0xab020020, { x1: M64, x2: 1n }), { x0: 0n, flags: 0b0110 }); // Z C
    assert.deepEqual(one(0xab020020, { x1: 0x7fffffffffffffffn, x2: 1n }), { x0: 0x8000000000000000n, flags: 0b1001 }); // N V
    assert.deepEqual(one(0xab020020, { x1: 0x8000000000000000n, x2: 0x8000000000000000n }), { x0: 0n, flags: 0b0111 }); // Z C V
    assert.deepEqual(one(0xab020020, { x1: 2n, x2: 3n }), { x0: 5n, flags: 0 });
  });
  test('subs w0, w1, w2: borrow is C clear, upper half zeroed', () => {
    assert.deepEqual(one(0x6b020020, { x1: 0xffffffff00000001n, x2: 2n }), { x0: 0xffffffffn, flags: 0b1000 }); // N, borrow -> C=0
    assert.deepEqual(one(0x6b020020, { x1: 5n, x2: 5n }), { x0: 0n, flags: 0b0110 }); // Z C
    assert.deepEqual(one(0x6b020020, { x1: 0x80000000n, x2: 1n }), { x0: 0x7fffffffn, flags: 0b0011 }); // C V
  });
  test('adds x0, x1, #1 and add with an extended register (sxtw #2)', () => {
    assert.deepEqual(one(0xb1000420, { x1: M64 }), { x0: 0n, flags: 0b0110 });
    assert.equal(one(0x8b22c820, { x1: 0x1000n, x2: 0xfffffffen }).x0, 0x1000n - 8n); // w2 = -2, << 2
  });
});

describe('a64 shifts and bitfields', () => {
  test('lsl #63, lsr #0, asr #63', () => {
    assert.equal(one(0xd3410020, { x1: 3n }).x0, 0x8000000000000000n);
    assert.equal(one(0xd340fc20, { x1: 0x123456789abcdef0n }).x0, 0x123456789abcdef0n);
    assert.equal(one(0x937ffc20, { x1: 0x8000000000000000n }).x0, M64);
    assert.equal(one(0x937ffc20, { x1: 0x7000000000000000n }).x0, 0n);
  });
  test('sxtw, sbfx, ubfx (lsr #60), bfi', () => {
    assert.equal(one(0x93407c20, { x1: 0x80000000n }).x0, 0xffffffff80000000n);
    assert.equal(one(0x93407c20, { x1: 0xffffffff7fffffffn }).x0, 0x7fffffffn);
    assert.equal(one(0x93442c20, { x1: 0x0f80n }).x0, 0xfffffffffffffff8n); // bits 4..11 = 0xf8 -> -8
    assert.equal(one(0xd37cfc20, { x1: 0xa000000000000000n }).x0, 0xan);
    assert.equal(one(0xb3783c20, { x0: 0x1111111111111111n, x1: 0xabcdn }).x0, 0x1111111111abcd11n);
  });
  test('extr x0, x1, x2, #12 and eor with ror', () => {
    assert.equal(one(0x93c23020, { x1: 0xabcn, x2: 0x1234567890abcdefn }).x0, (((0xabcn << 64n) | 0x1234567890abcdefn) >> 12n) & M64);
    assert.equal(one(0xcac22020, { x1: 0n, x2: 0xffn }).x0, 0xff00000000000000n);
  });
});

describe('a64 multiply and divide', () => {
  test('madd/msub wrap at 64 bits', () => {
    const a = 0xfedcba9876543210n, b = 0x0123456789abcdefn, c = 0x1111n;
    assert.equal(one(0x9b020c20, { x1: a, x2: b, x3: c }).x0, (a * b + c) & M64);
    assert.equal(one(0x9b028c20, { x1: a, x2: b, x3: c }).x0, BigInt.asUintN(64, c - a * b));
  });
  test('umulh / smulh', () => {
    assert.equal(one(0x9bc27c20, { x1: M64, x2: M64 }).x0, M64 - 1n);
    assert.equal(one(0x9b427c20, { x1: M64, x2: 2n }).x0, M64); // -1 * 2 = -2: high half all ones
  });
  test('udiv by zero is 0, sdiv INT_MIN / -1 = INT_MIN, sdiv truncates', () => {
    assert.equal(one(0x9ac20820, { x1: 1234n, x2: 0n }).x0, 0n);
    assert.equal(one(0x9ac20820, { x1: M64, x2: 3n }).x0, M64 / 3n);
    assert.equal(one(0x1ac20c20, { x1: 0x80000000n, x2: 0xffffffffn }).x0, 0x80000000n);
    assert.equal(one(0x1ac20c20, { x1: 0xfffffff9n, x2: 2n }).x0, 0xfffffffdn); // -7 / 2 = -3
    assert.equal(one(0x1ac20c20, { x1: 7n, x2: 0n }).x0, 0n);
  });
});

describe('a64 bit operations', () => {
  test('clz, cls, rbit, rev', () => {
    assert.equal(one(0xdac01020, { x1: 0n }).x0, 64n);
    assert.equal(one(0xdac01020, { x1: 1n << 40n }).x0, 23n);
    assert.equal(one(0x5ac01420, { x1: 0xffffffffn }).x0, 31n);
    assert.equal(one(0x5ac01420, { x1: 0x00ff0000n }).x0, 7n);
    assert.equal(one(0xdac00020, { x1: 1n }).x0, 0x8000000000000000n);
    assert.equal(one(0xdac00c20, { x1: 0x0102030405060708n }).x0, 0x0807060504030201n);
  });
});

describe('a64 conditional select and compare', () => {
  test('csinc x0, x1, x2, eq after a compare', () => {
    const { cpu } = runWords([0xeb02003f /* cmp x1, x2 */, 0x9a820420], { x1: 5n, x2: 6n }, 2);
    assert.equal(getX(cpu, 'x0'), 7n); // ne -> x2 + 1
    const r2 = runWords([0xeb02003f, 0x9a820420], { x1: 6n, x2: 6n }, 2);
    assert.equal(getX(r2.cpu, 'x0'), 6n);
  });
  test('ccmp x1, #5, #2, ne: condition false sets the immediate flags', () => {
    const a = runWords([0xeb1f003f /* cmp x1, xzr */, 0xfa451822], { x1: 0n }, 2); // eq -> ne false -> nzcv=2
    assert.equal(nzcv(a.cpu), 0b0010);
    const b = runWords([0xeb1f003f, 0xfa451822], { x1: 5n }, 2); // ne true -> cmp 5,5
    assert.equal(nzcv(b.cpu), 0b0110);
  });
});
