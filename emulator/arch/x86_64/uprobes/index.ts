/**
 * x86_64 half of uprobes (Linux arch/x86/kernel/uprobes.c): the probe is
 * int3; the copy of the probed instruction is stepped in the XOL slot with
 * TF, as kprobes steps its slot:
 *
 *   - refused (arch_uprobe_analyze_insn): what does not decode, int3 / int
 *     / into / hlt / ud2, syscall and sysenter (this kernel's system call
 *     trap would leave the slot mid-step), iret, popf and the ss loads
 *     (they change TF or the trap shadow);
 *   - RIP-relative operands (riprel_analyze): the XOL page is anywhere in
 *     the address space, so the operand is rewritten to [scratch + disp32]
 *     with a scratch register the instruction does not name in ModRM.reg
 *     (rsi, else rdi, Linux's order); pre_xol sets it to the
 *     address after the original instruction and post_xol restores it;
 *   - relative branches are stepped with their displacement unchanged and
 *     ip moved back by (original - slot) afterwards; a call's pushed return
 *     address is moved the same way (what Linux's branch emulation gives);
 *     ret and indirect jumps / calls leave ip absolute.
 * uretprobes swap the return address at [rsp].
 */
import type { ArchOps } from '../../types';
import { mustVAddr } from '../../../memory/address';
import type { ArchUprobe, UprobesArchHooks } from '../../../uprobes/archHooks';
import type { PtRegs } from '../../../kprobes/ptRegs';
import { decodeBytes } from '../decoder';

const TF = 0x100n;
const MAX_INSN_SIZE = 15;

const REJECT = new Set([
  'int3', 'int', 'int1', 'into', 'hlt', 'ud2', 'syscall', 'sysenter', 'sysexit', 'sysret', 'sysretq', 'iret', 'iretq',
  'popf', 'popfq', 'mov ss', 'pop ss', 'vmcall',
]);

/** scratch register numbers and their pt_regs names */
const SCRATCH: Readonly<Record<number, string>> = { 6: 'si', 7: 'di' };

interface X86Uprobe {
  flow: string;
  /** 0x9c: pushf (the pushed TF is the task's) */
  opcode: number;
  /** RIP-relative fix-up: the scratch register's name, or '' */
  scratch: string;
}

const info = (au: ArchUprobe): X86Uprobe => au.arch as unknown as X86Uprobe;

function analyzeInsn(arch: ArchOps, bytes: Uint8Array, vaddr: bigint): ArchUprobe | string {
  const d = arch.decodeBytes(bytes, vaddr);
  const x = decodeBytes(bytes, mustVAddr(vaddr));
  if (!d || !x) return `the bytes ${hexBytes(bytes.subarray(0, 8))} do not decode as an instruction`;
  if (d.flow === 'trap' || d.flow === 'halt' || REJECT.has(d.mnemonic) || x.bytes[x.layout.opcodeOff] === 0xcc) {
    return `${d.mnemonic} cannot be stepped out of line`;
  }
  const insn = bytes.slice(0, d.length);
  const l = x.layout;
  let scratch = '';
  const copy = insn.slice();
  if (l.ripRel) {
    // riprel_analyze: [rip + disp32] -> [scratch + disp32]
    const modrm = copy[l.modrmOff];
    const reg = (modrm >> 3) & 7;
    const n = reg !== 6 ? 6 : 7; // (Linux falls back to rbx when a VEX operand names rdi too; no VEX here)
    scratch = SCRATCH[n];
    copy[l.modrmOff] = 0x80 | (modrm & 0x38) | n; // mod=10 rm=scratch
    if (l.rexOff >= 0) copy[l.rexOff] &= 0xfe; // REX.B cleared: the low eight registers
  }
  const a: X86Uprobe = { flow: d.flow, opcode: l.opcodeLen === 1 ? copy[l.opcodeOff] : -1, scratch };
  return { length: d.length, insn, mode: 'xol', arch: { ...a, copy } };
}

function hexBytes(b: Uint8Array): string {
  return [...b].map(v => v.toString(16).padStart(2, '0')).join(' ');
}

function restoreScratch(au: ArchUprobe, regs: PtRegs, saved: Record<string, bigint>): void {
  const s = info(au).scratch;
  if (s && saved.scratch !== undefined) regs.set(s, saved.scratch);
}

export const x86_64UprobesHooks: UprobesArchHooks = {
  arch: 'x86_64',
  swbpInsn: Uint8Array.of(0xcc),
  xolSlotBytes: 128,
  insnAlign: 1,
  maxInsnLength: MAX_INSN_SIZE,
  analyzeInsn,

  copyIxol(au) {
    return (au.arch as { copy: Uint8Array }).copy;
  },

  preXol(au, regs, t) {
    const s = info(au).scratch;
    if (s) {
      t.saved.scratch = regs.get(s);
      regs.set(s, t.vaddr + BigInt(au.length));
    }
    t.saved.tf = regs.flags & TF;
    regs.flags = regs.flags | TF;
    regs.ip = t.slot;
  },

  xolDone(_au, _t, kind) { return kind === 'singleStep'; },

  postXol(au, regs, t) {
    const x = info(au);
    const mem = regs.cpu.mem;
    const sp = mustVAddr(regs.sp);
    restoreScratch(au, regs, t.saved);
    regs.flags = (regs.flags & ~TF) | (t.saved.tf ?? 0n);
    let adjust = true;
    if (x.opcode === 0x9c) mem.write64(sp, (mem.read64(sp) & ~TF) | (t.saved.tf ?? 0n));
    else if (x.flow === 'ret' || x.flow === 'indirectJump') adjust = false;
    else if (x.flow === 'call') mem.write64(sp, t.vaddr + (mem.read64(sp) - t.slot));
    else if (x.flow === 'indirectCall') {
      mem.write64(sp, t.vaddr + (mem.read64(sp) - t.slot));
      adjust = false;
    }
    if (adjust) regs.ip = BigInt.asUintN(64, regs.ip + (t.vaddr - t.slot));
  },

  abortXol(au, regs, t) {
    restoreScratch(au, regs, t.saved);
    regs.flags = (regs.flags & ~TF) | (t.saved.tf ?? 0n);
    regs.ip = t.vaddr;
  },

  skipSstep() {
    throw new Error('x86_64 uprobes step every instruction out of line');
  },

  hijackReturnAddr(regs, trampoline) {
    const sp = mustVAddr(regs.sp);
    const mem = regs.cpu.mem;
    const orig = mem.read64(sp);
    mem.write64(sp, trampoline);
    return { orig: BigInt.asUintN(64, orig), stack: regs.sp + 8n };
  },
};
