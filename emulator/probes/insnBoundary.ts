/**
 * What a probe address inside an instruction does. Linux 2.6 does not check
 * on CISC machines (the x86 port registers a probe in the middle of an
 * instruction: its int3 byte corrupts that instruction, the probe is never
 * hit); today's kernels decode from the function's start and return
 * -EILSEQ (x86 can_probe()). The probe manager keeps the 2.6 behaviour by
 * default and warns; InsnBoundaryPolicy 'reject' behaves like today's
 * kernels. The boundary check itself is the arch level's
 * (emulator/arch/insnBoundary.ts).
 */

/** 'warn' (default: registered, as on 2.6, with a warning) or 'reject' (-EILSEQ, as today's kernels) */
export type InsnBoundaryPolicy = 'warn' | 'reject';
export const INSN_BOUNDARY_POLICIES: readonly InsnBoundaryPolicy[] = ['warn', 'reject'];
export const DEFAULT_INSN_BOUNDARY: InsnBoundaryPolicy = 'warn';

