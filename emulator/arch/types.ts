/**
 * The per-architecture plug-in tables (QEMU's TCGCPUOps / Unicorn's
 * uc_init() idea): ArchInfo (loads without a CPU) and ArchOps (the CPU).
 * Core code (machine, kernel, kprobes core, adapter) never switches on the
 * architecture: it asks the table.
 */
import { Memory } from '../memory/memory';
import { VAddr } from '../memory/address';
import type { HwDebugUnit } from '../cpu/hwDebug';
import type { KernelLayout } from '../kernel/types';

/** Exceptions/traps a CPU reports to the machine. Never strings. */
export type Trap =
  /** Breakpoint instruction (x86 int3: pc is the address AFTER the int3, as hardware reports it;
   *  aarch64 brk / riscv ebreak: pc is the address OF the instruction). */
  | { kind: 'breakpoint'; pc: bigint }
  /** Single-step completed (x86 #DB via TF). pc = next instruction. */
  | { kind: 'singleStep'; pc: bigint }
  /** Undefined / undecodable instruction (#UD). pc = faulting instruction. */
  | { kind: 'undefined'; pc: bigint }
  /** Divide error (#DE). */
  | { kind: 'divide'; pc: bigint }
  /** Page fault: addr = faulting data/fetch address. present=false: unmapped. */
  | { kind: 'pageFault'; pc: bigint; addr: bigint; access: 'read' | 'write' | 'exec'; present: boolean; user: boolean }
  /** General protection (#GP): non-canonical address, privileged insn in user mode... */
  | { kind: 'generalProtection'; pc: bigint; reason: string }
  /** Kernel -> emulator call (x86 vmcall, arm64 hvc #0, riscv ecall from S-mode). pc = next insn. */
  | { kind: 'hypercall'; pc: bigint }
  /** User-mode system call (x86 syscall, arm64 svc #0, riscv ecall from U-mode). pc = next insn. */
  | { kind: 'syscall'; pc: bigint }
  /** hlt / wfi. pc = next insn. */
  | { kind: 'halt'; pc: bigint }
  /**
   * Hardware breakpoint / watchpoint (x86 #DB from DR0-DR3, arm64 breakpoint
   * or watchpoint exception; emulator/cpu/hwDebug.ts). hits: the debug
   * registers that matched (bit n = register n; x86 DR6 B0-B3). pc: an
   * execute match or an arm64 watchpoint: the instruction (not executed);
   * an x86 data match: the next instruction (the access completed). addr:
   * the address accessed (arm64 FAR; for exec, the pc). step: a single-step
   * completed with the same instruction (x86 DR6.BS with Bn).
   */
  | { kind: 'hwBreakpoint'; pc: bigint; hits: number; addr: bigint; access: 'read' | 'write' | 'exec'; step?: boolean };

export type TrapKind = Trap['kind'];

/** Result of running a CPU for a budget of instructions. */
export interface RunResult {
  /** instructions retired in this call */
  executed: number;
  /** the trap that stopped the run, or null when the budget ran out */
  trap: Trap | null;
}

/** Description of one register as the debugger and handler language see it. */
export interface RegInfo {
  /** pt_regs field name (x86_64: ip sp flags ax bx cx dx si di bp r8..r15 orig_ax) */
  name: string;
  /** width in bits (64 for GPRs) */
  bits: number;
  /** register group for the UI */
  group: 'general' | 'control' | 'segment';
}

/** Saved register file of a task (opaque to core code; arch-specific content). */
export interface CpuContext {
  readonly arch: string;
}

/** One emulated CPU. */
export interface Cpu {
  readonly id: number;
  /** current address space; the kernel swaps it when switching tasks */
  mem: Memory;
  /** privilege: false = kernel/supervisor, true = user */
  userMode: boolean;
  /** total instructions retired on this CPU since boot */
  readonly instret: number;
  /** the debug registers' match unit (emulator/cpu/hwDebug.ts) */
  readonly hw: HwDebugUnit;
  /** single-step after the next instruction (x86 TF; arm64 MDSCR_EL1.SS as the kernel's hw_breakpoint step uses it) */
  stepTrap: boolean;
  /** x86 RF: the next instruction is not checked against execute breakpoints */
  resumeFlag: boolean;

  getPc(): bigint;
  setPc(pc: bigint): void;
  /** register by index into ArchOps.regs */
  getReg(index: number): bigint;
  setReg(index: number, value: bigint): void;
  /**
   * Where ArchOps.regs register `index` lives when it is a plain 64-bit
   * general register held as 32-bit halves in `lo` / `hi` (the interpreter
   * CPUs): its slot there, else -1. Hot paths read such registers as
   * numbers instead of through getReg's BigInt. Absent: none is.
   */
  gprSlot?(index: number): number;
  readonly lo?: Int32Array;
  readonly hi?: Int32Array;

  /** Execute until a trap or `budget` instructions retire. Never throws for guest faults. */
  run(budget: number): RunResult;

  /** Save / restore the whole register file (task switch, jprobe, snapshots). */
  saveContext(): CpuContext;
  restoreContext(ctx: CpuContext): void;

  /** Drop cached decodes overlapping [addr, addr+len). Memory listeners call this too. */
  invalidate(addr: VAddr, len: number): void;
}

/** A decoded instruction, for disassembly, length decoding and kprobes. */
export interface DecodedInsn {
  /** address of the first byte */
  addr: bigint;
  /** length in bytes */
  length: number;
  bytes: Uint8Array;
  /** e.g. "mov" */
  mnemonic: string;
  /** e.g. "rax, qword ptr [rbp - 0x8]" */
  operands: string;
  /** absolute target of a relative branch/call, when it has one */
  target?: bigint;
  /** classification used by kprobes and the optimizer */
  flow: 'none' | 'jump' | 'condJump' | 'call' | 'ret' | 'indirectJump' | 'indirectCall' | 'trap' | 'halt';
  /** uses instruction-pointer-relative addressing (x86 RIP-relative operand) */
  ipRelative: boolean;
}

/** ABI facts core code needs. */
export interface AbiInfo {
  /** register indices (into ArchOps.regs) of integer arguments, in order */
  argRegs: number[];
  /** register index of the integer return value */
  retReg: number;
  spReg: number;
  pcReg: number;
  /** frame pointer register index */
  fpReg: number;
  /** where a function's return address lives on entry */
  returnAddress: { kind: 'stack'; offset: number } | { kind: 'reg'; reg: number };
  /** index of the register the handler language calls `flags` (x86 flags / pstate / status), or -1 */
  flagsReg: number;
  /** register the hypercall number is passed in, hypercall argument registers, return register */
  hypercall: { nr: number; args: number[]; ret: number };
  /** the same for user syscalls; insnSize: bytes of the system call instruction (a restarted call runs it again) */
  syscall: { nr: number; args: number[]; ret: number; insnSize: number };
  /** pointer size in bytes */
  pointerSize: 4 | 8;
  /** whether plain `char` is signed in this ABI (x86: yes; arm64, riscv: no) */
  charSigned: boolean;
  /** Linux trap numbers reported to fault handlers (trapnr) */
  trapNumbers: Partial<Record<TrapKind, number>>;
}

/**
 * The frame record a frame-pointer ABI keeps, for stack walks where no call
 * frame information covers the pc (emulator/kernel/stack.ts). Offsets are
 * bytes from the frame pointer. x86_64 (push rbp; mov rbp,rsp):
 * savedFp 0, returnAddress 8, callerSp 16; aarch64 (stp x29,x30; mov x29,sp):
 * savedFp 0, returnAddress 8; riscv64 (s0 = sp at entry): savedFp -16,
 * returnAddress -8, callerSp 0.
 */
export interface FrameRecordLayout {
  /** the caller's frame pointer is saved at fp + savedFpOffset */
  readonly savedFpOffset: number;
  /** the return address is at fp + returnAddressOffset */
  readonly returnAddressOffset: number;
  /** the caller's stack pointer after the return is fp + callerSpOffset; omitted when the record does not fix it */
  readonly callerSpOffset?: number;
  /**
   * A one-instruction prologue start that saves the caller's frame pointer
   * before the new one is set (x86 `push rbp` = 0x55): right after it the
   * return address is `spAdjust` bytes further from sp than on entry.
   */
  readonly pushFp?: { readonly bytes: Uint8Array; readonly spAdjust: number };
}

/**
 * One 8-byte slot of the struct pt_regs a C kprobe handler is given
 * (emulator/kprobes/cApi.ts writes the frame before the call and reads it
 * back after): a register by its ArchInfo.regs name, read and written
 * back; or a field this emulator keeps no register for, written as a
 * constant and not read back (x86_64 orig_ax = -1, cs, ss).
 */
export type PtRegsSlot = string | { readonly name: string; readonly value: bigint };

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

/** Per-architecture facts of the emulated kernel (not of the CPU). */
export interface ArchKernelTable {
  /** preferred layout of the kernel's own areas */
  layout: KernelLayout;
  /** +- reach of a direct branch/call from kernel text (the exec area must be within it) */
  branchReach: number;
  oops: OopsStyle;
  /** user processes: top of the initial stack, its size, and the platform string (AT_PLATFORM) */
  user: {
    stackTop: bigint; stackSize: number; platform: string; hwcap: bigint;
    /** the struct stat layout of this ABI: x86_64's own, or asm-generic's (arm64, riscv) */
    stat: 'x86_64' | 'generic';
    /** open(2) flags whose values differ between arches (arm64's O_DIRECTORY / O_NOFOLLOW are its own) */
    openFlags: { directory: number; nofollow: number };
    /** clone(2)'s argument holding the child tid pointer: 3 (x86_64: flags, sp, ptid, ctid, tls) or 4 (CLONE_BACKWARDS: ..., tls, ctid) */
    cloneChildTidArg: 3 | 4;
    /** struct sigaction of rt_sigaction has sa_restorer (the arch defines SA_RESTORER) */
    sigactionRestorer: boolean;
  };
}

/** Linux system calls the emulated kernel implements (or knowingly stubs), by name. */
export type SyscallName =
  // memory, time, identity
  | 'brk' | 'mmap' | 'munmap' | 'mprotect' | 'madvise' | 'arch_prctl' | 'set_tid_address' | 'set_robust_list'
  | 'uname' | 'clock_gettime' | 'clock_getres' | 'gettimeofday' | 'getrandom' | 'getuid' | 'geteuid' | 'getgid'
  | 'getegid' | 'getgroups' | 'prlimit64' | 'getrlimit' | 'sched_yield' | 'nanosleep' | 'clock_nanosleep' | 'futex'
  | 'rseq' | 'msync' | 'time' | 'prctl' | 'sched_getaffinity' | 'sysinfo' | 'times' | 'getrusage' | 'poll' | 'ppoll'
  // files
  | 'read' | 'write' | 'readv' | 'writev' | 'pread64' | 'pwrite64' | 'open' | 'openat' | 'creat' | 'close' | 'lseek'
  | 'fstat' | 'stat' | 'lstat' | 'newfstatat' | 'statx' | 'getdents64' | 'fcntl' | 'dup' | 'dup2' | 'dup3'
  | 'pipe' | 'pipe2' | 'ioctl' | 'getcwd' | 'chdir' | 'fchdir' | 'mkdir' | 'mkdirat' | 'rmdir' | 'unlink' | 'unlinkat'
  | 'rename' | 'renameat' | 'renameat2' | 'readlink' | 'readlinkat' | 'symlink' | 'symlinkat' | 'link' | 'linkat'
  | 'access' | 'faccessat' | 'faccessat2' | 'umask' | 'ftruncate' | 'truncate' | 'fsync' | 'fdatasync'
  | 'chmod' | 'fchmod' | 'fchmodat' | 'chown' | 'fchown' | 'lchown' | 'fchownat' | 'mount' | 'umount2'
  // modules
  | 'init_module' | 'finit_module' | 'delete_module'
  // processes and signals
  | 'fork' | 'vfork' | 'clone' | 'execve' | 'exit' | 'exit_group' | 'wait4' | 'getpid' | 'getppid' | 'gettid'
  | 'getpgid' | 'setpgid' | 'getpgrp' | 'getsid' | 'setsid' | 'kill' | 'tkill' | 'tgkill' | 'rt_sigaction'
  | 'rt_sigprocmask' | 'rt_sigreturn' | 'sigaltstack' | 'pause' | 'rt_sigsuspend';

/**
 * The info part of a port (emulator/arch/<arch>/info.ts): everything about
 * an architecture that loads without its CPU — registers in pt_regs order,
 * ABI, instruction facts, kernel layout and oops style, system call numbers,
 * names. The language server, the handler language and the checkers read
 * only this; emulator/ports.ts lists every port's info.
 */
export interface ArchInfo {
  readonly name: 'x86_64' | 'aarch64' | 'riscv64' | string;
  /** other spellings (toolchain triples, Debian/Go names): 'amd64', 'arm64'... */
  readonly aliases: readonly string[];
  /** ELF e_machine values handled by this port */
  readonly elfMachines: number[];
  readonly regs: RegInfo[];
  readonly abi: AbiInfo;
  /** breakpoint instruction bytes written by armKprobe (x86: [0xcc]) */
  readonly breakpointInsn: Uint8Array;
  /**
   * A shorter breakpoint armKprobe writes over a shorter instruction, with the
   * name a debugger shows for it (riscv: c.ebreak over a compressed
   * instruction; the disassembler, like llvm-objdump, prints both as ebreak).
   * Omitted: every probe writes `breakpointInsn`.
   */
  readonly shortBreakpoint?: { readonly bytes: Uint8Array; readonly mnemonic: string };
  /** how the arch reports a breakpoint pc relative to the probe address (x86: +1) */
  readonly breakpointPcOffset: number;
  /** maximum instruction length in bytes */
  readonly maxInsnLength: number;
  /** minimum instruction length / alignment in bytes (x86: 1; riscv with C: 2; arm64: 4) */
  readonly minInsnLength: number;
  /** Emit a native "return to caller" sequence (x86: ret) — used for trampolines. */
  readonly returnInsn: Uint8Array;
  /** frame-pointer frame record (stack walks without unwind info); omitted: no frame-pointer walk */
  readonly frameRecord?: FrameRecordLayout;
  /**
   * DWARF register number (call frame information, psABI numbering) -> index
   * into `regs`, -1 where that number has no register here; omitted: no CFI
   * unwinding. The return-address column may map to the pc (x86_64: 16 -> ip).
   */
  readonly dwarfRegs?: readonly number[];
  /**
   * struct pt_regs as Linux lays it out for this arch (arch/<arch>/include/
   * asm/ptrace.h), slot by slot from offset 0: what a C kprobe handler's
   * `struct pt_regs *` points to. Omitted: C kprobe modules are not
   * offered on this arch (register_kprobe and the rest are not resolved).
   */
  readonly ptRegsFrame?: readonly PtRegsSlot[];
  /** Linux can jump-optimize kprobes here (HAVE_OPTPROBES) */
  readonly optprobes: boolean;
  /** the emulated kernel's layout and oops style */
  readonly kernel: ArchKernelTable;
  /** Linux system call numbers of the calls the emulated kernel knows */
  readonly syscalls: Readonly<Record<number, SyscallName>>;
  /**
   * numbers the Linux this kernel models (6.1) has no call for, which newer C
   * libraries try first and fall back from: -ENOSYS without a log line, as
   * Linux answers (riscv64's riscv_hwprobe, 258, came in 6.4)
   */
  readonly absentSyscalls?: ReadonlySet<number>;
  /** `uname -m` */
  readonly unameMachine: string;
  /** other spellings users type for registers (gdb's: x86 rdi -> di, rip -> ip), by pt_regs name they mean */
  readonly regAliases?: Readonly<Record<string, string>>;
  /** the port has an implementation part (emulator/arch/<name>/index.ts: CPU, decoder, kprobes hooks) */
  readonly hasCpu: boolean;
}

/** What a signal frame is built from (the handler's action and the mask to restore). */
export interface SignalDelivery {
  sig: number;
  handler: bigint;
  flags: bigint;
  /** sa_restorer (used when flags has SA_RESTORER) */
  restorer: bigint;
  /** the blocked mask the handler's return restores */
  mask: bigint;
  /** the address of the process's sigreturn trampoline (mapped on demand) for handlers without SA_RESTORER */
  tramp: () => bigint;
}

/** A port's signal frames (Linux's arch/<arch>/kernel/signal.c: setup_rt_frame / sys_rt_sigreturn). */
export interface SignalFrameOps {
  /** Build the frame on the user stack and enter the handler; false when the stack cannot take it. */
  push(cpu: Cpu, mm: Memory, d: SignalDelivery): boolean;
  /** rt_sigreturn: restore the registers saved in the frame at sp; the mask to restore, or null for a bad frame. */
  pop(cpu: Cpu, mm: Memory): bigint | null;
  /** the code of the sigreturn trampoline page (`mov syscall-nr, rt_sigreturn; syscall`) */
  trampoline: Uint8Array;
}

/** The implementation part of a port: the info plus the CPU, decoder and thread set-up. */
export interface ArchOps extends ArchInfo {
  /** the block translator's front end (emulator/jit/ir.ts FrontEnd); absent: the interpreter alone */
  readonly jit?: import('../jit/ir').FrontEnd<never, never>;
  createCpu(id: number, mem: Memory): Cpu;
  /** Decode the instruction at addr from memory (execute permission not required). */
  decode(mem: Memory, addr: bigint): DecodedInsn | null;
  /** Decode from raw bytes at a given address. */
  decodeBytes(bytes: Uint8Array, addr: bigint): DecodedInsn | null;
  /**
   * decodeBytes(bytes, addr)?.length without the rest of a DecodedInsn (its
   * mnemonic and operands): what a walk over instruction starts asks.
   * Absent: decodeBytes is asked.
   */
  insnLength?(bytes: Uint8Array, addr: bigint): number | null;
  /**
   * Decode for a person to read: absolute addresses as addresses, each named
   * through `symbolize` as llvm-objdump does (` <nr_forks>`, branch targets
   * included). Omitted: decodeBytes' text is shown as it is.
   */
  disassemble?(bytes: Uint8Array, addr: bigint, symbolize?: (addr: bigint) => string | undefined): DecodedInsn | null;
  /** Set up a CPU to start executing a kernel thread: pc, stack, first argument, return address. */
  initThread(cpu: Cpu, entry: bigint, stackTop: bigint, arg: bigint, returnTo: bigint): void;
  /** Set up a CPU to start a user process (Linux initial stack already built at sp). */
  initUser(cpu: Cpu, entry: bigint, sp: bigint): void;
  /** signal frames for user-process handlers (ports without it terminate a process whose handler would run) */
  readonly signalFrames?: SignalFrameOps;
}

/** pt_regs-like view of a CPU by register name, used by handlers and the debugger. */
export function regIndex(arch: ArchOps, name: string): number {
  const i = arch.regs.findIndex(r => r.name === name);
  if (i < 0) throw new Error(`unknown register ${name} for ${arch.name}`);
  return i;
}
