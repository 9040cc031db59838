import type { CType } from './ctypes';
/**
 * Public types of the handler-snippet language: handler kinds, the
 * environment a running handler talks to, diagnostics, compile options and
 * the fault a handler raises at run time.
 *
 * The language never touches the CPU or the kernel directly: everything it
 * reads or changes goes through a HandlerEnv, which the kprobes engine (and
 * the DAP adapter for breakpoint conditions / log messages) implements.
 */

/** Where a snippet runs. */
export type HandlerKind = 'pre' | 'post' | 'fault' | 'entry' | 'return' | 'jprobe' | 'condition' | 'log' | 'kwatch';

export const HANDLER_KIND_NAMES: readonly HandlerKind[] = ['pre', 'post', 'fault', 'entry', 'return', 'jprobe', 'condition', 'log', 'kwatch'];

/**
 * Access kinds of a watchpoint hit (`access` in a kwatch handler), Linux's
 * include/uapi/linux/hw_breakpoint.h values: HW_BREAKPOINT_R 1,
 * HW_BREAKPOINT_W 2, HW_BREAKPOINT_X 4.
 */
export const HW_BREAKPOINT_R = 1;
export const HW_BREAKPOINT_W = 2;
export const HW_BREAKPOINT_X = 4;

/** The watchpoint hit a kwatch handler runs for (`debugreg`, `addr`, `access`, `old`, `new`). */
export interface HandlerWatchInfo {
  /** the debug register number register_kwatch returned */
  debugreg: number;
  /** the address the access used (an execute watch: the instruction) */
  addr: bigint;
  /** HW_BREAKPOINT_R / _W / _X */
  access: number;
  /** the watched bytes before / after the access, little-endian, zero-extended (0 for an execute watch) */
  old: bigint;
  new: bigint;
}

/** The kprobe a handler belongs to (`p` in the snippet). */
export interface HandlerProbeInfo {
  /** probed address (`p->addr`) */
  addr: bigint;
  /** symbol the probe was registered on, '' when registered by address (`p->symbol_name`) */
  symbol_name: string;
  /** offset from the symbol (`p->offset`) */
  offset: bigint;
  /** times the probe was missed (`p->nmissed`) */
  nmissed: bigint;
  /** KPROBE_FLAG_* bits (`p->flags`) */
  flags: bigint;
}

/** The kretprobe instance a kretprobe handler runs for (`ri` in the snippet). */
export interface HandlerRetInstanceInfo {
  /** the probed function's real return address (`ri->ret_addr`) */
  ret_addr: bigint;
  /** address of the task the instance belongs to (`ri->task`) */
  task: bigint;
  /** ADDRESS in emulated kernel memory of the instance's data_size bytes of private data (`ri->data`) */
  data: bigint;
  /** the kretprobe (`ri->rp`): maxactive as registered, nmissed so far */
  rp?: { maxactive: bigint; nmissed: bigint };
}

/** Symbolic form of an address, for printk's %pS / %ps. */
export interface SymbolizedAddress {
  name: string;
  offset: bigint;
  /** size of the symbol, printed as "+0x4/0x30" when known */
  size?: bigint;
}

/**
 * What a running handler can see and do. Implemented by the kprobes engine
 * (probe handlers) and the debug adapter (breakpoint conditions and log
 * messages). Methods may throw to signal a bad access; the handler turns any
 * exception from readMem/writeMem/readCString into a HandlerFault of kind
 * 'memory'.
 */
export interface HandlerEnv {
  /** Read `size` bytes little-endian at `addr` (unsigned 64-bit) from emulated memory; throws on a bad address. */
  readMem(addr: bigint, size: 1 | 2 | 4 | 8): bigint;
  /** Write the low `size` bytes of `value` little-endian at `addr`; throws on a bad address / read-only memory. */
  writeMem(addr: bigint, size: 1 | 2 | 4 | 8, value: bigint): void;
  /** Read a NUL-terminated string of at most `max` bytes at `addr`; throws on a bad address. */
  readCString(addr: bigint, max: number): string;
  /** Value of a pt_regs field of the probed context (names as in CompileOptions.regNames). */
  getReg(name: string): bigint;
  /** Change a pt_regs field of the probed context (takes effect when the handler returns, e.g. `regs->ip`). */
  setReg(name: string, value: bigint): void;
  /** The probe (`p`); absent where no kprobe is involved — using `p` then is a 'context' fault. */
  probe?: HandlerProbeInfo;
  /** The kretprobe instance (`ri`); present for entry/return handlers. */
  ri?: HandlerRetInstanceInfo;
  /** Trap number (`trapnr`) for fault handlers (x86: 14 page fault, 13 #GP, 6 #UD...). */
  trapnr?: number;
  /** `flags` argument of post handlers (always 0 in Linux). */
  postFlags?: bigint;
  /** The watchpoint hit (`debugreg`, `addr`, `access`, `old`, `new`); present for kwatch handlers. */
  watch?: HandlerWatchInfo;
  /** The task running on the probed CPU (`current`): pid, comm, and mm (0 for kernel threads). */
  current: { pid: number; comm: string; mm: bigint };
  /** Append text to the kernel log as a probe message (the text may hold several lines). */
  printk(text: string): void;
  /**
   * Print a stack trace of the probed context to the kernel log (dump_stack()).
   * Returns the length of the text it printed, which the handler's step
   * budget is charged for (nothing returned: nothing charged).
   */
  dumpStack(): number | void;
  /** Virtual time in ns (ktime_get()). */
  ktimeGet(): bigint;
  /** CPU the handler runs on. */
  smpProcessorId(): number;
  /** Current jiffies counter. */
  jiffies(): bigint;
  /** Address of a kernel symbol, undefined when unknown (symbol("name")). */
  symbol(name: string): bigint | undefined;
  /** The probed function's return value register (regs_return_value(regs)). */
  regsReturnValue(): bigint;
  /** Optional: name+offset of an address for %pS/%ps; without it they print like %px. */
  addrToSymbol?(addr: bigint): SymbolizedAddress | undefined;
  /**
   * Optional: unregister / disable / enable the probe the handler belongs to
   * (unregister_kprobe(p), disable_kprobe(p), enable_kprobe(p) and the
   * kretprobe forms with ri->rp). Linux may sleep in these (kprobe_mutex,
   * synchronize_rcu), which a handler must not do; here the call is queued
   * and carried out as deferred work (a work item) at the end of the
   * machine's scheduling round (every CPU has run its quantum).
   * Returns 0 (queued) or a negative errno.
   */
  probeControl?(op: ProbeControlOp, kind: 'kprobe' | 'kretprobe'): number;
  /**
   * Optional: call a function of the image by name on the probed CPU with
   * integer arguments (the arch's calling convention). A probe hit inside it
   * is a kprobes reentry (the inner probe's nmissed counts it). Returns the
   * function's return register and how many instructions it ran; throws
   * Error with the reason when the call cannot be made or does not return.
   */
  callFunction?(name: string, args: readonly bigint[]): { value: bigint; instructions: number };
  /**
   * Optional: told once per run, when it ends (return, fault or
   * jprobe_return()), how many steps the run took (a budget fault: the
   * budget). The probe bridge charges them to the CPU's virtual clock and
   * the machine's instruction limit.
   */
  spent?(steps: number): void;
}

export type ProbeControlOp = 'unregister' | 'disable' | 'enable';

/**
 * Where a program name's value is when the handler runs: in memory (an
 * lvalue with an address), in a pt_regs register, or only a value the
 * compiler computed (DW_OP_stack_value, a constant).
 */
export type ProgramPlace =
  | { kind: 'memory'; addr: bigint }
  | { kind: 'register'; reg: string }
  | { kind: 'value'; value: bigint };

/**
 * A C name of the probed program at the probe's pc (DWARF: a parameter or
 * local of the probed function, or a global / static), as a handler sees
 * it: its C type (structs, unions and arrays included) and where it is,
 * found from the probed context when the handler runs (perf probe's "fetch
 * args"; place() throws an Error saying why when it cannot be found);
 * or why it cannot be used there.
 */
export type ProgramName =
  | { type: CType; place(env: HandlerEnv): ProgramPlace; what: string; scoped?: true }
  | { unavailable: string; scoped?: true };

/** A compile-time problem with a source range (all 1-based; end is exclusive). */
export interface Diagnostic {
  message: string;
  severity: 'error' | 'warning';
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

export interface CompileOptions {
  /** pt_regs field names of the image's architecture (x86_64: ip sp flags ax bx cx dx si di bp r8..r15 orig_ax cs ss). */
  regNames: string[];
  /** Register names of the integer argument registers in ABI order (for jprobe/pre arg0..arg5).
   *  Default: the ABI facts (emulator/arch/abiFacts.ts) of `arch`, else of the arch regNames belong to. */
  argRegs?: string[];
  /** ELF arch name of the image (x86_64, aarch64, riscv64...): ABI defaults for argRegs and charSigned. */
  arch?: string;
  /** When given, symbol("name") with a literal unknown name is a compile error. */
  symbolExists?(name: string): boolean;
  /**
   * A function of the image: a call of a name that is not a builtin is a
   * call of that function on the probed CPU when this says it exists
   * (without it, or for other names, the call is an "unknown function" error).
   */
  functionExists?(name: string): boolean;
  /** C names of the program at the probe's pc (DWARF parameters and locals, globals); see ProgramName */
  programName?(name: string): ProgramName | undefined;
  /** The program's types by name (DWARF): `struct file`, `union u`, `enum e`, a typedef, for casts and sizeof */
  programType?(kind: 'struct' | 'union' | 'enum' | 'typedef', name: string): CType | undefined;
  /** Program names may be assigned (the debugger's evaluate / setVariable); handlers see them read-only */
  programWritable?: boolean;
  /**
   * The program's parameters and locals in scope (ProgramName.scoped) come
   * before the context names (regs, p, ri...): a debugger's evaluate in a
   * kprobe handler's frame, whose own `p` and `regs` are meant, as C's inner
   * scope shadows.
   */
  programScopeFirst?: boolean;
  /** Maximum statements + loop iterations per invocation (default 100000); exceeding it is a 'budget' fault. */
  stepBudget?: number;
  /** Name used in messages (not in positions). */
  fileName?: string;
  /** Added to every line number (for snippets embedded in a larger document). */
  lineOffset?: number;
  /** Added to column numbers on the snippet's first line. */
  columnOffset?: number;
  /** Whether plain `char` is signed (default: the ABI of `arch`, else true like gcc/clang on x86_64). */
  charSigned?: boolean;
}

/** A compiled snippet. */
export interface CompiledHandler {
  readonly kind: HandlerKind;
  /**
   * Run once. Returns the handler's return value converted to int (0 when it
   * falls off the end; condition handlers return 1n = stop / 0n = go on).
   * Throws HandlerFault on a budget, memory, divide, null or context fault.
   */
  run(env: HandlerEnv): bigint;
}

export type HandlerFaultKind = 'budget' | 'memory' | 'divide' | 'null' | 'context';

/** A fault raised by a running handler; the engine turns it into the fault_handler path. */
export class HandlerFault extends Error {
  constructor(
    readonly kind: HandlerFaultKind,
    message: string,
    readonly line: number,
    readonly column: number,
    /** the faulting address for 'memory' / 'null' faults */
    readonly addr?: bigint,
    /** the access that faulted, for 'memory' / 'null' faults */
    readonly access?: 'read' | 'write',
  ) {
    super(message);
    this.name = 'HandlerFault';
  }
}

/** Argument of formatPrintk: an integer (sign/zero-extended to 64 bits per its C type) or an already-read string. */
export type PrintkArg = bigint | string;

/** What formatPrintk needs from the environment. */
export type PrintkEnv = Pick<HandlerEnv, 'readCString'> & Partial<Pick<HandlerEnv, 'addrToSymbol'>>;
