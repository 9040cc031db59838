/**
 * What a device that acts on its own in time offers the machine: the
 * virtual time of its next action, and a call to catch up to a time. The
 * machine runs the CPUs up to the earliest event (or lets a halted CPU
 * skip to it), then advances every device: devices count only virtual
 * time, so the same run gives the same interrupts at the same instructions.
 */
export interface TimedDevice {
  /** virtual ns of the next thing this device does by itself, or null when nothing is due */
  nextEventNs(): bigint | null;
  /** do everything due at or before `nowNs` */
  advance(nowNs: bigint): void;
}

/** An interrupt request line a device drives (ISA IRQs: the PICs and the IO-APIC listen). */
export type IrqLine = (level: boolean) => void;

/** a rising then falling edge: an edge-triggered request */
export function pulse(line: IrqLine): void {
  line(true);
  line(false);
}

/** floor(ns * hz / 1e9): ticks of a `hz` clock in `ns` */
export const ticksIn = (ns: bigint, hz: bigint): bigint => (ns * hz) / 1_000_000_000n;
/** the first virtual ns at which `ticks` ticks of a `hz` clock have passed */
export const nsForTicks = (ticks: bigint, hz: bigint): bigint => (ticks * 1_000_000_000n + hz - 1n) / hz;
