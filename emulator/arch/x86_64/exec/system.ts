/**
 * System and flag instructions: nop forms, endbr64, pause, fences, int3,
 * int n, ud2, hlt, syscall, vmcall, rdtsc, cpuid, clc/stc/cmc, cld/std,
 * cli/sti, lahf/sahf, pushf/popf, mov to/from debug registers.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { CF, ARITH_MASK, SF, ZF, AF, PF } from '../flags';
import { GuestFault, FAULT_UD, STOP_BREAKPOINT, STOP_HALT, STOP_HYPERCALL, STOP_SYSCALL } from '../../../cpu/faults';
import { u64 } from '../../../memory/address';
import { deliverSoft } from '../sysmode/delivery';
import { cpuidSys } from '../sysmode/cpuid';
import { syscallSys } from './privileged';
import { gp } from '../sysmode/exception';

export function nop(_cpu: X86Cpu, _i: Insn): void { /* nothing */ }

/** int3: a breakpoint trap, unless the host's inline breakpoint handler takes it (X86Cpu.inlineBreakpoint) */
export function int3(cpu: X86Cpu, i: Insn): void {
  const hook = cpu.inlineBreakpoint;
  if (hook !== null && !cpu.tf && hook(cpu, i.addr)) return;
  cpu.stop(STOP_BREAKPOINT);
}
/** int n: no IDT is modelled; software interrupts other than int3 are a #GP, like a missing IDT gate */
export function intN(cpu: X86Cpu, i: Insn): void {
  const s = cpu.sys;
  if (s !== null) { deliverSoft(cpu, s, i.imm & 0xff); cpu.endRun(); return; } // through the IDT (a fault in delivery: at the int)
  if ((i.imm & 0xff) === 3) { cpu.stop(STOP_BREAKPOINT); return; }
  cpu.stop(new GuestFault('generalProtection', `int 0x${(i.imm & 0xff).toString(16)}: no interrupt gate`));
}
export function ud(cpu: X86Cpu, _i: Insn): void { cpu.stop(FAULT_UD); }

export function hlt(cpu: X86Cpu, _i: Insn): void {
  const s = cpu.sys;
  if (s !== null && s.cpl !== 0) throw gp(0, 'hlt at CPL 3');
  cpu.stop(cpu.userMode ? new GuestFault('generalProtection', 'hlt in user mode') : STOP_HALT);
}
/** cli / sti: privileged (IOPL 0) */
export function cliSti(cpu: X86Cpu, i: Insn): void {
  const s = cpu.sys;
  if (s !== null) {
    // IOPL-sensitive (no VME/PVI); STI shadows interrupts for one instruction when it sets IF
    if (s.cpl > ((cpu.otherFlags >>> 12) & 3)) throw gp(0, `${i.def.mnem} at CPL ${s.cpl}`);
    if (i.cc && (cpu.otherFlags & 0x200) === 0) { s.intShadow = true; cpu.endRun(); }
  } else if (cpu.userMode) throw new GuestFault('generalProtection', `${i.def.mnem} in user mode`);
  if (i.cc) cpu.otherFlags |= 0x200; else cpu.otherFlags &= ~0x200;
}

/** syscall: rcx = next rip, r11 = rflags (as hardware does), then trap to the emulated kernel */
export function syscall(cpu: X86Cpu, _i: Insn): void {
  if (cpu.sys !== null) { syscallSys(cpu, cpu.sys); return; }
  if (!cpu.userMode) { cpu.stop(FAULT_UD); return; } // no LSTAR: the emulated kernel only takes syscalls from user mode
  cpu.setRegAddr(1, cpu.rip);
  const f = cpu.getRflags();
  cpu.lo[11] = f; cpu.hi[11] = 0;
  cpu.stop(STOP_SYSCALL);
}
/** vmcall: hypercall from kernel mode; #UD from user mode */
export function vmcall(cpu: X86Cpu, _i: Insn): void {
  if (cpu.sys !== null) throw FAULT_UD; // no hypervisor below a system-mode CPU
  cpu.stop(cpu.userMode ? FAULT_UD : STOP_HYPERCALL);
}

/** rdtsc: the virtual clock is the CPU's retired-instruction count */
export function rdtsc(cpu: X86Cpu, _i: Insn): void {
  const s = cpu.sys;
  if (s !== null) {
    // the virtual clock's TSC (CR4.TSD: CPL 0 only)
    if ((s.cr4 & 4) !== 0 && s.cpl !== 0) throw gp(0, 'rdtsc at CPL 3 with CR4.TSD');
    const v = s.tsc();
    cpu.lo[0] = Number(v & 0xffffffffn) | 0; cpu.hi[0] = 0;
    cpu.lo[2] = Number(v >> 32n) | 0; cpu.hi[2] = 0;
    return;
  }
  const t = cpu.instret;
  const h = Math.floor(t / 4294967296);
  cpu.lo[0] = (t - h * 4294967296) | 0; cpu.hi[0] = 0;
  cpu.lo[2] = h | 0; cpu.hi[2] = 0;
}

const VENDOR = 'KprobeDbgX86';
function str4(s: string, k: number): number {
  return s.charCodeAt(k) | (s.charCodeAt(k + 1) << 8) | (s.charCodeAt(k + 2) << 16) | (s.charCodeAt(k + 3) << 24);
}
/**
 * cpuid: a small deterministic model advertising exactly what is implemented: fpu, tsc, cx8, cmov,
 * fxsr, sse, sse2 (x86-64's baseline; no sse3 and later, no avx / osxsave, so a C library's ifuncs
 * pick their sse2 code), cx16, popcnt, lzcnt, bmi1 tzcnt, syscall, long mode
 */
/** cpuid leaf 1 edx: fpu, tsc, cx8, cmov, fxsr, sse, sse2 (also the user processes' AT_HWCAP) */
export const CPUID1_EDX = 1 | 1 << 4 | 1 << 8 | 1 << 15 | 1 << 24 | 1 << 25 | 1 << 26;

export function cpuid(cpu: X86Cpu, _i: Insn): void {
  if (cpu.sys !== null) { cpuidSys(cpu, cpu.sys); return; }
  const leaf = cpu.lo[0] >>> 0;
  let a = 0, b = 0, c = 0, d = 0;
  switch (leaf) {
    case 0: a = 7; b = str4(VENDOR, 0); d = str4(VENDOR, 4); c = str4(VENDOR, 8); break;
    case 1: a = 0x000306a9; b = cpu.id << 24; c = 1 << 23 /* popcnt */ | 1 << 13 /* cx16 */; d = CPUID1_EDX; break;
    case 7: if ((cpu.lo[1] >>> 0) === 0) b = 1 << 3; /* bmi1 */ break;
    case 0x80000000: a = 0x80000001; break;
    case 0x80000001: c = 1 << 5; /* lzcnt */ d = 1 << 11 | 1 << 29; /* syscall, long mode */ break;
    default: break;
  }
  const lo = cpu.lo, hi = cpu.hi;
  lo[0] = a; lo[3] = b; lo[1] = c; lo[2] = d;
  hi[0] = hi[3] = hi[1] = hi[2] = 0;
}

export function clc(cpu: X86Cpu, _i: Insn): void { cpu.setEager(cpu.arithFlags() & ~CF); }
export function stc(cpu: X86Cpu, _i: Insn): void { cpu.setEager(cpu.arithFlags() | CF); }
export function cmc(cpu: X86Cpu, _i: Insn): void { cpu.setEager(cpu.arithFlags() ^ CF); }
export function cld(cpu: X86Cpu, _i: Insn): void { cpu.df = false; }
export function std(cpu: X86Cpu, _i: Insn): void { cpu.df = true; }

/** lahf: ah = SF:ZF:0:AF:0:PF:1:CF */
export function lahf(cpu: X86Cpu, _i: Insn): void {
  const f = (cpu.arithFlags() & (SF | ZF | AF | PF | CF)) | 2;
  cpu.lo[0] = (cpu.lo[0] & ~0xff00) | (f << 8);
}
export function sahf(cpu: X86Cpu, _i: Insn): void {
  const ah = (cpu.lo[0] >> 8) & 0xff;
  const keep = cpu.arithFlags() & ARITH_MASK & ~(SF | ZF | AF | PF | CF);
  cpu.setEager(keep | (ah & (SF | ZF | AF | PF | CF)));
}

export function pushf(cpu: X86Cpu, _i: Insn): void {
  cpu.push64(cpu.getRflags() & ~0x30000, 0); // VM and RF read as 0
}
/** popf: in user mode IF/IOPL are not changed (IOPL 0), as hardware does; RF is cleared */
export function popf(cpu: X86Cpu, _i: Insn): void {
  const sp = cpu.regAddr(4);
  const v = cpu.mem.read32(sp);
  cpu.setRegAddr(4, sp + 8);
  const keep = cpu.userMode ? cpu.otherFlags & (0x200 | 0x3000) : 0;
  const wasIf = cpu.otherFlags & 0x200;
  cpu.setRflags(cpu.userMode ? (v & ~(0x200 | 0x3000)) | keep : v);
  cpu.resumeFlag = false;
  if (cpu.sys !== null && wasIf === 0 && (cpu.otherFlags & 0x200) !== 0) cpu.endRun(); // interrupts are looked at between runs
}

/**
 * mov r64, DRn (0f 21) / mov DRn, r64 (0f 23): ModRM.reg is the debug
 * register, ModRM.rm the general register (mod ignored; the operand is
 * always 64 bits). DR8-DR15 (REX.R): #UD; CPL > 0: #GP; DR4/DR5 alias
 * DR6/DR7 (CR4.DE = 0); a 1 in bits 63:32 of DR6/DR7: #GP (X86Cpu.writeDr).
 * DR7.GD (general detect) is kept but raises no #DB. Flags are left
 * unchanged (the SDM leaves them undefined).
 */
function drAccess(cpu: X86Cpu, i: Insn, what: string): void {
  if (i.reg >= 8) throw FAULT_UD;
  if (cpu.userMode) throw new GuestFault('generalProtection', `${what} in user mode`);
}
export function movFromDr(cpu: X86Cpu, i: Insn): void {
  drAccess(cpu, i, `mov from DR${i.reg}`);
  const v = cpu.readDr(i.reg);
  cpu.lo[i.rm] = Number(v & 0xffffffffn) | 0;
  cpu.hi[i.rm] = Number(v >> 32n) | 0;
}
export function movToDr(cpu: X86Cpu, i: Insn): void {
  drAccess(cpu, i, `mov to DR${i.reg}`);
  cpu.writeDr(i.reg, u64(cpu.lo[i.rm], cpu.hi[i.rm]));
}
