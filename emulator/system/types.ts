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

/** What a CPU of the full-system PC sees of the platform (the x86_64 system half's X86Platform has this shape). */
export interface SystemPlatform {
  readonly io: IoPorts;
  readonly irq: InterruptLine;
  readonly msrs: PlatformMsrs;
  readonly clock: VirtualClock;
}

/** A CPU's first state in long mode: the boot protocol's (the BSP) or the SIPI's (an AP). */
export interface LongModeStart {
  /** where the CPU starts (startup_64: the kernel's load address + 0x200; an AP: the trampoline header's start) */
  rip: bigint;
  /** the PML4's physical address */
  cr3: bigint;
  /** the GDT the loader built (its 0x10 a 64-bit code segment, 0x18 a data segment) */
  gdtBase: bigint;
  gdtLimit: number;
  /** general registers by hardware number (rsi = 6: the boot_params' physical address; rsp = 4) */
  regs?: ReadonlyMap<number, bigint>;
  /** selectors; default __BOOT_CS 0x10 and __BOOT_DS 0x18 */
  cs?: number;
  ds?: number;
  /** CR0 (default PE | ET | PG), CR4 (default PAE), EFER (default LME | LMA) */
  cr0?: number;
  cr4?: number;
  efer?: bigint;
}

/** One CPU of the full-system PC, as the run loop drives it. */
export interface SystemCpuHandle {
  readonly id: number;
  /** instructions retired since it started */
  readonly instret: number;
  pc(): bigint;
  /** general register by hardware number (rax = 0 ... r15 = 15) */
  reg(n: number): bigint;
  /** where the CPU reports what the platform lacks (an MSR, once, with the rip) */
  setLog(log: (line: string) => void): void;
  /** what a debugger reads and sets of this CPU */
  readonly debug: SystemCpuDebug;
}

/**
 * A system CPU as a debugger sees it (emulator/debug/linuxTarget.ts): its
 * registers, its address space's root, the kernel's per-CPU base, and
 * execute breakpoints the guest cannot see (no guest byte written: the CPU
 * stops before such an instruction with a 'debugBreak' event).
 */
export interface SystemCpuDebug {
  /** how many breakpoint addresses setBreakpoints takes */
  readonly maxBreakpoints: number;
  /** the registers in the order a debugger lists them, formatted (general, rip, flags, segments, bases, control registers, EFER, descriptor tables) */
  registers(): readonly { name: string; value: string }[];
  /** the root of the page tables the CPU translates through (x86: CR3's frame) */
  pageTableRoot(): bigint;
  /** the kernel's per-CPU area (x86: GS base in the kernel, KERNEL_GS_BASE while the user's GS is live) */
  perCpuBase(): bigint;
  /** the debugger's own change of a general register, rip or rflags by its name in registers(); else why not */
  setRegister(name: string, value: bigint): string | undefined;
  setBreakpoints(addrs: readonly bigint[]): void;
  /**
   * The debugger's data watchpoints (the slots above its breakpoints'; the
   * two together at most maxBreakpoints): the CPU stops after an access
   * that matches with a 'debugBreak' event whose detail starts "a debugger
   * watchpoint"; the guest sees no #DB.
   */
  setWatchpoints(list: readonly { addr: bigint; len: number; read: boolean; write: boolean }[]): void;
  /** before running again: leave a 'debugBreak' stop; `skipOnce`: the instruction at pc runs once without matching a breakpoint */
  resume(skipOnce: boolean): void;
}

/** How a run of a full-system CPU ended. */
export interface SystemCpuRun {
  executed: number;
  /** waiting in HLT for an interrupt */
  halted: boolean;
  /** the machine must stop: triple fault, a physical address nothing backs, a mode not emulated */
  event: { kind: 'tripleFault' | 'busError' | 'unsupported' | 'debugBreak'; rip: bigint; detail: string } | null;
}

/** The CPU architecture's side of the full-system PC (arch/registry.ts's systemCpuPort()). */
export interface SystemCpuPort {
  create(id: number, phys: import('../memory/memory').Memory, platform: SystemPlatform, start: LongModeStart): SystemCpuHandle;
  run(cpu: SystemCpuHandle, budget: number): SystemCpuRun;
}
