/**
 * The kprobes engine (Linux kernel/kprobes.c): it makes the parts, hands
 * each its collaborators, and keeps Linux's public API and the entry
 * points the front ends use (debugfs, sysctl); the debugger's views reach
 * the part that owns what they read (probes, arming, optimizer, kretprobes,
 * percpu, describer, nested, onCpu, traps).
 * The parts call each other directly, never through the engine:
 *   probeTable.ts   kprobe_table, the aggregates' lists, kinds, armed set
 *   perCpu.ts       kprobe_ctlblk and the pt_regs views
 *   describe.ts     %pS names and the ProbeInfo of events
 *   hitPath.ts      the handler invocation (pre/post/fault, nmissed)
 *   removal.ts      arch_remove_kprobe deferred while a CPU is inside
 *   registration.ts register/unregister/enable/disable, aggregates
 *                   (address rules in addressChecks.ts, input checks in validate.ts)
 *   arming.ts       arm/disarm through textPoke, the text without probes
 *   traps.ts        the trap handlers (int3, single-step, faults)
 *   optprobes.ts    the jump optimizer; optCallback.ts its optimized_callback
 *   ftrace.ts       kprobes on ftrace call sites
 *   kretprobes.ts, jprobes.ts, nestedCall.ts (callKernelFunction)
 *   onCpuGate.ts    the debugger's gate (C handlers run on the CPU)
 *   codeRegistry.ts the engine's own code; symbolize.ts its names
 *   debugfs.ts, sysctl.ts the front ends' files
 * Everything arch-specific goes through the hook table (archHooks.ts) the
 * engine is given (KprobesEngineOptions.hooks).
 */
import type { KernelApi } from '../kernel/types';
import type { KprobesArchContext, KprobesArchHooks } from './archHooks';
import { KprobeEvents } from './events';
import { INSN_SLOT_SYMBOL, InsnSlots } from './insnSlots';
import { Jprobe, Kprobe, Kretprobe, KprobeStatus } from './kprobe';
import { Jprobes } from './jprobes';
import { JPROBE_RETURN } from './errors';
import { Kretprobes } from './kretprobes';
import { KernelData } from './kdata';
import { KprobesCApi } from './cApi';
import { NestedCaller } from './nestedCall';
import { ExceptionTable } from './extable';
import { OPTIMIZE_DELAY_NS, Optimizer } from './optprobes';
import { SYSCTL_KPROBES_OPTIMIZATION, kprobesOptimizationSysctl } from './sysctl';
import { errnoOf, KprobeRegResult } from './regResult';
import { KprobesFtrace } from './ftrace';
import { KprobeTraps } from './traps';
import type { BreakpointSite, KprobesEngineOptions, KprobeStats } from './engineTypes';
import { probeName } from './symbolize';
import { EngineCodeRegistry, offsetFrom } from './codeRegistry';
import { ProbeTable, type KprobeTableView } from './probeTable';
import { KprobeArming } from './arming';
import { KprobeHitPath } from './hitPath';
import { KprobeRegistration } from './registration';
import { KprobeCpus } from './perCpu';
import { HandlerOnCpuGate } from './onCpuGate';
import { KprobeDescriber } from './describe';
import { KprobeRemoval } from './removal';
import { OptimizedCallback } from './optCallback';
import type { KprobesShared } from './parts';

export type { KprobesEngineOptions, KprobeStats, BreakpointSite };

export class KprobesEngine implements KprobesShared {
  readonly hooks: KprobesArchHooks;
  readonly ctx: KprobesArchContext;
  readonly events = new KprobeEvents();
  /** the engine's own code: slot pages, detour buffers, trampolines, stubs (codeRegistry.ts) */
  readonly code = new EngineCodeRegistry();
  readonly slots: InsnSlots;
  readonly stats: KprobeStats = {
    int3Hits: 0, singleSteps: 0, boostedHits: 0, detourHits: 0, optCallbacks: 0, kretTrampolineTraps: 0, kretBoostCallbacks: 0,
    nativeOptFrames: 0, presavedOptFrames: 0, presavedKretFrames: 0, nativeKretFrames: 0, inlineOptEntries: 0, inlineKretEntries: 0,
    ftraceHits: 0, nativeFtraceFrames: 0, inlineFtraceEntries: 0, fusedNativeHits: 0,
  };
  /** kprobe_table and its companions (probeTable.ts) */
  private readonly t = new ProbeTable();
  /** the probe table as debugfs and the debugger read it: probes at an address, kinds, list order, armed (probeTable.ts) */
  readonly probes: KprobeTableView = this.t;
  /** per-CPU kprobe_ctlblk and pt_regs views (perCpu.ts) */
  readonly percpu: KprobeCpus;
  /** the debugger's gate into the hit paths (onCpuGate.ts) */
  readonly onCpu: HandlerOnCpuGate;
  /** %pS names and the ProbeInfo of events (describe.ts) */
  readonly describer: KprobeDescriber;
  private readonly hits: KprobeHitPath;
  private readonly removal: KprobeRemoval;
  /** arming and the code bytes as the debugger shows them, every armed probe's original bytes put back (arming.ts) */
  readonly arming: KprobeArming;
  private readonly registration: KprobeRegistration;
  /** the jump optimizer (optprobes.ts) */
  readonly optimizer: Optimizer;
  private readonly optCallback: OptimizedCallback;
  /** kprobes on ftrace call sites (ftrace.ts) */
  readonly ftrace: KprobesFtrace;
  readonly kretprobes: Kretprobes;
  private readonly jprobes: Jprobes;
  /** writable kernel data (kretprobe instance data) */
  readonly data: KernelData;
  /** calls of kernel functions from a handler on the CPU that hit the probe (nestedCall.ts) */
  readonly nested: NestedCaller;
  private readonly exTable: ExceptionTable;
  /** the trap handlers (traps.ts; its kprobeBooster is the kprobe booster switch: the overhead table's k vs b) */
  readonly traps: KprobeTraps;
  private capi: KprobesCApi | null = null;

  constructor(readonly kernel: KernelApi, opts: KprobesEngineOptions = {}) {
    if (kernel.sysctl.entry(SYSCTL_KPROBES_OPTIMIZATION)) throw new Error('kprobes: this kernel already has a kprobes engine (use Machine.kprobes)');
    // the port's hooks, handed in by whoever composes the machine (Machine: arch/registry.ts kprobesArchFor)
    const hooks = opts.hooks;
    if (!hooks) throw new Error(`kprobes: no arch support for ${kernel.arch.name} (no kprobes hooks handed to the engine)`);
    this.hooks = hooks;
    const t = this.t;
    this.percpu = new KprobeCpus(kernel.arch, t.ctlblks);
    this.slots = new InsnSlots(kernel, hooks.slotSize, this.code, {
      // a breakpoint in a slot page: the step breakpoint of arches without a trace flag
      breakpoint: (cpu, _regs, _kcb, _addr, _code, at) => this.traps.slotBreakpoint(cpu, at),
      symbolize: (addr, page) => {
        const slot = this.slots.slotOf(page, addr);
        const p = t.probeBySlot(slot);
        return `${page.symbol}${p?.addr !== undefined ? `[${probeName(kernel, p.addr)}]` : ''}${offsetFrom(addr, slot)}`;
      },
    });
    this.exTable = new ExceptionTable(kernel.image);
    const arming = (): KprobeArming => this.arming;
    this.ctx = {
      kernel,
      arch: kernel.arch,
      slots: this.slots,
      readOriginal: (addr, len) => arming().readTextWithoutProbes(kernel.mem, addr, len),
      searchExceptionTables: addr => this.exTable.search(addr),
      exceptionTable: () => this.exTable.entries,
    };
    this.data = new KernelData(kernel);
    this.onCpu = new HandlerOnCpuGate(t);
    // ProbeInfo's [OPTIMIZED] asks the optimizer, made below (it describes the probes in its own events)
    this.describer = new KprobeDescriber(kernel, this.code, t, addr => this.optimizer.isOptimized(addr));
    const where = (addr: bigint): string => this.describer.where(addr);
    this.hits = new KprobeHitPath(this, t, where);
    this.removal = new KprobeRemoval(this, t);
    this.optCallback = new OptimizedCallback(this, t, this.hits, this.removal, this.onCpu);
    this.optimizer = new Optimizer(this, t, this.describer, this.optCallback, hooks.optprobes, opts.optimizeDelayNs ?? OPTIMIZE_DELAY_NS);
    this.ftrace = new KprobesFtrace(this, t, this.hits, this.onCpu, opts.kprobesOnFtrace ?? true);
    this.arming = new KprobeArming(this, t, this.optimizer, this.ftrace);
    this.registration = new KprobeRegistration({
      shared: this, t, arming: this.arming, hits: this.hits, ftrace: this.ftrace, optimizer: this.optimizer,
      removal: this.removal, describe: this.describer,
    });
    this.nested = new NestedCaller(this, where);
    const parts = { shared: this, t, registration: this.registration, hits: this.hits, gate: this.onCpu };
    this.kretprobes = new Kretprobes({ ...parts, data: this.data }, opts.kretprobeBooster ?? true);
    this.jprobes = new Jprobes(this, t, this.registration, this.hits, this.onCpu);
    if (opts.optimization === false) this.optimizer.setEnabled(false);
    this.traps = new KprobeTraps({
      shared: this, t, hits: this.hits, gc: this.removal, optimizer: this.optimizer, gate: this.onCpu, nested: this.nested,
    });
    this.traps.kprobeBooster = opts.kprobeBooster ?? true;
    kernel.onTaskExit(task => this.kretprobes.flushTask(task));
    kernel.sysctl.register(kprobesOptimizationSysctl(this));
    // kprobe_optimizer is delayed work: polled at ticks as well as on traps
    kernel.addTickHook(() => this.optimizer.poll());
    // no preemption between a probe hit and the end of its single-step (Linux runs it with interrupts off)
    kernel.addPreemptBlocker(cpu => t.ctlblks[cpu] !== undefined && t.ctlblks[cpu].status !== KprobeStatus.NONE);
  }

  // ---------------------------------------------------------------- register_kprobe & co. (Linux's API)

  /** register_kprobe(): 0 or -errno */
  registerKprobe(p: Kprobe): number { return errnoOf(this.registration.registerKprobeResult(p)); }
  /** register_kprobe() with the reason of a refusal (the debugger's message) */
  registerKprobeResult(p: Kprobe): KprobeRegResult { return this.registration.registerKprobeResult(p); }
  /** register_kprobes(): all or nothing */
  registerKprobes(kps: Kprobe[]): number { return this.registration.registerKprobes(kps); }
  /** unregister_kprobe(); an unregistered probe gets its addr cleared (as Linux does) */
  unregisterKprobe(p: Kprobe): void { this.registration.unregisterKprobes([p]); }
  unregisterKprobes(kps: Kprobe[]): void { this.registration.unregisterKprobes(kps); }
  /** disable_kprobe(): 0 or -EINVAL */
  disableKprobe(p: Kprobe): number { return this.registration.disableKprobe(p); }
  /** enable_kprobe(): 0 or -EINVAL */
  enableKprobe(p: Kprobe): number { return this.registration.enableKprobe(p); }

  /** kill_kprobe() for every probe in [start, end): their code went away (module unload, init memory freed); how many */
  killKprobesIn(start: bigint, end: bigint): number {
    let n = 0;
    for (const a of new Set(this.t.listEntries().map(e => e.addr))) {
      if (a >= start && a < end && this.registration.killKprobe(a)) n++;
    }
    return n;
  }

  registerKretprobe(rp: Kretprobe): number { return errnoOf(this.kretprobes.register(rp)); }
  /** register_kretprobe() with the reason of a refusal */
  registerKretprobeResult(rp: Kretprobe): KprobeRegResult { return this.kretprobes.register(rp); }
  unregisterKretprobe(rp: Kretprobe): void { this.kretprobes.unregisterMany([rp]); }
  registerKretprobes(rps: Kretprobe[]): number { return this.kretprobes.registerMany(rps); }
  unregisterKretprobes(rps: Kretprobe[]): void { this.kretprobes.unregisterMany(rps); }
  enableKretprobe(rp: Kretprobe): number { return this.registration.enableKprobe(rp.kp); }
  disableKretprobe(rp: Kretprobe): number { return this.registration.disableKprobe(rp.kp); }

  registerJprobe(jp: Jprobe): number { return errnoOf(this.jprobes.register(jp)); }
  /** register_jprobe() with the reason of a refusal */
  registerJprobeResult(jp: Jprobe): KprobeRegResult { return this.jprobes.register(jp); }
  unregisterJprobe(jp: Jprobe): void { this.jprobes.unregisterMany([jp]); }
  registerJprobes(jps: Jprobe[]): number { return this.jprobes.registerMany(jps); }
  unregisterJprobes(jps: Jprobe[]): void { this.jprobes.unregisterMany(jps); }
  enableJprobe(jp: Jprobe): number { return this.registration.enableKprobe(jp.kp); }
  disableJprobe(jp: Jprobe): number { return this.registration.disableKprobe(jp.kp); }
  /**
   * jprobe_return(): ends the running jprobe handler (it never returns: it
   * throws, ~0.5 us of host time per call; an entry handler that simply
   * returns ends the same way and costs nothing).
   */
  jprobeReturn(): never { throw JPROBE_RETURN; }

  /** the kprobes functions C modules call (register_kprobe & co.), made on first use */
  get cApi(): KprobesCApi {
    if (this.capi === null) {
      // the probed address an instruction slot's address executes out of line (stack walks through a fault of the copy)
      const probedAddressOfSlot = (addr: bigint): bigint | undefined => {
        const page = this.code.find(addr);
        return page && page.symbol === INSN_SLOT_SYMBOL ? this.t.probeBySlot(this.slots.slotOf(page, addr))?.addr : undefined;
      };
      this.onCpu.capi = this.capi = new KprobesCApi(this, probedAddressOfSlot);
    }
    return this.capi;
  }

  // ---------------------------------------------------------------- the probe table as debugfs and the debugger read it

  /** get_kprobe(addr): the probe (or aggregate) at addr */
  getKprobe(addr: bigint): Kprobe | undefined { return this.t.table.get(addr); }

  /** what kind of engine site raised a breakpoint trap at addr (the breakpoint's own address) */
  breakpointSite(addr: bigint): BreakpointSite {
    if (this.t.table.has(addr)) return 'kprobe';
    const code = this.code.find(addr);
    return code?.site?.(addr, code) ?? 'none';
  }

  /** debugfs `enabled`: true unless every probe was disarmed by the knob */
  get enabled(): boolean { return !this.t.allDisarmed; }
  /** debugfs `enabled` knob: false disarms everything (probe states untouched), true re-arms all but [DISABLED] */
  setEnabled(on: boolean): void { this.arming.setEnabled(on); }

  // ---------------------------------------------------------------- sysctl debug.kprobes_optimization

  /** sysctl debug.kprobes_optimization (true = 1) */
  get optimization(): boolean { return this.optimizer.enabled; }
  /** sysctl -w debug.kprobes_optimization=0|1: 0 unoptimizes every optimized probe and stops new optimizations */
  setOptimization(on: 0 | 1 | boolean): void { this.optimizer.setEnabled(on === true || on === 1); }
  /** wait_for_kprobe_optimizer(): write the jumps of every queued probe now */
  waitForOptimizer(): void { this.optimizer.waitForOptimizer(); }
}
