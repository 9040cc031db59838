/**
 * What the kprobes engine's inline breakpoint path (KprobesEngine
 * inlineBreakpoint, a host fast path for its native entries) reads of the
 * emulated kernel beyond KernelApi. The machine's Kernel has these fields;
 * a kernel without them (a test double) gets no inline path: every native
 * entry then traps as usual.
 */
import type { KernelApi } from '../kernel/types';

/** the per-CPU time slots of the running round, and what makes the machine take over after a trap */
export interface MachineView {
  readonly clock: { readonly used: number[] };
  readonly stopRequest: unknown;
  readonly exitCode: number | null;
  readonly oopsCount: number;
}

export function machineView(k: KernelApi): MachineView | null {
  const m = k as KernelApi & Partial<MachineView>;
  return m.clock && Array.isArray(m.clock.used) && 'stopRequest' in m && 'exitCode' in m && typeof m.oopsCount === 'number'
    ? m as MachineView : null;
}
