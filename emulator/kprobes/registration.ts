/**
 * Registration (Linux kernel/kprobes.c): register_kprobe() with its
 * checks (address rules in addressChecks.ts), aggregate probes
 * (register_aggr_kprobe / add_new_kprobe), register_kprobes() all or
 * nothing, unregister_kprobe(s) (__unregister_kprobe_top / bottom, the
 * slot freed once no CPU is inside it), enable_kprobe / disable_kprobe.
 */
import { Errno } from '../kernel/abi';
import type { KprobesEngine } from './core';
import type { KprobeArming } from './arming';
import type { KprobeHitPath } from './hitPath';
import { checkAddressSafe, prepareFailure, resolveAddr, symbolic } from './addressChecks';
import {
  Kprobe, KPROBE_FLAG_DISABLED, KPROBE_FLAG_FTRACE, KPROBE_FLAG_GONE, KPROBE_FLAG_OPTIMIZED, kprobeDisabled,
} from './kprobe';
import type { ProbeTable } from './probeTable';
import { addrFailure, fieldFailure, KprobeRegResult, regFailed } from './regResult';
import { validateArray, validateKprobe } from './validate';

export class KprobeRegistration {
  constructor(
    private readonly engine: KprobesEngine, private readonly t: ProbeTable,
    private readonly arming: KprobeArming, private readonly hits: KprobeHitPath,
  ) {}

  /** register_kprobe() with the reason of a refusal (the debugger's message) */
  registerKprobeResult(p: Kprobe): KprobeRegResult {
    const v = validateKprobe(p);
    if (v) return fieldFailure(v, 'struct kprobe');
    if (this.t.registered.has(p)) return regFailed(-Errno.EINVAL, 'the probe is already registered'); // check_kprobe_rereg
    const addr = resolveAddr(this.engine, p);
    if (typeof addr === 'number') return addrFailure(p, addr);
    p.addr = addr;
    // check_ftrace_location(): an ftrace call site is probed at its first byte only
    const site = this.engine.ftrace.location(addr);
    if (site !== undefined && site !== addr) return regFailed(-Errno.EILSEQ, `${symbolic(this.engine, addr)} is not at an instruction boundary`);
    const safe = checkAddressSafe(this.engine, addr);
    if (safe) return safe;
    p.flags = ((p.flags ?? 0) & KPROBE_FLAG_DISABLED) | (site !== undefined ? KPROBE_FLAG_FTRACE : 0);
    p.nmissed = 0;
    p.hits = 0;
    const old = this.t.table.get(addr);
    if (old) {
      const r = this.registerAggrKprobe(old, p);
      if (r) return regFailed(r, `another jprobe is already registered at ${symbolic(this.engine, addr)}`);
    } else {
      // a breakpoint inside an optimized probe's jump: that probe falls back to its breakpoint first
      this.engine.optimizer.unoptimizeCovering(addr);
      let r: number;
      try {
        r = site !== undefined ? this.engine.ftrace.prepare(p) : this.engine.hooks.prepareKprobe(this.engine.ctx, p);
      } catch (e) {
        if (!(e instanceof RangeError)) throw e;
        r = -Errno.ENOMEM; // no room left for an instruction slot (exec area exhausted)
      }
      if (r) { this.engine.optimizer.reconsiderNear(addr); return prepareFailure(this.engine, addr, r, site !== undefined); }
      this.t.table.set(addr, p);
      if (!this.t.allDisarmed && !kprobeDisabled(p)) this.arming.armKprobe(p);
    }
    p.id = this.t.nextId++;
    this.t.registered.add(p);
    this.t.regAddr.set(p, addr);
    this.engine.events.emit({ type: 'registered', probe: this.engine.info(p) });
    if (!old) {
      if (site !== undefined) this.engine.optimizer.refuse(addr, 'an ftrace-based probe ([FTRACE]) is not optimized');
      else this.engine.optimizer.prepare(addr);
    }
    this.engine.optimizer.reconsiderNear(addr);
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
    if (this.engine.kindOf(p) === 'j') {
      if (list.some(k => this.engine.kindOf(k) === 'j')) return -Errno.EEXIST;
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
      const r = this.engine.registerKprobe(kps[i]);
      if (r < 0) {
        if (i > 0) this.engine.unregisterKprobes(kps.slice(0, i));
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
      const at = this.t.registered.has(p) ? this.t.addrOf(p) : undefined;
      if (this.unregisterKprobeTop(p) < 0) p.addr = undefined;
      else if (at !== undefined) touched.push(at);
    }
    for (const a of touched) this.engine.optimizer.reconsiderNear(a);
    this.collectGarbage();
  }

  /** __unregister_kprobe_top + bottom */
  private unregisterKprobeTop(p: Kprobe): number {
    if (!this.t.registered.has(p)) return -Errno.EINVAL;
    const addr = this.t.addrOf(p);
    const ap = this.t.table.get(addr) as Kprobe;
    const list = this.t.aggrList.get(ap);
    if (!list) {
      this.arming.disarmKprobe(ap);
      this.t.table.delete(addr);
      this.engine.optimizer.release(addr);
      this.removeKprobe(ap, true);
    } else {
      list.splice(list.indexOf(p), 1);
      if (list.length === 0) {
        this.arming.disarmKprobe(ap);
        this.t.table.delete(addr);
        this.engine.optimizer.release(addr);
        this.removeKprobe(ap, true);
      } else if (list.every(k => kprobeDisabled(k))) {
        ap.flags = (ap.flags ?? 0) | KPROBE_FLAG_DISABLED;
        this.arming.disarmKprobe(ap);
      }
    }
    this.t.registered.delete(p);
    this.t.regAddr.delete(p);
    p.flags = (p.flags ?? 0) & ~KPROBE_FLAG_OPTIMIZED;
    this.engine.events.emit({ type: 'unregistered', probe: this.engine.info(p) });
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
    this.engine.optimizer.unoptimizeCovering(addr);
    this.arming.disarmKprobe(ap);
    ap.flags = (ap.flags ?? 0) | KPROBE_FLAG_GONE;
    for (const k of this.t.aggrList.get(ap) ?? []) k.flags = (k.flags ?? 0) | KPROBE_FLAG_GONE;
    this.removeKprobe(ap);
    this.engine.events.emit({ type: 'stateChanged', probe: this.engine.info(ap) });
    return true;
  }

  /** arch_remove_kprobe, deferred while a CPU is still inside the probe (not again for a [GONE] probe: kill_kprobe did it) */
  private removeKprobe(ap: Kprobe, unregistering = false): void {
    if (unregistering && (ap.flags ?? 0) & KPROBE_FLAG_GONE) return;
    if ((ap.flags ?? 0) & KPROBE_FLAG_FTRACE) return; // no instruction slot
    if (this.inUse(ap)) this.t.pendingRemove.push(ap);
    else this.engine.hooks.removeKprobe(this.engine.ctx, ap);
  }

  private inUse(ap: Kprobe): boolean {
    const members = this.t.aggrList.get(ap) ?? [];
    for (const k of this.t.ctlblks) {
      if (!k) continue;
      for (const q of [k.current, k.prev.kp]) if (q && (q === ap || members.includes(q) || q.ainsn === ap.ainsn)) return true;
    }
    return this.cpuInSlot(ap);
  }

  /**
   * A CPU runs the probe's slot with no probe current: a boosted hit (the
   * copy and its jmp back run without a trap), e.g. a debugger stopped there.
   * Linux keeps such a slot until no task can be inside it (collect_garbage_slots
   * after synchronize_rcu_tasks); reusing it would overwrite the jmp under the CPU.
   */
  private cpuInSlot(ap: Kprobe): boolean {
    const a = ap.ainsn;
    if (a === undefined || a.mode !== 'slot' || a.insn === 0n) return false;
    const end = a.insn + BigInt(this.engine.slots.slotSize);
    for (const cpu of this.engine.kernel.cpus) {
      if (cpu.id < 0) continue;
      const pc = cpu.getPc();
      if (pc >= a.insn && pc < end) return true;
    }
    return false;
  }

  /** free the slots of probes removed while in use, once no CPU is inside them @internal (traps.ts) */
  collectGarbage(): void {
    if (this.t.pendingRemove.length === 0) return;
    const still: Kprobe[] = [];
    for (const ap of this.t.pendingRemove) {
      if (this.inUse(ap)) still.push(ap);
      else this.engine.hooks.removeKprobe(this.engine.ctx, ap);
    }
    this.t.pendingRemove = still;
  }

  /** disable_kprobe(): 0 or -EINVAL */
  disableKprobe(p: Kprobe): number {
    if (!this.t.registered.has(p)) return -Errno.EINVAL;
    if (kprobeDisabled(p)) return 0;
    p.flags = (p.flags ?? 0) | KPROBE_FLAG_DISABLED;
    const ap = this.t.table.get(this.t.addrOf(p)) as Kprobe;
    const list = this.t.aggrList.get(ap);
    if (list && list.every(k => kprobeDisabled(k))) ap.flags = (ap.flags ?? 0) | KPROBE_FLAG_DISABLED;
    if (kprobeDisabled(ap)) this.arming.disarmKprobe(ap);
    this.engine.optimizer.reconsiderNear(this.t.addrOf(p));
    this.engine.events.emit({ type: 'stateChanged', probe: this.engine.info(p) });
    return 0;
  }

  /** enable_kprobe(): 0 or -EINVAL */
  enableKprobe(p: Kprobe): number {
    if (!this.t.registered.has(p)) return -Errno.EINVAL;
    if ((p.flags ?? 0) & KPROBE_FLAG_GONE) return -Errno.EINVAL;
    if (!kprobeDisabled(p)) return 0;
    p.flags = (p.flags ?? 0) & ~KPROBE_FLAG_DISABLED;
    const ap = this.t.table.get(this.t.addrOf(p)) as Kprobe;
    ap.flags = (ap.flags ?? 0) & ~KPROBE_FLAG_DISABLED;
    if (!this.t.allDisarmed) this.arming.armKprobe(ap);
    this.engine.optimizer.reconsiderNear(this.t.addrOf(p));
    this.engine.events.emit({ type: 'stateChanged', probe: this.engine.info(p) });
    return 0;
  }
}
