/**
 * The full-system PC's contracts (a second kind of machine: a real Linux
 * kernel boots on it, beside the emulated-kernel machine that stays the
 * default). What the x86_64 CPU's system half (arch/x86_64/) sees of the
 * platform, and what the platform (emulator/system/) offers it; type-only
 * imports reach this interface file from the arch port below it.
 *
 * Physical memory is a `Memory` (memory/memory.ts) addressed by physical
 * address: RAM regions plus MMIO `Device` regions (local APIC at
 * 0xfee00000, IO-APIC at 0xfec00000). Port I/O is a separate 64 KiB space.
 */

/** The x86 I/O port space as `in`/`out`/`ins`/`outs` see it. */
export interface IoPorts {
  /** a read of `size` bytes at `port` (0..0xffff); a port nothing decodes reads as all ones */
  in(port: number, size: 1 | 2 | 4): number;
  out(port: number, size: 1 | 2 | 4, value: number): void;
}

/** What the CPU asks its interrupt controller (the local APIC, fed by the PICs / IO-APIC) at an instruction boundary. */
export interface InterruptLine {
  /** the vector of the highest-priority interrupt the CPU may take now (RFLAGS.IF is the CPU's check), or -1 */
  pendingVector(): number;
  /** the CPU takes `vector` (INTA): it moves from requested to in service */
  acknowledge(vector: number): void;
  /** a non-maskable interrupt is pending (taken regardless of RFLAGS.IF) */
  nmiPending?(): boolean;
}

/** Model-specific registers the platform owns (IA32_APIC_BASE, the TSC deadline, the KVM clock MSRs if offered). */
export interface PlatformMsrs {
  /** the value, or undefined when the platform has no such MSR (the CPU then raises #GP(0)) */
  rdmsr(cpu: number, msr: number): bigint | undefined;
  /** false when the platform has no such MSR or refuses the value (#GP(0)) */
  wrmsr(cpu: number, msr: number, value: bigint): boolean;
}

/** The virtual clock both halves agree on: the TSC, the APIC timer and the PIT count from it. */
export interface VirtualClock {
  /** virtual nanoseconds since reset (a bigint: it never rounds) */
  nowNs(): bigint;
  /** the TSC frequency in Hz the CPU advertises (CPUID 0x15/0x16) and the kernel calibrates against */
  readonly tscHz: bigint;
}
