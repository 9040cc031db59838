/**
 * Hardware breakpoints, the kernel half (Linux kernel/events/hw_breakpoint.c
 * with arch/<arch>/kernel/hw_breakpoint.c's exception handler): requests
 * from every user (register_kwatch, the debugger's data and hardware
 * breakpoints) are validated by the arch, given a debug register by the
 * shared allocator (allocator.ts) on every CPU, and programmed into the
 * CPUs' registers; the debug exception runs the holders' handlers.
 *
 * When a handler runs:
 *  - data, x86 (a trap after the access): at once, regs at the instruction
 *    after the access, the new value in memory;
 *  - data, arm64 (a fault before the access): as Linux's arm64 handler
 *    arranges it for a kernel watchpoint: the watchpoint is disabled, the
 *    access single-stepped, the watchpoint enabled again, then the
 *    handlers run, regs after the access;
 *  - execute: before the instruction (regs->ip = the address); the CPU
 *    then resumes without hitting again (x86 RF; arm64 disable, step,
 *    enable).
 * A hit while a handler of the same CPU runs is not reported (nmissed, as
 * kprobes counts reentry). A handler that throws is a handler fault: the
 * registration's fault callback may handle it, else the CPU oopses.
 * A single-step that completed with the same instruction (x86 DR6.BS with
 * Bn) is passed on as a single-step trap (the kprobes engine's).
 */
import type { Cpu, Trap } from '../arch/types';
import type { Kernel } from '../kernel/kernel';
import { Errno } from '../kernel/abi';
import { PtRegs } from '../kprobes/ptRegs';
import { hex, toVAddr } from '../memory/address';
import type { HwBpRequest, HwDebugArchHooks } from './archHooks';
import type { HwSlotMatch } from '../cpu/hwDebug';
import { DebugRegAllocator, HwBpHolder, HwBpOwner, HwBpPool } from './allocator';
import { ProbeNameCache } from '../kernel/probeNameCache';

export interface HwBpHit {
  readonly bp: HwBp;
  readonly cpu: Cpu;
  readonly regs: PtRegs;
  /** the debug register that fired (its number in its pool) and its name ("DR1") */
  readonly register: number;
  readonly registerName: string;
  /** the address the access used (arm64 FAR; x86 the matching access); an execute hit: the instruction */
  readonly addr: bigint;
  readonly access: 'read' | 'write' | 'exec';
  /** data watches: the watched bytes before the access (as last seen) and now */
  readonly oldValue?: Uint8Array;
  readonly newValue?: Uint8Array;
}

export interface HwBpCallbacks {
  /** the handler (kwatch_handler_t; the debugger's stop) */
  handler(hit: HwBpHit): void;
  /** a handler fault: true when handled (the kprobe fault_handler rule); otherwise the CPU oopses */
  fault?(hit: HwBpHit, err: unknown): boolean;
  /** the register was taken by a higher-priority user / given back */
  suspended?(bp: HwBp): void;
  resumed?(bp: HwBp): void;
}

/** One registration: a debug register held on every CPU (or waiting for it). */
export class HwBp implements HwBpHolder {
  /** handler runs */
  hits = 0;
  /** hits not reported (while a handler of the same CPU ran) */
  nmissed = 0;
  /** false while a higher-priority user holds the register */
  active = true;
  /** the watched bytes as last reported (old values) */
  shadow?: Uint8Array;
  /** the debug register held (or waited for), its number in its pool and its name */
  index = -1;
  registerName = '';
  /** `id`: numbered by the machine's HwBreakpoints (machine state: the same run numbers them the same) */
  constructor(readonly id: number, readonly owner: HwBpOwner, readonly req: HwBpRequest, readonly pool: HwBpPool, readonly cb: HwBpCallbacks) {}
}

/** Why a request was refused: Linux's errno and what was wrong. */
export interface HwBpRefusal { errno: number; reason: string }

/** arm64-style resume: a step in progress on a CPU, and what to do when it completes */
interface PendingStep {
  /** match-unit slots turned off for the step, and their registration (none: a guest's own) */
  saved: { bit: number; match: HwSlotMatch; bp?: HwBp }[];
  /** the data hit to report once the access is done (arm64 watchpoints) */
  report: { bps: HwBp[]; addr: bigint; access: 'read' | 'write' } | null;
}

export class HwBreakpoints {
  private nextId = 1;
  private readonly alloc: DebugRegAllocator<HwBp> | null;
  private readonly bps = new Set<HwBp>();
  /** per CPU: the registration whose handler runs (a hit meanwhile is missed) */
  private readonly inHandler: (HwBp | null)[] = [];
  /** the hit log's display names: "kwatch w boot_counter+0x0 len 8" */
  private readonly names = new ProbeNameCache<HwBp>(bp => `${bp.owner} ${bp.req.type} ${this.kernel.image.symbols.format(bp.req.addr, false)} len ${bp.req.len}`);
  private readonly stepping = new Map<number, PendingStep>();
  private readonly regsByCpu: PtRegs[] = [];

  constructor(private readonly kernel: Kernel, private readonly arch: HwDebugArchHooks | undefined) {
    const cpus = kernel.cpus.filter(c => c.id >= 0).length;
    this.alloc = arch
      ? new DebugRegAllocator<HwBp>(cpus, { data: arch.pools.data, exec: arch.pools.exec === 'shared' ? 0 : arch.pools.exec }, arch.pools.exec === 'shared')
      : null;
    if (arch) kernel.addTrapHook((cpu, trap) => this.onTrap(cpu, trap));
  }

  /** why there are no hardware breakpoints here, or undefined when there are */
  get unavailable(): string | undefined {
    return this.arch ? undefined : `${this.kernel.arch.name}: no debug registers are emulated on this architecture's CPU`;
  }

  private get cpus(): Cpu[] { return this.kernel.cpus.filter(c => c.id >= 0); }

  /**
   * Validate and allocate: the registration, or why not (-EINVAL from the
   * arch's rules, -ENOSPC when every register is held by a user that does
   * not yield, -ENODEV where there are no debug registers).
   */
  register(owner: HwBpOwner, req: HwBpRequest, cb: HwBpCallbacks): HwBp | HwBpRefusal {
    const bad = this.validate(req);
    if (bad || !this.arch || !this.alloc) return bad as HwBpRefusal; // validate refuses (-ENODEV) where there are no registers
    const bp = new HwBp(this.nextId++, owner, req, this.alloc.poolOf({ req }), cb);
    const got = this.alloc.reserve(bp);
    if (got.index < 0) {
      const n = this.alloc.size(bp.pool);
      return { errno: -Errno.ENOSPC, reason: `all ${n} ${bp.pool === 'exec' ? 'breakpoint' : 'debug'} registers are in use by users that do not yield` };
    }
    bp.index = got.index;
    bp.registerName = this.arch.registerName(bp.pool, got.index);
    if (got.displaced) this.suspend(got.displaced);
    this.bps.add(bp);
    this.install(bp);
    return bp;
  }

  /** hw_breakpoint_arch_parse: why the debug registers cannot hold a request (-ENODEV where there are none), or null */
  validate(req: HwBpRequest): HwBpRefusal | null {
    if (!this.arch) return { errno: -Errno.ENODEV, reason: this.unavailable ?? 'no debug registers' };
    const bad = this.arch.validate(req);
    if (bad) return bad;
    if (toVAddr(req.addr) === null) return { errno: -Errno.EINVAL, reason: `${hex(req.addr)} is not a canonical address` };
    return null;
  }

  /** Let a registration go; a holder it had displaced gets its register back. */
  unregister(bp: HwBp): void {
    if (!this.alloc || !this.bps.delete(bp)) return;
    if (bp.active) this.uninstall(bp);
    const resumed = this.alloc.release(bp, bp.index);
    if (resumed && !resumed.active) {
      resumed.active = true;
      this.install(resumed);
      resumed.cb.resumed?.(resumed);
    }
  }

  /** every registration, in registration order */
  list(): HwBp[] { return [...this.bps]; }

  /** the registers of each CPU for the views: their holders (active last) and raw values */
  registers(): { cpu: number; pool: HwBpPool; index: number; name: string; holders: readonly HwBp[] }[] {
    const out: { cpu: number; pool: HwBpPool; index: number; name: string; holders: readonly HwBp[] }[] = [];
    if (!this.alloc || !this.arch) return out;
    for (const cpu of this.cpus) {
      for (const pool of ['exec', 'data'] as const) {
        this.alloc.holders(cpu.id, pool).forEach((hs, index) => out.push({ cpu: cpu.id, pool, index, name: this.arch!.registerName(pool, index), holders: hs }));
      }
    }
    return out;
  }

  /** the raw register values of every CPU ("DR7" = 0x...), for the Debug Registers view */
  values(): { cpu: number; name: string; value: bigint }[] {
    return this.cpus.flatMap(cpu => (this.arch?.snapshot(cpu) ?? []).map(r => ({ cpu: cpu.id, ...r })));
  }

  private suspend(bp: HwBp): void {
    bp.active = false;
    // the taker programs the register next; nothing to undo on the CPUs but the holder's state
    bp.cb.suspended?.(bp);
  }

  private install(bp: HwBp): void {
    if (bp.req.type !== 'x') bp.shadow = this.readWatched(bp);
    for (const cpu of this.cpus) this.arch!.install(cpu, bp.pool, bp.index, bp.req);
  }

  private uninstall(bp: HwBp): void {
    for (const cpu of this.cpus) this.arch!.uninstall(cpu, bp.pool, bp.index);
  }

  private readWatched(bp: HwBp): Uint8Array | undefined {
    const a = toVAddr(bp.req.addr);
    try { return a === null ? undefined : this.kernel.mem.readBytes(a, bp.req.len); } catch { return undefined; }
  }

  /** the unit's hit bits -> (pool, register): x86 bit n = DRn; separate pools: bits 0-15 breakpoints, 16+n watchpoint n */
  private decodeBits(hits: number): { pool: HwBpPool; index: number }[] {
    const out: { pool: HwBpPool; index: number }[] = [];
    const shared = this.arch!.pools.exec === 'shared';
    for (let b = 0; b < 32; b++) {
      if (!((hits >>> b) & 1)) continue;
      if (shared) out.push({ pool: 'data', index: b });
      else out.push(b < 16 ? { pool: 'exec', index: b } : { pool: 'data', index: b - 16 });
    }
    return out;
  }

  private regs(cpu: Cpu): PtRegs {
    const r = this.regsByCpu[cpu.id];
    if (r && r.cpu === cpu) return r;
    return this.regsByCpu[cpu.id] = new PtRegs(cpu, this.kernel.arch);
  }

  /** the die-notifier: debug exceptions from a debug register, and the steps this class started */
  private onTrap(cpu: Cpu, trap: Trap): boolean {
    if (trap.kind === 'singleStep') {
      const st = this.stepping.get(cpu.id);
      if (!st) return false;
      this.stepping.delete(cpu.id);
      cpu.stepTrap = false;
      // the registers back on (as Linux's toggle_bp_registers), unless their registration went away meanwhile;
      // a slot the guest programmed itself gets its match back
      for (const s of st.saved) {
        if (!s.bp) cpu.hw.setSlot(s.bit, s.match);
        else if (s.bp.active && this.bps.has(s.bp)) this.arch!.install(cpu, s.bp.pool, s.bp.index, s.bp.req);
      }
      if (st.report) this.report(cpu, st.report.bps, st.report.addr, st.report.access);
      return true;
    }
    if (trap.kind !== 'hwBreakpoint') return false;
    this.arch!.acknowledge(cpu);
    const hits = this.claimed(cpu, trap.hits);
    const bps = hits.flatMap(h => (h.bp ? [h.bp] : []));
    if (trap.access === 'exec') {
      this.report(cpu, bps, trap.pc, 'exec');
      // resume at the instruction without hitting it again: x86 RF; arm64 the breakpoints off for one step
      if (cpu.hw.timing === 'after') cpu.resumeFlag = true;
      else this.stepOver(cpu, hits, null);
    } else if (cpu.hw.timing === 'before') {
      // arm64: the access has not happened: step over it with the watchpoints off, then report
      this.stepOver(cpu, hits, { bps, addr: trap.addr, access: trap.access });
    } else {
      this.report(cpu, bps, trap.addr, trap.access);
    }
    if (trap.step) this.kernel.handleTrap(cpu, { kind: 'singleStep', pc: trap.pc });
    return true;
  }

  /** the unit slots a trap names and the registrations holding them (none: a slot the guest programmed itself) */
  private claimed(cpu: Cpu, hits: number): { bit: number; bp?: HwBp }[] {
    const out: { bit: number; bp?: HwBp }[] = [];
    const shared = this.arch!.pools.exec === 'shared';
    for (let bit = 0; bit < 32; bit++) {
      if (!((hits >>> bit) & 1)) continue;
      // the unit's slot numbering: x86 bit n = DRn; separate pools: bits 0-15 breakpoints, 16+n watchpoint n
      const pool: HwBpPool = shared || bit >= 16 ? 'data' : 'exec';
      const index = shared || bit < 16 ? bit : bit - 16;
      const bp = this.alloc!.active(cpu.id, pool, index);
      out.push({ bit, bp: bp && bp.active && this.bps.has(bp) ? bp : undefined });
    }
    return out;
  }

  /** turn the hit slots off for one single-step of the CPU; the step's trap turns them on again */
  private stepOver(cpu: Cpu, hits: readonly { bit: number; bp?: HwBp }[], report: PendingStep['report']): void {
    const saved: PendingStep['saved'] = [];
    for (const h of hits) {
      const match = cpu.hw.slot(h.bit);
      if (!match) continue;
      saved.push({ bit: h.bit, match, bp: h.bp });
      // ours: through the registers (their enable bit), so nothing the CPU re-decodes turns it on mid-step
      if (h.bp) this.arch!.uninstall(cpu, h.bp.pool, h.bp.index);
      else cpu.hw.setSlot(h.bit, null);
    }
    this.stepping.set(cpu.id, { saved, report });
    cpu.stepTrap = true;
  }

  private report(cpu: Cpu, bps: readonly HwBp[], addr: bigint, access: 'read' | 'write' | 'exec'): void {
    for (const bp of bps) {
      const running = this.inHandler[cpu.id];
      if (running) {
        bp.nmissed++;
        this.kernel.probeMissed({
          reason: 'reentry', kind: 'watchpoint', cpu: cpu.id, probeId: bp.id, addr, probe: this.names.get(bp), missed: bp.nmissed,
          runningProbeId: running.id, runningProbe: this.names.get(running),
        });
        continue;
      }
      const newValue = access === 'exec' ? undefined : this.readWatched(bp);
      const hit: HwBpHit = {
        bp, cpu, regs: this.regs(cpu), register: bp.index, registerName: bp.registerName, addr, access,
        oldValue: access === 'exec' ? undefined : bp.shadow, newValue,
      };
      if (newValue) bp.shadow = newValue;
      bp.hits++;
      this.kernel.probeHit('watchpoint', cpu.id, bp.id, addr, this.names.get(bp));
      this.inHandler[cpu.id] = bp;
      try {
        bp.cb.handler(hit);
      } catch (e) {
        let handled = false;
        try { handled = bp.cb.fault?.(hit, e) ?? false; } catch { handled = false; }
        if (!handled) {
          const what = e instanceof Error ? e.message : String(e);
          this.kernel.oops(cpu, null, `kprobe-debug: fault in the handler of the ${bp.owner} on ${bp.registerName} (${hex(bp.req.addr)}): ${what}`);
        }
      } finally {
        this.inHandler[cpu.id] = null;
      }
    }
  }
}

