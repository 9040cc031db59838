/**
 * Jump optimization, the arch-neutral half (Linux kernel/kprobes.c
 * CONFIG_OPTPROBES part): which probes may be optimized now, the
 * optimizing queue and the delayed optimizer, unoptimization, the
 * `debug.kprobes_optimization` sysctl and the detour callback.
 *
 * Life of a probe address:
 *   - registration arms an ordinary breakpoint probe first; then the arch
 *     prepares the detour buffer (prepareOptimizedKprobe runs the safety
 *     checks on the whole function; a refusal is kept as the reason, see
 *     status()). Prepared addresses are reconsidered after every change.
 *   - it is queued when all temporary conditions hold: the sysctl is 1,
 *     kprobes are armed, the probe is enabled, no member has a
 *     post_handler, it is not a jprobe, and no other probe lies inside its
 *     region. While queued, a breakpoint hit resumes in the buffer's
 *     copied instructions (no single-step).
 *   - the optimizer writes `jmp rel32` over the region (textPoke) once the
 *     delay has passed: OPTIMIZE_DELAY_NS of emulated time after queueing,
 *     standing in for Linux's 5-jiffy delayed work + synchronize_rcu() +
 *     stop_machine(). The engine has no timer of its own: the optimizer
 *     runs at the first trap any CPU raises after the deadline (hypercalls
 *     and probe hits are traps), or at once through waitForOptimizer()
 *     (wait_for_kprobe_optimizer). An address where some CPU or some
 *     switched-out task is stopped inside the region (past its first
 *     byte) is postponed: writing the jump there would cut an instruction
 *     it is about to run (the job synchronize_rcu does in Linux).
 *   - when a condition stops holding (unregister, disable, a probe inside
 *     the region, a post_handler added, the sysctl set to 0, the debugfs
 *     knob) the probe is dequeued or unoptimized at once: the original
 *     bytes come back with the breakpoint in the first byte.
 * [OPTIMIZED] (KPROBE_FLAG_OPTIMIZED on the table entry) is set exactly
 * while the jump is written.
 */
import type { CpuContext } from '../arch/types';
import type { NativeEntryFrame } from '../cpu/interp';
import type { Task } from '../kernel/types';
import type { ArchOptimizedInsn, OptprobesArchHooks } from './archHooks';
import type { KprobeDescriber } from './describe';
import type { OptimizedCallback } from './optCallback';
import type { KprobesShared } from './parts';
import type { KprobeCtlblk } from './kprobe';
import type { PtRegs } from './ptRegs';
import { KPROBE_FLAG_OPTIMIZED, kprobeDisabled } from './kprobe';
import { mustVAddr, toVAddr, VAddr } from '../memory/address';
import { offsetFrom } from './codeRegistry';
import type { EngineCodeHandlers, InlineEntryStat, NativeEntryInfo } from './codeRegistry';
import { probeName } from './symbolize';
import { AddressSet, type ProbeTable } from './probeTable';

/** Delay between queueing and writing the jump, in emulated ns (Linux: 5 jiffies). */
export const OPTIMIZE_DELAY_NS = 10_000;

export type OptState = 'prepared' | 'queued' | 'optimized';

/** What the debugger / tests can ask about an address. */
export interface OptimizationStatus {
  /** 'none': no probe / cannot be optimized (see reason) */
  state: OptState | 'none';
  /** why the address is not optimized (permanent safety-check refusal or a temporary condition) */
  reason?: string;
  /** detoured region size and detour buffer, once prepared */
  size?: number;
  buffer?: bigint;
}

interface OptEntry {
  op: ArchOptimizedInsn;
  state: OptState;
  /** emulated ns at which a queued entry may be optimized */
  deadline: number;
}

/** A detour buffer's native entry: its probe address and the ip the handlers see (as a breakpoint hit shows it). */
export interface NativeEntry {
  readonly addr: bigint;
  /** addr as a VAddr (the probe table's number-keyed lookup) */
  readonly at: VAddr;
  readonly ip: VAddr;
}

/**
 * A native entry as the block translator knows it (its frame and the
 * handlers' ip), with its common hit in one piece: `fused` does what the
 * entry's breakpoint handler does for it inside the trap envelope
 * (traps.ts asTrap `fused`) when no debugger may stop in a handler, and
 * answers false, with nothing done, where the general path must decide.
 */
export interface FusedNativeRoute extends NativeEntryFrame {
  fused(regs: PtRegs, kcb: KprobeCtlblk): boolean;
}

/** best effort: the saved pc of a switched-out task (kernel tasks keep their context in `ctx`) */
interface TaskWithContext extends Task { ctx?: CpuContext }

export class Optimizer {
  private readonly entries = new Map<bigint, OptEntry>();
  /** the entries' addresses in order (overlay finds the regions a read overlaps by range) */
  private readonly entryAddrs = new AddressSet();
  /** the queued entries (Linux's optimizing_list): the optimizer's run looks at these only */
  private readonly queued = new Set<bigint>();
  private readonly refused = new Map<bigint, string>();
  private nextDeadline = Infinity;
  /** entries queued or optimized (detourFor answers without a lookup while there are none: every plain hit asks) */
  private detouring = 0;
  /** the largest detoured region prepared so far (bytes): how far back a change at an address can matter */
  private maxRegion = 1;
  /** maxRegion - 1 as a bigint: how far before an address the regions that may cover it start */
  private reachBack = 0n;
  /** debug.kprobes_optimization */
  private on = true;

  /** `callback`: what a detour buffer's callback runs (optimized_callback); `hooks`: the arch's optprobes hooks (none: no jump optimization) */
  constructor(
    private readonly shared: Pick<KprobesShared, 'kernel' | 'ctx' | 'code' | 'events'>,
    private readonly t: Pick<ProbeTable, 'table' | 'armed' | 'allDisarmed' | 'probesAt' | 'kindOf' | 'aggrList'>,
    private readonly describe: Pick<KprobeDescriber, 'where' | 'info'>,
    private readonly callback: Pick<OptimizedCallback, 'optimizedCallback' | 'nativeHit'>,
    readonly hooks: OptprobesArchHooks | undefined, readonly delayNs: number,
  ) {}

  get enabled(): boolean { return this.on; }

  /** sysctl debug.kprobes_optimization: 0 unoptimizes everything and stops new optimizations, 1 optimizes again */
  setEnabled(on: boolean): void {
    if (on === this.on) return;
    this.on = on;
    this.reconsider();
    this.shared.events.emit({ type: 'optimizationChanged', enabled: on });
  }

  /** A new probe address got its breakpoint: prepare its detour buffer (arch_prepare_optimized_kprobe). */
  prepare(addr: bigint): void {
    if (!this.hooks || this.entries.has(addr)) return;
    let r: ArchOptimizedInsn | string;
    try {
      r = this.hooks.prepareOptimizedKprobe(this.shared.ctx, addr);
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      r = `no room for a detour buffer (${e.message})`; // exec area exhausted
    }
    if (typeof r === 'string') { this.refused.set(addr, r); return; }
    this.refused.delete(addr);
    this.entries.set(addr, { op: r, state: 'prepared', deadline: 0 });
    this.entryAddrs.add(addr);
    if (r.size > this.maxRegion) { this.maxRegion = r.size; this.reachBack = BigInt(r.size - 1); }
    this.attachDetour(addr, r);
  }

  /**
   * The detour buffer's registered code gets its handlers while prepared:
   * its callback and native entry trap into optimized_callback, and it is
   * named after its probe (optprobe_detour[do_fork]+0x10). The handlers are
   * the optimizer's, shared by every buffer; what is the buffer's own is one
   * Detour (the code's data and its native entry).
   */
  private attachDetour(addr: bigint, op: ArchOptimizedInsn): void {
    const d = new Detour(this, addr, op);
    const h = this.detourHandlers ??= this.makeDetourHandlers();
    this.shared.code.attach(op.insn, { breakpoint: h.breakpoint, site: h.site, symbolize: h.symbolize, data: d, nativeEntry: op.nativeEntry === undefined ? undefined : d });
  }

  /** the handlers of every prepared detour buffer's code (made once: a probe keeps no closures of its own) */
  private detourHandlers: Required<Pick<EngineCodeHandlers, 'breakpoint' | 'site' | 'symbolize'>> | undefined;

  private makeDetourHandlers(): Required<Pick<EngineCodeHandlers, 'breakpoint' | 'site' | 'symbolize'>> {
    const kernel = this.shared.kernel, cb = this.callback;
    return {
      // a breakpoint hit compares VAddrs (every hit asks: no BigInt comparison); NaN (no native entry) equals nothing
      breakpoint: (cpu, regs, kcb, _a, code, at) => {
        const d = code.data as Detour;
        return (at === d.callbackV || at === d.at) && cb.optimizedCallback(cpu, regs, kcb, d.probe, at === d.at ? d.native : null);
      },
      site: (a, code) => {
        const op = (code.data as Detour).op;
        return a === op.callback || (op.nativeEntry !== undefined && a === op.nativeEntry) ? 'optprobeCallback' : 'none';
      },
      symbolize: (a, code) => `${code.symbol}[${probeName(kernel, (code.data as Detour).probe)}]${offsetFrom(a, code.start)}`,
    };
  }

  /** the kernel's breakpoint pc offset (a native entry's ip: where a breakpoint hit shows the handlers) */
  get bpPcOffset(): number { return this.shared.kernel.arch.breakpointPcOffset; }

  /** a detour buffer's native entry route: optimized_callback's common hit in one piece (a Detour asks when the translator first needs it) */
  detourRoute(native: NativeEntry): FusedNativeRoute {
    const cb = this.callback;
    return { kind: 'optprobe', ip: native.ip, fused: (regs, kcb) => cb.nativeHit(regs, kcb, native) };
  }

  /** A probe address that is never optimized (the reason is what status() reports). */
  refuse(addr: bigint, reason: string): void {
    if (!this.entries.has(addr)) this.refused.set(addr, reason);
  }

  /** The address lost its last probe (after unoptimize + disarm). The buffer is kept for an identical reuse. */
  release(addr: bigint): void {
    const e = this.entries.get(addr);
    if (e) {
      if (e.state === 'optimized') this.unoptimize(addr, e);
      this.shared.code.attach(e.op.insn, {}); // a kept buffer: owned and named, no callback
      if (e.state !== 'prepared') this.detouring--;
      this.entries.delete(addr);
      this.entryAddrs.delete(addr);
      this.queued.delete(addr);
    }
    this.refused.delete(addr);
  }

  /** Before a breakpoint is written at addr: unoptimize any optimized probe whose jump covers it. */
  unoptimizeCovering(addr: bigint): void {
    if (!this.hooks) return;
    // the prepared addresses in reach, in place (unoptimizing changes no entry address)
    const s = this.entryAddrs;
    for (let k = s.lowerBound(addr - this.reachBack); k < s.size; k++) {
      const a = s.at(k);
      if (a > addr) break;
      const e = this.entries.get(a) as OptEntry;
      if (a !== addr && e.state === 'optimized' && this.hooks.checkOptimizedKprobe(e.op, addr)) this.unoptimize(a, e);
    }
  }

  /** Unoptimize addr now (disarm, unregister): the jump replaced by the original bytes, breakpoint first. */
  unoptimizeAt(addr: bigint): void {
    const e = this.entries.get(addr);
    if (e?.state === 'optimized') this.unoptimize(addr, e);
    else if (e?.state === 'queued') this.setState(addr, e, 'prepared');
  }

  /** the detour to use on a breakpoint hit at addr (queued or optimized), setup_detour_execution */
  detourFor(addr: bigint): ArchOptimizedInsn | undefined {
    if (this.detouring === 0) return undefined;
    const e = this.entries.get(addr);
    return e && e.state !== 'prepared' ? e.op : undefined;
  }

  isOptimized(addr: bigint): boolean { return this.entries.get(addr)?.state === 'optimized'; }

  status(addr: bigint): OptimizationStatus {
    const e = this.entries.get(addr);
    if (!e) {
      const reason = !this.hooks ? `no jump optimization on ${this.shared.kernel.arch.name}`
        : this.refused.get(addr) ?? (this.t.table.get(addr) ? 'not prepared' : 'no probe at this address');
      return { state: 'none', reason };
    }
    const out: OptimizationStatus = { state: e.state, size: e.op.size, buffer: e.op.insn };
    if (e.state === 'prepared') out.reason = this.blocked(addr, e) ?? 'not queued';
    return out;
  }

  /** Original bytes under optimized jumps, for readTextWithoutProbes (the breakpoint byte is the core's). */
  overlay(out: Uint8Array, addr: bigint, len: number): void {
    const end = addr + BigInt(len);
    const bpLen = this.shared.kernel.arch.breakpointInsn.length;
    // in place (no array per read: registration reads the original bytes of every probed instruction)
    const set = this.entryAddrs;
    for (let k = set.lowerBound(addr - BigInt(this.maxRegion)); k < set.size; k++) {
      const a = set.at(k);
      if (a >= end) break;
      const e = this.entries.get(a) as OptEntry;
      if (e.state !== 'optimized') continue;
      const s = a + BigInt(bpLen);
      for (let i = 0; i < e.op.saved.length; i++) {
        const at = s + BigInt(i);
        if (at >= addr && at < end) out[Number(at - addr)] = e.op.saved[i];
      }
    }
  }

  /**
   * The temporary condition that keeps addr from being optimized, or
   * undefined when none; explain = false: a fixed text where the reason
   * would name an address (only whether it is blocked is asked).
   */
  private blocked(addr: bigint, e: OptEntry, explain = true): string | undefined {
    const t = this.t;
    if (!this.on) return 'debug.kprobes_optimization is 0';
    if (t.allDisarmed) return 'kprobes are disarmed (debugfs enabled = 0)';
    const ap = t.table.get(addr);
    if (!ap || !t.armed.has(addr)) return 'the probe is not armed';
    if (kprobeDisabled(ap)) return 'the probe is disabled';
    // the members (an aggregate's list, or the probe itself), without an array or a closure per ask
    const list = t.aggrList.get(ap);
    if (list === undefined ? !!ap.post_handler : list.some(k => !!k.post_handler)) return 'the probe has a post_handler';
    if (list === undefined ? t.kindOf(ap) === 'j' : list.some(k => t.kindOf(k) === 'j')) return 'jprobes are not optimized';
    const hooks = this.hooks as OptprobesArchHooks;
    // the table's VAddr keys: a probe at every byte of the region is asked without a BigInt per byte
    const v = toVAddr(addr);
    for (let i = 1; i < e.op.size; i++) {
      if (v !== null ? t.table.byV.get(v + i) === undefined : !t.table.get(addr + BigInt(i))) continue;
      const other = addr + BigInt(i);
      if (hooks.checkOptimizedKprobe(e.op, other)) return explain ? `another probe at ${this.describe.where(other)} is inside the region` : 'another probe is inside the region';
    }
    return undefined;
  }

  /** Re-evaluate every prepared address: queue, dequeue or unoptimize as the conditions say. */
  reconsider(): void {
    for (const [a, e] of this.entries) this.reconsiderEntry(a, e);
  }

  /**
   * Re-evaluate only the addresses a change at `addr` can affect: addr
   * itself and every prepared region that covers it (a probe registered,
   * removed, enabled or disabled there). Registration stays linear in the
   * number of probes; a global change (the sysctl, the enabled knob) uses
   * reconsider().
   */
  reconsiderNear(addr: bigint): void {
    // the prepared addresses in reach, ascending (a binary search, not a lookup per byte), walked in place:
    // reconsidering changes no entry address
    const s = this.entryAddrs;
    for (let k = s.lowerBound(addr - this.reachBack); k < s.size; k++) {
      const a = s.at(k);
      if (a > addr) break;
      const e = this.entries.get(a) as OptEntry;
      if (a + BigInt(e.op.size) > addr) this.reconsiderEntry(a, e);
    }
  }

  private reconsiderEntry(a: bigint, e: OptEntry): void {
    const want = this.blocked(a, e, false) === undefined;
    if (want && e.state === 'prepared') {
      this.setState(a, e, 'queued');
      e.deadline = Number(this.shared.kernel.timeNs()) + this.delayNs;
      this.nextDeadline = Math.min(this.nextDeadline, e.deadline);
    } else if (!want && e.state === 'queued') {
      this.setState(a, e, 'prepared');
    } else if (!want && e.state === 'optimized') {
      this.unoptimize(a, e);
    }
  }

  /** Called on every trap: run the optimizer once its deadline has passed. */
  poll(): void {
    if (this.nextDeadline === Infinity) return;
    if (Number(this.shared.kernel.timeNs()) < this.nextDeadline) return;
    this.run(false);
  }

  /** wait_for_kprobe_optimizer(): optimize every queued probe now (where no CPU is inside its region). */
  waitForOptimizer(): void {
    this.run(true);
  }

  private run(force: boolean): void {
    const now = Number(this.shared.kernel.timeNs());
    const due: [bigint, OptEntry][] = [];
    let next = Infinity;
    const pcs = this.stoppedPcs();
    for (const a of this.queued) {
      const e = this.entries.get(a) as OptEntry;
      const inside = pcs.some(pc => pc > a && pc < a + BigInt(e.op.size));
      if ((force || e.deadline <= now) && !inside && this.blocked(a, e, false) === undefined) due.push([a, e]);
      else next = Math.min(next, inside ? now + 1 : e.deadline);
    }
    this.nextDeadline = next;
    if (due.length === 0 || !this.hooks) return;
    this.hooks.optimizeKprobes(this.shared.ctx, due.map(([, e]) => e.op));
    for (const [a, e] of due) {
      this.setState(a, e, 'optimized');
      const ap = this.t.table.get(a);
      if (ap) ap.flags = (ap.flags ?? 0) | KPROBE_FLAG_OPTIMIZED;
      this.emit('optimized', a);
    }
  }

  private setState(addr: bigint, e: OptEntry, state: OptState): void {
    this.detouring += (state !== 'prepared' ? 1 : 0) - (e.state !== 'prepared' ? 1 : 0);
    e.state = state;
    if (state === 'queued') this.queued.add(addr);
    else this.queued.delete(addr);
  }

  private unoptimize(addr: bigint, e: OptEntry): void {
    (this.hooks as OptprobesArchHooks).unoptimizeKprobe(this.shared.ctx, e.op);
    this.setState(addr, e, 'prepared');
    const ap = this.t.table.get(addr);
    if (ap) ap.flags = (ap.flags ?? 0) & ~KPROBE_FLAG_OPTIMIZED;
    this.emit('unoptimized', addr);
  }

  private emit(type: 'optimized' | 'unoptimized', addr: bigint): void {
    if (!this.shared.events.active) return; // no listener: no ProbeInfo to build
    const ap = this.t.table.get(addr);
    if (!ap) return;
    for (const p of this.t.probesAt(addr)) this.shared.events.emit({ type, probe: this.describe.info(p) });
  }

  /** pcs of the CPUs and of switched-out tasks (where code may resume) */
  private stoppedPcs(): bigint[] {
    const k = this.shared.kernel;
    const out = k.cpus.map(c => c.getPc());
    let scratch: ReturnType<typeof k.arch.createCpu> | null = null;
    for (const t of k.tasks() as readonly TaskWithContext[]) {
      if (t.state === 'exited' || !t.ctx || t.user) continue;
      if (k.current(t.cpu) === t) continue;
      scratch ??= k.arch.createCpu(-3, k.mem);
      try {
        scratch.restoreContext(t.ctx);
        out.push(scratch.getPc());
      } catch { /* not a context of this arch */ }
    }
    return out;
  }
}

/**
 * A prepared detour buffer's own part: the code registry's data for the
 * optimizer's shared handlers, and (where the arch has one) the buffer's
 * native entry. Its NativeEntry (what optimized_callback is given) and its
 * route (what the block translator is told) are made when first asked: most
 * buffers of a big probe file are never entered.
 */
class Detour implements NativeEntryInfo {
  /** the native entry (the buffer's first byte) and its VAddr; NaN: no native entry (equals nothing) */
  readonly addr: bigint;
  readonly at: VAddr;
  readonly callbackV: VAddr;
  private ne: NativeEntry | undefined = undefined;
  private r: FusedNativeRoute | undefined = undefined;

  constructor(private readonly owner: Optimizer, readonly probe: bigint, readonly op: ArchOptimizedInsn) {
    const entry = op.nativeEntry;
    this.addr = entry ?? op.insn;
    this.at = entry === undefined ? NaN : mustVAddr(entry);
    this.callbackV = mustVAddr(op.callback);
  }

  get stat(): InlineEntryStat { return 'inlineOptEntries'; }

  /** the probe's native entry as optimized_callback takes it (null: the arch has none) */
  get native(): NativeEntry | null {
    if (this.op.nativeEntry === undefined) return null;
    const p = this.probe;
    return (this.ne ??= { addr: p, at: mustVAddr(p), ip: mustVAddr(p + BigInt(this.owner.bpPcOffset)) });
  }

  get route(): FusedNativeRoute {
    return (this.r ??= this.owner.detourRoute(this.native as NativeEntry));
  }
}

/** a native entry's route has a fused common hit */
export function isFusedRoute(r: NativeEntryFrame): r is FusedNativeRoute {
  return typeof (r as Partial<FusedNativeRoute>).fused === 'function';
}
