/**
 * Per-architecture facts of the emulated kernel (not of the CPU): where its
 * virtual areas live and how an oops report spells registers and code bytes.
 * Core kernel code looks values up here by ArchOps.name and never switches
 * on the architecture.
 */
import { KernelLayout } from './types';

/** How an oops report prints one architecture's state (Linux's show_regs / show_opcodes). */
export interface OopsStyle {
  /** label of the pc line: x86 "RIP", arm64 "pc", riscv "epc" */
  pcLabel: string;
  /** register label as Linux prints it, from the ArchOps.regs name (the pc register is not listed: it has its own line) */
  regLabel(name: string): string;
  /** registers per line */
  regsPerLine: number;
  /** bytes shown before / after (and including) the faulting pc in the Code: line */
  codeBefore: number;
  codeAfter: number;
  /** 1 = "Code: 48 89 <8b> ..." (x86), 4 = "Code: d503233f (f9400000)" (arm64/riscv words) */
  codeUnit: 1 | 2 | 4;
  /** brackets around the faulting unit */
  codeMark: [string, string];
}

export interface ArchKernelTable {
  /** preferred layout of the kernel's own areas */
  layout: KernelLayout;
  /** +- reach of a direct branch/call from kernel text (the exec area must be within it) */
  branchReach: number;
  oops: OopsStyle;
  /** user processes: top of the initial stack, its size, and the platform string (AT_PLATFORM) */
  user: { stackTop: bigint; stackSize: number; platform: string; hwcap: bigint };
}

/** 16 KiB kernel stacks (THREAD_SIZE on x86_64), each followed by an unmapped guard gap of the same size. */
const STACK_SIZE = 16 * 1024;
/** 4 MiB exec area: plenty for insn slots, kretprobe trampolines and detour buffers */
const EXEC_SIZE = 4 * 1024 * 1024;

const X86_GPRS = new Set(['ax', 'bx', 'cx', 'dx', 'si', 'di', 'bp', 'sp']);
const x86RegLabel = (name: string): string => {
  if (name === 'flags') return 'EFLAGS';
  if (name === 'orig_ax') return 'ORIG_RAX';
  const m = /^r(\d+)$/.exec(name);
  if (m) return 'R' + m[1].padStart(2, '0');
  if (X86_GPRS.has(name)) return 'R' + name.toUpperCase();
  return name.toUpperCase();
};

const wordRegLabel = (name: string): string => name;

export const ARCH_KERNEL: Readonly<Record<string, ArchKernelTable>> = {
  x86_64: {
    layout: {
      // Linux's module area: within +-2 GiB of the kernel text at 0xffffffff81000000
      execArea: 0xffffffffa0000000n,
      execAreaSize: EXEC_SIZE,
      // Linux's vmalloc area, where VMAP_STACK thread stacks live
      stackArea: 0xffffc90000000000n,
      stackSize: STACK_SIZE,
    },
    branchReach: 0x7fff0000,
    oops: { pcLabel: 'RIP', regLabel: x86RegLabel, regsPerLine: 3, codeBefore: 43, codeAfter: 21, codeUnit: 1, codeMark: ['<', '>'] },
    user: { stackTop: 0x7ffffffff000n, stackSize: 8 * 1024 * 1024, platform: 'x86_64', hwcap: 0x178bfbffn },
  },
  aarch64: {
    layout: {
      // 64 MiB below the kernel image (arm64 b/bl reach +-128 MiB)
      execArea: 0xffff800004000000n,
      execAreaSize: EXEC_SIZE,
      stackArea: 0xffff800010000000n,
      stackSize: STACK_SIZE,
    },
    branchReach: 0x07f00000,
    oops: { pcLabel: 'pc', regLabel: wordRegLabel, regsPerLine: 3, codeBefore: 16, codeAfter: 4, codeUnit: 4, codeMark: ['(', ')'] },
    user: { stackTop: 0x7ffffffff000n, stackSize: 8 * 1024 * 1024, platform: 'aarch64', hwcap: 0n },
  },
  riscv64: {
    layout: {
      // 16 MiB below the kernel image (auipc+jalr reach +-2 GiB)
      execArea: 0xffffffff7f000000n,
      execAreaSize: EXEC_SIZE,
      stackArea: 0xffffffc800000000n,
      stackSize: STACK_SIZE,
    },
    branchReach: 0x7fff0000,
    oops: { pcLabel: 'epc', regLabel: wordRegLabel, regsPerLine: 3, codeBefore: 16, codeAfter: 4, codeUnit: 2, codeMark: ['(', ')'] },
    user: { stackTop: 0x3ffffff000n, stackSize: 8 * 1024 * 1024, platform: 'riscv64', hwcap: 0n },
  },
};

/** The table for an arch; a clear error when the kernel model has none. */
export function archKernel(arch: string): ArchKernelTable {
  const t = ARCH_KERNEL[arch];
  if (!t) throw new Error(`no kernel layout for architecture ${arch}`);
  return t;
}
