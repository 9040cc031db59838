/**
 * The arch half of kprobes (Linux arch/<arch>/kernel/kprobes*): one table of
 * hooks per architecture, named after the kernel's functions in camelCase.
 * The core (core.ts) never switches on the architecture; it asks the table
 * found by name in archRegistry.ts. Optional hooks get core defaults (the
 * kernel's __weak functions), see the `default*` functions below.
 */
import type { ArchOps, Cpu, DecodedInsn, Trap } from '../arch/types';
import type { KernelApi } from '../kernel/types';
import { textPoke } from '../memory/textPoke';
import { hi32, lo32, mustVAddr, toVAddr, VAddr } from '../memory/address';
import type { InsnSlots } from './insnSlots';
import type { Kprobe, KprobeCtlblk, KretprobeInstanceRec } from './kprobe';
import type { PtRegs } from './ptRegs';
import type { NativeEntryRoute } from '../cpu/interp';

/** What the core offers the arch hooks. */
export interface KprobesArchContext {
  readonly kernel: KernelApi;
  readonly arch: ArchOps;
  /** executable instruction slots (get_insn_slot / free_insn_slot) */
  readonly slots: InsnSlots;
  /** bytes of [addr, addr+len) as they are without any armed probe (recover_probed_instruction) */
  readOriginal(addr: bigint, len: number): Uint8Array;
  /** search_exception_tables(): the image's __ex_table fixup for an instruction address */
  searchExceptionTables(addr: bigint): bigint | undefined;
  /** every __ex_table entry of the image (instruction address, fixup address) */
  exceptionTable(): readonly { insn: bigint; fixup: bigint }[];
}

/**
 * The symbol under which a detour buffer is registered (allocCode); the
 * core names a prepared one per probe, optprobe_detour[do_fork]+0x10
 * (Linux's kprobe_optinsn_cache pages are listed as kprobe_optinsn_page).
 */
export const OPTPROBE_DETOUR_SYMBOL = 'optprobe_detour';

/** The arch's view of an optimized kprobe's detour (struct arch_optimized_insn). */
export interface ArchOptimizedInsn {
  /** probe address (first byte of the detoured region) */
  readonly addr: bigint;
  /** detour buffer address (emulated executable memory, within rel32 reach of addr) */
  readonly insn: bigint;
  /** bytes of the detoured code region (DCR): whole instructions covering the jump */
  readonly size: number;
  /** offset in the buffer of the copied region instructions (setup_detour_execution target) */
  readonly copyOffset: number;
  /** address of the buffer's callback instruction (the engine runs the handlers when it traps there) */
  readonly callback: bigint;
  /**
   * address of the buffer's native entry (a trap there: the engine does the
   * whole save / handlers / restore itself, see enterNative); absent when
   * the arch has none
   */
  readonly nativeEntry?: bigint;
  /** original bytes the jump overwrites after the probe's first (breakpoint) bytes (copied_insn) */
  readonly saved: Uint8Array;
  /** the jump written over the region by the optimizer */
  readonly jump: Uint8Array;
}

/**
 * Which engine code trapped into a callback: an optprobe detour buffer,
 * the kretprobe booster trampoline, or the ftrace trampoline (kprobes on
 * ftrace call sites).
 */
export type CallbackKind = 'optprobe' | 'kretprobe' | 'ftrace';

/** Register state saved by a callback frame (opaque to the core). */
export interface CallbackFrame {
  /** where execution continues after the callback (in the buffer / trampoline) */
  readonly resume: bigint;
  /** stack address of the saved registers */
  readonly frame: bigint;
  /** the code that saved them (absent: 'optprobe' or 'kretprobe' by the callback's returnTo use) */
  readonly kind?: CallbackKind;
}

/**
 * Register state saved natively by a native entry (opaque to the core;
 * the arch keeps what its restore needs).
 */
/** What a fused native hit runs between the save and the restore (OptprobesArchHooks.nativeHit) */
export interface NativeHitBody {
  /** the handlers; false: nothing to resume (a kretprobe's walk ended with an oops): no restore */
  runHandlers(): boolean;
  /** a kretprobe's: where the trampoline's `ret` goes (run sets it), a bigint when not canonical */
  returnTo: VAddr | bigint;
}

export interface NativeCallbackFrame {
  readonly kind: CallbackKind;
  /** translated code had written the save before the entry (the block translator's route for a native entry: InterpCpu.nativeEntryAt) */
  readonly presaved: boolean;
}

/**
 * Jump optimization (CONFIG_OPTPROBES; Linux arch/x86/kernel/kprobes/opt.c).
 * The core keeps the optimizer (queue, delay, conditions that change); the
 * arch decides what can be detoured and builds the detour buffer.
 */
export interface OptprobesArchHooks {
  /** bytes of the jump written over a probe (x86: 5, jmp rel32) */
  readonly jumpSize: number;
  /** can_optimize: safety checks on the function holding addr; the region size when fine, else the reason */
  canOptimize(ctx: KprobesArchContext, addr: bigint): { size: number } | string;
  /** arch_prepare_optimized_kprobe: build the detour buffer for a probe at addr; the reason string when impossible */
  prepareOptimizedKprobe(ctx: KprobesArchContext, addr: bigint): ArchOptimizedInsn | string;
  /** arch_check_optimized_kprobe: a probe at `other` lies inside the region (other than its first byte) */
  checkOptimizedKprobe(op: ArchOptimizedInsn, other: bigint): boolean;
  /** arch_optimize_kprobes: write the jumps (through textPoke) */
  optimizeKprobes(ctx: KprobesArchContext, ops: readonly ArchOptimizedInsn[]): void;
  /** arch_unoptimize_kprobe: put the original bytes back with a breakpoint in the first byte */
  unoptimizeKprobe(ctx: KprobesArchContext, op: ArchOptimizedInsn): void;
  /** setup_detour_execution: a probe hit before (or while) optimized resumes in the buffer's copied code */
  setupDetourExecution(op: ArchOptimizedInsn, regs: PtRegs): void;
  /**
   * The buffer's callback trapped (cpu at the callback): make the live
   * registers those of the probed context (ip = the breakpoint-style ip at
   * `ip`, sp = the probe's sp), as optimized_callback's pt_regs are.
   */
  enterCallback(ctx: KprobesArchContext, regs: PtRegs, ip: bigint, kind: CallbackKind): CallbackFrame;
  /**
   * Back from the handlers: the live registers (as the handlers left them)
   * go into the saved frame that the buffer's code restores, except ip
   * and sp (a pre_handler's change of ip is ignored, as documented);
   * `returnTo` (kretprobe booster, ftrace trampoline) is where the code's
   * final return goes.
   */
  leaveCallback(ctx: KprobesArchContext, regs: PtRegs, frame: CallbackFrame, returnTo?: bigint): void;
  /**
   * A native entry trapped (cpu just past it): perform the register save of
   * the buffer's / trampoline's template exactly as its instructions would
   * (same frame bytes on the stack) and make the live registers the probed
   * context with ip = `ip`, as enterCallback does. null: it cannot be done
   * natively (the frame is not writable); the cpu is left to run the real
   * template, whose callback then goes through enterCallback / leaveCallback.
   */
  enterNative?(ctx: KprobesArchContext, regs: PtRegs, ip: VAddr, kind: CallbackKind): NativeCallbackFrame | null;
  /**
   * Back from the handlers of a native entry: what leaveCallback and the
   * template's restore do, then go on as the template would: an optprobe
   * at its buffer's copied instructions, the kretprobe booster and the
   * ftrace trampoline at `returnTo` (the address their `ret` would pop;
   * a VAddr on the hot path, a bigint when it is not canonical).
   */
  leaveNative?(ctx: KprobesArchContext, regs: PtRegs, frame: NativeCallbackFrame, returnTo?: VAddr | bigint): void;
  /**
   * A native entry whose save translated code wrote (an optprobe detour
   * buffer's, the kretprobe booster trampoline's), in one piece:
   * enterNative, body.runHandlers() (the handlers; false: nothing to resume),
   * leaveNative (a kretprobe's to body.returnTo). false, with nothing
   * changed, when it cannot be done so (enterNative then decides).
   */
  nativeHit?(regs: PtRegs, kind: 'optprobe' | 'kretprobe', ip: VAddr, body: NativeHitBody): boolean;
  /** the code each native entry stands for (the cost model charges its instructions per native run) */
  readonly nativeTemplates?: Readonly<Record<CallbackKind, Uint8Array>>;
  /**
   * The kretprobe booster's trampoline: code that saves the registers,
   * traps at callbackOffset into the engine (trampoline_handler), restores
   * the registers and returns to the address the engine put in its frame.
   * nativeEntryOffset: its native entry (see enterNative), the address
   * functions return to.
   */
  readonly kretprobeBoostTrampoline: { code: Uint8Array; callbackOffset: number; nativeEntryOffset?: number };
}

/**
 * A CPU's host fast path for engine-owned breakpoints: the CPU calls the
 * installed handler from inside the breakpoint instruction (no trap, no
 * return from Cpu.run()); handled = true retires the breakpoint and the run
 * goes on where the handler set the pc. The handler may run nested code
 * through Cpu.run() (nested instructions are not in the outer run's count).
 */
export type InlineBreakpointHandler = (cpu: Cpu, at: VAddr) => boolean;

/** What the engine needs from a CPU while it handles an inline breakpoint. */
export interface InlineBreakpointCpu {
  /** instructions the CPU's current run() has retired so far (the breakpoint not included) */
  retiredInRun(): number;
  /** end the current run() after the breakpoint, with no trap (the machine must look: stop request, oops, ...) */
  endRun(): void;
  /** the handlers run as the emulator between runs (their accesses are not the breakpoint instruction's: a data watch reports them after it); leaveHost with enterHost's token */
  enterHost(): unknown;
  leaveHost(token: unknown): void;
  /** the CPU's pc now (after a stepped instruction: the pc its single-step trap would show) */
  readonly pc: VAddr;
  /** the engine's answer for the block translator: what the native entry at `at` saves, else null (InterpCpu.nativeEntryAt) */
  nativeEntryAt: ((at: VAddr) => NativeEntryRoute<Cpu> | null) | null;
}

/**
 * Kprobes on ftrace call sites (CONFIG_KPROBES_ON_FTRACE; Linux
 * arch/x86/kernel/kprobes/ftrace.c). A probe whose address is an ftrace
 * location is not armed with a breakpoint: its call site is redirected to
 * the ftrace trampoline, code that saves the registers as a trap would,
 * traps into the engine (kprobe_ftrace_handler) and returns past the call
 * site to the address the engine leaves in its frame. The trampoline's
 * entry and callback use the optprobe hooks' enterNative / enterCallback
 * with kind 'ftrace'.
 */
export interface FtraceArchHooks {
  /** bytes of a call site (MCOUNT_INSN_SIZE; x86: 5) */
  readonly callSize: number;
  /** ftrace_location(): the call site covering addr (its first byte), or undefined */
  ftraceLocation(ctx: KprobesArchContext, addr: bigint): bigint | undefined;
  /** the bytes that make the call site at `site` call `trampoline`; null when out of reach */
  redirectCall(site: bigint, trampoline: bigint): Uint8Array | null;
  /**
   * The call site whose call entered the trampoline, from the return
   * address that call pushed. `atCallback`: the registers are at the
   * template's callback (the saved frame is on the stack), else at the
   * native entry (nothing pushed yet). undefined when it cannot be read.
   */
  callSiteOf(regs: PtRegs, atCallback: boolean): bigint | undefined;
  /** the ftrace trampoline (ftrace_regs_caller): its code, callback and native entry offsets */
  readonly trampoline: { code: Uint8Array; callbackOffset: number; nativeEntryOffset?: number };
}

/** decode-insn verdict (arm64/riscv decode-insn.c style) */
export type ProbeInsnDecision = 'reject' | 'simulate' | 'slot';

export interface KprobesArchHooks {
  /** ArchOps.name this table belongs to */
  readonly arch: string;
  /** bytes per instruction slot */
  readonly slotSize: number;

  /** Classify the instruction that will be probed (insn is null when it does not decode). */
  decodeProbeInsn(ctx: KprobesArchContext, addr: bigint, insn: DecodedInsn | null): ProbeInsnDecision;
  /**
   * arch_prepare_kprobe: save p.opcode, prepare the out-of-line slot
   * (p.ainsn): the copied instruction, and on arches without a trace flag
   * the step breakpoint after it (arm64 arch_prepare_ss_slot: the
   * instruction then BRK KPROBES_BRK_SS_IMM; riscv: the instruction then
   * ebreak). 0 or -errno.
   */
  prepareKprobe(ctx: KprobesArchContext, p: Kprobe): number;
  /** arch_arm_kprobe: write the breakpoint (default: ArchOps.breakpointInsn via textPoke) */
  armKprobe?(ctx: KprobesArchContext, p: Kprobe): void;
  /** arch_disarm_kprobe: put p.opcode back (default: textPoke) */
  disarmKprobe?(ctx: KprobesArchContext, p: Kprobe): void;
  /** arch_remove_kprobe: release the slot */
  removeKprobe(ctx: KprobesArchContext, p: Kprobe): void;
  /** arch_prepare_kretprobe: save the return address in ri.ret_addr, replace it with trampoline (`trampolineV`: the same as a VAddr) */
  prepareKretprobe(ctx: KprobesArchContext, ri: KretprobeInstanceRec, regs: PtRegs, trampoline: bigint, trampolineV: VAddr): void;
  /**
   * setup_singlestep: point regs at the slot and arm the single-step (x86:
   * set TF, clear IF, saving the task's bits in kcb; arm64/riscv: nothing
   * more, the slot's step breakpoint ends it). The core's state is HIT_SS
   * or REENTER.
   */
  setupSinglestep(ctx: KprobesArchContext, p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void;
  /**
   * Recognise the trap that ends the single-step of p's slot (the core
   * asks only while HIT_SS / REENTER): x86 kprobe_debug_handler takes the
   * TF trap ('singleStep'); arm64 kprobe_breakpoint_ss_handler and riscv
   * kprobe_single_step_handler take the breakpoint at the slot's step
   * breakpoint. `at` is the breakpoint's own address for 'breakpoint',
   * else the trap's pc, as a VAddr (NaN: not canonical). Default
   * (defaultSinglestepDone): a breakpoint right after the slot's instruction.
   */
  singlestepDone?(p: Kprobe, kind: Trap['kind'], at: VAddr): boolean;
  /**
   * post_kprobe_handler's arch half (x86 resume_execution): after the
   * single-step of the slot, fix ip / the stack for the original address
   * and disarm the single-step (x86: clear TF, restore the task's flags).
   */
  resumeExecution(ctx: KprobesArchContext, p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void;
  /** the single-stepped copy faulted: make regs look like the original instruction faulted */
  singlestepFault(ctx: KprobesArchContext, p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void;
  /** whether the task's own single-step flag is set after resumeExecution (the trap is then also the task's) */
  taskSinglestepping?(regs: PtRegs): boolean;
  /** simulate the instruction instead of single-stepping (decision 'simulate') */
  simulate?(ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void;
  /** arch_within_kprobe_blacklist (default: false; the core also checks the image blacklist) */
  withinKprobeBlacklist?(ctx: KprobesArchContext, addr: bigint): boolean;
  /** can_boost: jump back from the slot without a single-step trap (the kprobe booster) */
  canBoost?(insn: DecodedInsn): boolean;
  /** jump optimization support (absent: probes stay breakpoint-based) */
  readonly optprobes?: OptprobesArchHooks;
  /** kprobes on ftrace call sites (needs optprobes' enter/leave hooks for kind 'ftrace'; absent: none) */
  readonly ftrace?: FtraceArchHooks;
  /** code placed at the kretprobe trampoline; the core puts a kprobe on its first byte */
  readonly kretprobeTrampolineCode: Uint8Array;
  /** whether a kretprobe may be placed at symbol+offset (arch_kprobe_on_func_entry) */
  kprobeOnFuncEntry?(offset: bigint): boolean;
  /**
   * Install (null: remove) the inline breakpoint handler of a CPU (a host
   * fast path, not a kernel mechanism: the engine handles its probes'
   * breakpoints and its own code's there, with the same result as the
   * trap; see KprobeTraps.inlineBreakpoint). The handlers must see the
   * trap's pc (riscv: the ebreak's own address). Returns the CPU's
   * controls, or null when this CPU has no such path (or another handler
   * is installed): breakpoints then trap.
   */
  installInlineBreakpoint?(cpu: Cpu, handler: InlineBreakpointHandler | null): InlineBreakpointCpu | null;
  /**
   * Install (null: remove) the CPU's inline single-step handler (a host
   * fast path, as installInlineBreakpoint: the single-step trap after a
   * probe's stepped slot handled without ending the CPU's run; see
   * KprobeTraps.inlineSingleStep). Only for CPUs whose inline breakpoint
   * this engine holds. Arches whose single-step ends at a breakpoint
   * (arm64, riscv) need none.
   */
  installInlineSingleStep?(cpu: Cpu, handler: ((cpu: Cpu) => boolean) | null): void;
}

/**
 * arch_prepare_kretprobe of arches whose return address is in a link
 * register (arm64 x30, riscv ra; ArchOps.abi.returnAddress): ri.ret_addr
 * = the register, ri.stack = sp, then the register = the trampoline. On a
 * CPU that holds the register as 32-bit halves (Cpu.gprSlot), without a
 * BigInt per call.
 */
export function linkRegisterPrepareKretprobe(_ctx: KprobesArchContext, ri: KretprobeInstanceRec, regs: PtRegs, trampoline: bigint, trampolineV: VAddr): void {
  const ra = regs.arch.abi.returnAddress;
  if (ra.kind !== 'reg') throw new Error(`${regs.arch.name}: the return address is not in a register`);
  const cpu = regs.cpu, lo = cpu.lo, hi = cpu.hi;
  const slot = cpu.gprSlot?.(ra.reg) ?? -1;
  if (slot >= 0 && lo !== undefined && hi !== undefined) {
    ri.setRetHalves(lo[slot], hi[slot]);
    const sp = regs.spV();
    if (sp === sp) ri.stackV = sp;
    else ri.stack = regs.sp;
    lo[slot] = lo32(trampolineV);
    hi[slot] = hi32(trampolineV);
    return;
  }
  ri.ret_addr = cpu.getReg(ra.reg);
  ri.stack = regs.sp;
  cpu.setReg(ra.reg, BigInt.asUintN(64, trampoline));
}

/** __weak arch_arm_kprobe */
export function defaultArmKprobe(ctx: KprobesArchContext, p: Kprobe): void {
  textPoke(ctx.kernel.mem, mustVAddr(p.addr ?? 0n), ctx.arch.breakpointInsn);
}

/** __weak arch_disarm_kprobe */
export function defaultDisarmKprobe(ctx: KprobesArchContext, p: Kprobe): void {
  if (!p.opcode) return;
  textPoke(ctx.kernel.mem, mustVAddr(p.addr ?? 0n), p.opcode);
}

/**
 * singlestepDone without an arch hook: the step breakpoint right after the
 * slot's instruction (arm64 / riscv style: kcb->ss_ctx.match_addr).
 */
export function defaultSinglestepDone(p: Kprobe, kind: Trap['kind'], at: VAddr): boolean {
  const a = p.ainsn;
  if (kind !== 'breakpoint' || a === undefined || a.mode !== 'slot') return false;
  return at === (a.insnV !== undefined ? a.insnV + a.length : toVAddr(a.insn + BigInt(a.length)));
}

/** __weak arch_kprobe_on_func_entry */
export function defaultKprobeOnFuncEntry(offset: bigint): boolean {
  return offset === 0n;
}
