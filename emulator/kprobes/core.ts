/**
 * The arch-neutral kprobes core (Linux kernel/kprobes.c): the engine and
 * its public API. Its parts: the probe table, aggregate lists and per-CPU
 * control blocks in probeTable.ts, registration (register_kprobe,
 * aggregates, unregister, enable/disable) in registration.ts with the
 * address rules in addressChecks.ts, arming through textPoke in
 * arming.ts, the handler invocation (pre/post/fault, nmissed) in
 * hitPath.ts, the engine's own code in codeRegistry.ts. The trap handlers (kprobe_int3_handler, kprobe_debug_handler /
 * post_kprobe_handler, kprobe_fault_handler) live in traps.ts,
 * kretprobes in kretprobes.ts, jprobes in jprobes.ts, kprobes on
 * ftrace call sites in ftrace.ts, the debugfs files in debugfs.ts, the
 * engine code's synthetic symbol names in symbolize.ts, the registration
 * input checks in validate.ts. Everything arch-specific goes through the hook table
 * (archHooks.ts) found by ArchOps.name.
 */
import type { Cpu } from '../arch/types';
import type { KernelApi } from '../kernel/types';
import { hex, type VAddr } from '../memory/address';
import type { KprobesArchContext, KprobesArchHooks } from './archHooks';
import { kprobesArchFor } from '../arch/registry';
import { KprobeEvents, ProbeInfo } from './events';
import { InsnSlots } from './insnSlots';
import {
  Jprobe, Kprobe, KprobeCtlblk, Kretprobe, KPROBE_FLAG_FTRACE, KPROBE_FLAG_GONE, kprobeDisabled, newCtlblk, ProbeKind, KprobeStatus,
} from './kprobe';
import { PtRegs } from './ptRegs';
import { Jprobes } from './jprobes';
import { JPROBE_RETURN } from './errors';
import { Kretprobes } from './kretprobes';
import { KernelData } from './kdata';
import { KprobesCApi } from './cApi';
import { NestedCaller } from './nestedCall';
import { ExceptionTable } from './extable';
import { OPTIMIZE_DELAY_NS, OptimizationStatus, Optimizer } from './optprobes';
import { SYSCTL_KPROBES_OPTIMIZATION, kprobesOptimizationSysctl } from './sysctl';
import { errnoOf, KprobeRegError, KprobeRegResult } from './regResult';
import { KprobesFtrace } from './ftrace';
import { KprobeTraps } from './traps';
import type { BreakpointSite, KprobesEngineOptions, KprobeStats } from './engineTypes';
import { probeName } from './symbolize';
import { EngineCodeRegistry, offsetFrom } from './codeRegistry';
import { ProbeTable } from './probeTable';
import { KprobeArming } from './arming';
import { KprobeHitPath } from './hitPath';
import { KprobeRegistration } from './registration';
import { funcEntryAddr, resolveAddr, withinKprobeBlacklist } from './addressChecks';

export type { KprobesEngineOptions, KprobeStats, BreakpointSite };

export class KprobesEngine {
  readonly hooks: KprobesArchHooks;
  readonly ctx: KprobesArchContext;
  readonly events = new KprobeEvents();
  /** the engine's own code: slot pages, detour buffers, trampolines, stubs (codeRegistry.ts) */
  readonly code = new EngineCodeRegistry();
  readonly slots: InsnSlots;
  /** kprobe_table and its companions (probeTable.ts) */
  private readonly t = new ProbeTable();
  private readonly arming: KprobeArming;
  /** the handler invocation (hitPath.ts) */
  private readonly hits: KprobeHitPath;
  private readonly registration: KprobeRegistration;
  private readonly regsViews = new Map<Cpu, PtRegs>();
  /** the last view asked for per CPU id (a fast path of regsOf on every hit) */
  private readonly regsById: PtRegs[] = [];
  readonly kretprobes: Kretprobes;
  readonly jprobes: Jprobes;
  /** writable kernel data (kretprobe instance data) */
  readonly data: KernelData;
  private readonly nested: NestedCaller;
  /** the jump optimizer (optprobes.ts) */
  readonly optimizer: Optimizer;
  readonly exTable: ExceptionTable;
  readonly stats: KprobeStats = {
    int3Hits: 0, singleSteps: 0, boostedHits: 0, detourHits: 0, optCallbacks: 0, kretTrampolineTraps: 0, kretBoostCallbacks: 0,
    nativeOptFrames: 0, presavedOptFrames: 0, presavedKretFrames: 0, nativeKretFrames: 0, inlineOptEntries: 0, inlineKretEntries: 0,
    ftraceHits: 0, nativeFtraceFrames: 0, inlineFtraceEntries: 0,
  };
  /** kprobes on ftrace call sites (ftrace.ts) */
  readonly ftrace: KprobesFtrace;
  /** the trap handlers (traps.ts) @internal (optprobes.ts) */
  readonly traps: KprobeTraps;
  private kprobeBooster: boolean;

  constructor(readonly kernel: KernelApi, opts: KprobesEngineOptions = {}) {
    const hooks = opts.hooks ?? kprobesArchFor(kernel.arch.name);
    if (!hooks) throw new Error(`kprobes: no arch support for ${kernel.arch.name}`);
    if (kernel.sysctl.entry(SYSCTL_KPROBES_OPTIMIZATION)) throw new Error('kprobes: this kernel already has a kprobes engine (use Machine.kprobes)');
    this.hooks = hooks;
    this.arming = new KprobeArming(this, this.t);
    this.hits = new KprobeHitPath(this, this.t);
    this.registration = new KprobeRegistration(this, this.t, this.arming, this.hits);
    this.slots = new InsnSlots(kernel, hooks.slotSize, this.code, {
      // a breakpoint in a slot page: the step breakpoint of arches without a trace flag
      breakpoint: (cpu, _regs, _kcb, _addr, _code, at) => this.traps.slotBreakpoint(cpu, at),
      symbolize: (addr, page) => {
        const slot = this.slots.slotOf(page, addr);
        const p = this.probeBySlot(slot);
        return `${page.symbol}${p?.addr !== undefined ? `[${probeName(this, p.addr)}]` : ''}${offsetFrom(addr, slot)}`;
      },
    });
    this.exTable = new ExceptionTable(kernel.image);
    this.ctx = {
      kernel,
      arch: kernel.arch,
      slots: this.slots,
      readOriginal: (addr, len) => this.readTextWithoutProbes(kernel.mem, addr, len),
      searchExceptionTables: addr => this.exTable.search(addr),
      exceptionTable: () => this.exTable.entries,
    };
    this.data = new KernelData(kernel);
    this.nested = new NestedCaller(this);
    this.kretprobes = new Kretprobes(this, opts.kretprobeBooster ?? true);
    this.jprobes = new Jprobes(this);
    this.ftrace = new KprobesFtrace(this, opts.kprobesOnFtrace ?? true);
    this.optimizer = new Optimizer(this, hooks.optprobes, opts.optimizeDelayNs ?? OPTIMIZE_DELAY_NS);
    if (opts.optimization === false) this.optimizer.setEnabled(false);
    this.kprobeBooster = opts.kprobeBooster ?? true;
    this.traps = new KprobeTraps(this, this.nested);
    kernel.onTaskExit(t => this.kretprobes.flushTask(t));
    kernel.sysctl.register(kprobesOptimizationSysctl(this));
    // kprobe_optimizer is delayed work: polled at ticks as well as on traps
    kernel.addTickHook(() => this.optimizer.poll());
    // no preemption between a probe hit and the end of its single-step (Linux runs it with interrupts off)
    kernel.addPreemptBlocker(cpu => this.t.ctlblks[cpu] !== undefined && this.t.ctlblks[cpu].status !== KprobeStatus.NONE);
  }

  // ------------------------------------------------- optimization, boosters

  /** sysctl debug.kprobes_optimization (true = 1) */
  get optimization(): boolean { return this.optimizer.enabled; }

  /** sysctl -w debug.kprobes_optimization=0|1: 0 unoptimizes every optimized probe and stops new optimizations */
  setOptimization(on: 0 | 1 | boolean): void { this.optimizer.setEnabled(on === true || on === 1); }

  /** wait_for_kprobe_optimizer(): write the jumps of every queued probe now */
  waitForOptimizer(): void { this.optimizer.waitForOptimizer(); }

  /** where an address stands with jump optimization (state, region, reason it is not optimized) */
  optimizationStatus(addr: bigint): OptimizationStatus { return this.optimizer.status(addr); }

  /** the jump is written at addr ([OPTIMIZED]) */
  isOptimized(addr: bigint): boolean { return this.optimizer.isOptimized(addr); }

  /** the kprobe booster switch (emulator knob; the overhead table's k vs b) */
  get kprobeBoosterEnabled(): boolean { return this.kprobeBooster; }
  setKprobeBooster(on: boolean): void { this.kprobeBooster = on; }

  /** the kretprobe booster switch (new instances use the booster trampoline); the overhead table's r vs rb */
  get kretprobeBoosterEnabled(): boolean { return this.kretprobes.boosted; }
  setKretprobeBooster(on: boolean): void { this.kretprobes.setBoost(on); }

  /** what kind of engine site raised a breakpoint trap at addr (the breakpoint's own address) */
  breakpointSite(addr: bigint): BreakpointSite {
    if (this.t.table.has(addr)) return 'kprobe';
    const code = this.code.find(addr);
    return code?.site?.(addr, code) ?? 'none';
  }

  // ---------------------------------------------------------------- helpers

  /** per-CPU kprobe_ctlblk */
  ctlblk(cpu: number): KprobeCtlblk {
    let k = this.t.ctlblks[cpu];
    if (!k) { k = newCtlblk(); this.t.ctlblks[cpu] = k; }
    return k;
  }

  regsOf(cpu: Cpu): PtRegs {
    const id = cpu.id;
    const byId = id >= 0 ? this.regsById[id] : undefined;
    if (byId !== undefined && byId.cpu === cpu) return byId;
    let r = this.regsViews.get(cpu);
    if (!r) { r = new PtRegs(cpu, this.kernel.arch); this.regsViews.set(cpu, r); }
    if (id >= 0) this.regsById[id] = r;
    return r;
  }

  /** get_kprobe(addr): the probe (or aggregate) at addr */
  getKprobe(addr: bigint): Kprobe | undefined { return this.t.table.get(addr); }

  /** get_kprobe() by VAddr (the CPU's inline breakpoint: no BigInt per hit) */
  getKprobeV(at: VAddr): Kprobe | undefined { return this.t.table.byV.get(at); }

  isAggregate(p: Kprobe): boolean { return this.t.aggrList.has(p); }

  /** user probes at addr (members of an aggregate, or the probe itself) */
  probesAt(addr: bigint): readonly Kprobe[] { return this.t.probesAt(addr); }

  isRegistered(p: Kprobe): boolean { return this.t.registered.has(p); }

  kindOf(p: Kprobe): ProbeKind { return this.t.kinds.get(p) ?? 'k'; }

  /** @internal kretprobes/jprobes mark their kprobe's kind */
  setKind(p: Kprobe, k: ProbeKind): void { this.t.kinds.set(p, k); this.hits.kindChanged(); }

  /** registered user probes, ascending by address then table order (debugfs list order) */
  listEntries(): { addr: bigint; probe: Kprobe; aggregate: Kprobe | null }[] { return this.t.listEntries(); }

  /**
   * "symbol+0xoff" for an address (%pS): the engine's own code by its
   * registered name (codeRegistry.ts: kretprobe_trampoline+0x0, ...),
   * else kallsyms, else its hex value.
   */
  where(addr: bigint): string {
    const own = this.code.symbolize(addr);
    if (own !== undefined) return own;
    const r = this.kernel.image.symbols.resolve(addr);
    return r ? `${r.sym.name}+0x${r.offset.toString(16)}` : hex(addr);
  }

  /** the registered probe (table entry) whose instruction slot starts at `slot` */
  probeBySlot(slot: bigint): Kprobe | undefined { return this.t.probeBySlot(slot); }

  /** the nested-call return stub (0n until the first callKernelFunction) */
  nestedReturnStub(): bigint { return this.nested.stub(); }

  // ------------------------------------------- the debugger in handler code (handlerOnCpu.ts)

  /**
   * The debugger: whether a C handler at `fn` runs as ordinary code on the
   * CPU (it has a breakpoint in it) instead of a nested call. Set once, when
   * the debugger's probe manager is made.
   */
  runHandlerOnCpu?: (fn: bigint) => boolean;
  /**
   * The debugger: a probe hit while another probe's handler runs (a kprobes
   * reentry) that is the debugger's breakpoint stops instead of being missed
   * (kgdb's breakpoints are not kprobes); true when it is one.
   */
  debuggerReentry?: (p: Kprobe, regs: PtRegs) => boolean;
  /** the CPU whose int3 hit runs its pre_handlers now (-1: none): a C pre_handler may be run on it as ordinary code */
  onCpuHitCpu = -1;
  /** nested calls in progress (a stop cannot happen inside one) */
  get nestedCallDepth(): number { return this.nested.depth; }
  /** the int3 path after the pre_handlers: a deferred C pre_handler starts on the CPU (`then` gets its return value) */
  startHandlerOnCpu(cpu: Cpu, then: (ret: number) => void, below?: bigint): boolean { return this.capi?.onCpu.start(cpu, then, below) ?? false; }
  /**
   * Whether a C handler of p (or of a member of its aggregate) runs on the
   * CPU now: a detour's or ftrace trampoline's native entry then leaves the
   * hit to its template, whose callback can run a handler on the CPU.
   */
  handlersOnCpu(p: Kprobe): boolean {
    if (this.runHandlerOnCpu === undefined || !this.capi) return false;
    const capi = this.capi;
    return (this.t.aggrList.get(p) ?? [p]).some(kp => capi.handlersOnCpu(kp));
  }
  /** a handler call was just deferred on the CPU: its caller goes on in `after` (its return value) once it returns */
  chainHandlerOnCpu(cpu: Cpu, after: (ret: number) => number): boolean { return this.capi?.onCpu.chain(cpu, after) ?? false; }
  /** whether a module kretprobe's C return handler runs on the CPU (its instances then return through the breakpoint trampoline) */
  returnHandlerOnCpu(rp: Kretprobe): boolean { return this.capi?.returnHandlerOnCpu(rp) ?? false; }
  /** a hit whose pre_handlers failed: no deferred call */
  dropHandlerOnCpu(cpu: Cpu): void { this.capi?.onCpu.drop(cpu); }

  info(p: Kprobe): ProbeInfo {
    const addr = p.addr ?? 0n;
    return {
      id: p.id ?? 0, kind: this.kindOf(p), addr, where: this.where(addr),
      disabled: kprobeDisabled(p), gone: ((p.flags ?? 0) & KPROBE_FLAG_GONE) !== 0,
      optimized: p.addr !== undefined && this.t.registered.has(p) && this.optimizer.isOptimized(p.addr),
      ftrace: ((p.flags ?? 0) & KPROBE_FLAG_FTRACE) !== 0,
    };
  }

  /** debugfs `enabled`: true unless every probe was disarmed by the knob */
  get enabled(): boolean { return !this.t.allDisarmed; }

  // ------------------------------------------------------ text and arming (arming.ts)

  /**
   * Read code bytes as the debugger should show them: every armed probe's
   * original bytes put back (default), or the bytes really in memory
   * (patched = true: the breakpoints are visible).
   */
  readTextWithoutProbes(mem = this.kernel.mem, addr: bigint, len: number, opts: { patched?: boolean } = {}): Uint8Array {
    return this.arming.readTextWithoutProbes(mem, addr, len, opts);
  }

  isArmed(addr: bigint): boolean { return this.arming.isArmed(addr); }

  /** debugfs `enabled` knob: false disarms everything (probe states untouched), true re-arms all but [DISABLED] */
  setEnabled(on: boolean): void { this.arming.setEnabled(on); }

  // ---------------------------------------------------------- registration (registration.ts, addressChecks.ts)

  /** kprobe_addr(): resolve symbol_name+offset or addr+offset; -EINVAL / -ENOENT */
  resolveAddr(p: Kprobe): bigint | number { return resolveAddr(this, p); }

  /** kprobe_addr() and the function-entry rule of kretprobes / jprobes @internal (kretprobes.ts, jprobes.ts) */
  funcEntryAddr(p: Kprobe, kind: 'kretprobe' | 'jprobe', onEntry: (offset: bigint) => boolean): bigint | KprobeRegError {
    return funcEntryAddr(this, p, kind, onEntry);
  }

  /** within_kprobe_blacklist(): arch hook, then the image's NOKPROBE_SYMBOL list */
  withinKprobeBlacklist(addr: bigint): boolean { return withinKprobeBlacklist(this, addr); }

  /** register_kprobe(): 0 or -errno */
  registerKprobe(p: Kprobe): number {
    return errnoOf(this.registerKprobeResult(p));
  }

  /** register_kprobe() with the reason of a refusal (the debugger's message) */
  registerKprobeResult(p: Kprobe): KprobeRegResult { return this.registration.registerKprobeResult(p); }

  /** register_kprobes(): all or nothing */
  registerKprobes(kps: Kprobe[]): number { return this.registration.registerKprobes(kps); }

  /** unregister_kprobe(); an unregistered probe gets its addr cleared (as Linux does) */
  unregisterKprobe(p: Kprobe): void {
    this.unregisterKprobes([p]);
  }

  unregisterKprobes(kps: Kprobe[]): void { this.registration.unregisterKprobes(kps); }

  /** free the slots of probes removed while in use, once no CPU is inside them @internal (traps.ts) */
  collectGarbage(): void { this.registration.collectGarbage(); }

  private capi: KprobesCApi | null = null;
  /** the kprobes functions C modules call (register_kprobe & co.), made on first use */
  get cApi(): KprobesCApi { return this.capi ??= new KprobesCApi(this); }

  /** kill_kprobe() for every probe in [start, end): their code went away (module unload, init memory freed); how many */
  killKprobesIn(start: bigint, end: bigint): number {
    let n = 0;
    for (const a of new Set(this.listEntries().map(e => e.addr))) {
      if (a >= start && a < end && this.registration.killKprobe(a)) n++;
    }
    return n;
  }

  /** disable_kprobe(): 0 or -EINVAL */
  disableKprobe(p: Kprobe): number { return this.registration.disableKprobe(p); }

  /** enable_kprobe(): 0 or -EINVAL */
  enableKprobe(p: Kprobe): number { return this.registration.enableKprobe(p); }

  // kretprobes / jprobes (Linux API names)
  registerKretprobe(rp: Kretprobe): number { return errnoOf(this.kretprobes.register(rp)); }
  /** register_kretprobe() with the reason of a refusal */
  registerKretprobeResult(rp: Kretprobe): KprobeRegResult { return this.kretprobes.register(rp); }
  /** the registered kretprobe whose entry kprobe is kp (Linux: container_of(p, struct kretprobe, kp)) */
  kretprobeOf(kp: Kprobe): Kretprobe | undefined { return this.kretprobes.of(kp); }
  unregisterKretprobe(rp: Kretprobe): void { this.kretprobes.unregisterMany([rp]); }
  registerKretprobes(rps: Kretprobe[]): number { return this.kretprobes.registerMany(rps); }
  unregisterKretprobes(rps: Kretprobe[]): void { this.kretprobes.unregisterMany(rps); }
  enableKretprobe(rp: Kretprobe): number { return this.enableKprobe(rp.kp); }
  disableKretprobe(rp: Kretprobe): number { return this.disableKprobe(rp.kp); }
  registerJprobe(jp: Jprobe): number { return errnoOf(this.jprobes.register(jp)); }
  /** register_jprobe() with the reason of a refusal */
  registerJprobeResult(jp: Jprobe): KprobeRegResult { return this.jprobes.register(jp); }
  unregisterJprobe(jp: Jprobe): void { this.jprobes.unregisterMany([jp]); }
  registerJprobes(jps: Jprobe[]): number { return this.jprobes.registerMany(jps); }
  unregisterJprobes(jps: Jprobe[]): void { this.jprobes.unregisterMany(jps); }
  enableJprobe(jp: Jprobe): number { return this.enableKprobe(jp.kp); }
  disableJprobe(jp: Jprobe): number { return this.disableKprobe(jp.kp); }
  /**
   * jprobe_return(): ends the running jprobe handler (it never returns: it
   * throws, ~0.5 us of host time per call; an entry handler that simply
   * returns ends the same way and costs nothing).
   */
  jprobeReturn(): never { throw JPROBE_RETURN; }

  /**
   * Call a kernel function from a handler on the CPU that hit the probe
   * (probes hit inside are reentries: nmissed). Returns the return register.
   */
  callKernelFunction(cpu: Cpu, fn: bigint, args: readonly bigint[] = []): bigint {
    return this.nested.call(cpu, fn, args);
  }

  /** the kretprobe trampoline address new instances return to (the booster's when it is on) */
  get kretprobeTrampoline(): bigint { return this.kretprobes.trampoline; }

  // ------------------------------------------------------ the hit path (hitPath.ts)

  /** the probe (or an enabled aggregate member) has a post_handler @internal (traps.ts) */
  hasAnyPost(p: Kprobe): boolean { return this.hits.hasAnyPost(p); }

  /** kprobes_inc_nmissed_count() (and the hit log's warning: kernel.probeMissed) */
  incNmissed(p: Kprobe, cpu: number): void { this.hits.incNmissed(p, cpu); }

  /** the hit log's display name of a probe ("do_fork+0x0"; cached per probe) */
  probeName(p: Kprobe): string { return this.hits.names.get(p); }

  /** run a handler of probe `who`; a fault in it counts in nmissed (see hitPath.ts) */
  guarded<T>(who: Kprobe, regs: PtRegs, fn: () => T, fallback: T): T { return this.hits.guarded(who, regs, fn, fallback); }

  /** a handler of `who` threw `e`: fixed by its fault_handler, or the CPU oopses @internal (jprobes.ts) */
  handlerFailed(who: Kprobe, regs: PtRegs, e: unknown): void { this.hits.handlerFailed(who, regs, e); }

  /** a hit's pre_handler path (hit counted, event, guarded handler) @internal (traps.ts, ftrace.ts) */
  preHandlerHit(p: Kprobe, regs: PtRegs): number { return this.hits.preHandlerHit(p, regs); }

  /** after the single-step: HIT_SSDONE and the post_handler(s) @internal (traps.ts, ftrace.ts) */
  postHandlerHit(cur: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void { this.hits.postHandlerHit(cur, regs, kcb); }

  /** the control block back to idle @internal (traps.ts, ftrace.ts) */
  resetCurrent(kcb: KprobeCtlblk): void { this.hits.resetCurrent(kcb); }
}
