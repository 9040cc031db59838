/**
 * riscv64 signal frames (Linux 6.1 arch/riscv/kernel/signal.c):
 *
 *   frame+0      struct siginfo (128 bytes)
 *   frame+128    struct ucontext: uc_flags, uc_link, uc_stack (24 bytes),
 *   frame+168      uc_sigmask, __unused up to 1024 bits of sigset,
 *   frame+304      uc_mcontext = struct sigcontext (16-aligned):
 *                  sc_regs (struct user_regs_struct: pc, then x1..x31),
 *   frame+560      sc_fpregs (union __riscv_fp_state, 528 bytes: the D
 *                  state f[32] and fcsr, then the Q state's reserved words
 *                  at +516, which rt_sigreturn requires to be zero)
 *   frame+1088   end (sizeof(struct rt_sigframe))
 *
 * below sp, 16-aligned; the handler runs with a0 = sig, a1 = &info,
 * a2 = &uc, ra = the sigreturn trampoline (riscv has no SA_RESTORER: Linux
 * points ra at the vDSO's __vdso_rt_sigreturn, `li a7, 139; ecall`).
 * rt_sigreturn (sp = frame again) restores pc, x1..x31, f0..f31 and fcsr
 * from the sigcontext, the rest of the CPU state (CSRs) from what the
 * kernel kept for that frame.
 */
import type { Cpu, CpuContext, SignalDelivery, SignalFrameOps } from '../types';
import type { Memory } from '../../memory/memory';
import { toVAddr } from '../../memory/address';
import { RvCpu } from './cpu';

const INFO = 0, UC = 128, SIGMASK = UC + 40, MCONTEXT = UC + 176, FP = MCONTEXT + 256, FRAME_SIZE = 1088;
const FCSR = FP + 256, Q_RESERVED = FP + 516;
const EPC = 0, SP = 2, A0 = 10, A1 = 11, A2 = 12, RA = 1;

const kept = {
  get: (mm: Memory) => mm.archState.get('signalFrames') as Map<bigint, CpuContext> | undefined,
  set: (mm: Memory, m: Map<bigint, CpuContext>) => { mm.archState.set('signalFrames', m); },
};

function asRv(cpu: Cpu): RvCpu {
  if (!(cpu instanceof RvCpu)) throw new Error(`riscv64 signal frame: cpu ${cpu.id} is not a riscv64 cpu`);
  return cpu;
}

export const riscv64SignalFrames: SignalFrameOps = {
  // li a7, 139 (rt_sigreturn); ecall
  trampoline: Uint8Array.from([0x93, 0x08, 0xb0, 0x08, 0x73, 0x00, 0x00, 0x00]),

  push(cpu: Cpu, mm: Memory, d: SignalDelivery): boolean {
    const rv = asRv(cpu);
    const sp = cpu.getReg(SP);
    const frame = (sp - BigInt(FRAME_SIZE)) & ~15n;
    const v = toVAddr(frame);
    if (v === null || !mm.regionAt(v) || !mm.regionAt(v + FRAME_SIZE - 1)) return false;
    const b = new Uint8Array(FRAME_SIZE);
    const dv = new DataView(b.buffer);
    dv.setInt32(INFO, d.sig, true);
    dv.setUint32(UC + 24, 2, true); // uc_stack.ss_flags = SS_DISABLE
    dv.setBigUint64(SIGMASK, d.mask, true);
    dv.setBigUint64(MCONTEXT, cpu.getPc(), true);
    for (let i = 1; i <= 31; i++) dv.setBigUint64(MCONTEXT + i * 8, BigInt.asUintN(64, cpu.getReg(i)), true);
    for (let i = 0; i < 32; i++) dv.setBigUint64(FP + i * 8, rv.f[i], true);
    dv.setUint32(FCSR, ((rv.frm & 7) << 5) | (rv.fflags & 0x1f), true);
    mm.writeBytes(v, b, 'uaccess');
    let m = kept.get(mm);
    if (!m) kept.set(mm, (m = new Map()));
    m.set(frame, cpu.saveContext());
    cpu.setReg(SP, frame);
    cpu.setReg(A0, BigInt(d.sig));
    cpu.setReg(A1, frame + BigInt(INFO));
    cpu.setReg(A2, frame + BigInt(UC));
    cpu.setReg(RA, d.tramp());
    cpu.setPc(d.handler);
    return true;
  },

  pop(cpu: Cpu, mm: Memory): bigint | null {
    const rv = asRv(cpu);
    const frame = cpu.getReg(SP);
    const v = toVAddr(frame);
    if (v === null || !mm.isMapped(v, FRAME_SIZE)) return null;
    const b = mm.readBytes(v, FRAME_SIZE);
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    // restore_fp_state: the Q state's reserved words must be zero
    for (let i = 0; i < 3; i++) if (dv.getUint32(Q_RESERVED + 4 * i, true) !== 0) return null;
    const m = kept.get(mm);
    const ctx = m?.get(frame);
    if (ctx) { m!.delete(frame); cpu.restoreContext(ctx); }
    for (let i = 1; i <= 31; i++) cpu.setReg(i, dv.getBigUint64(MCONTEXT + i * 8, true));
    cpu.setPc(dv.getBigUint64(MCONTEXT + EPC, true));
    for (let i = 0; i < 32; i++) rv.f[i] = dv.getBigUint64(FP + i * 8, true);
    const fcsr = dv.getUint32(FCSR, true);
    rv.fflags = fcsr & 0x1f;
    rv.frm = (fcsr >> 5) & 7;
    return dv.getBigUint64(SIGMASK, true);
  },
};
