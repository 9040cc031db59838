/**
 * Return probes (kernel/kprobes.c kretprobe part + the arch trampoline
 * handler). The entry kprobe (pre_handler_kretprobe) takes a free
 * kretprobe_instance, runs entry_handler, and lets the arch hook replace the
 * return address with the trampoline. Two trampolines exist: the classic
 * one, a small code block carrying a permanent breakpoint (Linux 2.6's
 * trampoline kprobe), and the kretprobe booster's (2006 paper, section
 * 6.2), arch code that saves the registers, calls the engine's return
 * handler path, restores the registers and returns to the real return
 * address — no exception. The booster is used when the arch provides it
 * (engine option kretprobeBooster, default on; setBoost()).
 *
 * Instances belong to tasks (LIFO per task; a CPU stands in for the task
 * while none is current) and are recycled when a task exits.
 */
import { Errno } from '../kernel/abi';
import type { Cpu } from '../arch/types';
import type { Task } from '../kernel/types';
import { fromVAddr, hex64, mustVAddr, VAddr } from '../memory/address';
import { defaultKprobeOnFuncEntry, type NativeHitBody } from './archHooks';
import type { FusedNativeRoute } from './optprobes';
import { funcEntryAddr } from './addressChecks';
import type { KprobeHitPath } from './hitPath';
import type { KernelData } from './kdata';
import type { HandlerOnCpuGate } from './onCpuGate';
import type { KprobesShared } from './parts';
import type { ProbeTable } from './probeTable';
import type { KprobeRegistration } from './registration';
import { HandlerOops } from './errors';
import { validateArray, validateKretprobe } from './validate';
import { errnoOf, fieldFailure, KprobeRegResult, regFailed } from './regResult';
import { Kprobe, KprobeCtlblk, KprobeStatus, Kretprobe, KretprobeInstance } from './kprobe';
import { entrySpOf, RpState, TaskInstances, TimedInstance } from './kretprobeInstance';
import { MissedCalls } from './kretprobeMissed';
import type { PtRegs } from './ptRegs';

/** a return walk waits for a return handler running on the CPU */
const ON_CPU = 2;

/** the symbol of both kretprobe trampolines (Linux: kretprobe_trampoline, __kretprobe_trampoline since 5.15) */
export const KRETPROBE_TRAMPOLINE_SYMBOL = 'kretprobe_trampoline';

/** header bytes before the instances' data in the emulated block */
const RP_HEADER = 16n;

export type TaskKey = Task | string;

/** What kretprobes work with: the parts they call, as narrow interfaces. */
export interface KretprobesDeps {
  readonly shared: Pick<KprobesShared, 'kernel' | 'hooks' | 'ctx' | 'slots' | 'code' | 'stats' | 'events' | 'percpu'>;
  /** writable kernel data (the instances' data areas) */
  readonly data: KernelData;
  readonly t: Pick<ProbeTable, 'isRegistered' | 'kindOf'>;
  readonly registration: Pick<KprobeRegistration, 'registerKprobeResult' | 'unregisterKprobes'>;
  /** the handler invocation: the kretprobe's kind, a failing handler, the hit log's names */
  readonly hits: Pick<KprobeHitPath, 'setKind' | 'handlerFailed' | 'names'>;
  readonly gate: HandlerOnCpuGate;
}

export class Kretprobes {
  /** the breakpoint-based trampoline (Linux 2.6: a kprobe on kretprobe_trampoline) */
  readonly int3Trampoline: bigint;
  private readonly int3TrampolineV: VAddr;
  /** the kretprobe booster's trampoline (save registers, handler path, restore, return); 0n without arch support */
  readonly boostTrampoline: bigint;
  /** address of the booster trampoline's callback into the engine (its template's) */
  readonly boostCallback: bigint;
  /** address of the booster trampoline's native entry (= the trampoline when the arch has one; else 0n) */
  readonly boostEntry: bigint;
  private readonly boostTrampolineV: VAddr;
  /** boostEntry as a VAddr (NaN without one) */
  readonly boostEntryV: VAddr;
  /** new instances return through the booster trampoline (when the arch has one) */
  private boost: boolean;
  private readonly state = new Map<Kretprobe, RpState>();
  /** struct kretprobe by its struct kprobe, while registered */
  private readonly byKprobe = new Map<Kprobe, Kretprobe>();
  /** per task: its live instances and the running one (kept while the task lives, emptied or not: no allocation per call) */
  private readonly byTask = new Map<TaskKey, TaskInstances>();
  /** the key standing for CPU n while no task is current there ("cpuN") */
  private readonly cpuKeys: string[] = [];
  /** calls that found no instance and may still be running (RpState.missedOut) */
  private readonly missed: MissedCalls;
  /** the trampoline's kprobe (not in the table, not listed) */
  readonly trampolineProbe: Kprobe;

  private readonly shared: KretprobesDeps['shared'];
  private readonly data: KernelData;
  private readonly t: KretprobesDeps['t'];
  private readonly registration: KretprobesDeps['registration'];
  private readonly hits: KretprobesDeps['hits'];
  private readonly gate: HandlerOnCpuGate;

  constructor(d: KretprobesDeps, boost = true) {
    ({ shared: this.shared, data: this.data, t: this.t, registration: this.registration, hits: this.hits, gate: this.gate } = d);
    const shared = this.shared;
    this.missed = new MissedCalls(shared);
    const code = shared.hooks.kretprobeTrampolineCode;
    const bp = shared.kernel.arch.breakpointInsn;
    // kretprobe_trampoline: a breakpoint on its first byte
    this.int3Trampoline = shared.slots.allocCode(Math.max(code.length, bp.length), KRETPROBE_TRAMPOLINE_SYMBOL, {
      breakpoint: (cpu, regs, kcb, addr) => {
        if (addr !== this.int3Trampoline) return false;
        shared.stats.kretTrampolineTraps++;
        return this.trampolineHit(cpu, regs, kcb);
      },
      site: addr => (addr === this.int3Trampoline ? 'kretprobeTrampoline' : 'none'),
    });
    const armed = code.slice();
    armed.set(bp, 0);
    shared.slots.write(this.int3Trampoline, armed);
    this.int3TrampolineV = mustVAddr(this.int3Trampoline);
    this.trampolineProbe = { addr: this.int3Trampoline, flags: 0, nmissed: 0, hits: 0, opcode: code.slice(0, bp.length), id: 0 };
    const bt = shared.hooks.optprobes?.kretprobeBoostTrampoline;
    if (bt) {
      this.boostTrampoline = shared.slots.allocCode(bt.code.length, KRETPROBE_TRAMPOLINE_SYMBOL);
      shared.slots.write(this.boostTrampoline, bt.code);
      this.boostCallback = this.boostTrampoline + BigInt(bt.callbackOffset);
      this.boostEntry = bt.nativeEntryOffset === undefined ? 0n : this.boostTrampoline + BigInt(bt.nativeEntryOffset);
    } else {
      this.boostTrampoline = 0n;
      this.boostCallback = 0n;
      this.boostEntry = 0n;
    }
    this.boostTrampolineV = mustVAddr(this.boostTrampoline);
    this.boostEntryV = this.boostEntry === 0n ? NaN : mustVAddr(this.boostEntry);
    this.boost = boost && this.boostTrampoline !== 0n;
    if (bt) {
      // the booster trampoline: its native entry (the address functions return to) and its callback
      const isOurs = (addr: bigint): boolean => addr === this.boostCallback || (addr === this.boostEntry && addr !== 0n);
      const boostCallbackV = mustVAddr(this.boostCallback);
      shared.code.attach(this.boostTrampoline, {
        // a hit compares VAddrs (boostEntryV is NaN without a native entry: it equals nothing)
        breakpoint: (cpu, regs, kcb, _addr, _code, at) => (at === boostCallbackV || at === this.boostEntryV) && this.boostedTrampolineHit(cpu, regs, kcb, at === this.boostEntryV),
        site: addr => (isOurs(addr) ? 'kretprobeBoostCallback' : 'none'),
        // the handlers' ip is the trampoline's (see boostedTrampolineHit)
        nativeEntry: this.boostEntry === 0n ? undefined
          : { addr: this.boostEntry, at: this.boostEntryV, stat: 'inlineKretEntries', route: this.boostRoute() },
      });
    }
  }

  /** the trampoline new instances return to (kretprobe_trampoline) */
  get trampoline(): bigint { return this.boost ? this.boostTrampoline : this.int3Trampoline; }
  private get trampolineV(): VAddr { return this.boost ? this.boostTrampolineV : this.int3TrampolineV; }

  /** whether the kretprobe booster is in use */
  get boosted(): boolean { return this.boost; }

  /** switch the kretprobe booster (live instances keep the trampoline they were given) */
  setBoost(on: boolean): void { this.boost = on && this.boostTrampoline !== 0n; }

  /** one of the trampolines */
  isTrampoline(a: bigint): boolean {
    return a === this.int3Trampoline || (this.boostTrampoline !== 0n && a === this.boostTrampoline);
  }

  private taskKey(cpu: number): TaskKey {
    return this.shared.kernel.current(cpu) ?? this.cpuKey(cpu);
  }

  private cpuKey(cpu: number): string {
    return this.cpuKeys[cpu] ??= `cpu${cpu}`;
  }

  /** a task's instances record (made at its first instance) */
  private instancesFor(key: TaskKey): TaskInstances {
    let t = this.byTask.get(key);
    if (t === undefined) { t = { list: [], running: undefined }; this.byTask.set(key, t); }
    return t;
  }

  /** live instances of a task (innermost last) */
  instancesOf(key: TaskKey): readonly KretprobeInstance[] {
    return this.byTask.get(key)?.list ?? [];
  }

  /** the instance whose return handler is running for a task (undefined: none) */
  runningOf(key: TaskKey): KretprobeInstance | undefined {
    return this.byTask.get(key)?.running;
  }

  /**
   * register_kretprobe(): 0 or -errno, and nothing changed on failure (rp,
   * its kprobe and the data area are as before): bad fields -EINVAL,
   * data_size > KRETPROBE_MAX_DATA_SIZE -E2BIG, instances that do not fit
   * the data area -ENOMEM, then the kprobe's own errors. A refusal carries its reason.
   */
  register(rp: Kretprobe): KprobeRegResult {
    const e = this.shared;
    const v = validateKretprobe(rp);
    if (v) return fieldFailure(v, 'struct kretprobe');
    if (this.t.isRegistered(rp.kp)) return regFailed(-Errno.EINVAL, 'the probe is already registered');
    const addr = funcEntryAddr(e, rp.kp, 'kretprobe', e.hooks.kprobeOnFuncEntry ?? defaultKprobeOnFuncEntry);
    if (typeof addr !== 'bigint') return addr;
    let n = rp.maxactive ?? 0;
    if (n <= 0) n = Math.max(10, 2 * e.kernel.cpus.length);
    const stride = ((rp.data_size ?? 0) + 7) & ~7;
    const size = Number(RP_HEADER) + stride * n;
    const noRoom = `${n} instances of ${stride} data bytes do not fit the kretprobe data area`;
    if (!Number.isSafeInteger(size)) return regFailed(-Errno.ENOMEM, noRoom);
    const base = this.data.tryAlloc(size, 16);
    if (base === null) return regFailed(-Errno.ENOMEM, noRoom);
    const st: RpState = { rp, free: [], dead: false, base, maxConcurrent: 0, missedOut: new Map(), missedCount: 0 };
    for (let i = n - 1; i >= 0; i--) {
      const ri = new TimedInstance(rp, base + RP_HEADER + BigInt(stride * i), st);
      st.free.push(ri);
    }
    const kp = rp.kp;
    const saved = { pre: kp.pre_handler, post: kp.post_handler, kind: this.t.kindOf(kp) };
    kp.pre_handler = (p, regs) => this.preHandlerKretprobe(st, p, regs);
    kp.post_handler = undefined;
    this.hits.setKind(kp, 'r');
    const r = this.registration.registerKprobeResult(kp);
    if (r) {
      kp.pre_handler = saved.pre;
      kp.post_handler = saved.post;
      this.hits.setKind(kp, saved.kind);
      this.data.free(base, size);
      return r;
    }
    rp.maxactive = n;
    rp.nmissed = 0;
    this.state.set(rp, st);
    this.byKprobe.set(kp, rp);
    return 0;
  }

  registerMany(rps: Kretprobe[]): number {
    if (!validateArray(rps)) return -Errno.EINVAL;
    for (let i = 0; i < rps.length; i++) {
      const r = errnoOf(this.register(rps[i]));
      if (r < 0) {
        if (i > 0) this.unregisterMany(rps.slice(0, i));
        return r;
      }
    }
    return 0;
  }

  unregisterMany(rps: Kretprobe[]): void {
    if (!Array.isArray(rps)) return;
    for (const rp of rps) {
      if (typeof rp !== 'object' || rp === null || typeof rp.kp !== 'object' || rp.kp === null) continue;
      if (!this.t.isRegistered(rp.kp)) { rp.kp.addr = undefined; continue; }
      this.registration.unregisterKprobes([rp.kp]);
      const st = this.state.get(rp);
      if (st) st.dead = true;
      this.state.delete(rp);
      this.byKprobe.delete(rp.kp);
    }
  }

  /** the registered struct kretprobe whose entry kprobe is kp (container_of in Linux) */
  of(kp: Kprobe): Kretprobe | undefined { return this.byKprobe.get(kp); }

  /** kretprobe object address shown in the BUG line */
  objectAddress(rp: Kretprobe): bigint { return this.state.get(rp)?.base ?? 0n; }

  /** free instances left (for tests and the debugger) */
  freeInstances(rp: Kretprobe): number { return this.state.get(rp)?.free.length ?? 0; }

  /** pre_handler_kretprobe() */
  private preHandlerKretprobe(st: RpState, p: Kprobe, regs: PtRegs): number {
    const rp = st.rp;
    const cpu = regs.cpu.id;
    const kernel = this.shared.kernel;
    const ri = st.free.pop();
    if (!ri) {
      rp.nmissed = (rp.nmissed ?? 0) + 1;
      if (this.shared.events.active) this.shared.events.emit({ type: 'missed', id: p.id ?? 0, addr: p.addr ?? 0n, cpu });
      this.missed.missed(st, kernel.current(cpu) ?? this.cpuKey(cpu), regs.sp);
      if (kernel.probeMissed !== undefined) {
        kernel.probeMissed({
          reason: 'maxactive', kind: 'kretprobe-entry', cpu, probeId: p.id ?? 0, addr: p.addr ?? 0n, probe: this.hits.names.get(p),
          missed: rp.nmissed, maxactive: rp.maxactive ?? 0, concurrency: st.maxConcurrent,
        });
      }
      return 0;
    }
    ri.task = kernel.current(cpu);
    ri.cpu = cpu;
    ri.entryNs = kernel.clock.nowNs(cpu);
    const spV = regs.spV();
    ri.entrySpV = spV;
    ri.entrySp = spV === spV ? 0n : regs.sp;
    const key = ri.task ?? this.cpuKey(cpu);
    this.missed.entered(st, key, ri);
    if (kernel.probeHit !== undefined) kernel.probeHit('kretprobe-entry', cpu, p.id ?? 0, p.addr ?? 0n, this.hits.names.get(p));
    const entry = rp.entry_handler;
    if (entry) {
      let r = 0;
      try {
        // hits.guarded() without a closure per hit
        try { r = entry(ri, regs); } catch (e) { this.hits.handlerFailed(p, regs, e); r = 0; }
      } catch (e) {
        st.free.push(ri);
        throw e;
      }
      // the entry handler runs on the CPU (the debugger has a breakpoint in it): the rest once it returns
      if (this.gate.mayDefer && this.gate.chain(regs.cpu, ret => { this.afterEntryHandler(p, ri, key, this.shared.percpu.regsOf(regs.cpu), ret); return 0; })) return 0;
      if (r) { this.recycle(ri); return 0; }
    }
    this.afterEntryHandler(p, ri, key, regs, 0);
    return 0;
  }

  /** pre_handler_kretprobe() after entry_handler (its return value `r`): the return hijacked, or the instance back */
  private afterEntryHandler(p: Kprobe, ri: TimedInstance, key: TaskKey, regs: PtRegs, r: number): void {
    if (r) { this.recycle(ri); return; }
    try {
      const int3 = this.int3Return(ri.rp);
      try {
        this.shared.hooks.prepareKretprobe(this.shared.ctx, ri, regs, int3 ? this.int3Trampoline : this.trampoline, int3 ? this.int3TrampolineV : this.trampolineV);
      } catch (e) { this.hits.handlerFailed(p, regs, e); }
    } catch (e) {
      this.recycle(ri);
      throw e;
    }
    this.instancesFor(key).list.push(ri);
  }

  private recycle(ri: TimedInstance): void {
    const st = ri.st;
    ri.retV = 0;
    ri.task = undefined;
    ri.stackV = 0;
    ri.cpu = -1;
    if (!st.dead) st.free.push(ri);
  }

  /** kprobe_flush_task(): a task exited; its live instances go back to their free lists */
  flushTask(t: Task): void {
    this.missed.flushTask(t);
    const rec = this.byTask.get(t);
    if (!rec) return;
    this.byTask.delete(t);
    for (const ri of rec.list) this.recycle(ri);
  }

  /** The breakpoint at the trampoline was hit (trampoline_probe_handler). */
  trampolineHit(cpu: Cpu, regs: PtRegs, kcb: KprobeCtlblk): boolean {
    if (this.gate.runHandlerOnCpu !== undefined) return this.trampolineHitOnCpu(cpu, regs, kcb, this.int3Trampoline, this.int3TrampolineV);
    if (this.trampolineHandlerAsCurrent(cpu, regs, kcb, this.int3Trampoline, this.int3TrampolineV)) this.resumeAtReturn(regs);
    return true;
  }

  private resumeAtReturn(regs: PtRegs): void {
    if (this.origV === this.origV) regs.setIpV(this.origV);
    else regs.ip = this.origB;
  }

  /**
   * trampolineHit with the debugger present: a C return handler it has a
   * breakpoint in runs on the CPU as ordinary code (handlerOnCpu.ts); the
   * walk through the task's instances goes on when it returns, and the
   * control block is put back once the walk is over.
   */
  private trampolineHitOnCpu(cpu: Cpu, regs: PtRegs, kcb: KprobeCtlblk, tramp: bigint, trampV: VAddr): boolean {
    const current = kcb.current, status = kcb.status, instance = kcb.instance;
    kcb.current = this.trampolineProbe;
    kcb.status = KprobeStatus.HIT_ACTIVE;
    let r: boolean | typeof ON_CPU = false;
    try {
      r = this.trampolineHandler(cpu, regs, kcb, tramp, trampV, true);
    } catch (e) {
      if (!(e instanceof HandlerOops)) throw e;
    } finally {
      if (r !== ON_CPU) { kcb.current = current; kcb.status = status; kcb.instance = instance; }
    }
    if (r === true) this.resumeAtReturn(regs);
    if (r !== ON_CPU) return true;
    // a return handler runs on the CPU: the walk's next steps come as each returns (closures only here)
    const then = (v: number): void => {
      if (v === ON_CPU) { this.gate.start(cpu, then); return; }
      kcb.current = current;
      kcb.status = status;
      kcb.instance = instance;
      if (v === 1) this.resumeAtReturn(this.shared.percpu.regsOf(cpu));
    };
    this.gate.start(cpu, then);
    return true;
  }

  /**
   * Whether the walk through the task's instances that returns now calls a
   * C return handler the debugger runs on the CPU (an instance that entered
   * through the booster's trampoline before the breakpoint was set).
   */
  private walkHasHandlerOnCpu(cpu: Cpu): boolean {
    const list = this.byTask.get(this.taskKey(cpu.id))?.list;
    if (list === undefined) return false;
    for (let i = list.length - 1; i >= 0; i--) {
      const ri = list[i] as TimedInstance;
      if (this.gate.returnHandlerOnCpu(ri.rp)) return true;
      if (!this.isTrampolineV(ri.retV)) break;
    }
    return false;
  }

  /** whether new instances of rp return through the breakpoint trampoline: the debugger runs its C return handler on the CPU */
  private int3Return(rp: Kretprobe): boolean {
    return this.gate.runHandlerOnCpu !== undefined && this.boost && this.gate.returnHandlerOnCpu(rp);
  }

  /**
   * The booster trampoline called the engine (its callback breakpoint, or
   * its native entry): the live registers become those at the trampoline
   * (pt_regs of the saved frame), the return handlers run, and the frame's
   * return slot gets the real return address the trampoline's `ret` goes
   * to. `native`: the arch does the trampoline's save and restore itself
   * and resumes at the real return address (when it cannot, the cpu runs
   * the trampoline's template, which calls back here non-native).
   */
  boostedTrampolineHit(cpu: Cpu, regs: PtRegs, kcb: KprobeCtlblk, native: boolean): boolean {
    const opt = this.shared.hooks.optprobes;
    if (!opt) return false;
    const ctx = this.shared.ctx;
    if (native) {
      // nothing saved yet (the function has just returned here, as to the breakpoint trampoline): a return handler the
      // debugger has a breakpoint in runs on the CPU, the walk as the breakpoint trampoline's
      if (this.gate.runHandlerOnCpu !== undefined && this.walkHasHandlerOnCpu(cpu)) return this.trampolineHitOnCpu(cpu, regs, kcb, this.boostTrampoline, this.boostTrampolineV);
      const enter = opt.enterNative, leave = opt.leaveNative;
      const nf = enter && leave ? enter(ctx, regs, this.boostTrampolineV, 'kretprobe') : null;
      if (!nf || !leave) return true; // the template runs as instructions and calls back at its callback
      if (this.nativeReturn(regs, kcb, nf.presaved)) leave(ctx, regs, nf, this.boostBody.returnTo);
      return true;
    }
    this.shared.stats.kretBoostCallbacks++;
    const frame = opt.enterCallback(ctx, regs, this.boostTrampoline, 'kretprobe');
    if (!this.trampolineHandlerAsCurrent(cpu, regs, kcb, this.boostTrampoline, this.boostTrampolineV)) return true; // the CPU oopsed
    opt.leaveCallback(ctx, regs, frame, this.origBig());
    return true;
  }

  /** the booster trampoline's native entry route: boostedTrampolineHit(native)'s common hit in one piece (boostedNativeHit) */
  private boostRoute(): FusedNativeRoute {
    return { kind: 'kretprobe', ip: this.boostTrampolineV, fused: (regs, kcb) => this.boostedNativeHit(regs, kcb) };
  }

  /**
   * boostedTrampolineHit(native) through the arch's one-piece native hit
   * (the trap envelope checked that no debugger may stop in a return
   * handler); false, with nothing done, when the arch cannot do it so.
   */
  private boostedNativeHit(regs: PtRegs, kcb: KprobeCtlblk): boolean {
    const nativeHit = this.shared.hooks.optprobes?.nativeHit;
    if (nativeHit === undefined) return false;
    this.bodyRegs = regs;
    this.bodyKcb = kcb;
    return nativeHit(regs, 'kretprobe', this.boostTrampolineV, this.boostBody);
  }

  /** what boostedNativeHit's hit runs between the save and the restore (the arch calls it once, synchronously) */
  private bodyRegs: PtRegs | null = null;
  private bodyKcb: KprobeCtlblk | null = null;
  private readonly boostBody: NativeHitBody = { runHandlers: () => this.boostedNativeBody(), returnTo: 0 };

  /** the return handlers of a fused booster hit */
  private boostedNativeBody(): boolean {
    const regs = this.bodyRegs as PtRegs, kcb = this.bodyKcb as KprobeCtlblk;
    this.bodyRegs = null;
    this.bodyKcb = null;
    return this.nativeReturn(regs, kcb, true);
  }

  /** a native booster return's handlers; false when the CPU oopsed (nothing to resume), else boostBody.returnTo is set */
  private nativeReturn(regs: PtRegs, kcb: KprobeCtlblk, presaved: boolean): boolean {
    const stats = this.shared.stats;
    stats.kretBoostCallbacks++;
    stats.nativeKretFrames++;
    if (presaved) stats.presavedKretFrames++;
    if (!this.trampolineHandlerAsCurrent(regs.cpu, regs, kcb, this.boostTrampoline, this.boostTrampolineV)) return false;
    this.boostBody.returnTo = this.origV === this.origV ? this.origV : this.origB;
    return true;
  }

  /**
   * trampolineHandler with the trampoline probe current on the control
   * block (restored after); false when the CPU oopsed or nothing is to be
   * resumed. No closure or saved object per return (a hot path).
   */
  private trampolineHandlerAsCurrent(cpu: Cpu, regs: PtRegs, kcb: KprobeCtlblk, tramp: bigint, trampV: VAddr): boolean {
    const current = kcb.current, status = kcb.status, instance = kcb.instance;
    kcb.current = this.trampolineProbe;
    kcb.status = KprobeStatus.HIT_ACTIVE;
    try {
      return this.trampolineHandler(cpu, regs, kcb, tramp, trampV) === true;
    } catch (e) {
      if (!(e instanceof HandlerOops)) throw e;
      return false;
    } finally {
      kcb.current = current;
      kcb.status = status;
      kcb.instance = instance;
    }
  }

  /**
   * Runs the return handlers; true: resume at the real return address
   * (origV), false: nothing to resume; ON_CPU (`onCpu`: the breakpoint
   * trampoline with the debugger present): a return handler was started on
   * the CPU, and the rest of the walk runs when it returns.
   */
  private trampolineHandler(cpu: Cpu, regs: PtRegs, kcb: KprobeCtlblk, tramp: bigint, trampV: VAddr, onCpu = false): boolean | typeof ON_CPU {
    const key = this.taskKey(cpu.id);
    // handlers see ip at the trampoline (as modern x86 does)
    regs.setIpV(trampV);
    return this.walkReturns(cpu, regs, kcb, tramp, key, this.byTask.get(key), 0, undefined, onCpu);
  }

  /** trampolineHandler's walk through the task's instances, from where it stands (origV, last) */
  private walkReturns(cpu: Cpu, regs: PtRegs, kcb: KprobeCtlblk, tramp: bigint, key: TaskKey, rec: TaskInstances | undefined,
    origV: VAddr, last: KretprobeInstance | undefined, onCpu: boolean): boolean | typeof ON_CPU {
    const list = rec === undefined ? [] : rec.list;
    const kernel = this.shared.kernel;
    while (list.length > 0) {
      const ri = list.pop() as TimedInstance;
      const st = ri.st;
      const handler = ri.rp.handler;
      if (st && !st.dead) {
        if (st.missedCount > 0) this.missed.returnedTo(st, key, entrySpOf(ri));
        if (kernel.probeHit !== undefined) {
          const kp = ri.rp.kp;
          kernel.probeHit('kretprobe-return', cpu.id, kp.id ?? 0, kp.addr ?? 0n, this.hits.names.get(kp), kernel.clock.nowNs(cpu.id) - ri.entryNs);
        }
      }
      if (st && !st.dead && handler && rec !== undefined) {
        const kp = ri.rp.kp;
        kcb.current = kp;
        const outer = rec.running;
        rec.running = ri;
        let deferred = false;
        if (onCpu) this.gate.hitCpu = cpu.id;
        try {
          // hits.guarded() without a closure per return
          try { handler(ri, regs); } catch (e) { this.hits.handlerFailed(kp, regs, e); }
          // the handler runs on the CPU (with ri running and kp current): the walk goes on when it returns
          deferred = onCpu && this.gate.chain(cpu, () => {
            rec.running = outer;
            kcb.current = this.trampolineProbe;
            try {
              const retV = ri.retV;
              const r = this.afterReturnHandler(cpu, ri);
              if (r === 'go on') return this.resultCode(this.walkReturns(cpu, this.shared.percpu.regsOf(cpu), kcb, tramp, key, rec, retV, ri, true));
              return this.resultCode(this.endWalk(cpu, tramp, retV, ri));
            } catch (e) {
              if (e instanceof HandlerOops) return 0;
              throw e;
            }
          });
        } finally {
          if (onCpu) this.gate.hitCpu = -1;
          if (!deferred) rec.running = outer;
        }
        if (deferred) return ON_CPU;
        kcb.current = this.trampolineProbe;
      }
      origV = ri.retV;
      last = ri;
      const r = this.afterReturnHandler(cpu, ri);
      if (r === 'end') break;
    }
    return this.endWalk(cpu, tramp, origV, last);
  }

  /** an instance whose return handler ran: recycled; 'go on' to the next instance or 'end' the walk (a BUG oopses: HandlerOops) */
  private afterReturnHandler(cpu: Cpu, ri: TimedInstance): 'go on' | 'end' {
    const origV = ri.retV;
    if (origV !== origV) this.origB = ri.ret_addr;
    const rpAddr = ri.st?.base ?? 0n;
    const kpAddr = ri.rp.kp.addr ?? 0n;
    this.recycle(ri);
    if (origV === 0 || !this.isTrampolineV(origV)) {
      if (origV === 0) this.bug(cpu, rpAddr, kpAddr);
      return 'end';
    }
    return 'go on';
  }

  /** the walk's end: the real return address to resume at (origV), or a BUG */
  private endWalk(cpu: Cpu, tramp: bigint, origV: VAddr, last: KretprobeInstance | undefined): boolean {
    if (!last) { this.bug(cpu, 0n, tramp); return false; }
    if (origV === 0) return false;
    if (this.isTrampolineV(origV)) { this.bug(cpu, this.objectAddress(last.rp), last.rp.kp.addr ?? 0n); return false; }
    this.origV = origV;
    return true;
  }

  /** a walk's result as the number handed on to the next on-CPU step */
  private resultCode(r: boolean | typeof ON_CPU): number { return r === ON_CPU ? ON_CPU : r ? 1 : 0; }

  /** the real return address the last trampolineHandler that returned true found (NaN: not canonical, origB holds it) */
  private origV: VAddr = 0;
  private origB = 0n;

  /** origV as a bigint */
  private origBig(): bigint {
    return this.origV === this.origV ? fromVAddr(this.origV) : this.origB;
  }

  /** isTrampoline for a VAddr (NaN: no) */
  private isTrampolineV(v: VAddr): boolean {
    return v === this.int3TrampolineV || (this.boostTrampoline !== 0n && v === this.boostTrampolineV);
  }

  /** kretprobe_assert(): no matching instance */
  private bug(cpu: Cpu, rpAddr: bigint, kpAddr: bigint): void {
    const line = `kretprobe BUG!: Processing kretprobe ${hex64(rpAddr)} @ ${hex64(kpAddr)}`;
    this.shared.kernel.printk(cpu.id, line, 'emulator');
    this.shared.kernel.oops(cpu, null, line);
    throw new HandlerOops(line);
  }
}
