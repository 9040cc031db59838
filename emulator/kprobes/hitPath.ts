/**
 * The handler invocation of the kprobes core (Linux kernel/kprobes.c):
 * aggr_pre_handler / aggr_post_handler / aggr_fault_handler for several
 * probes at one address, kprobes_inc_nmissed_count(), and the guarded
 * call of a handler (a fault in a handler counts in nmissed and may be
 * fixed by its fault_handler; anything else oopses the CPU). The trap
 * handlers (traps.ts, optCallback.ts) and the ftrace / kretprobe / jprobe
 * paths call these directly.
 */
import type { Trap } from '../arch/types';
import { fromVAddr, hex } from '../memory/address';
import { MemoryFault } from '../memory/memory';
import type { KprobesShared } from './parts';
import { HandlerOops, JprobeReturn } from './errors';
import { Kprobe, KprobeCtlblk, KprobeStatus, kprobeDisabled, ProbeKind } from './kprobe';
import type { ProbeTable } from './probeTable';
import type { PtRegs } from './ptRegs';
import { ProbeNameCache } from '../kernel/probeNameCache';
import type { HitKind } from '../kernel/types';

/** the hit log's kind of a kprobe of a ProbeKind */
export const HIT_KIND_OF: Readonly<Record<ProbeKind, HitKind>> = { k: 'kprobe', r: 'kretprobe-entry', j: 'jprobe' };

export class KprobeHitPath {
  /** the hit log's display name of a probe ("do_fork+0x0"), built at its first hit */
  readonly names: ProbeNameCache<Kprobe>;

  /** nesting depth of running jprobe entry handlers (jprobes.ts): jprobe_return() inside one is theirs to catch */
  jprobeDepth = 0;

  /** `where`: "symbol+0xoff" of an address (describe.ts) */
  constructor(
    private readonly shared: Pick<KprobesShared, 'kernel' | 'events' | 'percpu'>, private readonly t: ProbeTable,
    private readonly where: (addr: bigint) => string,
  ) {
    this.names = new ProbeNameCache<Kprobe>(p => where(p.addr ?? 0n));
  }

  /** aggr_pre_handler: every enabled member in list order; a non-zero return stops there */
  aggrPreHandler(ap: Kprobe, regs: PtRegs): number {
    const kcb = this.shared.percpu.ctlblk(regs.cpu.id);
    for (const kp of (this.t.aggrList.get(ap) ?? []).slice()) {
      if (kprobeDisabled(kp)) continue;
      kp.hits = (kp.hits ?? 0) + 1;
      if (this.shared.events.active) this.emitHit(kp, regs.cpu.id);
      this.logHit(kp, regs.cpu.id);
      if (kp.pre_handler) {
        kcb.instance = kp;
        const r = this.guardedPre(kp, kp.pre_handler, regs);
        kcb.instance = null;
        if (r) return 1;
      }
    }
    return 0;
  }

  aggrPostHandler(ap: Kprobe, regs: PtRegs, flags: number): void {
    const kcb = this.shared.percpu.ctlblk(regs.cpu.id);
    for (const kp of (this.t.aggrList.get(ap) ?? []).slice()) {
      if (kprobeDisabled(kp) || !kp.post_handler) continue;
      kcb.instance = kp;
      const post = kp.post_handler;
      this.guarded(kp, regs, () => post(kp, regs, flags), undefined);
      kcb.instance = null;
    }
  }

  /** aggr_fault_handler: only the member whose handler is running */
  aggrFaultHandler(regs: PtRegs, trapnr: number): number {
    const cur = this.shared.percpu.ctlblk(regs.cpu.id).instance;
    if (cur?.fault_handler) return cur.fault_handler(cur, regs, trapnr);
    return 0;
  }

  /** the probe (or an enabled aggregate member) has a post_handler */
  hasAnyPost(p: Kprobe): boolean {
    const list = this.t.aggrList.get(p);
    if (list === undefined) return !!p.post_handler;
    // no closure per hit (list.some would make one)
    for (let i = 0; i < list.length; i++) if (!kprobeDisabled(list[i]) && !!list[i].post_handler) return true;
    return false;
  }

  private emitHit(p: Kprobe, cpu: number): void {
    this.shared.events.emit({ type: 'hit', id: p.id ?? 0, addr: p.addr ?? 0n, cpu, kind: this.t.kindOf(p) });
  }

  /**
   * The hit log's record of a plain kprobe's hit (kernel.probeHit). A
   * kretprobe's or jprobe's kprobe is recorded by its own pre_handler
   * (kretprobes.ts: only when it got an instance; jprobes.ts).
   */
  private logHit(p: Kprobe, cpu: number): void {
    const k = this.shared.kernel;
    if (k.probeHit === undefined) return;
    if (p !== this.lastPlain) {
      if (p === this.lastOther) return;
      const kind = this.t.kinds.get(p);
      if (kind !== undefined && kind !== 'k') { this.lastOther = p; return; }
      this.lastPlain = p;
    }
    k.probeHit('kprobe', cpu, p.id ?? 0, p.addr ?? 0n, this.names.get(p));
  }
  /** the last probe logHit found to be a plain kprobe (skips the kind lookup on a hot probe's hits) */
  private lastPlain: Kprobe | null = null;

  /** the last probe logHit found not to be a plain kprobe (a kretprobe's or jprobe's: recorded by its own handler) */
  private lastOther: Kprobe | null = null;

  /** kretprobes / jprobes mark their kprobe's kind (the hit log records those hits from their own handlers) */
  setKind(p: Kprobe, k: ProbeKind): void {
    this.t.kinds.set(p, k);
    this.lastPlain = null;
    this.lastOther = null;
  }

  /**
   * kprobes_inc_nmissed_count(); each missed member is reported to the hit
   * log's warnings (kernel.probeMissed) with the probe being handled on
   * that CPU (the reentry's cause).
   */
  incNmissed(p: Kprobe, cpu: number): void {
    const list = this.t.aggrList.get(p);
    const kernel = this.shared.kernel;
    const kcb = kernel.probeMissed !== undefined ? this.shared.percpu.ctlblk(cpu) : undefined;
    const running = kcb ? kcb.instance ?? kcb.current : null;
    for (const k of list ?? [p]) {
      k.nmissed = (k.nmissed ?? 0) + 1;
      if (this.shared.events.active) this.shared.events.emit({ type: 'missed', id: k.id ?? 0, addr: k.addr ?? 0n, cpu });
      if (kernel.probeMissed !== undefined) {
        kernel.probeMissed({
          reason: 'reentry', kind: HIT_KIND_OF[this.t.kindOf(k)], cpu, probeId: k.id ?? 0, addr: k.addr ?? 0n,
          probe: this.names.get(k), missed: k.nmissed,
          runningProbeId: running ? running.id ?? 0 : undefined, runningProbe: running ? this.names.get(running) : undefined,
        });
      }
    }
  }

  /**
   * Run a handler of probe `who`. A MemoryFault thrown by the handler (an
   * access to emulated memory that faulted) is a fault in the handler: nmissed
   * counts it and who.fault_handler may handle it (the handler is then treated
   * as having returned `fallback`); otherwise the CPU oopses.
   */
  guarded<T>(who: Kprobe, regs: PtRegs, fn: () => T, fallback: T): T {
    try {
      return fn();
    } catch (e) {
      this.handlerFailed(who, regs, e);
      return fallback;
    }
  }

  /** guarded() for a pre_handler, without a closure per hit (the hot path of every probe hit) */
  private guardedPre(p: Kprobe, pre: NonNullable<Kprobe['pre_handler']>, regs: PtRegs): number {
    try {
      return pre(p, regs);
    } catch (e) {
      this.handlerFailed(p, regs, e);
      return 0;
    }
  }

  /**
   * A handler of `who` threw `e`: returns when its fault_handler handled a
   * MemoryFault (the caller goes on with its fallback value); otherwise
   * oopses the CPU and throws HandlerOops (control-flow signals rethrown).
   */
  handlerFailed(who: Kprobe, regs: PtRegs, e: unknown): void {
    if (e instanceof HandlerOops || (e instanceof JprobeReturn && this.jprobeDepth > 0)) throw e;
    if (e instanceof JprobeReturn) {
      const msg = `jprobe_return() called outside a jprobe handler (${this.where(who.addr ?? 0n)})`;
      this.shared.kernel.oops(regs.cpu, null, msg);
      throw new HandlerOops(msg);
    }
    const cpu = regs.cpu;
    const where = this.where(who.addr ?? 0n);
    if (e instanceof MemoryFault) {
      who.nmissed = (who.nmissed ?? 0) + 1;
      const trapnr = this.shared.kernel.arch.abi.trapNumbers.pageFault ?? 14;
      let handled = 0;
      if (who.fault_handler) {
        try { handled = who.fault_handler(who, regs, trapnr); } catch { handled = 0; }
      }
      if (handled) return;
      const trap: Trap = {
        kind: 'pageFault', pc: cpu.getPc(), addr: e.address, access: e.access, present: e.present, user: false,
      };
      const msg = `BUG: unable to handle page fault for address: ${hex(fromVAddr(e.addr))} in a kprobe handler (${where})`;
      this.shared.kernel.oops(cpu, trap, msg);
      throw new HandlerOops(msg);
    }
    const msg = `kprobe handler (${where}) failed: ${e instanceof Error ? e.message : String(e)}`;
    this.shared.kernel.oops(cpu, null, msg);
    throw new HandlerOops(msg);
  }

  /**
   * A hit's pre_handler path: the hit counted (aggregates count their
   * members), the event, the guarded handler. Throws HandlerOops when the
   * CPU oopsed.
   */
  preHandlerHit(p: Kprobe, regs: PtRegs): number {
    const aggr = this.t.aggrList.has(p);
    if (!aggr) {
      p.hits = (p.hits ?? 0) + 1;
      if (this.shared.events.active) this.emitHit(p, regs.cpu.id);
      this.logHit(p, regs.cpu.id);
    }
    const pre = p.pre_handler;
    if (!pre) return 0;
    return aggr ? pre(p, regs) : this.guardedPre(p, pre, regs);
  }

  /**
   * After the (real or emulated) single-step: HIT_SSDONE and the
   * post_handler(s), when the probe has any. A handler that oopsed the CPU
   * ends here.
   */
  postHandlerHit(cur: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void {
    if (!this.hasAnyPost(cur)) return;
    kcb.status = KprobeStatus.HIT_SSDONE;
    const post = cur.post_handler as NonNullable<Kprobe['post_handler']>;
    try {
      if (this.t.aggrList.has(cur)) post(cur, regs, 0);
      else {
        // guarded() without a closure per hit
        try { post(cur, regs, 0); } catch (e) { this.handlerFailed(cur, regs, e); }
      }
    } catch (e) {
      if (!(e instanceof HandlerOops)) throw e;
    }
  }

  /** the control block back to idle */
  resetCurrent(kcb: KprobeCtlblk): void {
    kcb.current = null;
    kcb.status = KprobeStatus.NONE;
    kcb.instance = null;
  }
}
