/**
 * Engine events for the debugger (tree views, DAP `_probe*` events). Plain
 * listener arrays; listeners must not throw (a throwing listener is removed
 * from the hit path by being caught and ignored).
 */
import type { ProbeKind } from './kprobe';

export interface ProbeInfo {
  id: number;
  kind: ProbeKind;
  addr: bigint;
  /** "symbol+0xoff" or the hex address */
  where: string;
  disabled: boolean;
  gone: boolean;
  /** the probe's jump is written (debugfs [OPTIMIZED]) */
  optimized?: boolean;
  /** an ftrace-based probe (debugfs [FTRACE]): its call site calls the ftrace trampoline, no breakpoint */
  ftrace?: boolean;
}

export type KprobeEvent =
  | { type: 'registered'; probe: ProbeInfo }
  | { type: 'unregistered'; probe: ProbeInfo }
  /** handlers of probe `id` ran on `cpu` (not sent for missed hits) */
  | { type: 'hit'; id: number; addr: bigint; cpu: number; kind: ProbeKind }
  /** a probe was enabled/disabled */
  | { type: 'stateChanged'; probe: ProbeInfo }
  /** the debugfs `enabled` knob changed */
  | { type: 'enabledChanged'; enabled: boolean }
  /** a probe hit ran no handler (reentry, no kretprobe instance) */
  | { type: 'missed'; id: number; addr: bigint; cpu: number }
  /** the optimizer wrote the jump over this probe's region ([OPTIMIZED] appears) */
  | { type: 'optimized'; probe: ProbeInfo }
  /** the jump was replaced by the original bytes and a breakpoint ([OPTIMIZED] disappears) */
  | { type: 'unoptimized'; probe: ProbeInfo }
  /** the debug.kprobes_optimization sysctl changed */
  | { type: 'optimizationChanged'; enabled: boolean };

export type KprobeListener = (e: KprobeEvent) => void;

export class KprobeEvents {
  private readonly listeners: KprobeListener[] = [];

  on(l: KprobeListener): () => void {
    this.listeners.push(l);
    return () => { const i = this.listeners.indexOf(l); if (i >= 0) this.listeners.splice(i, 1); };
  }

  get active(): boolean { return this.listeners.length > 0; }

  emit(e: KprobeEvent): void {
    for (const l of this.listeners.slice()) {
      try { l(e); } catch { /* a broken view must not break the probed kernel */ }
    }
  }
}
