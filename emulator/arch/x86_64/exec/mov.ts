/**
 * Data movement: mov, movzx, movsx, movsxd, lea, xchg, cmpxchg, xadd,
 * cbw/cwde/cdqe, cwd/cdq/cqo, push/pop, bswap, cmovcc, setcc, leave, enter.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { F_ADD, F_SUB, ZF } from '../flags';
import { GuestFault } from '../../../cpu/faults';
import { mask } from './alu';

export function movEG(cpu: X86Cpu, i: Insn): void {
  const v = cpu.getR(i.size, i.reg);
  cpu.writeE(i, i.size, v, cpu.th);
}
export function movGE(cpu: X86Cpu, i: Insn): void {
  const v = cpu.readE(i, i.size);
  cpu.setR(i.size, i.reg, v, cpu.th);
}
/** mov E, imm (c6/c7) and mov reg, imm (b0+r / b8+r, rm = reg) */
export function movEI(cpu: X86Cpu, i: Insn): void { cpu.writeE(i, i.size, i.imm, i.immHi); }

export function mov64RR(cpu: X86Cpu, i: Insn): void { cpu.lo[i.rm] = cpu.lo[i.reg]; cpu.hi[i.rm] = cpu.hi[i.reg]; }
export function mov64RM(cpu: X86Cpu, i: Insn): void {
  const a = cpu.ea(i);
  const l = cpu.mem.read32(a) | 0, h = cpu.mem.read32(a + 4) | 0;
  cpu.lo[i.reg] = l; cpu.hi[i.reg] = h;
}
export function mov32RR(cpu: X86Cpu, i: Insn): void { cpu.lo[i.rm] = cpu.lo[i.reg]; cpu.hi[i.rm] = 0; }
/** 8b forms: destination is the reg field */
export function mov64RR2(cpu: X86Cpu, i: Insn): void { cpu.lo[i.reg] = cpu.lo[i.rm]; cpu.hi[i.reg] = cpu.hi[i.rm]; }
export function mov32RR2(cpu: X86Cpu, i: Insn): void { cpu.lo[i.reg] = cpu.lo[i.rm]; cpu.hi[i.reg] = 0; }

/**
 * lea: address arithmetic on the 32-bit halves, exact for every register value
 * (no segment base, never faults). 67 prefix: the address is truncated to 32 bits.
 */
export function lea(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  if (i.ripRel) {
    const a = i.disp, h = Math.floor(a / 4294967296);
    cpu.setR(size, i.reg, (a - h * 4294967296) | 0, i.asize === 4 ? 0 : h);
    return;
  }
  const b = i.base, x = i.index, sc = i.scale, disp = i.disp;
  const bl = b >= 0 ? cpu.lo[b] : 0, bh = b >= 0 ? cpu.hi[b] : 0;
  let xl = 0, xh = 0;
  if (x >= 0) {
    xl = cpu.lo[x]; xh = cpu.hi[x];
    if (sc !== 0) { xh = (xh << sc) | (xl >>> (32 - sc)); xl = xl << sc; }
  }
  if (size !== 8 || i.asize === 4) {
    cpu.setR(size, i.reg, (bl + xl + disp) | 0, 0);
    return;
  }
  const t = (bl >>> 0) + (xl >>> 0) + (disp >>> 0);
  const carry = t >= 8589934592 ? 2 : t >= 4294967296 ? 1 : 0;
  cpu.lo[i.reg] = t | 0;
  cpu.hi[i.reg] = (bh + xh + (disp >> 31) + carry) | 0;
}
/** lea r32, [base + index*scale + disp]: only the low halves matter */
export function lea32(cpu: X86Cpu, i: Insn): void {
  const b = i.base, x = i.index;
  let v = i.disp;
  if (b >= 0) v += cpu.lo[b];
  if (x >= 0) v += cpu.lo[x] << i.scale;
  cpu.lo[i.reg] = v | 0; cpu.hi[i.reg] = 0;
}

/** movzx Gv, Eb/Ew (source size in i.cc) */
export function movzx(cpu: X86Cpu, i: Insn): void {
  const v = cpu.readE(i, i.cc);
  cpu.setR(i.size, i.reg, v, 0);
}
/** movsx Gv, Eb/Ew, movsxd Gv, Ed (source size in i.cc) */
export function movsx(cpu: X86Cpu, i: Insn): void {
  let v = cpu.readE(i, i.cc);
  v = i.cc === 1 ? (v << 24) >> 24 : i.cc === 2 ? (v << 16) >> 16 : v | 0;
  cpu.setR(i.size, i.reg, mask(i.size, v), v >> 31);
}

export function xchg(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  const g = cpu.getR(size, i.reg), gh = cpu.th;
  if (i.rm >= 0) {
    const e = cpu.getR(size, i.rm), eh = cpu.th;
    cpu.setR(size, i.rm, g, gh);
    cpu.setR(size, i.reg, e, eh);
  } else {
    const a = cpu.ea(i);
    const e = cpu.readM(size, a), eh = cpu.th;
    cpu.writeM(size, a, g, gh);
    cpu.setR(size, i.reg, e, eh);
  }
}

function setCmpFlags(cpu: X86Cpu, size: number, dl: number, dh: number, sl: number, sh: number): void {
  let rl: number, rh = 0;
  if (size === 8) {
    const t = (dl >>> 0) - (sl >>> 0); rl = t | 0; rh = (dh - sh - (t < 0 ? 1 : 0)) | 0;
  } else rl = mask(size, dl - sl);
  cpu.fOp = F_SUB; cpu.fSz = size; cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = sl; cpu.fSh = sh; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = 0;
}

/** cmpxchg E, G: compare accumulator with E */
export function cmpxchg(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  const al = cpu.getR(size, 0), ah = size === 8 ? cpu.th : 0;
  const a = i.rm >= 0 ? 0 : cpu.ea(i);
  const dl = i.rm >= 0 ? cpu.getR(size, i.rm) : cpu.readM(size, a), dh = size === 8 ? cpu.th : 0;
  const src = cpu.getR(size, i.reg), srch = cpu.th;
  const equal = dl === al && dh === ah;
  if (equal) {
    if (i.rm >= 0) cpu.setR(size, i.rm, src, srch); else cpu.writeM(size, a, src, srch);
  } else {
    if (i.rm < 0) cpu.writeM(size, a, dl, dh); // the processor always writes the destination
    cpu.setR(size, 0, dl, dh);
  }
  setCmpFlags(cpu, size, al, ah, dl, dh);
}

/**
 * cmpxchg8b m64 (i.size 4 or 2) / cmpxchg16b m128 (i.size 8, REX.W; #GP unless 16-byte aligned):
 * compare edx:eax (rdx:rax) with the memory operand; equal: ZF=1 and the operand becomes
 * ecx:ebx (rcx:rbx); else ZF=0 and edx:eax (rdx:rax) receive it. The operand is written either
 * way (SDM: the processor never produces a locked read without a write). Other flags unchanged.
 */
export function cmpxchgDouble(cpu: X86Cpu, i: Insn): void {
  const a = cpu.ea(i);
  const lo = cpu.lo, hi = cpu.hi;
  let equal: boolean;
  if (i.size === 8) {
    if (a % 16 !== 0) throw new GuestFault('generalProtection', 'cmpxchg16b operand not 16-byte aligned');
    const m0 = cpu.mem.read32(a) | 0, m1 = cpu.mem.read32(a + 4) | 0;
    const m2 = cpu.mem.read32(a + 8) | 0, m3 = cpu.mem.read32(a + 12) | 0;
    equal = m0 === lo[0] && m1 === hi[0] && m2 === lo[2] && m3 === hi[2];
    if (equal) {
      cpu.mem.write32(a + 12, hi[1]); cpu.mem.write32(a + 8, lo[1]);
      cpu.mem.write32(a + 4, hi[3]); cpu.mem.write32(a, lo[3]);
    } else {
      cpu.mem.write32(a + 12, m3); cpu.mem.write32(a + 8, m2); cpu.mem.write32(a + 4, m1); cpu.mem.write32(a, m0);
      lo[0] = m0; hi[0] = m1; lo[2] = m2; hi[2] = m3;
    }
  } else {
    const m0 = cpu.mem.read32(a) | 0, m1 = cpu.mem.read32(a + 4) | 0;
    equal = m0 === lo[0] && m1 === lo[2];
    if (equal) { cpu.mem.write32(a + 4, lo[1]); cpu.mem.write32(a, lo[3]); }
    else {
      cpu.mem.write32(a + 4, m1); cpu.mem.write32(a, m0);
      lo[0] = m0; hi[0] = 0; lo[2] = m1; hi[2] = 0;
    }
  }
  cpu.setEager((cpu.arithFlags() & ~ZF) | (equal ? ZF : 0));
}

/** xadd E, G */
export function xadd(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  const sl = cpu.getR(size, i.reg), sh = size === 8 ? cpu.th : 0;
  const a = i.rm >= 0 ? 0 : cpu.ea(i);
  const dl = i.rm >= 0 ? cpu.getR(size, i.rm) : cpu.readM(size, a), dh = size === 8 ? cpu.th : 0;
  let rl: number, rh = 0;
  if (size === 8) { const t = (dl >>> 0) + (sl >>> 0); rl = t | 0; rh = (dh + sh + (t > 0xffffffff ? 1 : 0)) | 0; }
  else rl = mask(size, dl + sl);
  if (i.rm >= 0) { cpu.setR(size, i.reg, dl, dh); cpu.setR(size, i.rm, rl, rh); }
  else { cpu.writeM(size, a, rl, rh); cpu.setR(size, i.reg, dl, dh); }
  cpu.fOp = F_ADD; cpu.fSz = size; cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = sl; cpu.fSh = sh; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = 0;
}

/** cbw / cwde / cdqe */
export function cbwFamily(cpu: X86Cpu, i: Insn): void {
  const lo = cpu.lo;
  switch (i.size) {
    case 2: lo[0] = (lo[0] & ~0xffff) | (((lo[0] << 24) >> 24) & 0xffff); break;
    case 4: lo[0] = (lo[0] << 16) >> 16; cpu.hi[0] = 0; break;
    default: cpu.hi[0] = lo[0] >> 31;
  }
}
/** cwd / cdq / cqo */
export function cwdFamily(cpu: X86Cpu, i: Insn): void {
  switch (i.size) {
    case 2: cpu.lo[2] = (cpu.lo[2] & ~0xffff) | ((cpu.lo[0] << 16) >> 31 & 0xffff); break;
    case 4: cpu.lo[2] = cpu.lo[0] >> 31; cpu.hi[2] = 0; break;
    default: cpu.lo[2] = cpu.hi[2] = cpu.hi[0] >> 31;
  }
}

// ---- stack -------------------------------------------------------------
/** push r64 (opcode reg in rm), push E (ff /6) */
export function pushE(cpu: X86Cpu, i: Insn): void {
  if (i.size === 2) {
    const v = cpu.readE(i, 2);
    const sp = cpu.regAddr(4) - 2;
    cpu.mem.write16(sp, v);
    cpu.setRegAddr(4, sp);
    return;
  }
  const l = cpu.readE(i, 8);
  cpu.push64(l, cpu.th);
}
export function pushR64(cpu: X86Cpu, i: Insn): void {
  cpu.push64(cpu.lo[i.rm], cpu.hi[i.rm]);
}
export function pushI(cpu: X86Cpu, i: Insn): void {
  if (i.size === 2) {
    const sp = cpu.regAddr(4) - 2;
    cpu.mem.write16(sp, i.imm);
    cpu.setRegAddr(4, sp);
    return;
  }
  cpu.push64(i.imm, i.immHi);
}
/** pop r64 / pop E (8f /0): rsp is incremented before the destination is written */
export function popE(cpu: X86Cpu, i: Insn): void {
  if (i.size === 2) {
    const sp = cpu.regAddr(4);
    const v = cpu.mem.read16(sp);
    if (i.rm < 0) { const a = cpu.ea(i); cpu.mem.write16(a, v); } // may fault before rsp changes
    cpu.setRegAddr(4, sp + 2);
    if (i.rm >= 0) cpu.setR(2, i.rm, v, 0);
    return;
  }
  const sp = cpu.regAddr(4);
  const l = cpu.mem.read32(sp) | 0, h = cpu.mem.read32(sp + 4) | 0;
  if (i.rm >= 0) { cpu.setRegAddr(4, sp + 8); cpu.setR(8, i.rm, l, h); return; }
  // memory destination: address computed with the incremented rsp
  const old0 = cpu.lo[4], old1 = cpu.hi[4];
  cpu.setRegAddr(4, sp + 8);
  try { cpu.writeM(8, cpu.ea(i), l, h); } catch (e) { cpu.lo[4] = old0; cpu.hi[4] = old1; throw e; }
}
export function popR64(cpu: X86Cpu, i: Insn): void {
  const l = cpu.pop64();
  cpu.lo[i.rm] = l; cpu.hi[i.rm] = cpu.th;
}

export function bswap(cpu: X86Cpu, i: Insn): void {
  const r = i.rm;
  const sw = (x: number) => ((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24);
  if (i.size === 8) { const l = cpu.lo[r]; cpu.lo[r] = sw(cpu.hi[r]); cpu.hi[r] = sw(l); }
  else if (i.size === 4) { cpu.lo[r] = sw(cpu.lo[r]); cpu.hi[r] = 0; }
  else cpu.lo[r] &= ~0xffff; // bswap r16: undefined; Intel and AMD both clear the low word
}

/** cmovcc Gv, Ev: the source is read (and may fault) even when the condition is false */
export function cmovcc(cpu: X86Cpu, i: Insn): void {
  const v = cpu.readE(i, i.size), h = cpu.th;
  if (cpu.cond(i.cc)) cpu.setR(i.size, i.reg, v, h);
  else if (i.size === 4) cpu.hi[i.reg] = 0; // 32-bit destination is zero-extended regardless
}
export function setcc(cpu: X86Cpu, i: Insn): void {
  cpu.writeE(i, 1, cpu.cond(i.cc) ? 1 : 0, 0);
}

export function leave(cpu: X86Cpu, _i: Insn): void {
  const bp = cpu.regAddr(5);
  const l = cpu.mem.read32(bp) | 0, h = cpu.mem.read32(bp + 4) | 0;
  cpu.setRegAddr(4, bp + 8);
  cpu.lo[5] = l; cpu.hi[5] = h;
}
/** enter imm16, imm8 (nesting level 0 and 1..31) */
export function enter(cpu: X86Cpu, i: Insn): void {
  const alloc = i.imm & 0xffff, level = i.imm2 & 0x1f;
  const oldSp = cpu.regAddr(4), oldBp = cpu.regAddr(5);
  const lo0 = cpu.lo.slice(), hi0 = cpu.hi.slice();
  try {
    cpu.push64(cpu.lo[5], cpu.hi[5]);
    const frame = oldSp - 8;
    for (let k = 1; k < level; k++) {
      const a = oldBp - 8 * k;
      cpu.push64(cpu.mem.read32(a) | 0, cpu.mem.read32(a + 4) | 0);
    }
    if (level > 0) cpu.pushAddr(frame);
    cpu.setRegAddr(5, frame);
    cpu.setRegAddr(4, cpu.regAddr(4) - alloc);
  } catch (e) { cpu.lo.set(lo0); cpu.hi.set(hi0); throw e; }
}

/** xlatb: al = byte [rbx + al] (with a segment override's base) */
export function xlat(cpu: X86Cpu, i: Insn): void {
  const seg = i.seg === 0 ? 0 : i.seg === 1 ? cpu.fsBase : cpu.gsBase;
  const a = (i.asize === 4 ? cpu.lo[3] >>> 0 : cpu.regAddr(3)) + (cpu.lo[0] & 0xff) + seg;
  cpu.setR(1, 0, cpu.mem.read8(a), 0);
}
