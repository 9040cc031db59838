/**
 * The kprobes trap handlers (Linux arch/x86/kernel/kprobes/core.c's
 * arch-neutral part): the die-notifier for int3, single-step and faults
 * (kprobe_int3_handler, kprobe_debug_handler / post_kprobe_handler,
 * kprobe_fault_handler), reentry, the single-step / boost / detour setup,
 * and the CPU's inline breakpoint fast path for the engine's native
 * entries. It calls the handler invocation (pre/post/fault, nmissed) in
 * hitPath.ts directly; optimized_callback is optCallback.ts.
 */
import type { Cpu, Trap } from '../arch/types';
import type { NativeEntryRoute } from '../cpu/interp';
import type { KernelApi } from '../kernel/types';
import { onRestore } from '../base/marks';
import { fromVAddr, mustVAddr, hex, toVAddr, VAddr } from '../memory/address';
import { defaultSinglestepDone, type InlineBreakpointCpu, type KprobesArchContext, type KprobesArchHooks } from './archHooks';
import type { EngineCode, EngineCodeRegistry, NativeEntryInfo } from './codeRegistry';
import type { KprobeStats } from './engineTypes';
import { HandlerOops } from './errors';
import type { KprobeHitPath } from './hitPath';
import { Kprobe, KprobeCtlblk, KprobeStatus } from './kprobe';
import type { NestedCaller } from './nestedCall';
import type { HandlerOnCpuGate } from './onCpuGate';
import { isFusedRoute, type FusedNativeRoute, type Optimizer } from './optprobes';
import type { KprobesShared } from './parts';
import type { KprobeCpus } from './perCpu';
import type { ProbeMap, ProbeTable } from './probeTable';
import type { PtRegs } from './ptRegs';
import type { KprobeRemoval } from './removal';

/** What the trap handlers work with: the parts they call, as narrow interfaces. */
export interface KprobeTrapsDeps {
  readonly shared: Pick<KprobesShared, 'kernel' | 'hooks' | 'ctx' | 'code' | 'stats' | 'percpu'>;
  readonly t: Pick<ProbeTable, 'table' | 'aggrList'>;
  readonly hits: Pick<KprobeHitPath, 'preHandlerHit' | 'postHandlerHit' | 'resetCurrent' | 'incNmissed' | 'hasAnyPost'>;
  /** frees the slots of probes removed while in use (removal.ts) */
  readonly gc: Pick<KprobeRemoval, 'collectGarbage'>;
  readonly optimizer: Pick<Optimizer, 'poll' | 'detourFor'>;
  readonly gate: HandlerOnCpuGate;
  readonly nested: Pick<NestedCaller, 'depth'>;
}

export class KprobeTraps {
  /** ArchOps.breakpointPcOffset as a bigint (trap pc -> breakpoint address) */
  private readonly bpPcOffset: bigint;
  /** per CPU id: its inline breakpoint controls when installed */
  private readonly inlineCpus: (InlineBreakpointCpu | null)[] = [];

  /** the CPUs' inline breakpoint handler (installed when the arch allows it) */
  private readonly inlineHandler = (cpu: Cpu, at: VAddr): boolean => this.inlineBreakpoint(cpu, at);

  /** the kprobe booster (an emulator knob: the overhead table's k vs b) */
  kprobeBooster = true;
  private readonly kernel: KernelApi;
  private readonly hooks: KprobesArchHooks;
  private readonly ctx: KprobesArchContext;
  private readonly code: EngineCodeRegistry;
  private readonly stats: KprobeStats;
  private readonly percpu: KprobeCpus;
  private readonly table: ProbeMap;
  private readonly aggrList: ReadonlyMap<Kprobe, Kprobe[]>;
  private readonly hits: KprobeTrapsDeps['hits'];
  private readonly gc: KprobeTrapsDeps['gc'];
  private readonly optimizer: KprobeTrapsDeps['optimizer'];
  private readonly gate: HandlerOnCpuGate;
  private readonly nested: KprobeTrapsDeps['nested'];

  /** installs the trap hook and, when the arch and machine allow it, the CPUs' inline breakpoint */
  constructor(d: KprobeTrapsDeps) {
    ({ kernel: this.kernel, hooks: this.hooks, ctx: this.ctx, code: this.code, stats: this.stats, percpu: this.percpu } = d.shared);
    this.table = d.t.table;
    this.aggrList = d.t.aggrList;
    this.hits = d.hits;
    this.gc = d.gc;
    this.optimizer = d.optimizer;
    this.gate = d.gate;
    this.nested = d.nested;
    const kernel = this.kernel, hooks = this.hooks;
    this.bpPcOffset = BigInt(kernel.arch.breakpointPcOffset);
    kernel.addTrapHook((cpu, trap) => this.onTrap(cpu, trap));
    if (hooks.installInlineBreakpoint) {
      const handler = this.inlineHandler;
      const step = (cpu: Cpu): boolean => this.inlineSingleStep(cpu);
      const entryAt = (at: VAddr): NativeEntryRoute<Cpu> | null => this.nativeEntryAt(at);
      for (const cpu of kernel.cpus) {
        if (cpu.id < 0) continue;
        const ctl = hooks.installInlineBreakpoint(cpu, handler);
        this.inlineCpus[cpu.id] = ctl;
        if (ctl) {
          hooks.installInlineSingleStep?.(cpu, step);
          ctl.nativeEntryAt = entryAt;
        }
      }
      // translated code that writes a native entry's frame itself relies on what the entry is
      const changed = (at: VAddr): void => kernel.mem.codeMeaningChanged(at, kernel.arch.breakpointInsn.length);
      this.code.onNativeEntryChange = changed;
      // a time-travel restore puts the registry back without attach(): the entries before and after it are told
      let before: VAddr[] = [];
      const entries = (): VAddr[] => this.code.ranges().flatMap(c => (c.nativeEntry === undefined ? [] : [c.nativeEntry.at]));
      onRestore(this.code, { before: () => { before = entries(); }, after: () => { for (const at of new Set([...before, ...entries()])) changed(at); } });
    }
  }

  /** the die-notifier: int3, single-step and faults */
  private onTrap(cpu: Cpu, trap: Trap): boolean {
    this.optimizer.poll();
    switch (trap.kind) {
      case 'breakpoint': return this.kprobeBreakpointHandler(cpu, trap.pc - this.bpPcOffset);
      case 'singleStep': return this.kprobeDebugHandler(cpu, 'singleStep', toVAddr(trap.pc) ?? NaN);
      case 'pageFault': case 'generalProtection': case 'undefined': case 'divide':
        return this.kprobeFaultHandler(cpu, trap);
      default: return false;
    }
  }

  /**
   * The CPU's inline breakpoint (a host fast path): a breakpoint at a
   * registered probe's address or in the engine's own code (detour
   * buffers' native entries, the kretprobe trampolines, slot step
   * breakpoints) is handled from inside the breakpoint instruction instead
   * of a trap that makes the CPU's run return, with the same result: the
   * same handler path as the die-notifier (optimizer poll,
   * kprobe_int3_handler) and the same virtual time during the handlers
   * (the instructions this run has retired, the breakpoint included, are
   * added to the CPU's round slots for the duration, as the machine
   * accounts them before a trap is handled; a nested call's breakpoints
   * see the time of the hit that made the call, as with traps). The pc the
   * handlers see is the trap's (the arch's install hook sets it). When the
   * handlers leave something the machine must see (a stop request, power
   * off, an oops, another current task) the run ends after the
   * breakpoint. A breakpoint nobody here claims (false) traps as usual:
   * the die-notifier then finds nothing to do that the inline path did not
   * decline without side effects.
   */
  private inlineBreakpoint(cpu: Cpu, at: VAddr): boolean {
    const ctl = this.inlineCpus[cpu.id];
    if (ctl === null || ctl === undefined || cpu.userMode) return false; // probes and engine code are kernel code
    // the engine's own code first (probes are refused there: checkAddressSafe), then the probe table
    const reg = this.code;
    const code = at >= reg.minV && at < reg.maxV ? reg.findV(at) : undefined;
    if (code !== undefined) return code.breakpoint !== undefined && this.asTrap(cpu, ctl, at, undefined, code);
    const p = this.table.byV.get(at);
    return p !== undefined && this.asTrap(cpu, ctl, at, p, undefined);
  }

  /**
   * InterpCpu.nativeEntryAt: what the native entry at `at` saves, when it is
   * one whose frame is the same at every hit; its hit is inlineBreakpoint's
   * for this code entry (resolved now: a change of the entry drops the
   * translations that hold the route, codeMeaningChanged).
   */
  private nativeEntryAt(at: VAddr): NativeEntryRoute<Cpu> | null {
    if (this.hooks.optprobes?.enterNative === undefined) return null; // the templates run as instructions
    const reg = this.code;
    const code = at >= reg.minV && at < reg.maxV ? reg.findV(at) : undefined;
    const ne = code?.nativeEntry;
    const route = code?.breakpoint !== undefined && ne !== undefined && ne.at === at ? ne.route : undefined;
    if (route === undefined || code === undefined) return null;
    // a detour buffer's or the booster's: its common hit in one piece (asTrap `fused`)
    const fused = isFusedRoute(route) ? route : undefined;
    return {
      kind: route.kind, ip: route.ip, handler: this.inlineHandler,
      hit: (cpu: Cpu): boolean => {
        const ctl = this.inlineCpus[cpu.id];
        return ctl !== null && ctl !== undefined && !cpu.userMode && this.asTrap(cpu, ctl, at, undefined, code, fused);
      },
    };
  }

  /**
   * The CPU's inline single-step (a host fast path, x86): the TF trap after
   * a probe's stepped slot handled from inside the run, as the die-notifier
   * would (optimizer poll, kprobe_debug_handler), through the same envelope
   * as inlineBreakpoint. The engine's trap hook is the kernel's first, so
   * nothing else would have seen this trap before it. false (the trap goes
   * on as usual): not a probe's step, or the task itself is single-stepping
   * (the engine's part is then done; the trap continues to the other hooks
   * and the debugger as before).
   */
  private inlineSingleStep(cpu: Cpu): boolean {
    const ctl = this.inlineCpus[cpu.id];
    if (ctl === null || ctl === undefined || cpu.userMode) return false;
    const kcb = this.percpu.ctlblk(cpu.id);
    if (kcb.current === null || (kcb.status !== KprobeStatus.HIT_SS && kcb.status !== KprobeStatus.REENTER)) return false;
    return this.asTrap(cpu, ctl, null, undefined, undefined);
  }

  /**
   * What the machine and the die-notifier do around a trap, from inside the
   * CPU's run: the instructions this run has retired (the breakpoint or the
   * stepped instruction included) are added to the CPU's round slots for
   * the duration, as the machine accounts them before it handles a trap (a
   * nested call's hits see the time of the hit that made the call, as with
   * traps); the handlers' accesses are the emulator's own (enterHost); a
   * failing handler is reported as the kernel reports a failing trap hook;
   * the run ends after the instruction when the handlers left something the
   * machine must see (a stop request, power off, an oops, another current
   * task). `at`: the breakpoint's address (probe p or engine code `code`),
   * null for the single-step. false: nobody here claimed it (it traps).
   * `fused`: the route of a native entry hit from translated code, whose
   * common hit (save, handlers, restore) is one call; it is tried unless
   * this is a nested call's hit, a data watch would see the handlers'
   * accesses or a debugger may stop in a handler, and what it declines
   * (having done nothing) goes to the entry's breakpoint handler.
   */
  private asTrap(cpu: Cpu, ctl: InlineBreakpointCpu, at: VAddr | null, p: Kprobe | undefined, code: EngineCode | undefined,
    fused?: FusedNativeRoute): boolean {
    // the machine's run state (quantum accounting, a pending stop, power off, oopses) is part of KernelApi
    const m = this.kernel;
    const task = m.current(cpu.id);
    const oops0 = m.oopsCount;
    const used = m.clock.used;
    const outer = this.nested.depth === 0;
    // retiredInRun() leaves out the current instruction: the breakpoint's; the stepped one has retired already
    const slots = outer ? ctl.retiredInRun() + (at === null ? 0 : 1) : 0;
    used[cpu.id] += slots;
    if (outer) m.runRetired = slots; // the hit log's instruction count: the one the trap would show
    const oneCall = fused !== undefined && outer && this.gate.runHandlerOnCpu === undefined && cpu.mem.watcher === null;
    let handled = true;
    const host = ctl.enterHost();
    try {
      this.optimizer.poll();
      if (oneCall && (fused as FusedNativeRoute).fused(this.percpu.regsOf(cpu), this.percpu.ctlblk(cpu.id))) {
        this.stats[((code as EngineCode).nativeEntry as NativeEntryInfo).stat]++;
        this.stats.fusedNativeHits++;
      } else handled = at === null ? this.kprobeDebugHandler(cpu, 'singleStep', ctl.pc) : this.breakpointAt(cpu, at, p, code as EngineCode);
    } catch (e) {
      const trap: Trap = at === null ? { kind: 'singleStep', pc: cpu.getPc() } : { kind: 'breakpoint', pc: fromVAddr(at) + this.bpPcOffset };
      m.oops(cpu, trap, `kprobe-debug: trap hook failed: ${e instanceof Error ? e.message : String(e)}`);
      handled = true;
    } finally {
      used[cpu.id] -= slots;
      if (outer) m.runRetired = 0;
      ctl.leaveHost(host);
    }
    if (!handled) return false;
    if (m.stopRequest !== null || m.exitCode !== null || m.oopsCount !== oops0 || m.current(cpu.id) !== task) ctl.endRun();
    return true;
  }

  /** what onTrap -> kprobeBreakpointHandler do for a breakpoint at `at`: probe p's, else the engine code's there */
  private breakpointAt(cpu: Cpu, at: VAddr, p: Kprobe | undefined, code: EngineCode): boolean {
    if (p !== undefined) { this.kprobeInt3(cpu, p); return true; }
    const ne = code.nativeEntry;
    const native = ne !== undefined && ne.at === at;
    const handled = (code.breakpoint as NonNullable<EngineCode['breakpoint']>)(cpu, this.percpu.regsOf(cpu), this.percpu.ctlblk(cpu.id), native ? ne.addr : at === code.startV ? code.start : this.addrOf(at), code, at);
    if (handled && native) this.stats[ne.stat]++;
    return handled;
  }

  /** the bigint of a breakpoint address the inline path saw (the last one kept: a trampoline is hit again and again) */
  private addrOf(at: VAddr): bigint {
    if (at !== this.lastAt) { this.lastAt = at; this.lastAddr = BigInt.asUintN(64, BigInt(at)); }
    return this.lastAddr;
  }
  private lastAt: VAddr = NaN;
  private lastAddr = 0n;

  /**
   * kprobe_int3_handler (arch-neutral part): a probe's breakpoint, else a
   * breakpoint in the engine's own code (the code registry routes it to
   * its owner: trampolines, detour buffers, a slot's step breakpoint).
   */
  private kprobeBreakpointHandler(cpu: Cpu, addr: bigint): boolean {
    const p = this.table.get(addr);
    if (!p) {
      const code = this.code.find(addr);
      if (code) return code.breakpoint !== undefined && code.breakpoint(cpu, this.percpu.regsOf(cpu), this.percpu.ctlblk(cpu.id), addr, code, toVAddr(addr) ?? NaN);
      // The breakpoint was removed after this CPU hit it: run the original instruction.
      try {
        const now = this.kernel.mem.readBytes(mustVAddr(addr), this.kernel.arch.breakpointInsn.length);
        if (!sameBytes(now, this.kernel.arch.breakpointInsn)) { cpu.setPc(addr); return true; }
      } catch { /* not mapped: not ours */ }
      return false;
    }
    this.kprobeInt3(cpu, p);
    return true;
  }

  /** kprobe_int3_handler for the probe (or aggregate) p at the breakpoint */
  private kprobeInt3(cpu: Cpu, p: Kprobe): void {
    const kcb = this.percpu.ctlblk(cpu.id);
    const regs = this.percpu.regsOf(cpu);
    this.stats.int3Hits++;
    if (kcb.current) { this.reenterKprobe(p, regs, kcb); return; }
    kcb.current = p;
    kcb.status = KprobeStatus.HIT_ACTIVE;
    let ret = 0;
    this.gate.hitCpu = cpu.id;
    try {
      ret = this.hits.preHandlerHit(p, regs);
    } catch (e) {
      this.gate.hitCpu = -1;
      this.gate.drop(cpu);
      if (e instanceof HandlerOops) { this.hits.resetCurrent(kcb); return; }
      throw e;
    }
    this.gate.hitCpu = -1;
    // a C pre_handler the debugger has a breakpoint in runs on the CPU now; the hit goes on when it returns
    if (this.gate.mayDefer && this.gate.start(cpu, r => this.afterPreHandlers(p, regs, kcb, r || ret))) return;
    this.afterPreHandlers(p, regs, kcb, ret);
  }

  private afterPreHandlers(p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk, ret: number): void {
    if (!ret) this.setupSinglestep(p, regs, kcb, false);
    else this.hits.resetCurrent(kcb);
  }

  /** reenter_kprobe() */
  private reenterKprobe(p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): boolean {
    switch (kcb.status) {
      case KprobeStatus.HIT_SSDONE:
      case KprobeStatus.HIT_ACTIVE:
      case KprobeStatus.HIT_SS:
        // the debugger's breakpoint in handler code: a stop, not a miss
        if (this.gate.debuggerReentry?.(p, regs)) { this.setupSinglestep(p, regs, kcb, true); return true; }
        this.hits.incNmissed(p, regs.cpu.id);
        this.setupSinglestep(p, regs, kcb, true);
        return true;
      default: {
        // A probe hit while single-stepping a reentered probe: no way out.
        this.kernel.printk(regs.cpu.id, 'Unrecoverable kprobe detected.', 'emulator');
        this.kernel.printk(regs.cpu.id, `Dumping kprobe:\nName: ${p.symbol_name ?? ''}\nOffset: ${(p.offset ?? 0n).toString(16)}\nAddress: ${hex(p.addr ?? 0n)}`, 'emulator');
        this.kernel.oops(regs.cpu, null, 'kernel BUG at kernel/kprobes.c: reentered kprobe while single-stepping a reentered kprobe');
        this.hits.resetCurrent(kcb);
        return true;
      }
    }
  }

  private setupSinglestep(p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk, reenter: boolean): void {
    // setup_detour_execution: a queued or optimized probe resumes in its buffer's copied code
    const op = this.optimizer.detourFor(p.addr as bigint);
    if (op && this.hooks.optprobes) {
      this.stats.detourHits++;
      this.hooks.optprobes.setupDetourExecution(op, regs);
      if (!reenter) this.hits.resetCurrent(kcb);
      this.gc.collectGarbage();
      return;
    }
    // the kprobe booster: jump into the slot (its jmp back is appended) when no post_handler must run
    if (!reenter && this.kprobeBooster && p.ainsn?.boostable === 1 && p.ainsn.mode === 'slot' && !this.hits.hasAnyPost(p)) {
      this.stats.boostedHits++;
      if (p.ainsn.insnV !== undefined) regs.setIpV(p.ainsn.insnV);
      else regs.ip = p.ainsn.insn;
      this.hits.resetCurrent(kcb);
      this.gc.collectGarbage();
      return;
    }
    if (reenter) {
      kcb.prev = { kp: kcb.current, status: kcb.status, oldFlags: kcb.oldFlags, savedFlags: kcb.savedFlags };
      kcb.current = p;
      kcb.status = KprobeStatus.REENTER;
    } else kcb.status = KprobeStatus.HIT_SS;
    if (p.ainsn?.mode === 'simulate' && this.hooks.simulate) {
      kcb.oldFlags = kcb.savedFlags = 0n;
      this.hooks.simulate(this.ctx, p, regs);
      this.afterSinglestep(p, regs, kcb);
      return;
    }
    this.hooks.setupSinglestep(this.ctx, p, regs, kcb);
  }

  /**
   * A breakpoint inside an instruction slot page: the step breakpoint that
   * ends an out-of-line single-step on arches without a trace flag (arm64
   * kprobe_breakpoint_ss_handler, riscv kprobe_single_step_handler).
   * (the slot pages' breakpoint handler: core.ts hands it to InsnSlots)
   */
  slotBreakpoint(cpu: Cpu, at: VAddr): boolean {
    return this.kprobeDebugHandler(cpu, 'breakpoint', at);
  }

  /**
   * The trap that ends the single-step of the current probe's slot
   * (x86 kprobe_debug_handler on the TF trap; arm64/riscv the step
   * breakpoint after the slot's instruction; the arch's singlestepDone
   * hook recognises it) -> post_kprobe_handler. `at`: the breakpoint's
   * own address for a breakpoint, else the trap's pc (NaN: not canonical).
   */
  private kprobeDebugHandler(cpu: Cpu, kind: Trap['kind'], at: VAddr): boolean {
    const kcb = this.percpu.ctlblk(cpu.id);
    const cur = kcb.current;
    if (!cur || (kcb.status !== KprobeStatus.HIT_SS && kcb.status !== KprobeStatus.REENTER)) return false;
    if (!(this.hooks.singlestepDone ?? defaultSinglestepDone)(cur, kind, at)) return false;
    const regs = this.percpu.regsOf(cpu);
    this.stats.singleSteps++;
    this.hooks.resumeExecution(this.ctx, cur, regs, kcb);
    const own = this.afterSinglestep(cur, regs, kcb);
    return !own;
  }

  /** post-handler and ctlblk bookkeeping; returns true when the task itself is single-stepping */
  private afterSinglestep(cur: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): boolean {
    if (kcb.status !== KprobeStatus.REENTER) {
      // a C post_handler the debugger has a breakpoint in runs on the CPU (not while the task single-steps itself)
      const own = this.hooks.taskSinglestepping?.(regs) ?? false;
      if (!own) this.gate.hitCpu = regs.cpu.id;
      try {
        this.hits.postHandlerHit(cur, regs, kcb);
      } finally {
        this.gate.hitCpu = -1;
      }
      if (!own && this.gate.mayDefer && this.gate.start(regs.cpu, () => { this.hits.resetCurrent(kcb); this.gc.collectGarbage(); })) return false;
    }
    if (kcb.status === KprobeStatus.REENTER) this.restorePrevious(kcb);
    else this.hits.resetCurrent(kcb);
    this.gc.collectGarbage();
    return this.hooks.taskSinglestepping?.(regs) ?? false;
  }

  private restorePrevious(kcb: KprobeCtlblk): void {
    kcb.current = kcb.prev.kp;
    kcb.status = kcb.prev.status;
    kcb.oldFlags = kcb.prev.oldFlags;
    kcb.savedFlags = kcb.prev.savedFlags;
    kcb.prev = { kp: null, status: KprobeStatus.NONE, oldFlags: 0n, savedFlags: 0n };
  }

  /**
   * kprobe_fault_handler. A C fault_handler the debugger has a breakpoint
   * in (outside a nested call) runs on the CPU as ordinary code, nested in
   * whatever the fault interrupted (a handler running there): the trap is
   * taken, and when the fault_handler returns the rest of this function
   * runs with its return value; a fault it left unhandled then goes on to
   * the kernel's own handling (its __ex_table fixup, else an oops) as the
   * trap would have (passFault).
   */
  private kprobeFaultHandler(cpu: Cpu, trap: Trap): boolean {
    // a fault the fault_handler run on the CPU left unhandled, dispatched again: the kernel's now
    if (this.passFault === cpu.id) { this.passFault = -1; return false; }
    const kcb = this.percpu.ctlblk(cpu.id);
    const cur = kcb.current;
    if (!cur) return false;
    const regs = this.percpu.regsOf(cpu);
    const trapnr = this.kernel.arch.abi.trapNumbers[trap.kind] ?? -1;
    const slot = cur.ainsn?.insn ?? -1n;
    if ((kcb.status === KprobeStatus.HIT_SS || kcb.status === KprobeStatus.REENTER) && trap.pc === slot) {
      // The single-stepped copy faulted. The probe's fault_handler may handle it
      // (aggregates: no member handler runs during the single-step).
      const fh = this.aggrList.has(cur) ? undefined : cur.fault_handler;
      if (!fh) return this.steppedFaultDone(cur, regs, kcb, trap, slot, 0);
      // the single-step ends before a fault_handler run on the CPU (no trace flag while it runs); it sees the slot's ip
      const ip0 = regs.ip;
      const flags0 = regs.flags;
      this.hooks.singlestepFault(this.ctx, cur, regs, kcb);
      const stopped = { ip: regs.ip, flags: regs.flags };
      regs.ip = ip0;
      const handled = this.callFaultHandler(cpu, cur, regs, trapnr, fh, r => {
        if (!this.steppedFaultDone(cur, regs, kcb, trap, slot, r, stopped)) this.passOn(cpu, trap);
      });
      if (handled === ON_CPU) return true;
      regs.flags = flags0;
      return this.steppedFaultDone(cur, regs, kcb, trap, slot, handled);
    }
    if (kcb.status === KprobeStatus.HIT_ACTIVE || kcb.status === KprobeStatus.HIT_SSDONE) {
      // emulated code called from a handler faulted
      this.hits.incNmissed(cur, cpu.id);
      const fh = cur.fault_handler;
      if (fh) {
        const handled = this.callFaultHandler(cpu, cur, regs, trapnr, fh, r => { if (!r) this.passOn(cpu, trap); });
        if (handled === ON_CPU || handled) return true;
      }
    }
    return false;
  }

  /**
   * fault_handler(cur, regs, trapnr): its value (a throw is 0), or ON_CPU
   * when the call was deferred onto the CPU (`then` gets the value when it
   * returns). Deferred only outside a nested call, as the other handlers.
   */
  private callFaultHandler(cpu: Cpu, cur: Kprobe, regs: PtRegs, trapnr: number, fh: NonNullable<Kprobe['fault_handler']>,
    then: (ret: number) => void): number {
    const onCpu = this.gate.capi?.onCpu;
    const mayDefer = onCpu !== undefined && this.gate.runHandlerOnCpu !== undefined && this.nested.depth === 0;
    let handled = 0;
    if (mayDefer) this.gate.hitCpu = cpu.id;
    try {
      handled = mayDefer ? onCpu.forFault(cpu, () => fh(cur, regs, trapnr)) : fh(cur, regs, trapnr);
    } catch {
      handled = 0;
      if (mayDefer) this.gate.drop(cpu);
    } finally {
      if (mayDefer) this.gate.hitCpu = -1;
    }
    return mayDefer && this.gate.start(cpu, then) ? ON_CPU : handled;
  }

  /**
   * The end of a fault of the single-stepped copy once its fault_handler
   * returned `handled`: handled, the task's flags back and the ip the
   * handler left (true); otherwise the fault made to look like the
   * original instruction's (false: the kernel's to handle). `stopped`: the
   * single-step already ended (a fault_handler run on the CPU), the
   * registers singlestepFault left.
   */
  private steppedFaultDone(cur: Kprobe, regs: PtRegs, kcb: KprobeCtlblk, trap: Trap, slot: bigint, handled: number,
    stopped?: { ip: bigint; flags: bigint }): boolean {
    const ip = regs.ip;
    if (stopped) { regs.ip = stopped.ip; regs.flags = stopped.flags; } else this.hooks.singlestepFault(this.ctx, cur, regs, kcb);
    if (handled) {
      // the handler fixed regs: stop single-stepping, restore the task's flags, keep its ip
      if (ip !== slot) regs.ip = ip;
      this.finishFault(kcb);
      return true;
    }
    // make it look like the original instruction faulted, then the normal fault path
    (trap as { pc: bigint }).pc = cur.addr as bigint;
    this.finishFault(kcb);
    return false;
  }

  /** a fault the fault_handler run on the CPU did not handle: the kernel's handling, as when the trap hook declines */
  private passOn(cpu: Cpu, trap: Trap): void {
    const dispatch = this.kernel.handleTrap;
    if (dispatch === undefined) { this.kernel.oops(cpu, trap, ''); return; }
    this.passFault = cpu.id;
    try { dispatch.call(this.kernel, cpu, trap); } finally { this.passFault = -1; }
  }
  /** the CPU whose fault is being dispatched again after its fault_handler (-1: none) */
  private passFault = -1;

  private finishFault(kcb: KprobeCtlblk): void {
    if (kcb.status === KprobeStatus.REENTER) this.restorePrevious(kcb);
    else this.hits.resetCurrent(kcb);
    this.gc.collectGarbage();
  }
}

/** callFaultHandler: the fault_handler runs on the CPU, its value comes later */
const ON_CPU = -0x7fffffff;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

