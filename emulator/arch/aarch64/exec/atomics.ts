/**
 * Exclusive and ordered loads/stores (ldxr/stxr, ldaxr/stlxr, ldxp/stxp,
 * ldar/stlr) and the ARMv8.1 LSE atomics (cas*, swp*, ld<op>* / st<op>*).
 * The exclusive monitor remembers the address and the value loaded; a
 * store-exclusive succeeds when the monitor is open on that address and
 * memory still holds that value (QEMU's approach, correct across vCPUs).
 */
import { A64Cpu } from '../cpu';
import { A64Insn, Row } from '../insn';
import { f, rZ, wZ, rS, gz, base } from '../fmt';

const SZ = ['b', 'h', '', ''];

// imm2: 0 ldxr-like, 1 stxr-like, 2 ldar, 3 stlr; imm3 = pair
function loadEx(c: A64Cpu, i: A64Insn): void {
  const a = c.addrOf(i.n, 'read'), s = i.size;
  c.checkAligned(a, i.imm3 ? s * 2 : s, false);
  if (i.imm3) c.watchPair(a, s, false);
  const l1 = c.load(a, s), h1 = c.th;
  let l2 = 0, h2 = 0;
  if (i.imm3) { l2 = c.load(a + s, s); h2 = c.th; }
  c.lo[i.d] = l1; c.hi[i.d] = h1;
  if (i.imm3) { const d2 = wZ(i.ra); c.lo[d2] = l2; c.hi[d2] = h2; }
  if (i.imm2 === 0) { c.exclAddr = a; c.exclSize = i.imm3 ? s * 2 : s; c.exclVal = [l1, h1, l2, h2]; }
}
function storeEx(c: A64Cpu, i: A64Insn): void {
  const a = c.addrOf(i.n, 'write'), s = i.size;
  c.checkAligned(a, i.imm3 ? s * 2 : s, true);
  // the store is shown to the debug registers first, so a watchpoint fires whether or not the exclusive succeeds
  // (our choice where the architecture leaves a failing store-exclusive open)
  if (i.imm3) c.watchPair(a, s, true); else c.watchAccess(a, s, true);
  if (i.imm2 === 1) {
    const v = c.exclVal;
    let ok = c.exclAddr === a && c.exclSize === (i.imm3 ? s * 2 : s);
    // the monitor's check reads memory for the emulator, not for the guest (no read watchpoint)
    if (ok) ok = c.loadUnwatched(a, s) === v[0] && c.th === v[1];
    if (ok && i.imm3) ok = c.loadUnwatched(a + s, s) === v[2] && c.th === v[3];
    c.exclAddr = NaN;
    const st = wZ(i.rm);
    c.hi[st] = 0;
    if (!ok) { c.lo[st] = 1; return; }
    c.lo[st] = 0;
  }
  c.store(a, s, c.lo[i.m], c.hi[i.m]);
  if (i.imm3) c.store(a + s, s, c.lo[i.a], c.hi[i.a]);
}
const exclusive: Row = {
  name: 'load/store exclusive, acquire/release', mask: 0x3f000000, match: 0x08000000,
  decode(w, i) {
    const size = f(w, 30, 2), o2 = f(w, 23, 1), l = f(w, 22, 1), o1 = f(w, 21, 1), o0 = f(w, 15, 1);
    if (o1 && o2) return casDecode(w, i);
    if (o1 && size < 2) return false;
    i.size = 1 << size; i.imm3 = o1; i.op = l; i.op2 = o0;
    i.imm2 = (o2 ? 2 : 0) + (l ? 0 : 1);
    if (o2 && !o0) return false; // ldlar/stllr (LOR) not supported
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5); i.ra = f(w, 10, 5);
    i.d = wZ(i.rd); i.m = rZ(i.rd); i.a = rZ(i.ra); i.n = rS(i.rn);
    i.exec = l ? loadEx : storeEx;
    return true;
  },
  fmt(i) {
    if (i.exec === cas) return fmtCas(i);
    const x = i.size === 8 ? 1 : 0;
    const sz = i.imm3 ? '' : SZ[Math.log2(i.size)];
    const b = `[${base(i.rn)}]`;
    if (i.imm2 >= 2) return [(i.op ? 'ldar' : 'stlr') + sz, `${gz(i.rd, x)}, ${b}`];
    const name = (i.op ? (i.op2 ? 'ldax' : 'ldx') : (i.op2 ? 'stlx' : 'stx')) + (i.imm3 ? 'p' : 'r') + sz;
    const regs = i.imm3 ? `${gz(i.rd, x)}, ${gz(i.ra, x)}` : gz(i.rd, x);
    return [name, i.op ? `${regs}, ${b}` : `${gz(i.rm, 0)}, ${regs}, ${b}`];
  },
};

// ------------------------------------------------------------ LSE
function bits(c: A64Cpu, r: number, size: number): bigint { return BigInt.asUintN(size * 8, c.x64(r)); }
function memRead(c: A64Cpu, a: number, size: number): bigint {
  const l = c.load(a, size);
  return (BigInt(c.th >>> 0) << 32n) | BigInt(l >>> 0);
}
function memWrite(c: A64Cpu, a: number, size: number, v: bigint): void {
  c.store(a, size, Number(BigInt.asIntN(32, v)), Number(BigInt.asIntN(32, v >> 32n)));
}
function cas(c: A64Cpu, i: A64Insn): void {
  const a = c.addrOf(i.n, 'write'), s = i.size;
  c.checkAligned(a, s, true);
  const old = memRead(c, a, s);
  if (old === bits(c, i.a, s)) memWrite(c, a, s, bits(c, i.m, s));
  c.setX64(wZ(i.rm), old);
}
function casDecode(w: number, i: A64Insn): boolean {
  if (f(w, 10, 5) !== 31) return false;
  i.size = 1 << f(w, 30, 2);
  i.op = f(w, 22, 1); i.op2 = f(w, 15, 1);
  i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
  i.m = rZ(i.rd); i.a = rZ(i.rm); i.n = rS(i.rn);
  i.exec = cas;
  return true;
}
const LSE_OPS = ['add', 'clr', 'eor', 'set', 'smax', 'smin', 'umax', 'umin'];
// op = o3*8 + opc (0..7 ld<op>, 8 swp); imm2 = A, imm3 = R
function lseOp(c: A64Cpu, i: A64Insn): void {
  const a = c.addrOf(i.n, 'write'), s = i.size, w = s * 8;
  c.checkAligned(a, s, true);
  const old = memRead(c, a, s), v = bits(c, i.m, s);
  let r: bigint;
  switch (i.op) {
    case 0: r = old + v; break;
    case 1: r = old & ~v; break;
    case 2: r = old ^ v; break;
    case 3: r = old | v; break;
    case 4: r = BigInt.asIntN(w, old) > BigInt.asIntN(w, v) ? old : v; break;
    case 5: r = BigInt.asIntN(w, old) < BigInt.asIntN(w, v) ? old : v; break;
    case 6: r = old > v ? old : v; break;
    case 7: r = old < v ? old : v; break;
    default: r = v;
  }
  memWrite(c, a, s, BigInt.asUintN(w, r));
  c.setX64(i.d, old);
}
const lse: Row = {
  name: 'atomic memory operations', mask: 0x3f200c00, match: 0x38200000,
  decode(w, i) {
    const o3 = f(w, 15, 1), opc = f(w, 12, 3);
    if (o3 && opc !== 0) return false;
    i.op = o3 ? 8 : opc; i.size = 1 << f(w, 30, 2);
    i.imm2 = f(w, 23, 1); i.imm3 = f(w, 22, 1);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.d = wZ(i.rd); i.m = rZ(i.rm); i.n = rS(i.rn);
    i.exec = lseOp;
    return true;
  },
  fmt(i) {
    const x = i.size === 8 ? 1 : 0, sz = SZ[Math.log2(i.size)];
    const ord = (i.imm2 ? 'a' : '') + (i.imm3 ? 'l' : '');
    const b = `[${base(i.rn)}]`;
    if (i.op === 8) return [`swp${ord}${sz}`, `${gz(i.rm, x)}, ${gz(i.rd, x)}, ${b}`];
    if (i.rd === 31 && !i.imm2) return [`st${LSE_OPS[i.op]}${i.imm3 ? 'l' : ''}${sz}`, `${gz(i.rm, x)}, ${b}`];
    return [`ld${LSE_OPS[i.op]}${ord}${sz}`, `${gz(i.rm, x)}, ${gz(i.rd, x)}, ${b}`];
  },
};
/** cas formatting lives with the exclusive row (same encoding group) */
export function fmtCas(i: A64Insn): [string, string] {
  const x = i.size === 8 ? 1 : 0, sz = SZ[Math.log2(i.size)];
  return [`cas${i.op ? 'a' : ''}${i.op2 ? 'l' : ''}${sz}`, `${gz(i.rm, x)}, ${gz(i.rd, x)}, [${base(i.rn)}]`];
}

export const ATOMIC_ROWS: readonly Row[] = [exclusive, lse];
