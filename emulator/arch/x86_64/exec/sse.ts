/**
 * SSE and SSE2: the 128-bit xmm registers as compilers and C libraries
 * use them at x86-64's baseline. This file: operand access, moves, and
 * the state (MXCSR, fxsave / fxrstor); the integer SIMD in sseInt.ts, the
 * floating point and conversions in sseFp.ts.
 *
 * Registers: cpu.xd (dwords), .xb (bytes), .xw (words), .xf (floats),
 * .xq (doubles) are views of one buffer; register 16 is the scratch slot a
 * memory source is loaded into, so every executor reads `src` by index.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { GuestFault } from '../../../cpu/faults';

/** the scratch register a memory source is loaded into (src) */
const TMP = 16;

// ---------------------------------------------------------------- operand access

/** Load the W operand (xmm register or `bytes` of memory, the rest zero) into the scratch slot; its register index. */
export function src(cpu: X86Cpu, i: Insn, bytes: number): number {
  if (i.rm >= 0) return i.rm;
  const a = cpu.ea(i);
  const d = cpu.xd, o = TMP * 4;
  if (bytes === 16) {
    for (let k = 0; k < 4; k++) d[o + k] = cpu.mem.read32(a + 4 * k) | 0;
  } else if (bytes === 8) {
    d[o] = cpu.mem.read32(a) | 0; d[o + 1] = cpu.mem.read32(a + 4) | 0; d[o + 2] = 0; d[o + 3] = 0;
  } else if (bytes === 4) {
    d[o] = cpu.mem.read32(a) | 0; d[o + 1] = 0; d[o + 2] = 0; d[o + 3] = 0;
  } else {
    d[o] = cpu.mem.read16(a); d[o + 1] = 0; d[o + 2] = 0; d[o + 3] = 0;
  }
  return TMP;
}

/** #GP for a memory operand that is not 16-byte aligned (the aligned forms) */
function aligned16(cpu: X86Cpu, i: Insn): void {
  if (i.rm < 0 && cpu.ea(i) % 16 !== 0) throw new GuestFault('generalProtection', `${i.def.mnem}: unaligned 16-byte memory operand`);
}

/** Store `bytes` of xmm register r to the W operand. */
function store(cpu: X86Cpu, i: Insn, r: number, bytes: number): void {
  const d = cpu.xd;
  if (i.rm >= 0) {
    const o = i.rm * 4, s = r * 4;
    for (let k = 0; k < bytes / 4; k++) d[o + k] = d[s + k];
    return;
  }
  const a = cpu.ea(i);
  // last dword first: a fault at a region's end leaves memory unchanged
  for (let k = bytes / 4 - 1; k >= 0; k--) cpu.mem.write32(a + 4 * k, d[r * 4 + k]);
}

/** xmm register `from` into `to` (all 128 bits) */
function copyReg(cpu: X86Cpu, to: number, from: number): void {
  const d = cpu.xd;
  d[to * 4] = d[from * 4]; d[to * 4 + 1] = d[from * 4 + 1]; d[to * 4 + 2] = d[from * 4 + 2]; d[to * 4 + 3] = d[from * 4 + 3];
}

/** lane op over two registers into the destination (element-wise); f gets (a, b) unsigned lane values */
export function lanes8(cpu: X86Cpu, i: Insn, f: (a: number, b: number) => number): void {
  const b = cpu.xb, s = src(cpu, i, 16) * 16, o = i.reg * 16;
  for (let k = 0; k < 16; k++) b[o + k] = f(b[o + k], b[s + k]);
}
export function lanes16(cpu: X86Cpu, i: Insn, f: (a: number, b: number) => number): void {
  const w = cpu.xw, s = src(cpu, i, 16) * 8, o = i.reg * 8;
  for (let k = 0; k < 8; k++) w[o + k] = f(w[o + k], w[s + k]);
}
export function lanes32(cpu: X86Cpu, i: Insn, f: (a: number, b: number) => number): void {
  const d = cpu.xd, s = src(cpu, i, 16) * 4, o = i.reg * 4;
  for (let k = 0; k < 4; k++) d[o + k] = f(d[o + k], d[s + k]);
}

// ---------------------------------------------------------------- moves

/** movups/movupd/movdqu/movaps/movapd/movdqa load (sub 1: aligned) */
export function movLoad(cpu: X86Cpu, i: Insn): void {
  if (i.cc) aligned16(cpu, i);
  copyReg(cpu, i.reg, src(cpu, i, 16));
}
/** the store forms (Wx, Vx) */
export function movStore(cpu: X86Cpu, i: Insn): void {
  if (i.cc) aligned16(cpu, i);
  store(cpu, i, i.reg, 16);
}
/** movss load: from memory the upper lanes clear, from a register only lane 0 moves */
export function movssLoad(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4;
  if (i.rm >= 0) { d[o] = d[i.rm * 4]; return; }
  const s = src(cpu, i, 4) * 4;
  d[o] = d[s]; d[o + 1] = 0; d[o + 2] = 0; d[o + 3] = 0;
}
export function movssStore(cpu: X86Cpu, i: Insn): void {
  if (i.rm >= 0) { cpu.xd[i.rm * 4] = cpu.xd[i.reg * 4]; return; }
  store(cpu, i, i.reg, 4);
}
/** movsd load (sse2 scalar double) */
export function movsdLoad(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4;
  if (i.rm >= 0) { d[o] = d[i.rm * 4]; d[o + 1] = d[i.rm * 4 + 1]; return; }
  const s = src(cpu, i, 8) * 4;
  d[o] = d[s]; d[o + 1] = d[s + 1]; d[o + 2] = 0; d[o + 3] = 0;
}
export function movsdStore(cpu: X86Cpu, i: Insn): void {
  if (i.rm >= 0) { const d = cpu.xd; d[i.rm * 4] = d[i.reg * 4]; d[i.rm * 4 + 1] = d[i.reg * 4 + 1]; return; }
  store(cpu, i, i.reg, 8);
}
/** movq xmm, xmm/m64 (f3 0f 7e): the upper half cleared */
export function movqLoad(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4, s = src(cpu, i, 8) * 4;
  d[o] = d[s]; d[o + 1] = d[s + 1]; d[o + 2] = 0; d[o + 3] = 0;
}
/** movq xmm/m64, xmm (66 0f d6): to a register the upper half cleared */
export function movqStore(cpu: X86Cpu, i: Insn): void {
  if (i.rm >= 0) { const d = cpu.xd; d[i.rm * 4] = d[i.reg * 4]; d[i.rm * 4 + 1] = d[i.reg * 4 + 1]; d[i.rm * 4 + 2] = 0; d[i.rm * 4 + 3] = 0; return; }
  store(cpu, i, i.reg, 8);
}
/** movd / movq xmm, r/m32|64 (66 0f 6e) */
export function movdToX(cpu: X86Cpu, i: Insn): void {
  const v = cpu.readE(i, i.size);
  const d = cpu.xd, o = i.reg * 4;
  d[o] = v; d[o + 1] = i.size === 8 ? cpu.th : 0; d[o + 2] = 0; d[o + 3] = 0;
}
/** movd / movq r/m32|64, xmm (66 0f 7e) */
export function movdFromX(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4;
  cpu.writeE(i, i.size, d[o], d[o + 1]);
}
/** movlps/movlpd load (sub 0) and movhps/movhpd (sub 1): 64 bits into the low/high half; reg forms movhlps (0) / movlhps (1) */
export function movHalfLoad(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4 + (i.cc ? 2 : 0);
  if (i.rm >= 0) {
    // movhlps: high half of src to low; movlhps: low half of src to high
    const s = i.rm * 4 + (i.cc ? 0 : 2);
    d[o] = d[s]; d[o + 1] = d[s + 1];
    return;
  }
  const a = cpu.ea(i);
  d[o] = cpu.mem.read32(a) | 0; d[o + 1] = cpu.mem.read32(a + 4) | 0;
}
export function movHalfStore(cpu: X86Cpu, i: Insn): void {
  const a = cpu.ea(i);
  const d = cpu.xd, o = i.reg * 4 + (i.cc ? 2 : 0);
  cpu.mem.write32(a + 4, d[o + 1]); cpu.mem.write32(a, d[o]);
}
/** movnti m32/64, r */
export function movnti(cpu: X86Cpu, i: Insn): void {
  const v = cpu.getR(i.size, i.reg);
  cpu.writeM(i.size, cpu.ea(i), v, cpu.th);
}
/** movmskps (sub 4) / movmskpd (sub 8) / pmovmskb (sub 1): sign bits into a GPR */
export function movmsk(cpu: X86Cpu, i: Insn): void {
  const s = i.rm * 16;
  const b = cpu.xb;
  let m = 0;
  const step = i.cc;
  for (let k = 0, bit = 0; k < 16; k += step, bit++) if (b[s + k + step - 1] & 0x80) m |= 1 << bit;
  cpu.setR(4, i.reg, m, 0);
}

// ---------------------------------------------------------------- state

export function ldmxcsr(cpu: X86Cpu, i: Insn): void {
  const v = cpu.mem.read32(cpu.ea(i)) >>> 0;
  if (v & 0xffff0000) throw new GuestFault('generalProtection', `ldmxcsr: reserved bits set in 0x${v.toString(16)}`);
  cpu.mxcsr = v;
}
export function stmxcsr(cpu: X86Cpu, i: Insn): void {
  cpu.mem.write32(cpu.ea(i), cpu.mxcsr);
}
/** fxsave: the legacy x87 control word (reset values), MXCSR and the xmm registers (512-byte area, 16-aligned) */
export function fxsave(cpu: X86Cpu, i: Insn): void {
  const a = cpu.ea(i);
  if (a % 16 !== 0) throw new GuestFault('generalProtection', 'fxsave: unaligned area');
  const m = cpu.mem;
  m.write32(a + 508, 0);
  m.write16(a, cpu.fpuCw);
  m.write16(a + 2, 0); m.write16(a + 4, 0);
  m.write32(a + 24, cpu.mxcsr); m.write32(a + 28, 0xffff);
  for (let k = 0; k < 64; k++) m.write32(a + 160 + 4 * k, cpu.xd[k]);
}
export function fxrstor(cpu: X86Cpu, i: Insn): void {
  const a = cpu.ea(i);
  if (a % 16 !== 0) throw new GuestFault('generalProtection', 'fxrstor: unaligned area');
  const mx = cpu.mem.read32(a + 24) >>> 0;
  if (mx & 0xffff0000) throw new GuestFault('generalProtection', 'fxrstor: reserved MXCSR bits');
  for (let k = 0; k < 64; k++) cpu.xd[k] = cpu.mem.read32(a + 160 + 4 * k) | 0;
  cpu.mxcsr = mx;
}
