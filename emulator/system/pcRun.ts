/**
 * The full-system PC running: the PcMachine's devices plus x86_64 CPUs with
 * their system half, interleaved deterministically, and the virtual clock
 * moved by the instructions they retire.
 *
 * Time: one virtual nanosecond per instruction retired by any CPU (a 1 GHz
 * machine: with two CPUs running, each runs at 500 M instructions per
 * virtual second). The TSC and the local APIC timer's crystal both run at
 * VIRTUAL_HZ (CPUID 0x15 reports the crystal as the TSC's frequency with
 * ratio 1, so Linux sets the APIC timer period from it without
 * calibrating). One clock for every CPU keeps their TSCs in step (Linux's
 * TSC warp check sees time only move forward). Inside a slice a CPU reads
 * time live (the slice's start + what it retired since), and devices catch
 * up to that time before each port access, so a poll on the PIT, the RTC
 * or the UART sees time pass.
 *
 * Interleaving: CPUs in id order, each up to SLICE instructions, a slice
 * cut short at the next device event; when every CPU waits in HLT, time
 * skips to the next device event (none due: the machine is stuck, a stop).
 * The same kernel, initrd, command line and input give the same console
 * bytes and instruction counts.
 *
 * Application processors start at the SIPI through the kernel's real-mode
 * trampoline header (apStart.ts) in long mode.
 */
import { systemCpuPort } from '../arch/registry';
import type { SystemCpuHandle, SystemCpuPort, SystemPlatform } from './types';
import { PcMachine, type PcMachineOptions } from './pcMachine';
import { apStartState } from './apStart';
import type { TranslateMode } from '../jit';

/** the virtual clock's rate: instructions (and TSC ticks) per virtual second */
export const VIRTUAL_HZ = 1_000_000_000n;
/** instructions a CPU runs before the next one gets its turn */
export const SLICE = 20_000;

export type PcRunStop =
  | { readonly kind: 'reset' | 'poweroff'; readonly detail: string }
  | { readonly kind: 'tripleFault' | 'busError' | 'unsupported'; readonly detail: string }
  /** a debugger breakpoint (DEBUGGER_SLOT0) on CPU `cpu`: the debugger clears it and goes on */
  | { readonly kind: 'debugBreak'; readonly detail: string; readonly cpu?: number }
  | { readonly kind: 'stuck'; readonly detail: string }
  | { readonly kind: 'limit'; readonly detail: string }
  | { readonly kind: 'done'; readonly detail: string };

export type PcRunOptions = Omit<PcMachineOptions, 'tscHz' | 'apicTimerHz'> & {
  /** the block translator's mode for the CPUs (default: the process's, KPROBE_TRANSLATE, else on) */
  readonly translate?: TranslateMode;
};

export class PcRun {
  readonly machine: PcMachine;
  readonly cpus: (SystemCpuHandle | null)[];
  /** instructions retired by every CPU */
  instructions = 0;
  stop: PcRunStop | null = null;
  /** the CPU running now and the clock / its instret when its slice began */
  private running = 0;
  private sliceNs = 0n;
  private sliceInstret = 0;
  private readonly port: SystemCpuPort = systemCpuPort();

  private readonly translate: TranslateMode | undefined;

  constructor(opts: PcRunOptions) {
    this.translate = opts.translate;
    const m = this.machine = new PcMachine({ ...opts, tscHz: VIRTUAL_HZ, apicTimerHz: VIRTUAL_HZ });
    this.cpus = new Array<SystemCpuHandle | null>(m.cpus).fill(null);
    const e = m.entry;
    const bsp = this.port.create(0, m.memory, this.platform(0), {
      rip: e.rip, cr3: e.cr3, gdtBase: e.gdtr.base, gdtLimit: e.gdtr.limit,
      regs: new Map([[6, e.rsi], [4, e.rsp]]), cs: e.cs.selector, ds: e.ds.selector,
      cr0: Number(e.cr0), cr4: Number(e.cr4), efer: e.efer,
    });
    this.cpus[0] = bsp;
    m.where = () => `cpu${this.running} rip 0x${this.cpus[this.running]?.pc().toString(16) ?? '?'}`;
    bsp.setLog(l => m.log(l));
    for (let i = 1; i < m.cpus; i++) {
      const id = i;
      m.apics[i].onInit = () => { /* the AP waits for its SIPI */ };
      m.apics[i].onStartup = vector => this.startAp(id, vector);
    }
  }

  /** the virtual ns the running CPU sees now */
  nowNs(): bigint {
    const c = this.cpus[this.running];
    return c === null ? this.machine.clock.nowNs() : this.sliceNs + BigInt(c.instret - this.sliceInstret);
  }

  private platform(id: number): SystemPlatform & { readonly translate?: TranslateMode } {
    const m = this.machine;
    const sync = (): void => { const t = this.nowNs(); if (t > m.clock.nowNs()) m.advanceDevices(t); };
    return {
      io: { in: (p, s) => { sync(); return m.io.in(p, s); }, out: (p, s, v) => { sync(); m.io.out(p, s, v); } },
      irq: m.interruptLine(id),
      // the CPU logs an MSR it lacks once, with the rdmsr / wrmsr's own rip
      msrs: { rdmsr: (c, r) => { sync(); return m.platformMsrs.rdmsr(c, r); }, wrmsr: (c, r, v) => { sync(); return m.platformMsrs.wrmsr(c, r, v); } },
      clock: { nowNs: () => this.nowNs(), tscHz: VIRTUAL_HZ },
      translate: this.translate,
    };
  }

  private startAp(id: number, vector: number): void {
    if (this.cpus[id] !== null) return; // a second SIPI to a started CPU is ignored
    const st = apStartState(this.machine.memory, vector);
    if (typeof st === 'string') { this.machine.log(`cpu${id}: SIPI vector 0x${vector.toString(16)}: ${st}`); return; }
    const cpu = this.port.create(id, this.machine.memory, this.platform(id), st);
    cpu.setLog(l => this.machine.log(l));
    this.cpus[id] = cpu;
  }

  /**
   * Where the loop is in its round of CPU slices (machine state: a snapshot
   * keeps it). A run that ends inside a slice (the instruction limit, a
   * debugger breakpoint, a CPU target) leaves it here and the next run goes
   * on with the same slice: where a run was cut never changes the
   * interleaving, so a re-execution from a snapshot retires the same
   * instructions in the same order as the run it repeats.
   */
  private round: { cpu: number; anyRan: boolean; slice: { left: number; ns: bigint; instret: number; executed: number } | null } | null = null;

  /**
   * Run until `until()` says stop (checked after every round of slices),
   * the machine stops, `maxInstructions` retire, or (with `target`) CPU
   * `target.cpu` has retired `target.instret` instructions (a 'limit'
   * stop).
   */
  run(maxInstructions: number, until: () => PcRunStop | null = () => null, target?: { readonly cpu: number; readonly instret: number }): PcRunStop {
    const m = this.machine;
    while (this.stop === null) {
      if (this.round === null) {
        if (this.instructions >= maxInstructions) { this.stop = { kind: 'limit', detail: `${this.instructions} instructions` }; break; }
        this.round = { cpu: 0, anyRan: false, slice: null };
      }
      const rd = this.round;
      while (rd.cpu < this.cpus.length && this.stop === null) {
        const i = rd.cpu;
        const cpu = this.cpus[i];
        if (cpu === null) { rd.cpu++; continue; }
        if (rd.slice === null) {
          const now = m.clock.nowNs();
          const next = m.nextEventNs();
          let budget = SLICE;
          if (next !== null && next > now && next - now < BigInt(budget)) budget = Number(next - now);
          if (budget < 1) budget = 1;
          rd.slice = { left: budget, ns: now, instret: cpu.instret, executed: 0 };
        }
        const sl = rd.slice;
        let b = Math.min(sl.left, maxInstructions - this.instructions);
        if (target !== undefined && target.cpu === i) b = Math.min(b, target.instret - cpu.instret);
        if (b < 1) { this.stop = { kind: 'limit', detail: target !== undefined && target.instret <= cpu.instret && target.cpu === i ? `cpu${i} at ${cpu.instret} instructions` : `${this.instructions} instructions` }; break; }
        this.running = i;
        m.currentCpu = i;
        this.sliceNs = sl.ns;
        this.sliceInstret = sl.instret;
        const r = this.port.run(cpu, b);
        this.instructions += r.executed;
        sl.left -= r.executed;
        sl.executed += r.executed;
        if (r.executed > 0) rd.anyRan = true;
        // an event stops the machine inside the slice: a resume goes on with it
        if (r.event) { this.stop = { kind: r.event.kind, detail: `${r.event.detail} at cpu${i} rip 0x${r.event.rip.toString(16)}`, cpu: i }; break; }
        if (!r.halted && r.executed === b && sl.left > 0) continue; // cut by the limit or the target: the next check stops
        m.advanceDevices(sl.ns + BigInt(sl.executed));
        rd.slice = null;
        rd.cpu++;
      }
      if (this.stop !== null) break;
      this.round = null;
      if (m.stopped) {
        this.stop = m.stopped.kind === 'reset' ? { kind: 'reset', detail: `the guest reset the machine (${m.stopped.via})` } : { kind: 'poweroff', detail: 'the guest powered the machine off' };
        break;
      }
      const u = until();
      if (u !== null) { this.stop = u; break; }
      if (!rd.anyRan) {
        const next = m.nextEventNs();
        if (next === null) { this.stop = { kind: 'stuck', detail: 'every CPU waits in HLT and no device event is due' }; break; }
        m.advanceDevices(next > m.clock.nowNs() ? next : m.clock.nowNs());
      }
    }
    return this.stop!;
  }
}
