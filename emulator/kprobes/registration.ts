/**
 * Registration (Linux kernel/kprobes.c): register_kprobe() with its
 * checks (address rules in addressChecks.ts), aggregate probes
 * (register_aggr_kprobe / add_new_kprobe), register_kprobes() all or
 * nothing, unregister_kprobe(s) (__unregister_kprobe_top / bottom; the
 * slot is freed by removal.ts once no CPU is inside it), kill_kprobe,
 * enable_kprobe / disable_kprobe.
 */
import { Errno } from '../kernel/abi';
import type { KprobeArming } from './arming';
import type { KprobeDescriber } from './describe';
import type { KprobesFtrace } from './ftrace';
import type { KprobeHitPath } from './hitPath';
import type { Optimizer } from './optprobes';
import type { KprobesShared } from './parts';
import type { KprobeRemoval } from './removal';
import { checkAddressSafe, prepareFailure, resolveAddr, symbolic } from './addressChecks';
import {
  Kprobe, KPROBE_FLAG_DISABLED, KPROBE_FLAG_FTRACE, KPROBE_FLAG_GONE, KPROBE_FLAG_OPTIMIZED, kprobeDisabled,
} from './kprobe';
import type { ProbeTable } from './probeTable';
import { addrFailure, errnoOf, fieldFailure, KprobeRegResult, regFailed } from './regResult';
import { validateArray, validateKprobe } from './validate';

/** What registration works with: the parts it calls, as narrow interfaces. */
export interface KprobeRegistrationDeps {
  readonly shared: Pick<KprobesShared, 'kernel' | 'hooks' | 'ctx' | 'code' | 'events'>;
  readonly t: ProbeTable;
  readonly arming: Pick<KprobeArming, 'armKprobe' | 'disarmKprobe'>;
  /** the aggregate probe's handlers */
  readonly hits: Pick<KprobeHitPath, 'aggrPreHandler' | 'aggrPostHandler' | 'aggrFaultHandler'>;
  readonly ftrace: Pick<KprobesFtrace, 'location' | 'prepare'>;
  readonly optimizer: Pick<Optimizer, 'unoptimizeCovering' | 'reconsiderNear' | 'refuse' | 'prepare' | 'release'>;
  readonly removal: Pick<KprobeRemoval, 'removeKprobe' | 'collectGarbage'>;
  readonly describe: Pick<KprobeDescriber, 'info'>;
}

export class KprobeRegistration {
  private readonly shared: KprobeRegistrationDeps['shared'];
  private readonly t: ProbeTable;
  private readonly arming: KprobeRegistrationDeps['arming'];
  private readonly hits: KprobeRegistrationDeps['hits'];
  private readonly ftrace: KprobeRegistrationDeps['ftrace'];
  private readonly optimizer: KprobeRegistrationDeps['optimizer'];
  private readonly removal: KprobeRegistrationDeps['removal'];
  private readonly describe: KprobeRegistrationDeps['describe'];

  constructor(d: KprobeRegistrationDeps) {
    ({ shared: this.shared, t: this.t, arming: this.arming, hits: this.hits, ftrace: this.ftrace, optimizer: this.optimizer,
      removal: this.removal, describe: this.describe } = d);
  }

  /** register_kprobe() with the reason of a refusal (the debugger's message) */
  registerKprobeResult(p: Kprobe): KprobeRegResult {
    const v = validateKprobe(p);
    if (v) return fieldFailure(v, 'struct kprobe');
    if (this.t.isRegistered(p)) return regFailed(-Errno.EINVAL, 'the probe is already registered'); // check_kprobe_rereg
    const addr = resolveAddr(this.shared, p);
    if (typeof addr === 'number') return addrFailure(p, addr);
    p.addr = addr;
    // check_ftrace_location(): an ftrace call site is probed at its first byte only
    const site = this.ftrace.location(addr);
    if (site !== undefined && site !== addr) return regFailed(-Errno.EILSEQ, `${symbolic(this.shared, addr)} is not at an instruction boundary`);
    const safe = checkAddressSafe(this.shared, addr);
    if (safe) return safe;
    p.flags = ((p.flags ?? 0) & KPROBE_FLAG_DISABLED) | (site !== undefined ? KPROBE_FLAG_FTRACE : 0);
    p.nmissed = 0;
    p.hits = 0;
    const old = this.t.table.get(addr);
    if (old) {
      const r = this.registerAggrKprobe(old, p);
      if (r) return regFailed(r, `another jprobe is already registered at ${symbolic(this.shared, addr)}`);
    } else {
      // a breakpoint inside an optimized probe's jump: that probe falls back to its breakpoint first
      this.optimizer.unoptimizeCovering(addr);
      let r: number;
      try {
        r = site !== undefined ? this.ftrace.prepare(p) : this.shared.hooks.prepareKprobe(this.shared.ctx, p);
      } catch (e) {
        if (!(e instanceof RangeError)) throw e;
        r = -Errno.ENOMEM; // no room left for an instruction slot (exec area exhausted)
      }
      if (r) { this.optimizer.reconsiderNear(addr); return prepareFailure(this.shared, addr, r, site !== undefined); }
      this.t.table.set(addr, p);
      if (!this.t.allDisarmed && !kprobeDisabled(p)) this.arming.armKprobe(p);
    }
    p.id = this.t.nextId++;
    this.t.regAddr.set(p, addr);
    if (this.shared.events.active) this.shared.events.emit({ type: 'registered', probe: this.describe.info(p) });
    if (!old) {
      if (site !== undefined) this.optimizer.refuse(addr, 'an ftrace-based probe ([FTRACE]) is not optimized');
      else this.optimizer.prepare(addr);
    }
    this.optimizer.reconsiderNear(addr);
    return 0;
  }

  /** register_aggr_kprobe(): a second probe at an address */
  private registerAggrKprobe(orig: Kprobe, p: Kprobe): number {
    let ap = orig;
    let list = this.t.aggrList.get(orig);
    if (!list) {
      // init_aggr_kprobe: ap takes orig's place in the table
      ap = {
        addr: orig.addr, flags: orig.flags ?? 0, nmissed: 0, hits: 0, opcode: orig.opcode, ainsn: orig.ainsn,
        pre_handler: (_kp, regs) => this.hits.aggrPreHandler(ap, regs),
        post_handler: (_kp, regs, fl) => this.hits.aggrPostHandler(ap, regs, fl),
        fault_handler: (_kp, regs, trapnr) => this.hits.aggrFaultHandler(regs, trapnr),
      };
      list = [orig];
      orig.flags = (orig.flags ?? 0) & ~KPROBE_FLAG_OPTIMIZED; // the aggregate carries [OPTIMIZED]
      this.t.aggrList.set(ap, list);
      this.t.table.set(orig.addr as bigint, ap);
    }
    // add_new_kprobe: at most one jprobe, kept last; others go first (list_add_rcu)
    if (this.t.kindOf(p) === 'j') {
      if (list.some(k => this.t.kindOf(k) === 'j')) return -Errno.EEXIST;
      list.push(p);
    } else list.unshift(p);
    p.opcode = ap.opcode;
    p.ainsn = ap.ainsn;
    if (kprobeDisabled(ap) && !kprobeDisabled(p)) {
      ap.flags = (ap.flags ?? 0) & ~KPROBE_FLAG_DISABLED;
      if (!this.t.allDisarmed) this.arming.armKprobe(ap);
    }
    return 0;
  }

  /** register_kprobes(): all or nothing */
  registerKprobes(kps: Kprobe[]): number {
    if (!validateArray(kps)) return -Errno.EINVAL;
    for (let i = 0; i < kps.length; i++) {
      const r = errnoOf(this.registerKprobeResult(kps[i]));
      if (r < 0) {
        if (i > 0) this.unregisterKprobes(kps.slice(0, i));
        return r;
      }
    }
    return 0;
  }

  unregisterKprobes(kps: Kprobe[]): void {
    if (!Array.isArray(kps)) return;
    const touched: bigint[] = [];
    for (const p of kps) {
      if (typeof p !== 'object' || p === null) continue;
      const at = this.t.isRegistered(p) ? this.t.addrOf(p) : undefined;
      if (this.unregisterKprobeTop(p) < 0) p.addr = undefined;
      else if (at !== undefined) touched.push(at);
    }
    for (const a of touched) this.optimizer.reconsiderNear(a);
    this.removal.collectGarbage();
  }

  /** __unregister_kprobe_top + bottom */
  private unregisterKprobeTop(p: Kprobe): number {
    if (!this.t.isRegistered(p)) return -Errno.EINVAL;
    const addr = this.t.addrOf(p);
    const ap = this.t.table.get(addr) as Kprobe;
    const list = this.t.aggrList.get(ap);
    if (!list) {
      this.arming.disarmKprobe(ap);
      this.t.table.delete(addr);
      this.optimizer.release(addr);
      this.removal.removeKprobe(ap, true);
    } else {
      list.splice(list.indexOf(p), 1);
      if (list.length === 0) {
        this.arming.disarmKprobe(ap);
        this.t.table.delete(addr);
        this.optimizer.release(addr);
        this.removal.removeKprobe(ap, true);
      } else if (list.every(k => kprobeDisabled(k))) {
        ap.flags = (ap.flags ?? 0) | KPROBE_FLAG_DISABLED;
        this.arming.disarmKprobe(ap);
      }
    }
    this.t.regAddr.delete(p);
    p.flags = (p.flags ?? 0) & ~KPROBE_FLAG_OPTIMIZED;
    if (this.shared.events.active) this.shared.events.emit({ type: 'unregistered', probe: this.describe.info(p) });
    return 0;
  }

  /**
   * kill_kprobe(): the code under a registered probe went away (its module
   * was unloaded, or the __init code it is in was freed). The probe and the
   * members of its aggregate are [GONE]: disarmed (its jump unoptimized),
   * never hit again, its instruction slot released; it stays listed until
   * unregistered (unregistering a gone probe does not touch the code).
   */
  killKprobe(addr: bigint): boolean {
    const ap = this.t.table.get(addr);
    if (!ap || (ap.flags ?? 0) & KPROBE_FLAG_GONE) return false;
    this.optimizer.unoptimizeCovering(addr);
    this.arming.disarmKprobe(ap);
    ap.flags = (ap.flags ?? 0) | KPROBE_FLAG_GONE;
    for (const k of this.t.aggrList.get(ap) ?? []) k.flags = (k.flags ?? 0) | KPROBE_FLAG_GONE;
    this.removal.removeKprobe(ap);
    if (this.shared.events.active) this.shared.events.emit({ type: 'stateChanged', probe: this.describe.info(ap) });
    return true;
  }

  /** disable_kprobe(): 0 or -EINVAL */
  disableKprobe(p: Kprobe): number {
    if (!this.t.isRegistered(p)) return -Errno.EINVAL;
    if (kprobeDisabled(p)) return 0;
    p.flags = (p.flags ?? 0) | KPROBE_FLAG_DISABLED;
    const ap = this.t.table.get(this.t.addrOf(p)) as Kprobe;
    const list = this.t.aggrList.get(ap);
    if (list && list.every(k => kprobeDisabled(k))) ap.flags = (ap.flags ?? 0) | KPROBE_FLAG_DISABLED;
    if (kprobeDisabled(ap)) this.arming.disarmKprobe(ap);
    this.optimizer.reconsiderNear(this.t.addrOf(p));
    if (this.shared.events.active) this.shared.events.emit({ type: 'stateChanged', probe: this.describe.info(p) });
    return 0;
  }

  /** enable_kprobe(): 0 or -EINVAL */
  enableKprobe(p: Kprobe): number {
    if (!this.t.isRegistered(p)) return -Errno.EINVAL;
    if ((p.flags ?? 0) & KPROBE_FLAG_GONE) return -Errno.EINVAL;
    if (!kprobeDisabled(p)) return 0;
    p.flags = (p.flags ?? 0) & ~KPROBE_FLAG_DISABLED;
    const ap = this.t.table.get(this.t.addrOf(p)) as Kprobe;
    ap.flags = (ap.flags ?? 0) & ~KPROBE_FLAG_DISABLED;
    if (!this.t.allDisarmed) this.arming.armKprobe(ap);
    this.optimizer.reconsiderNear(this.t.addrOf(p));
    if (this.shared.events.active) this.shared.events.emit({ type: 'stateChanged', probe: this.describe.info(p) });
    return 0;
  }
}
