/**
 * RV64A executors: lr/sc with the hart's reservation (emulator/arch/riscv64/
 * reservation.ts) and every AMO, word and doubleword. Accesses must be
 * naturally aligned (misaligned: an access fault). Word results are
 * sign-extended. The aq/rl bits need nothing here: harts interleave
 * instruction by instruction.
 */
import type { RvCpu } from '../cpu';
import type { RvInsn } from '../insn';

function set32(c: RvCpu, d: number, v: number): void { c.lo[d] = v; c.hi[d] = v >> 31; }

export function lrW(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, 0, 'read'); c.aligned(a, 4, 'read');
  const v = c.mem.read32(a) | 0;
  c.reservations.reserve(c, a);
  set32(c, i.rd, v);
}
export function lrD(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, 0, 'read'); c.aligned(a, 8, 'read');
  const l = c.mem.read32(a) | 0, h = c.mem.read32(a + 4) | 0;
  c.reservations.reserve(c, a);
  c.lo[i.rd] = l; c.hi[i.rd] = h;
}
function sc(c: RvCpu, i: RvInsn, size: 4 | 8): void {
  const a = c.ea(i.rs1, 0, 'write'); c.aligned(a, size, 'write');
  const ok = c.reservations.holds(c, a);
  c.reservations.clear(c);
  if (ok) {
    if (size === 4) c.mem.write32(a, c.lo[i.rs2]); else c.mem.write64Halves(a, c.lo[i.rs2], c.hi[i.rs2]);
    c.stored(a, size);
  }
  c.lo[i.rd] = ok ? 0 : 1; c.hi[i.rd] = 0;
}
export function scW(c: RvCpu, i: RvInsn): void { sc(c, i, 4); }
export function scD(c: RvCpu, i: RvInsn): void { sc(c, i, 8); }

type Op32 = (m: number, r: number) => number;
type Op64 = (m: bigint, r: bigint) => bigint;

function amoW(op: Op32) {
  return (c: RvCpu, i: RvInsn): void => {
    const a = c.ea(i.rs1, 0, 'write'); c.aligned(a, 4, 'write');
    const m = c.mem.read32(a) | 0;
    c.mem.write32(a, op(m, c.lo[i.rs2]));
    c.stored(a, 4);
    set32(c, i.rd, m);
  };
}
function amoD(op: Op64) {
  return (c: RvCpu, i: RvInsn): void => {
    const a = c.ea(i.rs1, 0, 'write'); c.aligned(a, 8, 'write');
    const m = c.mem.read64(a);
    const v = BigInt.asUintN(64, op(m, c.x(i.rs2)));
    c.mem.write64Halves(a, Number(v & 0xffffffffn) | 0, Number(v >> 32n) | 0);
    c.stored(a, 8);
    c.setX(i.rd, m);
  };
}
const s64 = (v: bigint): bigint => BigInt.asIntN(64, v);

export const amoswapW = amoW((_m, r) => r);
export const amoaddW = amoW((m, r) => (m + r) | 0);
export const amoxorW = amoW((m, r) => m ^ r);
export const amoandW = amoW((m, r) => m & r);
export const amoorW = amoW((m, r) => m | r);
export const amominW = amoW((m, r) => (m < r ? m : r));
export const amomaxW = amoW((m, r) => (m > r ? m : r));
export const amominuW = amoW((m, r) => ((m >>> 0) < (r >>> 0) ? m : r));
export const amomaxuW = amoW((m, r) => ((m >>> 0) > (r >>> 0) ? m : r));

export const amoswapD = amoD((_m, r) => r);
export const amoaddD = amoD((m, r) => m + r);
export const amoxorD = amoD((m, r) => m ^ r);
export const amoandD = amoD((m, r) => m & r);
export const amoorD = amoD((m, r) => m | r);
export const amominD = amoD((m, r) => (s64(m) < s64(r) ? m : r));
export const amomaxD = amoD((m, r) => (s64(m) > s64(r) ? m : r));
export const amominuD = amoD((m, r) => (m < r ? m : r));
export const amomaxuD = amoD((m, r) => (m > r ? m : r));
