/**
 * Zicsr executors: csrrw/csrrs/csrrc and their immediate forms over the
 * supervisor CSRs (csr.ts) and the counters. An unknown CSR, a write to a
 * read-only one, or an S-mode CSR from user mode is an illegal instruction.
 */
import type { RvCpu } from '../cpu';
import type { RvInsn } from '../insn';
import { CSR, SSTATUS_WMASK, SSTATUS_UXL64 } from '../csr';
import { illegal } from './system';

const M64 = (1n << 64n) - 1n;

/** CSR value, or null when the CSR does not exist / is not accessible */
export function csrRead(c: RvCpu, n: number): bigint | null {
  switch (n) {
    case CSR.cycle: case CSR.instret: return BigInt(c.instret);
    case CSR.time: return c.timeSource ? c.timeSource() : BigInt(c.instret);
    case CSR.fflags: return BigInt(c.fflags);
    case CSR.frm: return BigInt(c.frm);
    case CSR.fcsr: return BigInt((c.frm << 5) | c.fflags);
  }
  if (c.userMode) return null;
  const s = c.csrs;
  switch (n) {
    case CSR.sstatus: return s.sstatus;
    case CSR.sie: return s.sie;
    case CSR.stvec: return s.stvec;
    case CSR.scounteren: return s.scounteren;
    case CSR.sscratch: return s.sscratch;
    case CSR.sepc: return s.sepc;
    case CSR.scause: return s.scause;
    case CSR.stval: return s.stval;
    case CSR.sip: return s.sip;
    case CSR.satp: return s.satp;
  }
  return null;
}

/** Write a CSR; false when it is read-only or not accessible */
export function csrWrite(c: RvCpu, n: number, v: bigint): boolean {
  switch (n) {
    case CSR.fflags: c.fflags = Number(v & 0x1fn); return true;
    case CSR.frm: c.frm = Number(v & 7n); return true;
    case CSR.fcsr: c.fflags = Number(v & 0x1fn); c.frm = Number((v >> 5n) & 7n); return true;
  }
  if (c.userMode || (n >> 10) === 3) return false; // bits 11:10 = 11: read-only
  const s = c.csrs;
  v &= M64;
  switch (n) {
    case CSR.sstatus: s.sstatus = (v & SSTATUS_WMASK) | SSTATUS_UXL64; return true;
    case CSR.sie: s.sie = v & 0x222n; return true;
    case CSR.stvec: s.stvec = v & ~2n; return true;
    case CSR.scounteren: s.scounteren = v & 7n; return true;
    case CSR.sscratch: s.sscratch = v; return true;
    case CSR.sepc: s.sepc = v & ~1n; return true;
    case CSR.scause: s.scause = v; return true;
    case CSR.stval: s.stval = v; return true;
    case CSR.sip: s.sip = (s.sip & ~2n) | (v & 2n); return true;
    case CSR.satp: return true; // no paging model: satp stays Bare (reads 0), writes are ignored as WARL
  }
  return false;
}

/** kind: 0 = write, 1 = set, 2 = clear; src: register value or the zimm */
function csrOp(c: RvCpu, i: RvInsn, kind: 0 | 1 | 2, src: bigint, writes: boolean): void {
  const old = (kind === 0 && i.rd === 32) ? 0n : csrRead(c, i.csr);
  if (old === null) { illegal(c, i); return; }
  if (writes) {
    const v = kind === 0 ? src : kind === 1 ? old | src : old & ~src;
    if (!csrWrite(c, i.csr, v)) { illegal(c, i); return; }
  }
  c.setX(i.rd === 32 ? 0 : i.rd, old);
}
export function csrrw(c: RvCpu, i: RvInsn): void { csrOp(c, i, 0, c.x(i.rs1), true); }
export function csrrs(c: RvCpu, i: RvInsn): void { csrOp(c, i, 1, c.x(i.rs1), i.rs1 !== 0); }
export function csrrc(c: RvCpu, i: RvInsn): void { csrOp(c, i, 2, c.x(i.rs1), i.rs1 !== 0); }
export function csrrwi(c: RvCpu, i: RvInsn): void { csrOp(c, i, 0, BigInt(i.imm), true); }
export function csrrsi(c: RvCpu, i: RvInsn): void { csrOp(c, i, 1, BigInt(i.imm), i.imm !== 0); }
export function csrrci(c: RvCpu, i: RvInsn): void { csrOp(c, i, 2, BigInt(i.imm), i.imm !== 0); }
