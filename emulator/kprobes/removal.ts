/**
 * Removing a probe's instruction slot (Linux kernel/kprobes.c
 * arch_remove_kprobe after synchronize_rcu, collect_garbage_slots): the
 * slot of a probe unregistered (or killed) while a CPU is still inside it
 * is freed once no CPU is; the trap handlers ask after each hit.
 */
import type { Kprobe } from './kprobe';
import { KPROBE_FLAG_FTRACE, KPROBE_FLAG_GONE } from './kprobe';
import type { KprobesShared } from './parts';
import type { ProbeTable } from './probeTable';

export class KprobeRemoval {
  constructor(
    private readonly shared: Pick<KprobesShared, 'kernel' | 'hooks' | 'ctx' | 'slots'>,
    private readonly t: Pick<ProbeTable, 'aggrList' | 'ctlblks' | 'pendingRemove'>,
  ) {}

  /** arch_remove_kprobe, deferred while a CPU is still inside the probe (not again for a [GONE] probe: kill_kprobe did it) */
  removeKprobe(ap: Kprobe, unregistering = false): void {
    if (unregistering && (ap.flags ?? 0) & KPROBE_FLAG_GONE) return;
    if ((ap.flags ?? 0) & KPROBE_FLAG_FTRACE) return; // no instruction slot
    if (this.inUse(ap)) this.t.pendingRemove.push(ap);
    else this.shared.hooks.removeKprobe(this.shared.ctx, ap);
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
    const end = a.insn + BigInt(this.shared.slots.slotSize);
    for (const cpu of this.shared.kernel.cpus) {
      if (cpu.id < 0) continue;
      const pc = cpu.getPc();
      if (pc >= a.insn && pc < end) return true;
    }
    return false;
  }

  /** free the slots of probes removed while in use, once no CPU is inside them (the trap handlers call it after each hit) */
  collectGarbage(): void {
    if (this.t.pendingRemove.length === 0) return;
    const still: Kprobe[] = [];
    for (const ap of this.t.pendingRemove) {
      if (this.inUse(ap)) still.push(ap);
      else this.shared.hooks.removeKprobe(this.shared.ctx, ap);
    }
    this.t.pendingRemove = still;
  }
}
