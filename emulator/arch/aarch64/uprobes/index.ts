/**
 * arm64 half of uprobes (Linux arch/arm64/kernel/probes/uprobes.c): the
 * probe is `brk #0x005` (UPROBES_BRK_IMM); arch_uprobe_analyze_insn uses
 * the same decoder as kprobes (arm_probe_decode_insn): exception
 * generation, eret, exclusives and DAIF writes are refused, pc-relative
 * instructions (branches, adr/adrp, ldr literal) are simulated from
 * pt_regs (arch_uprobe_skip_sstep), the rest is stepped in the XOL slot.
 * Linux ends that step with the hardware single-step; this CPU has none,
 * so the slot holds the instruction then `brk #0x006`, as the kprobes
 * slot does, and the step ends on that breakpoint. uretprobes hijack x30.
 */
import { BRK_SS, probeDecision, readWord, word } from '../kprobes/decodeInsn';
import { simulateInsn } from '../kprobes/simulateInsn';
import type { UprobesArchHooks } from '../../../uprobes/archHooks';

/** BRK64_OPCODE_UPROBES */
const BRK_UPROBES = 0xd42000a0;

export const aarch64UprobesHooks: UprobesArchHooks = {
  arch: 'aarch64',
  swbpInsn: word(BRK_UPROBES),
  xolSlotBytes: 8,
  insnAlign: 4,
  maxInsnLength: 4,

  analyzeInsn(_arch, bytes) {
    if (bytes.length < 4) return 'the file ends inside the instruction';
    const w = readWord(bytes);
    const d = probeDecision(w);
    if (d === 'reject') return `instruction 0x${w.toString(16).padStart(8, '0')} cannot be probed (exception generation, eret, exclusive access or a DAIF write)`;
    return { length: 4, insn: bytes.slice(0, 4), mode: d === 'simulate' ? 'simulate' : 'xol', arch: { word: w } };
  },

  copyIxol(au) {
    return Uint8Array.from([...au.insn, ...word(BRK_SS)]);
  },

  preXol(_au, regs, t) { regs.ip = t.slot; },
  xolDone(_au, t, kind, addr) { return kind === 'breakpoint' && addr === t.slot + 4n; },
  postXol(_au, regs, t) { regs.ip = t.vaddr + 4n; },
  abortXol(_au, regs, t) { regs.ip = t.vaddr; },

  skipSstep(au, regs, vaddr) { simulateInsn((au.arch as { word: number }).word, vaddr, regs); },

  hijackReturnAddr(regs, trampoline) {
    const orig = regs.get('x30');
    regs.set('x30', trampoline);
    return { orig, stack: regs.sp };
  },
};
