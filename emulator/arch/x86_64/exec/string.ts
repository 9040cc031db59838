/**
 * String instructions movs stos lods cmps scas, with rep / repe / repne and
 * the direction flag. A rep instruction runs to completion as one
 * instruction; a fault in the middle leaves rcx/rsi/rdi describing the
 * progress made and rip at the instruction, so it can be restarted (as
 * hardware does).
 *
 * With a 67 prefix (stringOp32) the count is ecx and the pointers are
 * esi/edi: addresses are the 32-bit values (zero-extended; a segment
 * override's base added), and every update is a 32-bit register write, so
 * the upper halves become zero. As measured on an Intel CPU
 * (test/fixtures/x86/gen-addr32.c): a rep form clears the upper half of
 * rcx even when ecx is 0, and movs/stos clear those of rsi/rdi (movs) or
 * rdi (stos) before the first iteration; lods/cmps/scas leave rsi/rdi
 * alone until an iteration writes them.
 *
 * On a full-system CPU, forward rep movs/stos run a page at a time
 * (stringPaged.ts), with the same effects.
 *
 * Data breakpoints (debug registers): a rep form traps after the iteration
 * whose access matched, as hardware does. rcx/rsi/rdi describe the
 * iterations done; rip stays at the instruction while iterations remain
 * (the run resumes it), else it is the next instruction. The test costs
 * one local boolean per iteration, false unless a data breakpoint is
 * enabled as the instruction starts.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { REP_NONE, REP_F3 } from '../insn';
import { F_SUB } from '../flags';
import { mask } from './alu';
import { repForwardPaged } from './stringPaged';

export const STR_MOVS = 0, STR_STOS = 1, STR_LODS = 2, STR_CMPS = 3, STR_SCAS = 4;

function rcxZero(cpu: X86Cpu): boolean { return (cpu.lo[1] | cpu.hi[1]) === 0; }
function rcxDec(cpu: X86Cpu): void {
  const l = cpu.lo[1];
  cpu.lo[1] = (l - 1) | 0;
  if (l === 0) cpu.hi[1] = (cpu.hi[1] - 1) | 0;
}
function srcBase(cpu: X86Cpu, i: Insn): number { return i.seg === 0 ? 0 : i.seg === 1 ? cpu.fsBase : cpu.gsBase; }

function cmpFlags(cpu: X86Cpu, size: number, dl: number, dh: number, sl: number, sh: number): void {
  let rl: number, rh = 0;
  if (size === 8) { const t = (dl >>> 0) - (sl >>> 0); rl = t | 0; rh = (dh - sh - (t < 0 ? 1 : 0)) | 0; }
  else rl = mask(size, dl - sl);
  cpu.fOp = F_SUB; cpu.fSz = size; cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = sl; cpu.fSh = sh; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = 0;
}

export function stringOp(cpu: X86Cpu, i: Insn): void {
  const size = i.size, kind = i.cc;
  const delta = cpu.df ? -size : size;
  const rep = i.rep !== REP_NONE;
  const seg = srcBase(cpu, i);
  const watched = rep && cpu.hw.dataArmed;
  // a full-system CPU's forward rep movs/stos: a page at a time (stringPaged.ts), with the same effects
  if (rep && kind <= STR_STOS && !cpu.df && cpu.sys !== null && !watched) { repForwardPaged(cpu, kind === STR_MOVS, size, seg); return; }
  for (;;) {
    if (rep && rcxZero(cpu)) return;
    switch (kind) {
      case STR_MOVS: {
        const s = cpu.regAddr(6), d = cpu.regAddr(7);
        const v = cpu.readM(size, s + seg), h = cpu.th;
        cpu.writeM(size, d, v, h);
        cpu.setRegAddr(6, s + delta); cpu.setRegAddr(7, d + delta);
        break;
      }
      case STR_STOS: {
        const d = cpu.regAddr(7);
        const v = cpu.getR(size, 0);
        cpu.writeM(size, d, v, cpu.th);
        cpu.setRegAddr(7, d + delta);
        break;
      }
      case STR_LODS: {
        const s = cpu.regAddr(6);
        const v = cpu.readM(size, s + seg);
        cpu.setR(size, 0, v, cpu.th);
        cpu.setRegAddr(6, s + delta);
        break;
      }
      case STR_CMPS: {
        const s = cpu.regAddr(6), d = cpu.regAddr(7);
        const a = cpu.readM(size, s + seg), ah = size === 8 ? cpu.th : 0;
        const b = cpu.readM(size, d), bh = size === 8 ? cpu.th : 0;
        cmpFlags(cpu, size, a, ah, b, bh);
        cpu.setRegAddr(6, s + delta); cpu.setRegAddr(7, d + delta);
        break;
      }
      default: { // scas
        const d = cpu.regAddr(7);
        const b = cpu.readM(size, d), bh = size === 8 ? cpu.th : 0;
        const a = cpu.getR(size, 0), ah = size === 8 ? cpu.th : 0;
        cmpFlags(cpu, size, a, ah, b, bh);
        cpu.setRegAddr(7, d + delta);
        break;
      }
    }
    if (!rep) return;
    rcxDec(cpu);
    if (kind >= STR_CMPS) {
      const zf = cpu.zf();
      if (i.rep === REP_F3 ? !zf : zf) return;
    }
    // a data breakpoint hit in this iteration (the run already stops): trap now, resume at the instruction if iterations remain
    if (watched && cpu.hw.hits !== 0) { if (!rcxZero(cpu)) cpu.rip = i.addr; return; }
  }
}

/** string instruction with 32-bit address size (67 prefix): ecx, esi, edi */
export function stringOp32(cpu: X86Cpu, i: Insn): void {
  const size = i.size, kind = i.cc;
  const delta = cpu.df ? -size : size;
  const rep = i.rep !== REP_NONE;
  const seg = srcBase(cpu, i);
  const lo = cpu.lo, hi = cpu.hi;
  const watched = rep && cpu.hw.dataArmed;
  if (rep) hi[1] = 0;
  if (kind === STR_MOVS) { hi[6] = 0; hi[7] = 0; } else if (kind === STR_STOS) hi[7] = 0;
  for (;;) {
    if (rep && lo[1] === 0) return;
    switch (kind) {
      case STR_MOVS: {
        const s = lo[6], d = lo[7];
        const v = cpu.readM(size, (s >>> 0) + seg), h = cpu.th;
        cpu.writeM(size, d >>> 0, v, h);
        lo[6] = (s + delta) | 0; lo[7] = (d + delta) | 0;
        break;
      }
      case STR_STOS: {
        const d = lo[7];
        const v = cpu.getR(size, 0);
        cpu.writeM(size, d >>> 0, v, cpu.th);
        lo[7] = (d + delta) | 0;
        break;
      }
      case STR_LODS: {
        const s = lo[6];
        const v = cpu.readM(size, (s >>> 0) + seg);
        cpu.setR(size, 0, v, cpu.th);
        lo[6] = (s + delta) | 0; hi[6] = 0;
        break;
      }
      case STR_CMPS: {
        const s = lo[6], d = lo[7];
        const a = cpu.readM(size, (s >>> 0) + seg), ah = size === 8 ? cpu.th : 0;
        const b = cpu.readM(size, d >>> 0), bh = size === 8 ? cpu.th : 0;
        cmpFlags(cpu, size, a, ah, b, bh);
        lo[6] = (s + delta) | 0; hi[6] = 0; lo[7] = (d + delta) | 0; hi[7] = 0;
        break;
      }
      default: { // scas
        const d = lo[7];
        const b = cpu.readM(size, d >>> 0), bh = size === 8 ? cpu.th : 0;
        const a = cpu.getR(size, 0), ah = size === 8 ? cpu.th : 0;
        cmpFlags(cpu, size, a, ah, b, bh);
        lo[7] = (d + delta) | 0; hi[7] = 0;
        break;
      }
    }
    if (!rep) return;
    lo[1] = (lo[1] - 1) | 0;
    if (kind >= STR_CMPS) {
      const zf = cpu.zf();
      if (i.rep === REP_F3 ? !zf : zf) return;
    }
    if (watched && cpu.hw.hits !== 0) { if (lo[1] !== 0) cpu.rip = i.addr; return; }
  }
}
