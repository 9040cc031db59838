/**
 * arm64 signal frames (Linux arch/arm64/kernel/signal.c):
 *
 *   frame+0      struct siginfo (128 bytes)
 *   frame+128    struct ucontext: uc_flags, uc_link, uc_stack (24 bytes),
 *   frame+168      uc_sigmask, padding to glibc's 1024-bit sigset,
 *   frame+304      uc_mcontext = struct sigcontext (16-aligned):
 *                  fault_address, regs[31], sp, pc, pstate, __reserved[4096]
 *                  holding an fpsimd_context record (magic 0x46508001, 528
 *                  bytes: fpsr, fpcr, the V registers) and the terminator
 *   frame+4688   struct frame_record {fp, lr}
 *
 * below sp, 16-aligned; the handler runs with x0 = sig, x1 = &info,
 * x2 = &uc, x29 = &frame_record, x30 = sa_restorer when SA_RESTORER is set,
 * else the process's sigreturn trampoline (the vDSO's sigtramp in Linux).
 * rt_sigreturn (sp = frame again) restores x0..x30, sp, pc and pstate's
 * flags from the sigcontext, the rest of the register file from what the
 * kernel kept for that frame.
 */
import type { Cpu, CpuContext, SignalDelivery, SignalFrameOps } from '../types';
import type { Memory } from '../../memory/memory';
import { toVAddr } from '../../memory/address';
import { AARCH64_REGS } from './info';

const R = (name: string): number => AARCH64_REGS.findIndex(r => r.name === name);
const X = (n: number): number => R(`x${n}`);
const INFO = 0, UC = 128, SIGMASK = UC + 40, MCONTEXT = UC + 176, RECORD = 4688, FRAME_SIZE = 4704;
const FPSIMD_MAGIC = 0x46508001, FPSIMD_SIZE = 528;
const SA_RESTORER = 0x04000000n;
/** NZCV: the pstate bits a handler may change through the sigcontext */
const NZCV = 0xf0000000n;

const kept = {
  get: (mm: Memory) => mm.archState.get('signalFrames') as Map<bigint, CpuContext> | undefined,
  set: (mm: Memory, m: Map<bigint, CpuContext>) => { mm.archState.set('signalFrames', m); },
};

export const a64SignalFrames: SignalFrameOps = {
  // mov x8, #139 (rt_sigreturn); svc #0
  trampoline: Uint8Array.from([0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4]),

  push(cpu: Cpu, mm: Memory, d: SignalDelivery): boolean {
    const sp = cpu.getReg(R('sp'));
    const frame = (sp - BigInt(FRAME_SIZE)) & ~15n;
    const v = toVAddr(frame);
    if (v === null || !mm.regionAt(v) || !mm.regionAt(v + FRAME_SIZE - 1)) return false;
    const lr = d.flags & SA_RESTORER ? d.restorer : d.tramp();
    const b = new Uint8Array(FRAME_SIZE);
    const dv = new DataView(b.buffer);
    dv.setInt32(INFO, d.sig, true);
    dv.setUint32(UC + 24, 2, true); // uc_stack.ss_flags = SS_DISABLE
    dv.setBigUint64(SIGMASK, d.mask, true);
    for (let i = 0; i <= 30; i++) dv.setBigUint64(MCONTEXT + 8 + i * 8, BigInt.asUintN(64, cpu.getReg(X(i))), true);
    dv.setBigUint64(MCONTEXT + 256, BigInt.asUintN(64, sp), true);
    dv.setBigUint64(MCONTEXT + 264, cpu.getPc(), true);
    dv.setBigUint64(MCONTEXT + 272, BigInt.asUintN(64, cpu.getReg(R('pstate'))), true);
    dv.setUint32(MCONTEXT + 288, FPSIMD_MAGIC, true);
    dv.setUint32(MCONTEXT + 292, FPSIMD_SIZE, true);
    // the terminator record (magic 0, size 0) follows: already zero
    dv.setBigUint64(RECORD, BigInt.asUintN(64, cpu.getReg(X(29))), true);
    dv.setBigUint64(RECORD + 8, BigInt.asUintN(64, cpu.getReg(X(30))), true);
    mm.writeBytes(v, b, 'uaccess');
    let m = kept.get(mm);
    if (!m) kept.set(mm, (m = new Map()));
    m.set(frame, cpu.saveContext());
    cpu.setReg(R('sp'), frame);
    cpu.setReg(X(0), BigInt(d.sig));
    cpu.setReg(X(1), frame + BigInt(INFO));
    cpu.setReg(X(2), frame + BigInt(UC));
    cpu.setReg(X(29), frame + BigInt(RECORD));
    cpu.setReg(X(30), lr);
    cpu.setPc(d.handler);
    return true;
  },

  pop(cpu: Cpu, mm: Memory): bigint | null {
    const frame = cpu.getReg(R('sp'));
    const v = toVAddr(frame);
    if (v === null || frame % 16n !== 0n || !mm.isMapped(v, FRAME_SIZE)) return null;
    const b = mm.readBytes(v, FRAME_SIZE);
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    if (dv.getUint32(MCONTEXT + 288, true) !== FPSIMD_MAGIC) return null;
    const m = kept.get(mm);
    const ctx = m?.get(frame);
    if (ctx) { m!.delete(frame); cpu.restoreContext(ctx); }
    for (let i = 0; i <= 30; i++) cpu.setReg(X(i), dv.getBigUint64(MCONTEXT + 8 + i * 8, true));
    cpu.setReg(R('sp'), dv.getBigUint64(MCONTEXT + 256, true));
    cpu.setPc(dv.getBigUint64(MCONTEXT + 264, true));
    const ps = cpu.getReg(R('pstate'));
    cpu.setReg(R('pstate'), (ps & ~NZCV) | (dv.getBigUint64(MCONTEXT + 272, true) & NZCV));
    return dv.getBigUint64(SIGMASK, true);
  },
};
