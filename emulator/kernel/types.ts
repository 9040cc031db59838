/**
 * Contracts between the emulated kernel (emulator/kernel/), the kprobes
 * engine (emulator/kprobes/) and the handler language (emulator/handlers/).
 * The kernel implements KernelApi; the kprobes engine only uses KernelApi.
 */
import type { SysctlTable } from './sysctl';
import { ArchOps, Cpu, Trap } from '../arch/types';
import { Memory } from '../memory/memory';
import { ElfImage } from '../elf/types';

/** Layout of the emulated kernel's own virtual areas (x86_64 values; other arches put
 *  theirs in their ArchOps-adjacent layout table). */
export interface KernelLayout {
  /** executable area for kprobe insn slots, trampolines, detour buffers (Linux module area).
   *  Must be within +-2 GiB of kernel text on x86_64 (rel32 reach). */
  execArea: bigint;
  execAreaSize: number;
  /** kernel thread stacks are allocated here */
  stackArea: bigint;
  stackSize: number;
}

export type TaskState = 'runnable' | 'blocked' | 'exited';

export interface Task {
  readonly pid: number;
  comm: string;
  /** CPU the task is bound to */
  readonly cpu: number;
  state: TaskState;
  /** true for user processes */
  readonly user: boolean;
  /** address space (kernel threads share the kernel's) */
  readonly mm: Memory;
  /** a kernel thread's borrowed user address space (kthread_use_mm): its process's pid and memory */
  readonly usedMm?: { pid: number; mm: Memory } | null;
  exitCode?: number;
  /** kernel stack bounds [stackBase, stackTop) for stack walking */
  readonly stackBase: bigint;
  readonly stackTop: bigint;
}

/**
 * A trap notifier (Linux's die-notifier chain / kprobe_int3_handler,
 * kprobe_debug_handler, kprobe_fault_handler). Called in registration order;
 * return true when the trap was consumed (the CPU resumes at its current pc).
 * A hook that returns false may have rewritten the CPU's pc and `trap.pc`
 * (kprobes does, when a single-stepped copy faults: the fault is then
 * reported at the probed instruction's own address, so __ex_table fixups
 * and oops reports see the original instruction).
 */
export type TrapHook = (cpu: Cpu, trap: Trap) => boolean;

export interface PrintkRecord {
  /** virtual time in ns when printed */
  timeNs: bigint;
  cpu: number;
  /** one line without the trailing newline */
  text: string;
  /** 'kernel' = from the image, 'probe' = from a probe handler, 'emulator' = oops, warnings */
  source: 'kernel' | 'probe' | 'emulator';
}

/** The kind of a probe hit (the hit log's records, emulator/trace); 'breakpoint': a debugger breakpoint the emulator stops at (the Linux machine's, no kprobe). */
export type HitKind = 'kprobe' | 'kretprobe-entry' | 'kretprobe-return' | 'jprobe' | 'uprobe' | 'uretprobe' | 'watchpoint' | 'breakpoint';

/** why a hit was missed */
export type MissReason =
  /** a kretprobe found no free instance (maxactive too small) */
  | 'maxactive'
  /** a probe was hit while a probe handler (or single-step) ran on the same CPU */
  | 'reentry'
  /** another engine limit (uretprobe nesting depth, no out-of-line slot); `detail` says which */
  | 'other';

/** What an engine reports for one missed hit (kernel.probeMissed). */
export interface MissInfo {
  reason: MissReason;
  /** the kind of probe that missed ('kretprobe-entry' for a kretprobe out of instances) */
  kind: HitKind;
  cpu: number;
  probeId: number;
  addr: bigint;
  /** the probe's display name (built by the engine only on the miss path) */
  probe: string;
  /** the probe's missed count after this miss (its nmissed) */
  missed: number;
  /** maxactive: the kretprobe's maxactive and the most concurrent calls seen (active instances + missed ones at the same time) */
  maxactive?: number;
  concurrency?: number;
  /** reentry: the probe being handled on that CPU when the hit was missed */
  runningProbeId?: number;
  runningProbe?: string;
  /** other: what limit */
  detail?: string;
}

/**
 * Where the kernel sends the probe hits it numbers (Kernel.attachHitLog):
 * the hit log of emulator/trace implements it; the kernel knows no more of
 * it than this.
 */
export interface ProbeHitSink {
  /** the seq of the latest hit recorded (a hit at or below it is one replayed after going back in time) */
  readonly lastSeq: number;
  /** record a hit; `latencyNs`: NaN when the hit has none */
  hit(seq: number, instructions: number, timeNs: number, cpu: number, pid: number, comm: string,
    kind: HitKind, probeId: number, probe: string, addr: bigint, latencyNs: number): unknown;
  /** a hit replayed after going back in time: not recorded again */
  replayed(cpu: number): void;
  /** a line a probe handler printed on `cpu` (its latest hit's output) */
  output(cpu: number, line: string): void;
  /** a missed hit, numbered `missSeq` */
  missed(missSeq: number, info: MissInfo): unknown;
}

export interface KernelApi {
  readonly arch: ArchOps;
  /** the sysctl table (subsystems register their entries; front ends write through it) */
  readonly sysctl: SysctlTable;
  /** per-CPU instruction slots used in the running round (the scheduler's quantum accounting) */
  readonly clock: { readonly used: number[]; nowNs(cpu?: number): number };
  /** a stop the debugger asked for, not yet taken by the machine loop */
  readonly stopRequest: unknown;
  /** the exit code once the kernel powered off, else null */
  readonly exitCode: number | null;
  /** oopses so far */
  readonly oopsCount: number;
  readonly image: ElfImage;
  /** kernel address space */
  readonly mem: Memory;
  readonly cpus: readonly Cpu[];
  readonly layout: KernelLayout;

  /** task currently running on a CPU (undefined while idle) */
  current(cpu: number): Task | undefined;
  tasks(): readonly Task[];
  /** append text to the kernel log (splits lines) */
  printk(cpu: number, text: string, source?: PrintkRecord['source']): void;
  /** virtual time since boot */
  timeNs(): bigint;
  jiffies(): bigint;
  /** allocate executable kernel memory in the exec area (never freed in this model); returns address */
  allocExec(size: number, align?: number): bigint;
  /** add a trap notifier before the kernel's own handling */
  addTrapHook(hook: TrapHook): void;
  /**
   * A condition under which the task on a CPU must not be preempted by the
   * timer tick (Linux: preemption and interrupts disabled — the kprobes
   * engine while a CPU is between a probe hit and the end of its
   * out-of-line single-step).
   */
  addPreemptBlocker(blocked: (cpu: number) => boolean): void;
  /**
   * Work to run at every timer tick, before preemption (delayed work such as
   * the kprobe optimizer: it runs where the CPUs happen to be, not only when
   * one of them traps).
   */
  addTickHook(hook: () => void): void;
  /**
   * Work to run at the end of every scheduling round (all CPUs have run
   * their quantum): the deferred requests of probe handlers (a work item a
   * kworker picks up at the next scheduling point).
   */
  addRoundHook(hook: () => void): void;
  /** called when a task exits (kretprobe instance recycling) */
  onTaskExit(listener: (t: Task) => void): void;
  /** report an oops for this CPU: message, registers, code bytes; the CPU stops. `detail`: lines
   *  after the headline naming where the fault really happened (a probe handler's file:line:col) */
  oops(cpu: Cpu, trap: Trap | null, message: string, detail?: readonly string[]): void;
  /** functions listed in the image's _kprobe_blacklist section, as [start, end) ranges */
  blacklist(): readonly { start: bigint; end: bigint; name: string }[];
  /** request the machine to stop (debugger); reason shown to the user */
  requestStop(cpu: number, reason: StopRequest): void;
  /** (optional, added for kprobes) allocate zeroed, writable kernel data memory (never freed),
   *  e.g. kretprobe instance data; the kprobes engine maps its own data area when absent */
  kmalloc?(size: number, align?: number): bigint;
  /** (optional, added for kprobes) dispatch a trap exactly as the machine does (hooks, then the
   *  kernel): used to run kernel code nested inside a probe handler (callKernelFunction) */
  handleTrap?(cpu: Cpu, trap: Trap): void;
  /** (optional, the hit log: emulator/trace) one probe hit, numbered and recorded; returns its seq */
  probeHit?(kind: HitKind, cpu: number, probeId: number, addr: bigint, probe: string, latencyNs?: number): number;
  /**
   * (optional, the hit log) instructions the running CPU's current run has
   * retired that the machine has not accounted yet: an engine handling a
   * breakpoint from inside the instruction (the CPU's inline breakpoint)
   * sets it for the duration, so that its hits record the machine-wide
   * count a trap would show (the machine accounts a run before it
   * dispatches the run's trap); 0 otherwise
   */
  runRetired?: number;
  /** (optional, the hit log) a missed probe hit (nmissed), for the warnings */
  probeMissed?(info: MissInfo): void;
  /** (optional) what stack walks ask of the kprobes engine (stack.ts); absent or null: no engine */
  readonly unwindHooks?: UnwindHooks | null;
  /** (optional, the hit log) a task off its CPU: the kernel stack pointer it resumes with, null when it has no kernel call in flight (user mode, exited) */
  savedKernelSp?(t: Task): bigint | null;
}

/** One frame of a stack trace after UnwindHooks.fixupStackTrace. */
export interface FixedFrame {
  /** the address to show: the real return address when `replaced` */
  addr: bigint;
  /** the address found on the stack (the trampoline when replaced) */
  raw: bigint;
  replaced: boolean;
}

/**
 * What the stack walker (stack.ts) asks of the probes engine that patches
 * kernel code and return addresses: Linux's unwinders ask kprobes the same
 * (kretprobe_find_ret_addr, is_kprobe_*_slot). Installed by whoever composes
 * the machine (KernelApi.unwindHooks); without them a trace is walked as the
 * memory holds it.
 */
export interface UnwindHooks {
  /** code bytes as they are without breakpoints */
  readCode(addr: bigint, len: number): Uint8Array;
  /** the address kretprobed functions return to (kretprobe_trampoline) */
  kretprobeTrampoline(): bigint;
  /** return addresses (innermost first) with each trampoline entry replaced by the real return address of `task` (undefined: the idle context of `cpu`) */
  fixupStackTrace(task: Task | undefined, addrs: readonly bigint[], cpu: number): FixedFrame[];
  /** %pS-style name of the engine's own code (instruction slots, trampolines), undefined elsewhere */
  symbolize(addr: bigint): string | undefined;
}

export interface StopRequest {
  reason: 'breakpoint' | 'step' | 'pause' | 'entry' | 'exception' | 'data breakpoint' | 'goto';
  description: string;
  /** pc to report to the user (e.g. the probe address rather than the slot) */
  reportPc?: bigint;
  /** probe that caused it, if any */
  probeId?: number;
}
