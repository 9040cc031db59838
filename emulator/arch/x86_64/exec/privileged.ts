/**
 * The system instructions only a system-mode CPU (X86Cpu.sys set: the
 * full-system machine's) executes: MOV to/from CRn, RDMSR/WRMSR, the
 * descriptor-table loads and stores, segment register loads, LTR/STR/
 * LLDT/SLDT, INVLPG, SWAPGS, SYSRET, SYSENTER/SYSEXIT, IRETQ, far RET and
 * far JMP/CALL through memory, IN/OUT/INS/OUTS, RDTSCP/RDPID, CLTS,
 * WBINVD/INVD. Without the system half they raise #UD,
 * as they did when the decoder did not know them (the emulated kernel's
 * CPU never ran them).
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { FAULT_UD } from '../../../cpu/faults';
import { u64, fromVAddr } from '../../../memory/address';
import type { SystemState } from '../sysmode/state';
import { CR0_PG, CR0_PE, CR0_TS, CR0_WP, CR0_ET, CR4_PAE, CR4_PGE, CR4_PSE, CR4_SUPPORTED, readMsr, writeMsr } from '../sysmode/state';
import { X86Exception, gp, notEmulated, VEC_NP } from '../sysmode/exception';
import { loadLdt, loadSegment, loadTr, readDescriptor, selectorOf, SREG_CS, SREG_SS, codeDescriptor, isCode } from '../sysmode/segments';
import { iretq as iretqSys, nullOuterSegments, setCpl } from '../sysmode/delivery';

const TWO32 = 4294967296;

/** the system half, or #UD (a CPU without one: the emulated-kernel machine's) */
function sysOf(cpu: X86Cpu): SystemState {
  const s = cpu.sys;
  if (s === null) throw FAULT_UD;
  return s;
}
/** the system half at CPL 0, else #GP(0) */
function ring0(cpu: X86Cpu, i: Insn): SystemState {
  const s = sysOf(cpu);
  if (s.cpl !== 0) throw gp(0, `${i.def.mnem} at CPL ${s.cpl}`);
  return s;
}
function setR64(cpu: X86Cpu, r: number, v: bigint): void {
  const u = BigInt.asUintN(64, v);
  cpu.lo[r] = Number(u & 0xffffffffn) | 0;
  cpu.hi[r] = Number(u >> 32n) | 0;
}

// ---------------------------------------------------------------- control registers
/** mov r64, CRn (0f 20): CR0 CR2 CR3 CR4 CR8; others #UD */
export function movFromCr(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  if (![0, 2, 3, 4, 8].includes(i.reg)) throw FAULT_UD;
  if (s.cpl !== 0) throw gp(0, `mov from CR${i.reg} at CPL ${s.cpl}`);
  const v = i.reg === 0 ? BigInt(s.cr0 >>> 0) : i.reg === 2 ? fromVAddr(s.cr2) : i.reg === 3 ? BigInt(s.cr3) : i.reg === 4 ? BigInt(s.cr4) : BigInt(s.cr8);
  setR64(cpu, i.rm, v);
}

/** mov CRn, r64 (0f 22): the checks of SDM vol. 2 "MOV—Move to/from Control Registers" for a CPU that stays in long mode */
export function movToCr(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  if (![0, 2, 3, 4, 8].includes(i.reg)) throw FAULT_UD;
  if (s.cpl !== 0) throw gp(0, `mov to CR${i.reg} at CPL ${s.cpl}`);
  const v = u64(cpu.lo[i.rm], cpu.hi[i.rm]);
  const m = s.mem;
  switch (i.reg) {
    case 0: {
      if (v >> 32n !== 0n) throw gp(0, 'mov to CR0: bits 63:32 set');
      const n = Number(v) | CR0_ET;
      if ((n & CR0_PG) !== 0 && (n & CR0_PE) === 0) throw gp(0, 'mov to CR0: PG without PE');
      if ((n & CR0_PG) === 0) throw gp(0, 'mov to CR0: leaving long mode is not emulated');
      if ((n & 0x60000000) === 0x20000000) throw gp(0, 'mov to CR0: NW without CD');
      const changed = (n ^ s.cr0) & (CR0_PG | CR0_WP);
      s.cr0 = n >>> 0;
      s.syncPaging();
      if (changed !== 0) m.flushAll();
      return;
    }
    case 2: s.cr2 = Number(BigInt.asIntN(64, v)); return;
    case 3:
      if (v >> 40n !== 0n) throw gp(0, `mov to CR3: 0x${v.toString(16)} beyond the physical address width`);
      s.cr3 = Number(v);
      s.syncPaging();
      m.flushNonGlobal();
      return;
    case 4: {
      if ((v & ~BigInt(CR4_SUPPORTED)) !== 0n) throw gp(0, `mov to CR4: 0x${v.toString(16)} sets a bit this CPU lacks`);
      const n = Number(v);
      if ((n & CR4_PAE) === 0) throw gp(0, 'mov to CR4: clearing PAE in long mode');
      const changed = (n ^ s.cr4) & (CR4_PGE | CR4_PSE | CR4_PAE);
      s.cr4 = n;
      s.syncPaging();
      if (changed !== 0) m.flushAll();
      return;
    }
    default:
      if (v > 15n) throw gp(0, 'mov to CR8: bits 63:4 set');
      s.cr8 = Number(v);
      cpu.endRun(); // a lower priority class may let an interrupt in
  }
}

export function clts(cpu: X86Cpu, i: Insn): void { const s = ring0(cpu, i); s.cr0 = (s.cr0 & ~CR0_TS) >>> 0; }
/** wbinvd / invd: no caches are modelled */
export function cacheOp(cpu: X86Cpu, i: Insn): void { ring0(cpu, i); }

// ---------------------------------------------------------------- MSRs
export function rdmsr(cpu: X86Cpu, i: Insn): void {
  const s = ring0(cpu, i);
  const v = readMsr(cpu, s, cpu.lo[1] >>> 0, i.addr);
  cpu.lo[0] = Number(v & 0xffffffffn) | 0; cpu.hi[0] = 0;
  cpu.lo[2] = Number(v >> 32n) | 0; cpu.hi[2] = 0;
}
export function wrmsr(cpu: X86Cpu, i: Insn): void {
  const s = ring0(cpu, i);
  writeMsr(cpu, s, cpu.lo[1] >>> 0, u64(cpu.lo[0], cpu.lo[2]), i.addr);
  cpu.endRun(); // the platform's MSRs (the APIC's) may change what interrupts are deliverable
}

/** rdtscp: the TSC in edx:eax, IA32_TSC_AUX in ecx */
export function rdtscp(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  if ((s.cr4 & 4) !== 0 && s.cpl !== 0) throw gp(0, `${i.def.mnem} at CPL ${s.cpl} with CR4.TSD`);
  const t = s.tsc();
  cpu.lo[0] = Number(t & 0xffffffffn) | 0; cpu.hi[0] = 0;
  cpu.lo[2] = Number(t >> 32n) | 0; cpu.hi[2] = 0;
  cpu.lo[1] = Number(s.tscAux) | 0; cpu.hi[1] = 0;
}
/** rdpid r64: IA32_TSC_AUX */
export function rdpid(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  if (i.rm < 0) throw FAULT_UD; // register operand only
  setR64(cpu, i.rm, s.tscAux);
}

// ---------------------------------------------------------------- descriptor tables and segments
/** lgdt / lidt m16&64 (sub 2 / 3); sgdt / sidt (sub 0 / 1; allowed at any CPL without UMIP) */
export function descTable(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  const a = cpu.ea(i), m = s.mem, idt = (i.cc & 1) !== 0;
  if (i.cc >= 2) {
    if (s.cpl !== 0) throw gp(0, `${i.def.mnem} at CPL ${s.cpl}`);
    const limit = m.read16(a);
    const lo = m.read32(a + 2), hi = m.read32(a + 6) | 0;
    const base = hi * TWO32 + (lo >>> 0);
    if (hi > 0x7fff || hi < -0x8000) throw gp(0, `${i.def.mnem}: non-canonical base`);
    if (idt) { s.idtBase = base; s.idtLimit = limit; } else { s.gdtBase = base; s.gdtLimit = limit; }
    return;
  }
  const base = idt ? s.idtBase : s.gdtBase, limit = idt ? s.idtLimit : s.gdtLimit;
  m.write16(a, limit);
  m.write64Halves(a + 2, base | 0, Math.floor(base / TWO32));
}

/** ltr / lldt r/m16 (sub 3 / 2), str / sldt (sub 1 / 0) */
export function taskRegs(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  if (i.cc >= 2) {
    if (s.cpl !== 0) throw gp(0, `${i.def.mnem} at CPL ${s.cpl}`);
    const sel = cpu.readE(i, 2);
    if (i.cc === 3) loadTr(s, sel); else loadLdt(s, sel);
    return;
  }
  const v = i.cc === 1 ? s.tr : s.ldtr;
  // to a register: zero-extended to the operand size; to memory: 16 bits
  if (i.rm >= 0) cpu.setR(i.size === 2 ? 2 : i.size, i.rm, v, 0); else cpu.writeM(2, cpu.ea(i), v, 0);
}

/** mov r/m, Sreg (8c) */
export function movFromSreg(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  if (i.reg > 5) throw FAULT_UD;
  const v = selectorOf(s, i.reg);
  if (i.rm >= 0) cpu.setR(i.size === 2 ? 2 : i.size, i.rm, v, 0); else cpu.writeM(2, cpu.ea(i), v, 0);
}
/** mov Sreg, r/m16 (8e): not CS; a load of SS shadows interrupts for one instruction */
export function movToSreg(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  if (i.reg > 5 || i.reg === SREG_CS) throw FAULT_UD;
  loadSegment(cpu, s, i.reg, cpu.readE(i, 2));
  if (i.reg === SREG_SS) { s.intShadow = true; cpu.endRun(); }
}

/** invlpg m */
export function invlpg(cpu: X86Cpu, i: Insn): void {
  const s = ring0(cpu, i);
  s.mem.invlpg(cpu.ea(i));
}

/** swapgs: GS.base <-> IA32_KERNEL_GS_BASE, at CPL 0 */
export function swapgs(cpu: X86Cpu, i: Insn): void {
  const s = ring0(cpu, i);
  const g = cpu.gsBase;
  cpu.gsBase = s.kernelGsBase;
  s.kernelGsBase = g;
}

// ---------------------------------------------------------------- control transfers
/** iretq (48 cf); iret/iretd with a 16/32-bit operand size are not emulated (Linux uses iretq only) */
export function iret(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  if (i.size !== 8) throw notEmulated(`${i.size === 2 ? 'iret' : 'iretd'} (a ${i.size * 8}-bit interrupt return)`);
  iretqSys(cpu, s);
}

/** sysret (48 0f 07): back to 64-bit CPL 3 code at rcx, RFLAGS from r11 (SDM vol. 2 "SYSRET") */
export function sysret(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  if ((s.efer & 1n) === 0n) throw FAULT_UD;
  if (s.cpl !== 0) throw gp(0, `sysret at CPL ${s.cpl}`);
  if (i.size !== 8) throw notEmulated('sysretd (a return to compatibility mode)');
  const h = cpu.hi[1];
  if (h > 0x7fff || h < -0x8000) throw gp(0, 'sysret: rcx is not canonical');
  const base = Number((s.star >> 48n) & 0xffffn);
  cpu.rip = h * TWO32 + (cpu.lo[1] >>> 0);
  cpu.setRflags(((cpu.lo[11] & 0x3c7fd7) | 2) >>> 0);
  setCpl(cpu, s, ((base + 16) & 0xfffc) | 3);
  s.ss = ((base + 8) & 0xfffc) | 3;
  cpu.endRun(); // IF is usually set again
}

/** syscall in system mode (SDM vol. 2 "SYSCALL"): rcx = rip, r11 = rflags, to LSTAR at CPL 0 with RFLAGS &= ~SFMASK */
export function syscallSys(cpu: X86Cpu, s: SystemState): void {
  if ((s.efer & 1n) === 0n) throw FAULT_UD;
  cpu.setRegAddr(1, cpu.rip);
  const f = cpu.getRflags() & ~0x10000;
  cpu.lo[11] = f; cpu.hi[11] = 0;
  cpu.setRflags((f & ~Number(s.sfmask)) >>> 0);
  const base = Number((s.star >> 32n) & 0xffffn);
  setCpl(cpu, s, base & 0xfffc);
  s.ss = (base + 8) & 0xfffc;
  cpu.rip = s.lstar;
}

/** far return (cb; ca imm16 releases bytes): to the same privilege, or to CPL 3 popping rsp and ss too */
export function retFar(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  const m = s.mem, sz = i.size === 8 ? 8 : i.size;
  const sp = cpu.regAddr(4);
  let ip: number;
  if (sz === 8) { const lo = m.read32(sp), hi = m.read32(sp + 4) | 0; ip = hi * TWO32 + (lo >>> 0); } else ip = sz === 4 ? m.read32(sp) >>> 0 : m.read16(sp);
  const cs = (sz === 8 ? m.read32(sp + 8) : sz === 4 ? m.read32(sp + 4) : m.read16(sp + 2)) & 0xffff;
  const rpl = cs & 3, cpl = s.cpl;
  if (rpl < cpl) throw gp(cs & 0xfffc, `lret to CPL ${rpl} from CPL ${cpl}`);
  const d = codeDescriptor(s, cs, 0);
  if ((d.type & 4) !== 0 ? d.dpl > rpl : d.dpl !== rpl) throw gp(cs & 0xfffc, `lret: code segment 0x${cs.toString(16)} DPL ${d.dpl} vs RPL ${rpl}`);
  const release = i.def.code === 'ca' ? i.imm & 0xffff : 0;
  let nsp = sp + 2 * sz + release;
  if (rpl > cpl) {
    const rl = m.read32(nsp), rh = m.read32(nsp + 4) | 0;
    const ss = m.read16(nsp + sz);
    loadOuterSs(cpu, s, ss, rpl);
    nsp = rh * TWO32 + (rl >>> 0) + release;
    setCpl(cpu, s, cs);
    s.ss = ss;
    nullOuterSegments(cpu, s);
  } else setCpl(cpu, s, cs);
  cpu.rip = ip;
  cpu.setRegAddr(4, nsp);
}

/**
 * far jmp / call through memory (ff /5, ff /3: sub 0 / 1): an m16:16,
 * m16:32 or (REX.W, as Intel processors take it) m16:64 pointer, offset
 * first. To a code segment at the same privilege (SDM vol. 2 "JMP", "CALL",
 * 64-bit mode): non-conforming with RPL <= CPL and DPL = CPL, or conforming
 * with DPL <= CPL, else #GP(sel); not present #NP(sel); L and D both set
 * #GP(sel); a non-canonical offset #GP(0). CS takes the selector with RPL =
 * CPL. A call pushes CS then the return rip, each of the operand size. A
 * call gate (type 0xc) and a 32-bit code segment (compatibility mode) are
 * not emulated (#UD, logged); any other system descriptor is #GP(sel).
 */
export function farJmpCall(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  const m = s.mem, sz = i.size, call = i.cc === 1, a = cpu.ea(i);
  let off: number;
  if (sz === 8) { const lo = m.read32(a), hi = m.read32(a + 4) | 0; off = hi * TWO32 + (lo >>> 0); } else off = sz === 4 ? m.read32(a) >>> 0 : m.read16(a);
  const sel = m.read16(a + sz), cpl = s.cpl, what = call ? 'call far' : 'jmp far';
  if ((sel & 0xfffc) === 0) throw gp(0, `${what}: null selector`);
  const d = readDescriptor(s, sel);
  if (!d.user) {
    if (d.type === 0xc) throw notEmulated(`${what} through a call gate`);
    throw gp(sel & 0xfffc, `${what}: selector 0x${sel.toString(16)} is a system descriptor (type ${d.type})`);
  }
  if (!isCode(d)) throw gp(sel & 0xfffc, `${what}: selector 0x${sel.toString(16)} is not a code segment`);
  const conforming = (d.type & 4) !== 0;
  if (conforming ? d.dpl > cpl : (sel & 3) > cpl || d.dpl !== cpl) throw gp(sel & 0xfffc, `${what}: code segment 0x${sel.toString(16)} DPL ${d.dpl} at CPL ${cpl}`);
  if (!d.present) throw new X86Exception(VEC_NP, sel & 0xfffc, `${what}: code segment 0x${sel.toString(16)} not present`);
  if (d.long && (d.hi & 0x400000) !== 0) throw gp(sel & 0xfffc, `${what}: code segment 0x${sel.toString(16)} has both L and D set`);
  if (!d.long) throw notEmulated(`${what} to a 32-bit code segment (compatibility mode)`);
  const hiOff = Math.floor(off / TWO32);
  if (hiOff > 0x7fff || hiOff < -0x8000) throw gp(0, `${what}: non-canonical offset`);
  if (call) {
    const sp = cpu.regAddr(4), ret = cpu.rip;
    // both pushes before any state changes: a #PF leaves rsp and CS as they were
    if (sz === 8) { m.write64Halves(sp - 8, s.cs, 0); m.write64Halves(sp - 16, ret | 0, Math.floor(ret / TWO32)); }
    else if (sz === 4) { m.write32(sp - 4, s.cs); m.write32(sp - 8, ret | 0); }
    else { m.write16(sp - 2, s.cs); m.write16(sp - 4, ret & 0xffff); }
    cpu.setRegAddr(4, sp - 2 * sz);
  }
  setCpl(cpu, s, (sel & 0xfffc) | cpl);
  cpu.rip = off;
}

/** IA32_SYSENTER_CS with bits 15:2 clear: SYSENTER and SYSEXIT #GP(0) */
function sysenterCs(s: SystemState, what: string): number {
  const cs = Number(s.sysenter[0]) & 0xffff;
  if ((cs & 0xfffc) === 0) throw gp(0, `${what}: IA32_SYSENTER_CS is null`);
  return cs;
}
/**
 * sysenter (0f 34) in 64-bit mode, as Intel processors run it (SDM vol. 2
 * "SYSENTER", IA-32e mode; AMD's #UD in long mode is not this CPU's vendor):
 * from any CPL to CPL 0 at IA32_SYSENTER_EIP with rsp = IA32_SYSENTER_ESP,
 * CS = IA32_SYSENTER_CS & 0xfffc (64-bit flat), SS = CS + 8; VM IF RF
 * cleared; nothing saved (the caller's rip and rsp are the software's to keep).
 */
export function sysenter(cpu: X86Cpu, _i: Insn): void {
  const s = sysOf(cpu);
  const cs = sysenterCs(s, 'sysenter') & 0xfffc;
  cpu.setRflags((cpu.getRflags() & ~(0x20000 | 0x200 | 0x10000)) >>> 0);
  setCpl(cpu, s, cs);
  s.ss = cs + 8;
  cpu.setRegAddr(4, Number(BigInt.asIntN(64, s.sysenter[1])));
  cpu.rip = Number(BigInt.asIntN(64, s.sysenter[2]));
}
/**
 * sysexit (0f 35) at CPL 0: with REX.W back to 64-bit CPL 3 code, rip =
 * rdx, rsp = rcx, CS = IA32_SYSENTER_CS + 32 | 3, SS = CS + 8 (SDM vol. 2
 * "SYSEXIT"); rcx or rdx not canonical #GP(0). Without REX.W it returns to
 * compatibility mode, which is not emulated (#UD, logged).
 */
export function sysexit(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  const base = sysenterCs(s, 'sysexit');
  if (s.cpl !== 0) throw gp(0, `sysexit at CPL ${s.cpl}`);
  if (i.size !== 8) throw notEmulated('sysexitd (a return to compatibility mode)');
  const canonical = (r: number): boolean => cpu.hi[r] <= 0x7fff && cpu.hi[r] >= -0x8000;
  if (!canonical(1) || !canonical(2)) throw gp(0, 'sysexit: rcx or rdx is not canonical');
  const cs = ((base + 32) & 0xfffc) | 3;
  setCpl(cpu, s, cs);
  s.ss = ((base + 40) & 0xfffc) | 3;
  cpu.rip = cpu.regAddr(2);
  cpu.setRegAddr(4, cpu.regAddr(1));
}

function loadOuterSs(cpu: X86Cpu, s: SystemState, ss: number, rpl: number): void {
  const saved = s.cs;
  s.cs = (s.cs & ~3) | rpl; // SS is checked against the new CPL
  try { loadSegment(cpu, s, SREG_SS, ss); } finally { s.cs = saved; }
}

// ---------------------------------------------------------------- I/O ports
/** IOPL >= CPL, or the TSS's I/O permission bitmap clears every port touched; else #GP(0) */
function ioAllowed(cpu: X86Cpu, s: SystemState, port: number, size: number): void {
  const cpl = s.cpl, iopl = (cpu.otherFlags >>> 12) & 3;
  if (cpl <= iopl) return;
  const m = s.mem, user = m.userMode;
  m.userMode = false;
  try {
    if (s.trLimit < 0x67) throw gp(0, `port 0x${port.toString(16)} at CPL ${cpl}: no I/O bitmap`);
    const mapBase = m.read16(s.trBase + 0x66);
    const at = mapBase + (port >> 3);
    if (at + 1 > s.trLimit) throw gp(0, `port 0x${port.toString(16)} at CPL ${cpl}: beyond the I/O bitmap`);
    const bits = m.read16(s.trBase + at);
    const mask = ((1 << size) - 1) << (port & 7);
    if ((bits & mask) !== 0) throw gp(0, `port 0x${port.toString(16)} at CPL ${cpl}: denied by the I/O bitmap`);
  } finally { m.userMode = user; }
}
const ioSize = (i: Insn): 1 | 2 | 4 => (i.size === 1 ? 1 : i.size === 2 ? 2 : 4);
/** the port: imm8 (e4-e7) or dx (ec-ef) */
const portOf = (cpu: X86Cpu, i: Insn): number => (i.def.code === 'e4' || i.def.code === 'e5' || i.def.code === 'e6' || i.def.code === 'e7' ? i.imm & 0xff : cpu.lo[2] & 0xffff);

export function inPort(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  const port = portOf(cpu, i), size = ioSize(i);
  ioAllowed(cpu, s, port, size);
  const v = s.platform.io.in(port, size);
  cpu.setR(size, 0, size === 4 ? v | 0 : v, 0);
}
export function outPort(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  const port = portOf(cpu, i), size = ioSize(i);
  ioAllowed(cpu, s, port, size);
  const v = size === 1 ? cpu.lo[0] & 0xff : size === 2 ? cpu.lo[0] & 0xffff : cpu.lo[0] >>> 0;
  s.platform.io.out(port, size, v);
  cpu.endRun(); // a device (the PIC's mask, an EOI) may let an interrupt in
}
/** ins (6c/6d) / outs (6e/6f), rep allowed: rdi/rsi step by DF; the count in rcx */
export function stringIo(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  const port = cpu.lo[2] & 0xffff, size = ioSize(i), out = i.def.mnem === 'outs';
  ioAllowed(cpu, s, port, size);
  const m = s.mem, step = cpu.df ? -size : size;
  const rep = i.rep !== 0;
  for (;;) {
    if (rep && cpu.lo[1] === 0 && cpu.hi[1] === 0) break;
    if (out) {
      const a = cpu.regAddr(6) + (i.seg === 1 ? cpu.fsBase : i.seg === 2 ? cpu.gsBase : 0);
      const v = size === 1 ? m.read8(a) : size === 2 ? m.read16(a) : m.read32(a);
      s.platform.io.out(port, size, v >>> 0);
      cpu.setRegAddr(6, cpu.regAddr(6) + step);
    } else {
      const a = cpu.regAddr(7);
      const v = s.platform.io.in(port, size);
      if (size === 1) m.write8(a, v); else if (size === 2) m.write16(a, v); else m.write32(a, v);
      cpu.setRegAddr(7, a + step);
    }
    if (!rep) break;
    const c = u64(cpu.lo[1], cpu.hi[1]) - 1n;
    cpu.lo[1] = Number(c & 0xffffffffn) | 0; cpu.hi[1] = Number(c >> 32n) | 0;
  }
  if (out) cpu.endRun();
}
