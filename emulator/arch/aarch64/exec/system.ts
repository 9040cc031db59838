/**
 * System instructions: svc/hvc/brk (traps), hints (nop, wfi -> halt),
 * barriers, msr (immediate: DAIFSet/DAIFClr), mrs/msr of the system
 * registers the kernel and user code use (NZCV, DAIF, TPIDR_EL0,
 * TPIDRRO_EL0, TPIDR_EL1, CurrentEL, CNTVCT_EL0, CNTFRQ_EL0, MIDR_EL1,
 * MPIDR_EL1) and the self-hosted debug registers (DBGBVR/DBGBCR,
 * DBGWVR/DBGWCR, MDSCR_EL1, ID_AA64DFR0_EL1: ../debugRegs.ts; EL1 only).
 */
import { A64Cpu } from '../cpu';
import { A64Insn, Row } from '../insn';
import { f, rZ, wZ, gz } from '../fmt';
import { STOP_BREAKPOINT, STOP_HALT, STOP_HYPERCALL, STOP_SYSCALL, FAULT_UD } from '../../../cpu/faults';
import { DEBUG_SYSREGS } from '../debugRegs';

function svc(c: A64Cpu, i: A64Insn): void {
  if (i.imm !== 0) { c.stop(FAULT_UD); return; }
  c.stop(STOP_SYSCALL);
}
function hvc(c: A64Cpu, i: A64Insn): void {
  if (c.userMode || i.imm !== 0) { c.stop(FAULT_UD); return; }
  c.stop(STOP_HYPERCALL);
}
function brk(c: A64Cpu, i: A64Insn): void {
  const hook = c.inlineBreakpoint;
  c.pc = i.addr; // the exception is taken with the pc OF the brk
  if (hook !== null && !c.stepTrap && hook(c, i.addr)) return;
  c.stop(STOP_BREAKPOINT);
}
function undef(c: A64Cpu): void { c.stop(FAULT_UD); }
function nop(): void { /* hint / barrier */ }
function wfi(c: A64Cpu): void { if (c.userMode) return; c.stop(STOP_HALT); }

const exception: Row = {
  name: 'exception generation', mask: 0xff000000, match: 0xd4000000, flow: 'trap',
  decode(w, i) {
    const opc = f(w, 21, 3), ll = f(w, 0, 2);
    if (f(w, 2, 3) !== 0) return false;
    i.imm = f(w, 5, 16); i.op = opc * 4 + ll;
    if (i.op === 1) i.exec = svc;
    else if (i.op === 2) i.exec = hvc;
    else if (i.op === 4) i.exec = brk;
    else if (i.op === 3 || i.op === 8) i.exec = undef; // smc, hlt
    else return false;
    return true;
  },
  fmt(i) {
    const name = { 1: 'svc', 2: 'hvc', 3: 'smc', 4: 'brk', 8: 'hlt' }[i.op] ?? 'udf';
    return [name, i.op === 4 || i.op === 8 ? `#0x${i.imm.toString(16)}` : `#${i.imm}`];
  },
};

const HINTS = ['nop', 'yield', 'wfe', 'wfi', 'sev', 'sevl'];
const hint: Row = {
  name: 'hint', mask: 0xfffff01f, match: 0xd503201f,
  decode(w, i) { i.imm = f(w, 5, 7); i.exec = i.imm === 3 ? wfi : nop; return true; },
  fmt: i => i.imm < HINTS.length ? [HINTS[i.imm], ''] : ['hint', `#${i.imm}`],
};

const BARRIER_OPT = ['#0', 'oshld', 'oshst', 'osh', '#4', 'nshld', 'nshst', 'nsh', '#8', 'ishld', 'ishst', 'ish', '#12', 'ld', 'st', 'sy'];
function clrex(c: A64Cpu): void { c.exclAddr = NaN; }
const barrier: Row = {
  name: 'barriers', mask: 0xfffff01f, match: 0xd503301f,
  decode(w, i) {
    i.op = f(w, 5, 3); i.imm = f(w, 8, 4);
    if (i.op === 2) { i.exec = clrex; return true; }
    if (i.op < 4 || i.op === 7) return false;
    i.exec = nop;
    return true;
  },
  fmt(i) {
    switch (i.op) {
      case 2: return ['clrex', i.imm === 15 ? '' : `#${i.imm}`];
      case 4: return ['dsb', BARRIER_OPT[i.imm]];
      case 5: return ['dmb', BARRIER_OPT[i.imm]];
      default: return ['isb', i.imm === 15 ? '' : `#${i.imm}`];
    }
  },
};

// op1 / op2 of msr (immediate): DAIFSet (3, 6), DAIFClr (3, 7)
function daifSet(c: A64Cpu, i: A64Insn): void { if (c.userMode) { c.stop(FAULT_UD); return; } c.daif |= i.imm; }
function daifClr(c: A64Cpu, i: A64Insn): void { if (c.userMode) { c.stop(FAULT_UD); return; } c.daif &= ~i.imm; }
const msrImm: Row = {
  name: 'msr (immediate)', mask: 0xfff8f01f, match: 0xd500401f,
  decode(w, i) {
    const op1 = f(w, 16, 3), op2 = f(w, 5, 3);
    i.imm = f(w, 8, 4);
    if (op1 === 3 && op2 === 6) i.exec = daifSet;
    else if (op1 === 3 && op2 === 7) i.exec = daifClr;
    else return false;
    i.op = op2;
    return true;
  },
  fmt: i => ['msr', `${i.op === 6 ? 'DAIFSet' : 'DAIFClr'}, #${i.imm}`],
};

/** system register encodings (op0:op1:CRn:CRm:op2 as 16 bits) */
const SYSREG: Record<number, string> = {
  [enc(3, 3, 4, 2, 0)]: 'NZCV', [enc(3, 3, 4, 2, 1)]: 'DAIF', [enc(3, 3, 13, 0, 2)]: 'TPIDR_EL0',
  [enc(3, 3, 13, 0, 3)]: 'TPIDRRO_EL0', [enc(3, 0, 13, 0, 4)]: 'TPIDR_EL1', [enc(3, 0, 4, 2, 2)]: 'CurrentEL',
  [enc(3, 3, 14, 0, 2)]: 'CNTVCT_EL0', [enc(3, 3, 14, 0, 0)]: 'CNTFRQ_EL0', [enc(3, 0, 0, 0, 0)]: 'MIDR_EL1',
  [enc(3, 0, 0, 0, 5)]: 'MPIDR_EL1', [enc(3, 3, 4, 4, 0)]: 'FPCR', [enc(3, 3, 4, 4, 1)]: 'FPSR', [enc(3, 3, 0, 0, 7)]: 'DCZID_EL0',
  // DBGBVR<n>_EL1 ... MDSCR_EL1 (op0 = 2), ID_AA64DFR0_EL1: none is accessible from EL0 (not in EL0_READ / EL0_WRITE)
  ...DEBUG_SYSREGS,
};
function enc(op0: number, op1: number, crn: number, crm: number, op2: number): number {
  return (op0 << 14) | (op1 << 11) | (crn << 7) | (crm << 3) | op2;
}
/** registers EL0 may read (and write: NZCV, TPIDR_EL0) */
const EL0_READ = new Set(['NZCV', 'TPIDR_EL0', 'TPIDRRO_EL0', 'CNTVCT_EL0', 'CNTFRQ_EL0', 'FPCR', 'FPSR', 'DCZID_EL0']);
const EL0_WRITE = new Set(['NZCV', 'TPIDR_EL0', 'FPCR', 'FPSR']);

/** MRS of `name` at EL1 (the privilege check is the caller's) */
export function a64ReadSysreg(c: A64Cpu, name: string): bigint {
  const dbg = c.dbg.read(name);
  if (dbg !== undefined) return dbg;
  switch (name) {
    case 'NZCV': return BigInt(c.nzcv() << 28 >>> 0);
    case 'DAIF': return BigInt(c.daif << 6);
    case 'TPIDR_EL0': return c.tpidr0;
    case 'TPIDRRO_EL0': return 0n;
    case 'TPIDR_EL1': return c.tpidr1;
    case 'CurrentEL': return c.userMode ? 0n : 4n;
    case 'CNTVCT_EL0': return BigInt(c.instret);
    case 'CNTFRQ_EL0': return 1000000000n;
    case 'MIDR_EL1': return 0x410fd070n;
    case 'FPCR': return BigInt(c.fpcr >>> 0);
    case 'FPSR': return BigInt(c.fpsr >>> 0);
    // DC ZVA prohibited (DZP): C libraries zero memory with ordinary stores
    case 'DCZID_EL0': return 0x10n;
    default: return BigInt(c.id) | 0x80000000n;
  }
}
/** MSR of `name` at EL1 (the privilege check is the caller's); false when the register cannot be written (UNDEFINED) */
export function a64WriteSysreg(c: A64Cpu, name: string, v: bigint): boolean {
  switch (name) {
    case 'NZCV': c.setNzcv(Number((v >> 28n) & 0xfn)); return true;
    case 'DAIF': c.daif = Number((v >> 6n) & 0xfn); return true;
    case 'TPIDR_EL0': c.tpidr0 = v; return true;
    case 'TPIDR_EL1': c.tpidr1 = v; return true;
    case 'FPCR': c.fpcr = Number(v & 0x07ff9f00n); return true;
    case 'FPSR': c.fpsr = Number(v & 0xf800009fn) | 0; return true;
    default: return c.dbg.write(name, v);
  }
}
function mrs(c: A64Cpu, i: A64Insn): void {
  const name = SYSREG[i.imm];
  if (name === undefined || (c.userMode && !EL0_READ.has(name))) { c.stop(FAULT_UD); return; }
  c.setX64(i.d, a64ReadSysreg(c, name));
}
function msr(c: A64Cpu, i: A64Insn): void {
  const name = SYSREG[i.imm];
  if (name === undefined || (c.userMode && !EL0_WRITE.has(name)) || !a64WriteSysreg(c, name, c.x64(i.n))) c.stop(FAULT_UD);
}
function sysregName(e: number): string {
  return SYSREG[e] ?? `S${e >> 14}_${(e >> 11) & 7}_C${(e >> 7) & 15}_C${(e >> 3) & 15}_${e & 7}`;
}
const mrsMsr: Row = {
  name: 'mrs/msr (register)', mask: 0xffd00000, match: 0xd5100000,
  decode(w, i) {
    i.op = f(w, 21, 1); i.imm = f(w, 5, 16); i.rd = f(w, 0, 5);
    i.d = wZ(i.rd); i.n = rZ(i.rd);
    i.exec = i.op ? mrs : msr;
    return true;
  },
  fmt: i => i.op ? ['mrs', `${gz(i.rd, 1)}, ${sysregName(i.imm)}`] : ['msr', `${sysregName(i.imm)}, ${gz(i.rd, 1)}`],
};

export const SYSTEM_ROWS: readonly Row[] = [exception, hint, barrier, msrImm, mrsMsr];
