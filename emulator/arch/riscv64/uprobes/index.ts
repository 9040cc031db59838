/**
 * RISC-V half of uprobes (Linux arch/riscv/kernel/probes/uprobes.c): the
 * probe is `c.ebreak` (UPROBE_SWBP_INSN with the C extension: 2 bytes,
 * whatever the probed instruction's length); arch_uprobe_analyze_insn uses
 * the kprobes decoder (decode-insn.c): system instructions and fences are
 * refused, jal / jalr / auipc / branches (and their compressed forms) are
 * simulated from pt_regs, the rest is copied to the XOL slot followed by an
 * `ebreak` that ends the step (as Linux's arch_uprobe_copy_ixol appends
 * one). uretprobes hijack ra.
 */
import { expanded, probeDecision } from '../kprobes/decodeInsn';
import { simulateInsn } from '../kprobes/simulateInsn';
import type { UprobesArchHooks } from '../../../uprobes/archHooks';

const C_EBREAK = Uint8Array.of(0x02, 0x90);
const EBREAK = Uint8Array.of(0x73, 0x00, 0x10, 0x00);

export const riscv64UprobesHooks: UprobesArchHooks = {
  arch: 'riscv64',
  swbpInsn: C_EBREAK,
  xolSlotBytes: 8,
  insnAlign: 2,
  maxInsnLength: 4,

  analyzeInsn(_arch, bytes) {
    const e = expanded(bytes);
    if (!e) return 'the bytes are not an instruction (or the file ends inside it)';
    const d = probeDecision(e.w);
    if (d === 'reject') return `instruction 0x${e.w.toString(16).padStart(8, '0')} cannot be probed (a system instruction or a fence)`;
    return { length: e.len, insn: bytes.slice(0, e.len), mode: d === 'simulate' ? 'simulate' : 'xol', arch: { word: e.w } };
  },

  copyIxol(au) {
    return Uint8Array.from([...au.insn, ...EBREAK]);
  },

  preXol(_au, regs, t) { regs.ip = t.slot; },
  xolDone(au, t, kind, addr) { return kind === 'breakpoint' && addr === t.slot + BigInt(au.length); },
  postXol(au, regs, t) { regs.ip = t.vaddr + BigInt(au.length); },
  abortXol(_au, regs, t) { regs.ip = t.vaddr; },

  skipSstep(au, regs, vaddr) { simulateInsn((au.arch as { word: number }).word, vaddr, au.length, regs); },

  hijackReturnAddr(regs, trampoline) {
    const orig = regs.get('ra');
    regs.set('ra', trampoline);
    return { orig, stack: regs.sp };
  },
};
