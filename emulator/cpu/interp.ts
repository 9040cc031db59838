/**
 * The arch-neutral interpreter CPU: the run loop, the instruction budget,
 * the per-address decode cache and the trap plumbing every emulated CPU
 * shares (QEMU's cpu_exec() around TCGCPUOps). An architecture supplies the
 * decoded instructions (each with its executor bound at decode time, so the
 * loop only calls `insn.exec(cpu, insn)`) and its register file.
 *
 * Stops: a trap-style instruction ends the run without a JS exception — its
 * executor calls stop(), which records the signal and sets the loop's
 * instret limit to -1, so the loop's `instret < limit` test ends it after
 * the instruction. Faults found deeper (MemoryFault from the bus, a thrown
 * GuestFault) are caught by run() and become typed traps with the faulting
 * pc; the instruction is not counted.
 *
 * Single-step: when `stepTrap` is set as an instruction starts (x86 TF), the
 * run ends after it with a 'singleStep' trap. Architectures whose kprobes
 * end an out-of-line slot with a second breakpoint (arm64, riscv) never set
 * it; the kprobes arch hooks decide how a step completes.
 *
 * run() is re-entrant: code called from inside an instruction (the
 * inlineBreakpoint host hook) may run nested code; a nested run keeps the
 * outer run's limit and pending stop, and its instructions count in instret
 * but not in the outer run's `executed` or budget.
 */
import type { CpuContext, RunResult, Trap } from '../arch/types';
import { Memory, MemoryFault } from '../memory/memory';
import { VAddr, fromVAddr, hex, toVAddr } from '../memory/address';
import { CachedInsn, DecodeCache, DecodeCaches } from './decodeCache';
import { GuestFault, GuestStop } from './faults';
import { HwBreakpointFault, HwDebugUnit, HwExecFault } from './hwDebug';

/** the stop an 'after' data watch hit requests (the run ends after the instruction; hwDebug.ts) */
export const STOP_HW_BREAKPOINT = new GuestStop('hwBreakpoint');

/** What the run loop needs of the block translator (emulator/jit/translator.ts). */
export interface JitRunner<C, I> {
  /** run translated code from insn: instructions retired (pc and state exact), or -1 when it cannot be translated */
  enter(cpu: InterpCpu<C, I & RunnableInsn<C>>, cache: DecodeCache<I & RunnableInsn<C>>, insn: I, budget: number): number;
  /**
   * after enter(): the instruction a helper ran last (null when none), and
   * the exception it threw (null when none). The run loop takes them and
   * sets both back to null: a translator is shared by every machine of the
   * process, and must not keep a finished machine's instruction (and with
   * it the machine) alive.
   */
  lastHelper: CachedInsn | null;
  lastError: unknown;
  /** arrivals at an instruction before its block is translated (JIT_HOT_ARRIVALS or JIT_HOT_ARRIVALS_LOCKSTEP) */
  readonly hotArrivals: number;
}

/** The frame a native entry saves and the ip its handlers see. */
export interface NativeEntryFrame {
  /** the frame saved there: a kprobes optprobe detour buffer's, or the kretprobe booster trampoline's */
  readonly kind: 'optprobe' | 'kretprobe';
  /** the ip the handlers see */
  readonly ip: VAddr;
}

/** What a host-owned breakpoint stands for, for the block translator (InterpCpu.nativeEntryAt). */
export interface NativeEntryRoute<C = unknown> extends NativeEntryFrame {
  /**
   * The entry's int3 as the CPU's inline breakpoint handler would take it
   * (same result, same envelope), with the entry this route was made for
   * resolved once: the translation calls this instead of looking the
   * address up at every hit (a change of the entry drops the translation:
   * Memory.codeMeaningChanged). false: nobody claimed it (it traps).
   */
  hit(cpu: C): boolean;
  /**
   * The inline breakpoint handler hit() stands for: the route applies while
   * it is the CPU's inlineBreakpoint (not while something wraps it, as the
   * translator's lockstep does; the wrapper is then called as usual).
   */
  handler(cpu: C, at: VAddr): boolean;
}

/** A cached instruction with its executor (bound at decode time). */
export interface RunnableInsn<C> extends CachedInsn {
  exec(cpu: C, insn: RunnableInsn<C>): void;
}

/**
 * Arrivals by a jump at an instruction before the translator builds its
 * block (fixed numbers: the same run translates at the same points). On:
 * 4096 — translating a page costs about as much as interpreting 50,000 to
 * 150,000 instructions, so only code that keeps running pays for it (a
 * short boot stays interpreted; a loop is translated within a millisecond).
 * Lockstep: 32 — there the point is to run as much translated code as
 * possible against the interpreter.
 */
export const JIT_HOT_ARRIVALS = 4096;
export const JIT_HOT_ARRIVALS_LOCKSTEP = 32;
/**
 * Budgets below this run in the interpreter (no arrival counted): a run of
 * a few instructions (a quantum of 1 interleaving CPUs finely) covers no
 * block, and every instruction would otherwise become a block start.
 */
export const JIT_MIN_BUDGET = 16;

export abstract class InterpCpu<C, I extends RunnableInsn<C>> {
  /** program counter (VAddr) */
  pc: VAddr = 0;
  /** single-step after the next instruction (x86 TF) */
  stepTrap = false;
  userMode = false;
  instret = 0;
  /**
   * Host fast path for breakpoints owned by the host (the kprobes engine's
   * native entries): consulted by the breakpoint instruction before it
   * stops the run, unless a single-step is pending. `at` is the breakpoint's
   * address. true: the owner handled it inline (it set the pc; it may run
   * nested code through run()); the breakpoint retires without a trap and
   * the run goes on (endRun() to stop it). false: it stops the run.
   */
  inlineBreakpoint: ((cpu: C, at: VAddr) => boolean) | null = null;
  /**
   * The inline breakpoint owner's native entries, for the block
   * translator: for a breakpoint at `at` that the owner handles as a
   * native entry (a template's register save, the handlers, the restore),
   * what it saves; null for any other breakpoint. The translator's front
   * end asks when it translates the breakpoint and may then write the
   * saved frame itself before it calls the breakpoint's executor
   * (X86Cpu.frameSaved); the owner drops the translations of an entry
   * whose answer changes (Memory.codeMeaningChanged).
   */
  nativeEntryAt: ((at: VAddr) => NativeEntryRoute<C> | null) | null = null;
  /**
   * Host fast path for a single-step trap the host owns (x86: the kprobes
   * engine's step of a probe's copied instruction, TF): consulted after an
   * instruction that ran with a single-step pending retired, before the
   * run would stop for the trap. true: the owner did what handling the
   * trap would have (resume_execution: the pc and flags are set) and the
   * run goes on; false: the run stops with the single-step trap.
   */
  inlineSingleStep: ((cpu: C) => boolean) | null = null;
  /** the run loop's instret limit; -1 once an executor called stop() */
  private limit = 0;
  /** what stop() recorded for the current instruction */
  private pending: GuestStop | GuestFault | null = null;
  /** instructions counted by runs nested inside an instruction (excluded from the outer run's count) */
  private innerInsns = 0;
  /** instret and innerInsns at the start of the innermost run in progress (retiredInRun) */
  private runStart = 0;
  private runInner0 = 0;
  private cache: DecodeCache<I> | null = null;
  private cacheMem: Memory | null = null;
  private cacheUser = false;
  /** the debug registers' match unit (hardware breakpoints and watchpoints; cpu/hwDebug.ts) */
  readonly hw: HwDebugUnit;
  /**
   * x86 RF: the next instruction does not hit an execute breakpoint (set
   * when resuming at an instruction whose breakpoint was just reported;
   * cleared as that instruction starts).
   */
  resumeFlag = false;
  /** runs in progress (nested runs inside an instruction count) */
  private depth = 0;
  /**
   * The block translator (emulator/jit/translator.ts), or null: the
   * interpreter alone (kprobe-run --no-translate, launch "translate": false).
   */
  jit: JitRunner<C, I> | null = null;
  /**
   * The state the translator that last ran this CPU keeps for it (opaque
   * here): kept on the CPU, so that no translator (shared by every machine
   * of the process) holds a finished machine's CPU.
   */
  jitState: object | null = null;

  constructor(readonly id: number, public mem: Memory, private readonly caches: DecodeCaches<I>, private readonly archName: string,
    /** data watch timing: 'after' (x86 trap) or 'before' (arm64 fault) */
    hwTiming: 'after' | 'before' = 'after') {
    this.hw = new HwDebugUnit(hwTiming, () => this.stop(STOP_HW_BREAKPOINT), () => this.refreshWatcher());
  }

  /** The instruction as an internal-error message names it (mnemonic and bytes). */
  protected abstract describe(insn: I): string;

  getPc(): bigint { return fromVAddr(this.pc); }
  setPc(pc: bigint): void { this.pc = this.canonical(pc, 'pc'); }

  protected canonical(u: bigint, what: string): VAddr {
    const v = toVAddr(u);
    if (v === null) throw new RangeError(`${what} ${hex(u)} is not canonical`);
    return v;
  }

  /** Drop cached decodes overlapping [addr, addr+len) in both privilege modes. */
  invalidate(addr: VAddr, len: number): void {
    this.caches.for(this.mem, false).invalidate(addr, len);
    this.caches.for(this.mem, true).invalidate(addr, len);
  }

  abstract saveContext(): CpuContext;
  abstract restoreContext(ctx: CpuContext): void;

  /** A run is about to return this trap (x86: DR6 records B0-B3 / BS). Optional; never on the hot path. */
  protected onTrapReported?(trap: Trap): void;
  /** what reporting a single-step trap records on the CPU (x86: DR6.BS), when inlineSingleStep takes it */
  protected onInlineSingleStep?(): void;

  /** The decode cache of the current address space and privilege mode. */
  private selectCache(): DecodeCache<I> {
    const mem = this.mem;
    if (mem.userMode !== this.userMode) { mem.userMode = this.userMode; mem.flushTlb(); }
    if (this.cache === null || this.cacheMem !== mem || this.cacheUser !== this.userMode) {
      this.cache = this.caches.for(mem, this.userMode);
      this.cacheMem = mem;
      this.cacheUser = this.userMode;
    }
    return this.cache;
  }

  /**
   * Stop the run after the current instruction (called by its executor,
   * which then returns): a GuestStop (the instruction completed, the pc is
   * the next one) or a GuestFault (it did not: the pc goes back to it, it
   * is not counted). Takes precedence over a single-step trap.
   */
  stop(s: GuestStop | GuestFault): void {
    this.pending = s;
    this.limit = -1;
  }

  /** Translated code must return to the run loop after this instruction (a helper's instruction stopped the run, set TF, armed a debug register). */
  jitMustExit(): boolean {
    return this.limit < 0 || this.stepTrap || this.hw.execArmed || this.mem.watcher !== null;
  }

  /**
   * For a translator helper whose instruction just retired with a
   * single-step armed that this CPU handles inline (x86: a kprobe's TF
   * step of its slot): execute the next instruction and hand its step to
   * the inline single-step handler, as run() does, so that translated code
   * goes on without a return to the run loop. true: done, one more
   * instruction retired; a step the handler did not claim (or an
   * instruction that stopped the run) is reported by run() once the
   * translated code has returned (stepTrapPending). false: nothing done
   * (run() would not step inline here). Throws what the instruction
   * throws, with the pc at it.
   */
  stepOneInline(): boolean {
    const step = this.inlineSingleStep;
    if (!this.stepTrap || step === null || this.pending !== null || this.limit < 0 || this.hw.execArmed || this.mem.watcher !== null) return false;
    const ip = this.pc;
    const insn = this.selectCache().get(ip);
    this.steppedInsn = insn;
    this.pc = insn.next;
    try {
      insn.exec(this as unknown as C, insn);
    } catch (e) {
      this.pc = ip;
      throw e;
    }
    this.instret++;
    if (this.pending === null) {
      this.onInlineSingleStep?.();
      if (step(this as unknown as C)) return true;
    }
    this.stepTrapPending = true;
    return true;
  }
  /** stepOneInline's instruction ended with its single-step trap (or a stop) still to be reported by run() */
  stepTrapPending = false;
  /** the instruction stepOneInline executed last (or that threw) */
  steppedInsn: I | null = null;

  /**
   * Lockstep (emulator/jit/lockstep.ts): execute exactly n instructions
   * from the pc in the interpreter, counting them in instret, outside the
   * run loop's accounting (the translator's replay of what its code just
   * did). A fault propagates to the caller with the pc at the instruction.
   */
  interpretExactly(n: number): void {
    const cache = this.selectCache();
    const self = this as unknown as C;
    let page = cache.lastPage, base = cache.lastBase;
    for (let k = 0; k < n; k++) {
      const ip = this.pc, off = ip - base;
      let insn: I | undefined;
      if (off < 0 || off >= 4096 || (insn = page[off]) === undefined) { insn = cache.get(ip); page = cache.lastPage; base = cache.lastBase; }
      this.pc = insn.next;
      try {
        insn.exec(self, insn);
      } catch (e) {
        this.pc = ip;
        throw e;
      }
      this.instret++;
    }
  }

  /** End the current run after the current instruction, with no trap (the instruction retires). */
  endRun(): void {
    this.limit = -1;
  }

  /**
   * Host code runs inside the current instruction (an inline breakpoint's
   * handlers) until leaveHost(token): the accesses it makes through this
   * CPU's memory are the emulator's own, as they are in a trap handled
   * between runs: a data watch records them (hwDebug.ts `outside`), and
   * leaveHost ends the run after the instruction when one did, so that
   * they are reported at that boundary as after a trap.
   */
  enterHost(): Memory['watcher'] {
    const mem = this.mem, w = mem.watcher;
    if (w === this.hw) mem.watcher = this.hw.outside;
    return w;
  }

  leaveHost(token: Memory['watcher']): void {
    this.mem.watcher = token;
    if (token === this.hw && this.hw.hits !== 0) this.endRun();
  }

  /**
   * Instructions the innermost run() in progress has retired so far (the
   * current instruction not included; nested runs' instructions excluded).
   */
  retiredInRun(): number {
    return this.instret - this.runStart - (this.innerInsns - this.runInner0);
  }

  /** Execute until a trap or `budget` instructions retire. Never throws for guest faults. */
  run(budget: number): RunResult {
    const cache = this.selectCache();
    const hw = this.hw;
    // the memory this CPU runs on reports its accesses to this CPU's debug registers, while one watches data
    const mem = this.mem, outerWatcher = mem.watcher;
    mem.watcher = hw.dataArmed ? hw : null;
    this.depth++;
    // a watched access the emulator made for this CPU outside an instruction: reported at this boundary (of the outermost run)
    if (hw.hits !== 0 && this.depth === 1) {
      this.endWatch(mem, outerWatcher);
      const trap = hw.takeTrap(fromVAddr(this.pc));
      this.onTrapReported?.(trap);
      return { executed: 0, trap };
    }
    // run() may be entered from inside an instruction (nested): the outer loop's limit and pending stop are kept
    const outerLimit = this.limit, outerPending = this.pending;
    const outerStart = this.runStart, outerInner0 = this.runInner0;
    const inner0 = this.innerInsns;
    const start = this.instret;
    this.limit = start + budget;
    this.pending = null;
    this.runStart = start;
    this.runInner0 = inner0;
    const self = this as unknown as C;
    let ip = this.pc;
    let insn: I | null = null;
    let stepping = false;
    let res: RunResult;
    // inline decode-cache lookup: the page array of the last hit (entries are cleared in place on invalidation)
    let page = cache.lastPage, base = cache.lastBase;
    const jit = this.jit;
    // the address the previous instruction fell through to: arriving anywhere else is a jump (tiering counts those)
    let expect: VAddr = NaN;
    try {
      // the limit field doubles as the stop flag: stop() sets it to -1
      while (this.instret < this.limit) {
        ip = this.pc;
        const off = ip - base;
        let i: I | undefined;
        if (off >= 0 && off < 4096 && (i = page[off]) !== undefined) insn = i;
        else { insn = cache.get(ip); page = cache.lastPage; base = cache.lastBase; }
        if (ip !== expect && jit !== null && this.limit - this.instret >= JIT_MIN_BUDGET && (insn.jit !== null || ++insn.hot >= jit.hotArrivals)
          && !this.stepTrap && !hw.execArmed && mem.watcher === null) {
          const n = jit.enter(this, cache, insn, this.limit - this.instret);
          if (n >= 0) {
            // translated code ran n instructions (instret and pc updated); the interpreter takes the next one
            const err = jit.lastError, last = jit.lastHelper;
            jit.lastError = null; jit.lastHelper = null;
            if (err !== null) { ip = this.pc; insn = last as I; throw err; }
            if (this.pending !== null && last !== null) ip = last.addr;
            expect = this.pc;
            // a helper stepped an instruction inline whose single-step trap is still to be reported (stepOneInline)
            if (this.stepTrapPending) { this.stepTrapPending = false; stepping = true; break; }
            continue;
          }
        }
        // after an instruction the translator refused (a system instruction ends its block there), the next one is an arrival: the code after it gets translated too;
        // so is falling into the next page (a block ends at its page's end: straight-line code across pages gets hot in both at once)
        expect = insn.hot < 0 || insn.next - base >= 4096 ? NaN : insn.next;
        if (hw.execArmed) {
          if (this.resumeFlag) this.resumeFlag = false;
          else {
            const h = hw.execHit(ip);
            if (h !== 0) throw new HwExecFault(h);
          }
        }
        stepping = this.stepTrap;
        this.pc = insn.next;
        insn.exec(self, insn);
        this.instret++;
        if (stepping) {
          const step = this.inlineSingleStep;
          if (step !== null && this.pending === null) {
            this.onInlineSingleStep?.();
            if (step(self)) { stepping = false; continue; }
          }
          break;
        }
      }
      const p = this.pending;
      if (p === STOP_HW_BREAKPOINT) {
        // a data breakpoint trap after the access (x86): the instruction completed
        const trap = hw.takeTrap(fromVAddr(this.pc));
        if (stepping && trap.kind === 'hwBreakpoint') trap.step = true;
        res = { executed: this.instret - start - (this.innerInsns - inner0), trap };
      } else if (p !== null) res = this.finishStop(p, ip, start, inner0);
      else res = { executed: this.instret - start - (this.innerInsns - inner0), trap: stepping ? { kind: 'singleStep', pc: fromVAddr(this.pc) } : null };
    } catch (e) {
      res = this.finishTrap(e, ip, insn, start, inner0);
    } finally {
      this.endWatch(mem, outerWatcher);
      // a nested run's instructions are not the outer run's: they extend its budget and are not in its count
      this.limit = outerLimit < 0 ? outerLimit : outerLimit + (this.instret - start);
      this.pending = outerPending;
      this.runStart = outerStart;
      this.runInner0 = outerInner0;
    }
    this.innerInsns += res.executed;
    // x86 RF lasts one instruction: cleared once one completed (also when no execute breakpoint was armed to test it)
    if (res.executed > 0) this.resumeFlag = false;
    if (res.trap !== null) this.onTrapReported?.(res.trap);
    return res;
  }

  /**
   * The debug registers changed (an instruction wrote them, or the kernel
   * between runs): the address space sees this CPU's accesses from now on
   * while a data watch is armed. Between runs another CPU's unit watching
   * the shared address space is left alone.
   */
  private refreshWatcher(): void {
    const mem = this.mem, hw = this.hw;
    if (this.depth > 0) mem.watcher = hw.dataArmed ? hw : null;
    else if (mem.watcher === null || mem.watcher === hw.outside) mem.watcher = hw.dataArmed ? hw.outside : null;
  }

  /** a run ends: a nested one gives the outer run its watcher back; between runs the emulator's own accesses are only recorded */
  private endWatch(mem: Memory, outer: Memory['watcher']): void {
    mem.watcher = --this.depth > 0 ? outer : this.hw.dataArmed ? this.hw.outside : null;
  }

  private finishStop(p: GuestStop | GuestFault, ip: VAddr, start: number, inner0: number): RunResult {
    if (p instanceof GuestStop) {
      // the instruction completed (breakpoint, syscall, hypercall, halt): the pc is already the next insn
      return { executed: this.instret - start - (this.innerInsns - inner0), trap: p.toTrap(fromVAddr(this.pc)) };
    }
    this.instret--;
    this.pc = ip;
    return { executed: this.instret - start - (this.innerInsns - inner0), trap: p.toTrap(fromVAddr(ip)) };
  }

  private finishTrap(e: unknown, ip: VAddr, insn: I | null, start: number, inner0: number): RunResult {
    this.pc = ip;
    const pc = fromVAddr(ip);
    const executed = this.instret - start - (this.innerInsns - inner0);
    if (e instanceof HwBreakpointFault || e instanceof HwExecFault) return { executed, trap: e.toTrap(pc) };
    // the instruction did not complete: data matches it made are void
    this.hw.hits = 0;
    if (e instanceof GuestFault) return { executed, trap: e.toTrap(pc) };
    if (e instanceof MemoryFault) {
      const trap: Trap = { kind: 'pageFault', pc, addr: e.address, access: e.access, present: e.present, user: this.userMode };
      return { executed, trap };
    }
    const what = insn && insn.addr === ip ? this.describe(insn) : 'decode';
    const err = new Error(`${this.archName} cpu ${this.id}: internal error executing ${what} at ${hex(pc)}: ${e instanceof Error ? e.message : String(e)}`);
    if (e instanceof Error) err.stack = `${err.message}\n${e.stack ?? ''}`;
    throw err;
  }
}
