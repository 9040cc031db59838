/**
 * What the kprobes engine's inline breakpoint path (KprobesEngine
 * inlineBreakpoint, a host fast path for its native entries) reads of the
 * machine's run state: part of KernelApi (the quantum accounting, a pending
 * stop, power off, oopses).
 */
import type { KernelApi } from '../kernel/types';

export type MachineView = Pick<KernelApi, 'clock' | 'stopRequest' | 'exitCode' | 'oopsCount'>;

/** The run state of a kernel (every KernelApi has it). */
export function machineView(k: KernelApi): MachineView {
  return k;
}
