/**
 * emulator/cpu/softfloat.ts against the host's IEEE arithmetic (round to
 * nearest even, binary64 and binary32 through Math.fround) on random and
 * edge operands: the exact path (fast paths off) gives the host's bits, and
 * both paths agree on the inexact flag. Directed rounding is checked by
 * ordering: rdn <= exact <= rup, rtz toward zero, each within one ulp of
 * rne. (The riscv64 F/D conformance programs compare every mode and flag
 * with qemu-riscv64.)
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  fadd, fdiv, ffma, fmul, fsqrt, f32Bits, f32Value, f64Bits, f64Value, FLAG_NX, FLAG_OF, FLAG_UF, FLAG_DZ, FLAG_NV,
  ftoint, intToF, fconvert, setFastPaths, defaultNaN, RoundingMode,
} from '../../../emulator/cpu/softfloat';

/** deterministic LCG */
function rng(seed: number): () => number {
  let s = BigInt(seed);
  return () => { s = (s * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n); return Number(s >> 11n) / 2 ** 53; };
}
const r = rng(42);
function randomDouble(): number {
  const kind = r();
  if (kind < 0.1) return [0, -0, 1, -1, 0.5, 3, 1e308, -1e308, 5e-324, 2.2250738585072014e-308, 1 / 3][Math.floor(r() * 11)];
  const m = r() * 2 - 1;
  const e = Math.floor(r() * (kind < 0.2 ? 2100 : 120)) - (kind < 0.2 ? 1075 : 60);
  return m * 2 ** e;
}
function randomFloat(): number { return Math.fround(randomDouble() / (r() < 0.5 ? 1 : 2 ** 900)); }

const ops64: [string, (a: bigint, b: bigint, rm: RoundingMode) => ReturnType<typeof fadd>, (x: number, y: number) => number][] = [
  ['add', (a, b, rm) => fadd(64, a, b, rm), (x, y) => x + y],
  ['sub', (a, b, rm) => fadd(64, a, b, rm, true), (x, y) => x - y],
  ['mul', (a, b, rm) => fmul(64, a, b, rm), (x, y) => x * y],
  ['div', (a, b, rm) => fdiv(64, a, b, rm), (x, y) => x / y],
];

describe('softfloat', () => {
  after(() => setFastPaths(true));

  test('binary64 + - * / and sqrt, exact path = host bits; inexact flags agree with the fast path', () => {
    for (let i = 0; i < 4000; i++) {
      const x = randomDouble(), y = randomDouble();
      for (const [name, op, host] of ops64) {
        const want = host(x, y);
        setFastPaths(false);
        const slow = op(f64Bits(x), f64Bits(y), 'rne');
        setFastPaths(true);
        const fast = op(f64Bits(x), f64Bits(y), 'rne');
        if (Number.isNaN(want)) assert.equal(slow.bits, defaultNaN(64), `${name} ${x} ${y}`);
        else assert.equal(slow.bits, f64Bits(want), `${name}(${x}, ${y}) = ${want}, got ${f64Value(slow.bits)}`);
        assert.equal(fast.bits, slow.bits, `${name} fast`);
        assert.equal(fast.flags, slow.flags, `${name}(${x}, ${y}) flags fast ${fast.flags} slow ${slow.flags}`);
      }
      const s = Math.abs(x);
      setFastPaths(false);
      const slow = fsqrt(64, f64Bits(s), 'rne');
      setFastPaths(true);
      assert.equal(slow.bits, f64Bits(Math.sqrt(s)), `sqrt ${s}`);
      assert.equal(fsqrt(64, f64Bits(s), 'rne').flags, slow.flags, `sqrt ${s} flags`);
    }
  });

  test('binary32 through the exact path = Math.fround of the double result', () => {
    const ops: [string, (a: bigint, b: bigint) => ReturnType<typeof fadd>, (x: number, y: number) => number][] = [
      ['add', (a, b) => fadd(32, a, b, 'rne'), (x, y) => x + y],
      ['mul', (a, b) => fmul(32, a, b, 'rne'), (x, y) => x * y],
      ['div', (a, b) => fdiv(32, a, b, 'rne'), (x, y) => x / y],
    ];
    for (let i = 0; i < 4000; i++) {
      const x = randomFloat(), y = randomFloat();
      for (const [name, op, host] of ops) {
        const want = Math.fround(host(x, y));
        setFastPaths(false);
        const slow = op(f32Bits(x), f32Bits(y));
        setFastPaths(true);
        const fast = op(f32Bits(x), f32Bits(y));
        if (Number.isNaN(want)) { assert.equal(slow.bits, defaultNaN(32)); continue; }
        assert.equal(slow.bits, f32Bits(want), `${name}(${x}, ${y}) = ${want}, got ${f32Value(slow.bits)}`);
        assert.equal(fast.bits, slow.bits);
        assert.equal(fast.flags, slow.flags, `${name}(${x}, ${y}) flags`);
      }
    }
  });

  test('directed rounding brackets the exact result; rtz is toward zero', () => {
    for (let i = 0; i < 2000; i++) {
      const x = randomDouble(), y = randomDouble();
      for (const [name, op] of ops64) {
        const ne = op(f64Bits(x), f64Bits(y), 'rne');
        if (Number.isNaN(f64Value(ne.bits)) || !Number.isFinite(f64Value(ne.bits))) continue;
        const dn = f64Value(op(f64Bits(x), f64Bits(y), 'rdn').bits);
        const up = f64Value(op(f64Bits(x), f64Bits(y), 'rup').bits);
        const tz = f64Value(op(f64Bits(x), f64Bits(y), 'rtz').bits);
        const v = f64Value(ne.bits);
        assert.ok(dn <= v && v <= up, `${name}(${x}, ${y}): ${dn} <= ${v} <= ${up}`);
        if (!(ne.flags & FLAG_NX)) assert.ok(dn === up, `${name} exact: all modes agree`);
        else assert.ok(dn < up, `${name}(${x}, ${y}) inexact: rdn < rup`);
        assert.equal(tz, v > 0 || Object.is(v, 0) ? dn : up, `${name}(${x}, ${y}) rtz`);
      }
    }
  });

  test('flags: overflow, underflow, divide by zero, invalid; fma rounds once', () => {
    assert.deepEqual(fmul(64, f64Bits(1e308), f64Bits(10), 'rne'), { bits: f64Bits(Infinity), flags: FLAG_OF | FLAG_NX });
    assert.deepEqual(fmul(64, f64Bits(1e308), f64Bits(10), 'rtz'), { bits: f64Bits(Number.MAX_VALUE), flags: FLAG_OF | FLAG_NX });
    assert.deepEqual(fmul(64, f64Bits(5e-324), f64Bits(0.5), 'rne'), { bits: f64Bits(0), flags: FLAG_UF | FLAG_NX });
    assert.deepEqual(fmul(64, f64Bits(5e-324), f64Bits(0.5), 'rup'), { bits: f64Bits(5e-324), flags: FLAG_UF | FLAG_NX });
    assert.deepEqual(fdiv(64, f64Bits(1), f64Bits(-0), 'rne'), { bits: f64Bits(-Infinity), flags: FLAG_DZ });
    assert.deepEqual(fsqrt(64, f64Bits(-1), 'rne'), { bits: defaultNaN(64), flags: FLAG_NV });
    // exact subnormal: no underflow flag
    assert.deepEqual(fmul(64, f64Bits(2 ** -1070), f64Bits(0.5), 'rne'), { bits: f64Bits(2 ** -1071), flags: 0 });
    // 1 + 2^-60 - 1 fused: exact 2^-60 (a separate multiply and add would give 0)
    const third = ffma(64, f64Bits(1 + 2 ** -30), f64Bits(1 - 2 ** -30), f64Bits(-1), 'rne');
    assert.equal(f64Value(third.bits), -(2 ** -60));
    assert.equal(third.flags, 0);
  });

  test('conversions: saturation, NaN, rounding modes; integers to float', () => {
    assert.deepEqual(ftoint(64, f64Bits(2.5), 32, true, 'rne'), { value: 2n, flags: FLAG_NX });
    assert.deepEqual(ftoint(64, f64Bits(2.5), 32, true, 'rmm'), { value: 3n, flags: FLAG_NX });
    assert.deepEqual(ftoint(64, f64Bits(-2.5), 32, true, 'rdn'), { value: -3n, flags: FLAG_NX });
    assert.deepEqual(ftoint(64, f64Bits(-2.5), 32, true, 'rtz'), { value: -2n, flags: FLAG_NX });
    assert.deepEqual(ftoint(64, f64Bits(1e10), 32, true, 'rtz'), { value: 2147483647n, flags: FLAG_NV });
    assert.deepEqual(ftoint(64, f64Bits(-1), 64, false, 'rtz'), { value: 0n, flags: FLAG_NV });
    assert.deepEqual(ftoint(64, f64Bits(NaN), 64, true, 'rtz'), { value: (1n << 63n) - 1n, flags: FLAG_NV });
    assert.deepEqual(intToF(64, (1n << 53n) + 1n, 'rne'), { bits: f64Bits(2 ** 53), flags: FLAG_NX });
    assert.deepEqual(intToF(64, (1n << 53n) + 1n, 'rup'), { bits: f64Bits(2 ** 53 + 2), flags: FLAG_NX });
    assert.deepEqual(intToF(32, 16777217n, 'rne'), { bits: f32Bits(16777216), flags: FLAG_NX });
    assert.deepEqual(fconvert(64, 32, f64Bits(1 / 3), 'rne'), { bits: f32Bits(Math.fround(1 / 3)), flags: FLAG_NX });
    assert.deepEqual(fconvert(64, 32, f64Bits(1e300), 'rne'), { bits: f32Bits(Infinity), flags: FLAG_OF | FLAG_NX });
  });
});
