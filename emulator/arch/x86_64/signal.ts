/**
 * x86_64 signal frames (Linux arch/x86/kernel/signal.c, asm/sigframe.h):
 *
 *   frame+0    pretcode   (the handler's return address: sa_restorer)
 *   frame+8    struct ucontext: uc_flags, uc_link, uc_stack (24 bytes),
 *   frame+48     uc_mcontext = struct sigcontext (r8..r15, rdi, rsi, rbp,
 *                rbx, rdx, rax, rcx, rsp, rip, eflags, cs/gs/fs/ss, err,
 *                trapno, oldmask, cr2, fpstate, reserved: 256 bytes)
 *   frame+304    uc_sigmask
 *   frame+312  struct siginfo (128 bytes)
 *
 * below the interrupted rsp minus the 128-byte red zone, aligned so that
 * the handler starts as after a call ((rsp + 8) % 16 == 0), with rdi = sig,
 * rsi = &info, rdx = &uc. rt_sigreturn (after the handler's `ret` popped
 * pretcode, rsp = frame + 8) restores the registers from the sigcontext —
 * a handler may change them there — and the rest of the register file
 * (the vector state) from what the kernel kept for that frame.
 */
import type { Cpu, CpuContext, SignalDelivery, SignalFrameOps } from '../types';
import type { Memory } from '../../memory/memory';
import { toVAddr } from '../../memory/address';
import { X86_REGS } from './regs';

const R = (name: string): number => X86_REGS.findIndex(r => r.name === name);
/** sigcontext's general registers, in its order */
const SIGCONTEXT_REGS = ['r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'di', 'si', 'bp', 'bx', 'dx', 'ax', 'cx', 'sp', 'ip', 'flags'].map(R);
const FRAME_SIZE = 440;
const UC = 8, MCONTEXT = 48, SIGMASK = 304, INFO = 312;
const SA_RESTORER = 0x04000000n;
/** eflags bits a handler may change through the sigcontext (FIX_EFLAGS in Linux) */
const FIX_EFLAGS = 0x40dd5n;

/** the register file at each live frame, per address space: what sigcontext does not hold */
const kept = {
  get: (mm: Memory) => mm.archState.get('signalFrames') as Map<bigint, CpuContext> | undefined,
  set: (mm: Memory, m: Map<bigint, CpuContext>) => { mm.archState.set('signalFrames', m); },
};

function writeable(mm: Memory, a: bigint, len: number): boolean {
  const v = toVAddr(a);
  if (v === null) return false;
  for (let i = 0; i < len; i += 4096) if (!mm.regionAt(v + i)) return false;
  return !!mm.regionAt(v + len - 1);
}

export const x86SignalFrames: SignalFrameOps = {
  trampoline: Uint8Array.from([0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05]), // mov eax, 15 (rt_sigreturn); syscall

  push(cpu: Cpu, mm: Memory, d: SignalDelivery): boolean {
    const sp = cpu.getReg(R('sp'));
    const frame = (((sp - 128n - BigInt(FRAME_SIZE)) & ~15n) - 8n);
    if (!writeable(mm, frame, FRAME_SIZE)) return false;
    const ret = d.flags & SA_RESTORER ? d.restorer : d.tramp();
    const b = new Uint8Array(FRAME_SIZE);
    const dv = new DataView(b.buffer);
    dv.setBigUint64(0, ret, true);
    // ucontext: uc_stack says "no alternate stack" (SS_DISABLE)
    dv.setUint32(UC + 24, 2, true);
    SIGCONTEXT_REGS.forEach((r, i) => dv.setBigUint64(MCONTEXT + i * 8, BigInt.asUintN(64, cpu.getReg(r)), true));
    dv.setUint16(MCONTEXT + 144, 0x33, true); // cs
    dv.setUint16(MCONTEXT + 150, 0x2b, true); // ss
    dv.setBigUint64(MCONTEXT + 168, d.mask, true); // oldmask
    dv.setBigUint64(SIGMASK, d.mask, true);
    dv.setInt32(INFO, d.sig, true); // si_signo; si_errno = si_code = 0 (SI_USER)
    mm.writeBytes(Number(frame), b, 'uaccess');
    let m = kept.get(mm);
    if (!m) kept.set(mm, (m = new Map()));
    m.set(frame, cpu.saveContext());
    cpu.setReg(R('sp'), frame);
    cpu.setReg(R('di'), BigInt(d.sig));
    cpu.setReg(R('si'), frame + BigInt(INFO));
    cpu.setReg(R('dx'), frame + BigInt(UC));
    cpu.setReg(R('ax'), 0n);
    cpu.setPc(d.handler);
    // the handler starts with DF and TF clear, as Linux's
    cpu.setReg(R('flags'), cpu.getReg(R('flags')) & ~0x500n);
    return true;
  },

  pop(cpu: Cpu, mm: Memory): bigint | null {
    const frame = cpu.getReg(R('sp')) - 8n;
    const v = toVAddr(frame);
    if (v === null || !mm.isMapped(v, FRAME_SIZE)) return null;
    const b = mm.readBytes(v, FRAME_SIZE);
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const m = kept.get(mm);
    const ctx = m?.get(frame);
    if (ctx) { m!.delete(frame); cpu.restoreContext(ctx); }
    const flags0 = cpu.getReg(R('flags'));
    SIGCONTEXT_REGS.forEach((r, i) => {
      const val = dv.getBigUint64(MCONTEXT + i * 8, true);
      if (r === R('ip')) cpu.setPc(val);
      else if (r === R('flags')) cpu.setReg(r, (flags0 & ~FIX_EFLAGS) | (val & FIX_EFLAGS));
      else cpu.setReg(r, val);
    });
    return dv.getBigUint64(SIGMASK, true);
  },
};
