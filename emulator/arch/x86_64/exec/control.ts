/**
 * Control flow: jcc, jmp (relative, indirect through register or memory),
 * call, ret, ret imm16, loop/loope/loopne, jrcxz/jecxz.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { GuestFault } from '../../../cpu/faults';

const TWO32 = 4294967296;

function toAddr(l: number, h: number): number {
  if (h > 0x7fff || h < -0x8000) throw new GuestFault('generalProtection', 'non-canonical branch target');
  return h * TWO32 + (l >>> 0);
}

export function jcc(cpu: X86Cpu, i: Insn): void { if (cpu.cond(i.cc)) cpu.rip = i.target; }
export function jz(cpu: X86Cpu, i: Insn): void { if (cpu.zf()) cpu.rip = i.target; }
export function jnz(cpu: X86Cpu, i: Insn): void { if (!cpu.zf()) cpu.rip = i.target; }
export function jl(cpu: X86Cpu, i: Insn): void { if (cpu.lt()) cpu.rip = i.target; }
export function jge(cpu: X86Cpu, i: Insn): void { if (!cpu.lt()) cpu.rip = i.target; }
export function jmpRel(cpu: X86Cpu, i: Insn): void { cpu.rip = i.target; }

export function jmpE(cpu: X86Cpu, i: Insn): void {
  const l = cpu.readE(i, 8);
  cpu.rip = toAddr(l, cpu.th);
}
export function callRel(cpu: X86Cpu, i: Insn): void {
  cpu.pushAddr(i.next);
  cpu.rip = i.target;
}
export function callE(cpu: X86Cpu, i: Insn): void {
  const l = cpu.readE(i, 8);
  const t = toAddr(l, cpu.th);
  cpu.pushAddr(i.next);
  cpu.rip = t;
}
/** ret / ret imm16 (imm in i.imm) */
export function ret(cpu: X86Cpu, i: Insn): void {
  const sp = cpu.regAddr(4);
  const l = cpu.mem.read32(sp) | 0, h = cpu.mem.read32(sp + 4) | 0;
  const t = toAddr(l, h);
  cpu.setRegAddr(4, sp + 8 + (i.imm & 0xffff));
  cpu.rip = t;
}

/** loop (cc=2) / loope (cc=1) / loopne (cc=0): count register rcx (ecx with 67) */
export function loop(cpu: X86Cpu, i: Insn): void {
  let nz: boolean;
  if (i.asize === 4) { cpu.lo[1] = (cpu.lo[1] - 1) | 0; cpu.hi[1] = 0; nz = cpu.lo[1] !== 0; }
  else {
    const l = cpu.lo[1];
    cpu.lo[1] = (l - 1) | 0;
    if (l === 0) cpu.hi[1] = (cpu.hi[1] - 1) | 0;
    nz = (cpu.lo[1] | cpu.hi[1]) !== 0;
  }
  const take = i.cc === 2 ? nz : i.cc === 1 ? nz && cpu.zf() : nz && !cpu.zf();
  if (take) cpu.rip = i.target;
}
export function jrcxz(cpu: X86Cpu, i: Insn): void {
  const z = i.asize === 4 ? cpu.lo[1] === 0 : (cpu.lo[1] | cpu.hi[1]) === 0;
  if (z) cpu.rip = i.target;
}
