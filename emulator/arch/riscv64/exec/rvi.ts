/**
 * RV64I executors: integer ALU (register and immediate, 64-bit and W forms),
 * lui/auipc, jal/jalr, branches, loads and stores. 64-bit values are int32
 * halves (cpu.lo/cpu.hi); W results are sign-extended from bit 31.
 * Misaligned loads and stores complete, as they do for Linux programs (the
 * kernel emulates them; qemu-user and the differential goldens agree:
 * clang -O2 memsets a 4-aligned char buffer with sd); only the A
 * extension's accesses must be aligned.
 */
import type { RvCpu } from '../cpu';
import type { RvInsn } from '../insn';


// ---------------------------------------------------------------- helpers
function set32(c: RvCpu, d: number, v: number): void { c.lo[d] = v; c.hi[d] = v >> 31; }

function add64(c: RvCpu, d: number, al: number, ah: number, bl: number, bh: number): void {
  const s = (al >>> 0) + (bl >>> 0);
  c.lo[d] = s | 0; c.hi[d] = (ah + bh + (s > 0xffffffff ? 1 : 0)) | 0;
}
function sltS(al: number, ah: number, bl: number, bh: number): boolean {
  return ah < bh || (ah === bh && (al >>> 0) < (bl >>> 0));
}
function sltU(al: number, ah: number, bl: number, bh: number): boolean {
  const h1 = ah >>> 0, h2 = bh >>> 0;
  return h1 < h2 || (h1 === h2 && (al >>> 0) < (bl >>> 0));
}
function sll64(c: RvCpu, d: number, l: number, h: number, n: number): void {
  if (n === 0) { c.lo[d] = l; c.hi[d] = h; }
  else if (n < 32) { c.hi[d] = (h << n) | (l >>> (32 - n)); c.lo[d] = l << n; }
  else { c.hi[d] = l << (n - 32); c.lo[d] = 0; }
}
function srl64(c: RvCpu, d: number, l: number, h: number, n: number): void {
  if (n === 0) { c.lo[d] = l; c.hi[d] = h; }
  else if (n < 32) { c.lo[d] = (l >>> n) | (h << (32 - n)); c.hi[d] = h >>> n; }
  else { c.lo[d] = h >>> (n - 32); c.hi[d] = 0; }
}
function sra64(c: RvCpu, d: number, l: number, h: number, n: number): void {
  if (n === 0) { c.lo[d] = l; c.hi[d] = h; }
  else if (n < 32) { c.lo[d] = (l >>> n) | (h << (32 - n)); c.hi[d] = h >> n; }
  else { c.lo[d] = h >> (n - 32); c.hi[d] = h >> 31; }
}

// ---------------------------------------------------------------- upper immediates, jumps
export function lui(c: RvCpu, i: RvInsn): void { set32(c, i.rd, i.imm); }
export function auipc(c: RvCpu, i: RvInsn): void { c.setAddr(i.rd, i.addr + i.imm); }
export function jal(c: RvCpu, i: RvInsn): void {
  c.setAddr(i.rd, i.next);
  c.pc = i.addr + i.imm;
}
export function jalr(c: RvCpu, i: RvInsn): void {
  const t = c.target(i.rs1, i.imm); // before the link write: rd may be rs1
  c.setAddr(i.rd, i.next);
  c.pc = t;
}

// ---------------------------------------------------------------- branches
export function beq(c: RvCpu, i: RvInsn): void {
  if (c.lo[i.rs1] === c.lo[i.rs2] && c.hi[i.rs1] === c.hi[i.rs2]) c.pc = i.addr + i.imm;
}
export function bne(c: RvCpu, i: RvInsn): void {
  if (c.lo[i.rs1] !== c.lo[i.rs2] || c.hi[i.rs1] !== c.hi[i.rs2]) c.pc = i.addr + i.imm;
}
export function blt(c: RvCpu, i: RvInsn): void {
  if (sltS(c.lo[i.rs1], c.hi[i.rs1], c.lo[i.rs2], c.hi[i.rs2])) c.pc = i.addr + i.imm;
}
export function bge(c: RvCpu, i: RvInsn): void {
  if (!sltS(c.lo[i.rs1], c.hi[i.rs1], c.lo[i.rs2], c.hi[i.rs2])) c.pc = i.addr + i.imm;
}
export function bltu(c: RvCpu, i: RvInsn): void {
  if (sltU(c.lo[i.rs1], c.hi[i.rs1], c.lo[i.rs2], c.hi[i.rs2])) c.pc = i.addr + i.imm;
}
export function bgeu(c: RvCpu, i: RvInsn): void {
  if (!sltU(c.lo[i.rs1], c.hi[i.rs1], c.lo[i.rs2], c.hi[i.rs2])) c.pc = i.addr + i.imm;
}

// ---------------------------------------------------------------- loads / stores
export function lb(c: RvCpu, i: RvInsn): void { set32(c, i.rd, (c.mem.read8(c.ea(i.rs1, i.imm, 'read')) << 24) >> 24); }
export function lbu(c: RvCpu, i: RvInsn): void { const v = c.mem.read8(c.ea(i.rs1, i.imm, 'read')); c.lo[i.rd] = v; c.hi[i.rd] = 0; }
export function lh(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'read');
  set32(c, i.rd, (c.mem.read16(a) << 16) >> 16);
}
export function lhu(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'read');
  c.lo[i.rd] = c.mem.read16(a); c.hi[i.rd] = 0;
}
export function lw(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'read');
  set32(c, i.rd, c.mem.read32(a) | 0);
}
export function lwu(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'read');
  c.lo[i.rd] = c.mem.read32(a) | 0; c.hi[i.rd] = 0;
}
export function ld(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'read');
  const l = c.mem.read32(a) | 0, h = c.mem.read32(a + 4) | 0;
  c.lo[i.rd] = l; c.hi[i.rd] = h;
}
export function sb(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'write');
  c.mem.write8(a, c.lo[i.rs2] & 0xff); c.stored(a, 1);
}
export function sh(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'write');
  c.mem.write16(a, c.lo[i.rs2] & 0xffff); c.stored(a, 2);
}
export function sw(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'write');
  c.mem.write32(a, c.lo[i.rs2]); c.stored(a, 4);
}
export function sd(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'write');
  c.mem.write64Halves(a, c.lo[i.rs2], c.hi[i.rs2]); c.stored(a, 8);
}

// ---------------------------------------------------------------- immediate ALU
export function addi(c: RvCpu, i: RvInsn): void { add64(c, i.rd, c.lo[i.rs1], c.hi[i.rs1], i.imm, i.imm >> 31); }
export function slti(c: RvCpu, i: RvInsn): void { c.lo[i.rd] = sltS(c.lo[i.rs1], c.hi[i.rs1], i.imm, i.imm >> 31) ? 1 : 0; c.hi[i.rd] = 0; }
export function sltiu(c: RvCpu, i: RvInsn): void { c.lo[i.rd] = sltU(c.lo[i.rs1], c.hi[i.rs1], i.imm, i.imm >> 31) ? 1 : 0; c.hi[i.rd] = 0; }
export function xori(c: RvCpu, i: RvInsn): void { c.lo[i.rd] = c.lo[i.rs1] ^ i.imm; c.hi[i.rd] = c.hi[i.rs1] ^ (i.imm >> 31); }
export function ori(c: RvCpu, i: RvInsn): void { c.lo[i.rd] = c.lo[i.rs1] | i.imm; c.hi[i.rd] = c.hi[i.rs1] | (i.imm >> 31); }
export function andi(c: RvCpu, i: RvInsn): void { c.lo[i.rd] = c.lo[i.rs1] & i.imm; c.hi[i.rd] = c.hi[i.rs1] & (i.imm >> 31); }
export function slli(c: RvCpu, i: RvInsn): void { sll64(c, i.rd, c.lo[i.rs1], c.hi[i.rs1], i.imm); }
export function srli(c: RvCpu, i: RvInsn): void { srl64(c, i.rd, c.lo[i.rs1], c.hi[i.rs1], i.imm); }
export function srai(c: RvCpu, i: RvInsn): void { sra64(c, i.rd, c.lo[i.rs1], c.hi[i.rs1], i.imm); }
export function addiw(c: RvCpu, i: RvInsn): void { set32(c, i.rd, (c.lo[i.rs1] + i.imm) | 0); }
export function slliw(c: RvCpu, i: RvInsn): void { set32(c, i.rd, c.lo[i.rs1] << i.imm); }
export function srliw(c: RvCpu, i: RvInsn): void { set32(c, i.rd, (c.lo[i.rs1] >>> i.imm) | 0); }
export function sraiw(c: RvCpu, i: RvInsn): void { set32(c, i.rd, c.lo[i.rs1] >> i.imm); }

// ---------------------------------------------------------------- register ALU
export function add(c: RvCpu, i: RvInsn): void { add64(c, i.rd, c.lo[i.rs1], c.hi[i.rs1], c.lo[i.rs2], c.hi[i.rs2]); }
export function sub(c: RvCpu, i: RvInsn): void {
  const al = c.lo[i.rs1], ah = c.hi[i.rs1], bl = c.lo[i.rs2], bh = c.hi[i.rs2];
  const s = (al >>> 0) - (bl >>> 0);
  c.lo[i.rd] = s | 0; c.hi[i.rd] = (ah - bh - (s < 0 ? 1 : 0)) | 0;
}
export function sll(c: RvCpu, i: RvInsn): void { sll64(c, i.rd, c.lo[i.rs1], c.hi[i.rs1], c.lo[i.rs2] & 63); }
export function srl(c: RvCpu, i: RvInsn): void { srl64(c, i.rd, c.lo[i.rs1], c.hi[i.rs1], c.lo[i.rs2] & 63); }
export function sra(c: RvCpu, i: RvInsn): void { sra64(c, i.rd, c.lo[i.rs1], c.hi[i.rs1], c.lo[i.rs2] & 63); }
export function slt(c: RvCpu, i: RvInsn): void { c.lo[i.rd] = sltS(c.lo[i.rs1], c.hi[i.rs1], c.lo[i.rs2], c.hi[i.rs2]) ? 1 : 0; c.hi[i.rd] = 0; }
export function sltu(c: RvCpu, i: RvInsn): void { c.lo[i.rd] = sltU(c.lo[i.rs1], c.hi[i.rs1], c.lo[i.rs2], c.hi[i.rs2]) ? 1 : 0; c.hi[i.rd] = 0; }
export function xor(c: RvCpu, i: RvInsn): void { c.lo[i.rd] = c.lo[i.rs1] ^ c.lo[i.rs2]; c.hi[i.rd] = c.hi[i.rs1] ^ c.hi[i.rs2]; }
export function or(c: RvCpu, i: RvInsn): void { c.lo[i.rd] = c.lo[i.rs1] | c.lo[i.rs2]; c.hi[i.rd] = c.hi[i.rs1] | c.hi[i.rs2]; }
export function and(c: RvCpu, i: RvInsn): void { c.lo[i.rd] = c.lo[i.rs1] & c.lo[i.rs2]; c.hi[i.rd] = c.hi[i.rs1] & c.hi[i.rs2]; }
export function addw(c: RvCpu, i: RvInsn): void { set32(c, i.rd, (c.lo[i.rs1] + c.lo[i.rs2]) | 0); }
export function subw(c: RvCpu, i: RvInsn): void { set32(c, i.rd, (c.lo[i.rs1] - c.lo[i.rs2]) | 0); }
export function sllw(c: RvCpu, i: RvInsn): void { set32(c, i.rd, c.lo[i.rs1] << (c.lo[i.rs2] & 31)); }
export function srlw(c: RvCpu, i: RvInsn): void { set32(c, i.rd, (c.lo[i.rs1] >>> (c.lo[i.rs2] & 31)) | 0); }
export function sraw(c: RvCpu, i: RvInsn): void { set32(c, i.rd, c.lo[i.rs1] >> (c.lo[i.rs2] & 31)); }

/** fence, fence.i: memory is sequentially consistent and code writes invalidate the decode cache already */
export function fence(_c: RvCpu, _i: RvInsn): void { /* ordering and instruction-cache sync are implicit here */ }

