/**
 * A module's C handler (pre_handler, post_handler, a kretprobe's
 * entry_handler or return handler, a jprobe's entry) run as ordinary code
 * on the CPU instead of a nested call, so that a debugger can stop inside
 * it.
 *
 * A nested call (nestedCall.ts) runs the handler to its return inside the
 * engine's trap handling: nothing can stop the machine half way through it
 * (the host's stack is in the middle of the hit). When the debugger has a
 * breakpoint in a handler's code (the debugger's gate, onCpuGate.ts, says so),
 * the int3 path of a hit (traps.ts kprobeInt3) hands the handler's call
 * here instead: the probed context is saved, the CPU is set up to call
 * handler(kp, regs) with its return address at an engine stub
 * (`kprobe_handler_return`), and the trap returns; the handler then runs
 * as any kernel code does (it can stop, be stepped, be gone back through).
 * When it returns to the stub the probed context comes back (with what the
 * handler wrote into its struct pt_regs) and the hit goes on where the
 * nested call would have returned: single-step (or not, by the handler's
 * return value), post_handler; after a post_handler, the end of the hit.
 * The kprobe status is Linux's while the handler runs (HIT_ACTIVE,
 * HIT_SSDONE): a probe hit inside it is still a reentry.
 * A fault_handler is deferred the same way from the fault's trap (the
 * fault taken inside a handler running on the CPU, or by the single-step
 * of the probed instruction): it runs nested in the handler it interrupted
 * (calls on a CPU are a stack), and when it returns the trap's handling
 * goes on with its return value (traps.ts).
 * The other paths that call handlers defer them the same way: a detour
 * buffer's or the ftrace trampoline's template callback (the callback
 * ends when the handler returns; `below`: the template's saved frame),
 * pre_handler_kretprobe (the rest of it `chain`ed after the entry
 * handler) and the breakpoint trampoline's walk through a task's
 * kretprobe instances (the walk goes on when a return handler returns),
 * and a jprobe's setjmp_pre_handler (its longjmp `chain`ed after the entry).
 *
 * Its state is plain data on the engine's objects (time travel captures it).
 */
import type { Cpu, CpuContext } from '../arch/types';
import { mustVAddr } from '../memory/address';
import type { HandlerOnCpuGate } from './onCpuGate';
import type { KprobesShared } from './parts';

/** what handler calls on the CPU use of the engine: the kernel, the slot pages (the return stub), the hit CPU of the debugger's gate */
export type HandlerOnCpuEngine = Pick<KprobesShared, 'kernel' | 'slots'> & { readonly onCpu: Pick<HandlerOnCpuGate, 'hitCpu'> };

/** The stub's symbol in frames and listings. */
export const HANDLER_RETURN_SYMBOL = 'kprobe_handler_return';

/** One handler call made on a CPU: what to put back when it returns. */
interface OnCpuCall {
  /** the probed context at the hit */
  saved: CpuContext;
  /** the struct pt_regs frame the handler got */
  frame: bigint;
  /** guest struct kprobe (its nmissed and flags follow the engine's after the call) */
  guest: bigint;
  /** what the hit does next with the handler's return value */
  then: (ret: number) => void;
  /** the rest of the handler's caller (a kretprobe's entry), before then(); its value goes to then() */
  after?: (ret: number) => number;
  /** the stack pointer at the call (the handler's frames lie below it) */
  sp: bigint;
}

/** A handler call asked for by the pre_handler, started by the int3 path. */
interface Pending { fn: bigint; args: bigint[]; frame: bigint; guest: bigint; after?: (ret: number) => number }

export class HandlerOnCpu {
  private stubAddr = 0n;
  /** per CPU id: the call asked for during this hit's pre_handler */
  private readonly pending = new Map<number, Pending>();
  /** per CPU id: the handlers running on it, innermost last (a fault_handler runs nested in the handler that faulted) */
  private readonly running = new Map<number, OnCpuCall[]>();
  /** the CPU whose fault's handler is being called now (-1: none): it may be deferred even while a handler runs there */
  private faultCpu = -1;

  constructor(private readonly engine: HandlerOnCpuEngine,
    /** the handler returned: its frame back into the probed registers, the guest struct's counters (cApi) */
    private readonly finish: (cpu: Cpu, frame: bigint, guest: bigint) => void) {}

  /** the return stub's address (0n before the first call) */
  stub(): bigint { return this.stubAddr; }

  /** whether a handler call on `cpu` may be deferred now (the pre_handlers of an int3 hit, the post_handlers after its single-step) */
  canDefer(cpu: Cpu): boolean {
    return this.engine.onCpu.hitCpu === cpu.id && (!this.running.has(cpu.id) || this.faultCpu === cpu.id);
  }

  /**
   * `call` calls a probe's fault_handler for a fault taken on `cpu`: the
   * handler may be deferred (run on the CPU) even when the fault was taken
   * inside a handler running there.
   */
  forFault<T>(cpu: Cpu, call: () => T): T {
    this.faultCpu = cpu.id;
    try { return call(); } finally { this.faultCpu = -1; }
  }

  /** the pre_handler: the call is made once the hit's handlers ran (start); its value is then the return value */
  defer(cpu: Cpu, fn: bigint, args: bigint[], frame: bigint, guest: bigint): void {
    this.pending.set(cpu.id, { fn, args, frame, guest });
  }

  /**
   * The engine code that called the handler (pre_handler_kretprobe for an
   * entry_handler) goes on after the call returns: `after` gets the
   * handler's return value. False when no call was deferred on the CPU.
   */
  chain(cpu: Cpu, after: (ret: number) => number): boolean {
    const p = this.pending.get(cpu.id);
    if (!p) return false;
    p.after = after;
    return true;
  }

  /** the int3 path after the pre_handlers: start the deferred call, if any (then() gets its return value later) */
  start(cpu: Cpu, then: (ret: number) => void, below?: bigint): boolean {
    const p = this.pending.get(cpu.id);
    if (!p) return false;
    this.pending.delete(cpu.id);
    const abi = this.engine.kernel.arch.abi;
    const saved = cpu.saveContext();
    const calls = this.running.get(cpu.id);
    // the nested call's frame: below the interrupted one (red zone and more) and below `below` (a detour's saved
    // registers), ABI alignment, return at the stub
    const top = below !== undefined && below < cpu.getReg(abi.spReg) ? below : cpu.getReg(abi.spReg);
    let sp = (top - 512n) & ~15n;
    const ret = this.returnStub();
    if (abi.returnAddress.kind === 'stack') {
      sp -= BigInt(abi.pointerSize);
      cpu.mem.write64(mustVAddr(sp), ret);
    } else cpu.setReg(abi.returnAddress.reg, ret);
    cpu.setReg(abi.spReg, sp);
    const call: OnCpuCall = { saved, frame: p.frame, guest: p.guest, then, after: p.after, sp };
    if (calls) calls.push(call);
    else this.running.set(cpu.id, [call]);
    p.args.forEach((a, i) => cpu.setReg(abi.argRegs[i], BigInt.asUintN(64, a)));
    cpu.setPc(p.fn);
    return true;
  }

  /** a hit whose pre_handlers failed (oops): the call is not made */
  drop(cpu: Cpu): void { this.pending.delete(cpu.id); }

  /** the stack pointers at the calls of the handlers running on `cpu` as ordinary code, innermost last */
  entrySps(cpu: number): bigint[] { return (this.running.get(cpu) ?? []).map(c => c.sp); }

  /** whether a handler runs on the CPU as ordinary code now */
  runningOn(cpu: number): boolean { return this.running.has(cpu); }

  private returnStub(): bigint {
    if (this.stubAddr !== 0n) return this.stubAddr;
    const bp = this.engine.kernel.arch.breakpointInsn;
    const a = this.engine.slots.allocCode(Math.max(16, bp.length), HANDLER_RETURN_SYMBOL, {
      breakpoint: (cpu, _regs, _kcb, addr) => addr === a && this.returned(cpu),
    });
    const code = new Uint8Array(16);
    for (let i = 0; i + bp.length <= code.length; i += bp.length) code.set(bp, i);
    this.engine.slots.write(a, code);
    this.stubAddr = a;
    return a;
  }

  /** the handler returned to the stub: the probed context back, the hit goes on */
  private returned(cpu: Cpu): boolean {
    const calls = this.running.get(cpu.id);
    const c = calls?.pop();
    if (!c) return false;
    if (calls?.length === 0) this.running.delete(cpu.id);
    const ret = Number(BigInt.asIntN(32, cpu.getReg(this.engine.kernel.arch.abi.retReg)));
    cpu.restoreContext(c.saved);
    this.finish(cpu, c.frame, c.guest);
    c.then(c.after ? c.after(ret) : ret);
    return true;
  }
}
