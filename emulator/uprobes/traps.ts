/**
 * The trap side of uprobes (Linux kernel/events/uprobes.c: handle_swbp,
 * handler_chain, pre_ssout, handle_singlestep, prepare_uretprobe,
 * handle_trampoline), on breakpoints and steps raised in user mode:
 *
 *   breakpoint at a probed address   the handlers run (ip = the probe
 *        address), uretprobe consumers hijack the return address, then the
 *        instruction is simulated (arch_uprobe_skip_sstep) or its copy is
 *        stepped in the process's XOL slot (arch_uprobe_pre_xol);
 *   end of the step (x86 TF, arm64 / riscv the step breakpoint after the
 *        slot)  arch_uprobe_post_xol puts ip back after the original;
 *   breakpoint at the trampoline     the return instance's ret_handlers run
 *        with ip = where the function really returns, and it goes there;
 *   a fault of the stepped copy      arch_uprobe_abort_xol: the signal is
 *        the original instruction's.
 *
 * A breakpoint at an address with no uprobe is the program's own unless
 * the bytes there are no longer a breakpoint (a uprobe removed after this
 * task hit it): then the instruction runs again (Linux's is_trap_at_addr).
 * Consumer handlers that throw are reported in the kernel log and counted
 * in the uprobe's nmissed; the probed task goes on.
 */
import type { Cpu, Trap } from '../arch/types';
import { PtRegs } from '../kprobes/ptRegs';
import type { UserProcess } from '../kernel/user/process';
import { hex, mustVAddr } from '../memory/address';
import type { UprobesEngine } from './core';
import { dispatchSignals } from '../kernel/user/procSyscalls';
import { MAX_URETPROBE_DEPTH, ReturnInstance, UPROBE_HANDLER_REMOVE, Uprobe, UprobeTask } from './uprobe';
import { ProbeNameCache } from '../kernel/probeNameCache';
import type { MissInfo } from '../kernel/types';

/** a return instance with its entry's virtual time (the hit log's latency) */
interface TimedReturn extends ReturnInstance {
  readonly entryNs: number;
}

export class UprobeTraps {
  private readonly regsByCpu: PtRegs[] = [];
  private readonly bpPcOffset: bigint;
  private depthWarned = false;
  /** the hit log's ids of the uprobes (one per (inode, offset), numbered at their first hit: 1, 2, ...) */
  private readonly ids = new Map<Uprobe, number>();
  private nextId = 1;
  /** the hit log's display names ("/bin/uprobed:0x1139") */
  private readonly names = new ProbeNameCache<Uprobe>(u => `${u.path}:0x${u.offset.toString(16)}`);

  constructor(private readonly e: UprobesEngine) {
    this.bpPcOffset = BigInt(e.kernel.arch.breakpointPcOffset);
  }

  /** the hit log's id of a uprobe (HitRecord.probeId of its uprobe and uretprobe hits) */
  idOf(u: Uprobe): number {
    let id = this.ids.get(u);
    if (id === undefined) { id = this.nextId++; this.ids.set(u, id); }
    return id;
  }

  /** the hit log's name of a uprobe */
  nameOf(u: Uprobe): string { return this.names.get(u); }

  /** a missed hit of u (its nmissed already counted) for the hit log's warnings */
  private missed(u: Uprobe, cpu: number, addr: bigint, kind: MissInfo['kind'], detail: string): void {
    this.e.kernel.probeMissed({ reason: 'other', kind, cpu, probeId: this.idOf(u), addr, probe: this.nameOf(u), missed: u.nmissed, detail });
  }

  private regs(cpu: Cpu): PtRegs {
    const r = this.regsByCpu[cpu.id];
    if (r && r.cpu === cpu) return r;
    return this.regsByCpu[cpu.id] = new PtRegs(cpu, this.e.kernel.arch);
  }

  /** the die-notifier (uprobe_notify_resume's callers): true when the trap was uprobes' */
  onTrap(cpu: Cpu, trap: Trap): boolean {
    // most traps (system calls, a kernel's own faults) are none of uprobes' business: decide by kind first
    const k = trap.kind;
    const fault = k === 'pageFault' || k === 'generalProtection' || k === 'undefined' || k === 'divide';
    if ((k !== 'breakpoint' && k !== 'singleStep' && !fault) || !cpu.userMode) return false;
    const task = this.e.kernel.currentTask(cpu.id);
    const proc = task && this.e.kernel.processes.get(task.pid);
    if (!proc) return false;
    // a task stepping a copy has its uprobe_task; the others only need one at a breakpoint
    const ut = this.e.peekUtask(proc.pid);
    const stepping = ut !== undefined && ut.state === 'sstep' && ut.active !== null;
    if (k === 'breakpoint') {
      const addr = trap.pc - this.bpPcOffset;
      if (stepping && this.e.hooks.xolDone(ut.active!.arch, ut, 'breakpoint', addr)) return this.handleSinglestep(cpu, proc, ut);
      const xol = this.e.xolOf(proc.mm);
      if (xol && addr === xol.trampoline) return this.handleTrampoline(cpu, proc);
      return this.handleSwbp(cpu, proc, addr);
    }
    if (!stepping) return false;
    if (k === 'singleStep') {
      return this.e.hooks.xolDone(ut.active!.arch, ut, 'singleStep', trap.pc) && this.handleSinglestep(cpu, proc, ut);
    }
    // the stepped copy faulted
    if (trap.pc >= ut.slot && trap.pc < ut.slot + BigInt(this.e.hooks.xolSlotBytes)) return this.abortXol(cpu, proc, ut, trap);
    return false;
  }

  /** the copy stepped or faulted: its slot back, the task running again; the uprobe that was stepped */
  private endXol(proc: UserProcess, ut: UprobeTask): Uprobe {
    const u = ut.active as Uprobe;
    this.e.xolOf(proc.mm)?.putSlot(ut.slot);
    ut.state = 'running';
    ut.active = null;
    return u;
  }

  /** handle_swbp */
  private handleSwbp(cpu: Cpu, proc: UserProcess, addr: bigint): boolean {
    const mm = proc.mm;
    const u = this.e.at(mm, addr);
    if (!u) {
      // is_trap_at_addr: not ours any more (removed after the hit): run the instruction again
      const swbp = this.e.hooks.swbpInsn;
      try {
        const now = mm.readBytes(mustVAddr(addr), swbp.length);
        if (!now.every((b, i) => b === swbp[i])) { cpu.setPc(addr); return true; }
      } catch { /* unmapped: not ours */ }
      return false;
    }
    const regs = this.regs(cpu);
    const ut = this.e.utask(proc.pid);
    const ins = u.insertions.get(mm)?.get(addr);
    this.e.stats.hits++;
    u.hits++;
    if (ins) ins.hits++;
    regs.ip = addr; // handlers (and a restart) see the probe address
    let skip = false;
    ut.earlyHit = false;
    if (!u.disabled) skip = this.handlerChain(u, regs, proc, ut, addr, ins?.early === true);
    if (skip || regs.ip !== addr) { ut.earlyHit = false; return true; } // a handler moved ip: no step
    if (u.arch.mode === 'simulate') {
      this.e.hooks.skipSstep(u.arch, regs, addr);
      this.e.stats.simulated++;
      this.earlyPost(u, regs, ut);
      return true;
    }
    // pre_ssout
    const xol = this.e.xolArea(proc);
    const slot = xol?.getSlot(mm, at => this.e.hooks.copyIxol(u.arch, at, addr), ins ?? u) ?? null;
    if (!xol || slot === null) {
      u.nmissed++;
      this.missed(u, cpu.id, addr, 'uprobe', 'no execute-out-of-line slot');
      this.e.kernel.warn(cpu.id, `uprobes: ${proc.task.comm}[${proc.pid}]: no execute-out-of-line slot for ${u.path}:0x${u.offset.toString(16)}`);
      return false;
    }
    ut.state = 'sstep';
    ut.active = u;
    ut.vaddr = addr;
    ut.slot = slot;
    ut.saved = {};
    this.e.hooks.preXol(u.arch, regs, ut);
    this.e.stats.xolSteps++;
    return true;
  }

  /**
   * handler_chain: the early probe's pre_handler (where it is inserted),
   * then every consumer's handler; uretprobe consumers hijack the return.
   * Returns true when the early pre_handler asked to skip the step.
   */
  private handlerChain(u: Uprobe, regs: PtRegs, proc: UserProcess, ut: UprobeTask, addr: bigint, early: boolean): boolean {
    let skip = false;
    if ((early && u.early) || u.consumers.some(uc => uc.handler !== undefined)) {
      this.e.kernel.probeHit('uprobe', regs.cpu.id, this.idOf(u), addr, this.nameOf(u));
    }
    if (early && u.early) {
      const p = u.early;
      p.hits = (p.hits ?? 0) + 1;
      ut.earlyHit = true;
      if (p.pre_handler) skip = this.guard(u, regs, () => p.pre_handler?.(p, regs) ?? 0) !== 0;
    }
    let remove = u.consumers.length > 0;
    let wantsReturn = false;
    for (const uc of [...u.consumers]) {
      let rc = 0;
      if (uc.handler) rc = this.guard(u, regs, () => uc.handler?.(uc, regs) ?? 0);
      if (uc.ret_handler) wantsReturn = true;
      if (!(rc & UPROBE_HANDLER_REMOVE)) remove = false;
    }
    if (wantsReturn) this.prepareUretprobe(u, regs, proc, ut, addr);
    if (remove && !this.e.wantsModern(u, proc)) {
      // unapply_uprobe (Linux 6.12: only when the filters, asked again, want no breakpoint in this process)
      for (const ins of [...(u.insertions.get(proc.mm)?.values() ?? [])]) this.e.uninstall(u, ins, 'modern');
      this.e.stats.removedByHandler++;
      this.e.changed();
    }
    return skip;
  }

  /** run a handler: a throw is reported and counted as missed */
  private guard(u: Uprobe, regs: PtRegs, run: () => number): number {
    try {
      return run();
    } catch (err) {
      u.nmissed++;
      this.e.kernel.warn(regs.cpu.id, `uprobes: a handler of ${u.path}:0x${u.offset.toString(16)} failed: ${err instanceof Error ? err.message : String(err)}`);
      return 0;
    }
  }

  private earlyPost(u: Uprobe, regs: PtRegs, ut: UprobeTask): void {
    const p = u.early;
    if (ut.earlyHit && p?.post_handler) this.guard(u, regs, () => { p.post_handler?.(p, regs, 0); return 0; });
    ut.earlyHit = false;
  }

  /** handle_singlestep: the copy ran; back to the original code */
  private handleSinglestep(cpu: Cpu, proc: UserProcess, ut: UprobeTask): boolean {
    const regs = this.regs(cpu);
    this.e.hooks.postXol((ut.active as Uprobe).arch, regs, ut);
    const u = this.endXol(proc, ut);
    this.earlyPost(u, regs, ut);
    // signals held back during the step (uprobe_deny_signal) are acted on now
    if (proc.signals.hasDeliverable()) dispatchSignals(this.e.kernel, proc, cpu);
    return true;
  }

  /** the stepped copy faulted: the original instruction's fault (the early fault_handler may fix it) */
  private abortXol(cpu: Cpu, proc: UserProcess, ut: UprobeTask, trap: Trap): boolean {
    const regs = this.regs(cpu);
    this.e.hooks.abortXol((ut.active as Uprobe).arch, regs, ut);
    const u = this.endXol(proc, ut);
    const p = u.early;
    if (ut.earlyHit && p?.fault_handler) {
      ut.earlyHit = false;
      const trapnr = this.e.kernel.arch.abi.trapNumbers[trap.kind] ?? -1;
      if (this.guard(u, regs, () => p.fault_handler?.(p, regs, trapnr) ?? 0)) return true;
    }
    ut.earlyHit = false;
    (trap as { pc: bigint }).pc = ut.vaddr; // the signal names the original instruction
    return false;
  }

  /** prepare_uretprobe: hijack the return address (nested deeper than MAX_URETPROBE_DEPTH: missed) */
  private prepareUretprobe(u: Uprobe, regs: PtRegs, proc: UserProcess, ut: UprobeTask, func: bigint): void {
    const xol = this.e.xolArea(proc);
    if (!xol) { u.nmissed++; return; }
    if (ut.returns.length >= MAX_URETPROBE_DEPTH) {
      u.nmissed++;
      this.missed(u, regs.cpu.id, func, 'uretprobe', `nested deeper than ${MAX_URETPROBE_DEPTH} uretprobes`);
      if (!this.depthWarned) {
        this.depthWarned = true;
        this.e.kernel.warn(regs.cpu.id, `uprobe: omit uretprobe due to nestedness limit pid/tgid=${proc.pid}/${proc.pid}`);
      }
      return;
    }
    const tramp = xol.trampoline;
    let { orig, stack } = this.e.hooks.hijackReturnAddr(regs, tramp);
    const chained = orig === tramp;
    if (chained) {
      const below = ut.returns[ut.returns.length - 1];
      if (!below) { u.nmissed++; return; }
      orig = below.origRetVaddr;
    }
    const ri: TimedReturn = { uprobe: u, func, origRetVaddr: orig, stack, chained, entryNs: this.e.kernel.clock.nowNs(regs.cpu.id) };
    ut.returns.push(ri);
  }

  /** handle_trampoline: run the ret_handlers of the instance returning now (and those chained to it) */
  private handleTrampoline(cpu: Cpu, proc: UserProcess): boolean {
    const ut = this.e.utask(proc.pid);
    const regs = this.regs(cpu);
    const sp = regs.sp;
    // instances deeper than this return were left by longjmp: gone (arch_uretprobe_is_alive)
    while (ut.returns.length && ut.returns[ut.returns.length - 1].stack < sp) ut.returns.pop();
    let ri = ut.returns.pop();
    if (!ri) {
      this.e.kernel.warn(cpu.id, `uprobes: ${proc.task.comm}[${proc.pid}]: return to the uretprobe trampoline at ${hex(regs.ip)} with no return instance`);
      return false;
    }
    regs.ip = ri.origRetVaddr;
    for (;;) {
      const u = ri.uprobe;
      this.e.stats.retHits++;
      if (!u.disabled && u.consumers.some(uc => uc.ret_handler !== undefined)) {
        const k = this.e.kernel;
        const entryNs = (ri as Partial<TimedReturn>).entryNs;
        k.probeHit('uretprobe', cpu.id, this.idOf(u), ri.func, this.nameOf(u), entryNs === undefined ? undefined : k.clock.nowNs(cpu.id) - entryNs);
      }
      if (!u.disabled) {
        for (const uc of [...u.consumers]) {
          const cur = ri;
          if (uc.ret_handler) this.guard(u, regs, () => uc.ret_handler?.(uc, cur.func, regs) ?? 0);
        }
      }
      if (!ri.chained) break;
      const next = ut.returns.pop();
      if (!next) break;
      ri = next;
    }
    return true;
  }
}
