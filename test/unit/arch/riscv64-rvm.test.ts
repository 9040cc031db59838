/**
 * riscv64 M extension units: every operation on corner values (0, ±1,
 * most negative, most positive, 32-bit boundaries) and random operands,
 * checked against the ISA's definitions computed with bigint: division by
 * zero gives -1 / the dividend, the signed overflow gives the dividend / 0,
 * W forms sign-extend their 32-bit results.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, run, get, set } from './riscv64-harness';

const M64 = (1n << 64n) - 1n;
const s64 = (v: bigint): bigint => BigInt.asIntN(64, v);
const u64 = (v: bigint): bigint => BigInt.asUintN(64, v);
const s32 = (v: bigint): bigint => BigInt.asIntN(32, v);
const u32 = (v: bigint): bigint => BigInt.asUintN(32, v);
const sx32 = (v: bigint): bigint => u64(s32(v));

const CORNERS = [0n, 1n, 2n, 3n, M64, M64 - 1n, 1n << 63n, (1n << 63n) - 1n, 0xffffffffn, 0x80000000n, 0x7fffffffn,
  0xffffffff80000000n, 0x100000000n, 0x123456789abcdef0n, 7n, u64(-7n)];
let seed = 12345;
const rnd = (): bigint => {
  let v = 0n;
  for (let k = 0; k < 4; k++) { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; v = (v << 16n) | BigInt(seed >>> 16); }
  return v;
};
const PAIRS: [bigint, bigint][] = [];
for (const a of CORNERS) for (const b of CORNERS) PAIRS.push([a, b]);
for (let k = 0; k < 200; k++) PAIRS.push([rnd(), rnd()]);

function tdiv(a: bigint, b: bigint): bigint { return a / b; } // bigint division truncates toward zero, as RISC-V does

describe('rv64 M extension', () => {
  test('mul mulh mulhsu mulhu div divu rem remu', () => {
    // mul a2; mulh a3; mulhsu a4; mulhu a5; div a6; divu a7; rem s2; remu s3 (all a0, a1); ebreak
    const code = '33 06 b5 02 b3 16 b5 02 33 27 b5 02 b3 37 b5 02 33 48 b5 02 b3 58 b5 02 33 69 b5 02 b3 79 b5 02 73 00 10 00';
    for (const [a, b] of PAIRS) {
      const { cpu } = machine(code);
      set(cpu, 'a0', a); set(cpu, 'a1', b);
      run(cpu);
      const sa = s64(a), sb = s64(b);
      const what = `a=${a.toString(16)} b=${b.toString(16)}`;
      assert.equal(get(cpu, 'a2'), u64(a * b), `mul ${what}`);
      assert.equal(get(cpu, 'a3'), u64((sa * sb) >> 64n), `mulh ${what}`);
      assert.equal(get(cpu, 'a4'), u64((sa * b) >> 64n), `mulhsu ${what}`);
      assert.equal(get(cpu, 'a5'), u64((a * b) >> 64n), `mulhu ${what}`);
      const div = b === 0n ? M64 : (sa === -(1n << 63n) && sb === -1n) ? a : u64(tdiv(sa, sb));
      const rem = b === 0n ? a : (sa === -(1n << 63n) && sb === -1n) ? 0n : u64(sa % sb);
      assert.equal(get(cpu, 'a6'), div, `div ${what}`);
      assert.equal(get(cpu, 'a7'), b === 0n ? M64 : a / b, `divu ${what}`);
      assert.equal(get(cpu, 's2'), rem, `rem ${what}`);
      assert.equal(get(cpu, 's3'), b === 0n ? a : a % b, `remu ${what}`);
    }
  });
  test('mulw divw divuw remw remuw', () => {
    // mulw a2; divw a3; divuw a4; remw a5; remuw a6 (all a0, a1); ebreak
    const code = '3b 06 b5 02 bb 46 b5 02 3b 57 b5 02 bb 67 b5 02 3b 78 b5 02 73 00 10 00';
    for (const [a, b] of PAIRS) {
      const { cpu } = machine(code);
      set(cpu, 'a0', a); set(cpu, 'a1', b);
      run(cpu);
      const sa = s32(a), sb = s32(b), ua = u32(a), ub = u32(b);
      const what = `a=${a.toString(16)} b=${b.toString(16)}`;
      assert.equal(get(cpu, 'a2'), sx32(sa * sb), `mulw ${what}`);
      const ovf = sa === -(1n << 31n) && sb === -1n;
      assert.equal(get(cpu, 'a3'), sb === 0n ? M64 : ovf ? sx32(sa) : sx32(tdiv(sa, sb)), `divw ${what}`);
      assert.equal(get(cpu, 'a4'), ub === 0n ? M64 : sx32(ua / ub), `divuw ${what}`);
      assert.equal(get(cpu, 'a5'), sb === 0n ? sx32(sa) : ovf ? 0n : sx32(sa % sb), `remw ${what}`);
      assert.equal(get(cpu, 'a6'), ub === 0n ? sx32(ua) : sx32(ua % ub), `remuw ${what}`);
    }
  });
});
