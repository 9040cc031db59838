/**
 * Kernel facts every port shares: the size of kernel stacks and of the
 * executable area, and the register label style of the word-register
 * arches. Each port's info part (emulator/arch/<arch>/info.ts) holds its
 * own ArchKernelTable (layout, branch reach, oops style, user stack).
 */
export type { ArchKernelTable, OopsStyle } from './types';

/** 16 KiB kernel stacks (THREAD_SIZE on x86_64), each followed by an unmapped guard gap of the same size. */
export const KERNEL_STACK_SIZE = 16 * 1024;
/** 4 MiB exec area: plenty for insn slots, kretprobe trampolines and detour buffers */
export const EXEC_AREA_SIZE = 4 * 1024 * 1024;
/** 8 MiB initial user stack */
export const USER_STACK_SIZE = 8 * 1024 * 1024;

/** arm64 and riscv print pt_regs names as they are */
export const wordRegLabel = (name: string): string => name;
