/**
 * The full-system PC the x86_64 CPU's system half plugs into: physical
 * memory (RAM as the E820 map says, the legacy VGA window as open bus, the
 * local APIC and IO-APIC pages), the I/O port bus with the PC's devices,
 * the interrupt wiring (ISA IRQs to the 8259s and the IO-APIC, the APIC
 * bus to one local APIC per CPU), the ACPI tables, and a Linux bzImage
 * loaded as a 64-bit boot loader would (boot/loader.ts). No CPU code: the
 * CPU side takes `memory`, `io`, `interruptLine(cpu)`, `msrs`, `clock` and
 * the bootstrap processor's `entry` state, tells the machine which CPU is
 * making MMIO accesses (`currentCpu`), and between instructions asks for
 * the next device event and lets devices catch up (`nextEventNs`,
 * `advanceDevices`). INIT / SIPI for the application processors arrive
 * through `onInit` / `onStartup`.
 *
 * Port map: 0x20/0xa0/0x4d0 PICs, 0x40-0x43 PIT, 0x61 port B, 0x60/0x64
 * keyboard-controller reset, 0x70/0x71 RTC, 0x80 POST, 0x92 system control
 * A, 0x3f8 COM1, 0x600-0x60b ACPI PM, 0xcf8-0xcff PCI configuration,
 * 0xcf9 reset control. IRQs: 0 PIT (IO-APIC pin 2), 4 COM1, 8 RTC, 9 SCI.
 */
import { Memory, PERM_R, PERM_W, PERM_X, type Device } from '../memory/memory';
import { hostOwned, immutableState } from '../base/marks';
import { SystemClock } from './clock';
import type { InterruptLine, PlatformMsrs } from './types';
import { IoBus } from './devices/ioBus';
import { AgentChannel, AGENT_PORT, AGENT_PORTS } from './devices/agentChannel';
import { PicPair } from './devices/pic8259';
import { Pit8254, PortB } from './devices/pit8254';
import { CmosRtc } from './devices/cmosRtc';
import { Uart16550, COM1, COM1_IRQ } from './devices/uart16550';
import { PciConfigNoDevices } from './devices/pciConfig';
import { KeyboardControllerReset, PostCodePort, ResetControl, SystemControlA, type ResetReason } from './devices/reset';
import { ApicBus, ApicMmio } from './devices/apicBus';
import { LocalApic, APIC_DEFAULT_BASE } from './devices/localApic';
import { IoApic, IOAPIC_DEFAULT_BASE } from './devices/ioApic';
import { IsaIrqRouter } from './devices/isaIrq';
import { PcPlatformMsrs } from './devices/platformMsrs';
import { AcpiPm, PM1A_EVT, SLP_TYP_S5 } from './devices/acpiPm';
import type { TimedDevice } from './devices/timed';
import { buildAcpi } from './acpi/tables';
import { applyBootPlan, planLinuxBoot, type BootFile, type LinuxBootPlan } from './boot/loader';
import { EBDA, ramRanges } from './boot/e820';
import type { Entry64State } from './boot/entry64';

export interface PcMachineOptions {
  readonly kernel: BootFile;
  readonly initrd?: BootFile;
  readonly cmdline: string;
  /** RAM in MiB */
  readonly memoryMiB: number;
  /** CPUs (local APICs); default 2 */
  readonly cpus?: number;
  /** false: no ACPI tables (boot with acpi=off: one CPU, the 8259s and the PIT) */
  readonly acpi?: boolean;
  /** the TSC frequency the CPU advertises (CPUID 0x15/0x16) */
  readonly tscHz: bigint;
  /** the local APIC timer's input clock (CPUID 0x15's crystal) */
  readonly apicTimerHz: bigint;
  /** the RTC's time at virtual time 0 (deterministic: the same every run) */
  readonly rtcStart?: Date;
}

/** Why the machine stopped by itself. */
export type PcStop = { readonly kind: 'reset'; readonly via: ResetReason } | { readonly kind: 'poweroff' };

/** the RTC's default start: a fixed date, so every run reads the same time */
export const DEFAULT_RTC_START = new Date(Date.UTC(2026, 0, 1, 0, 0, 0));

/** Reads all ones, drops writes: physical addresses nothing decodes (the legacy VGA window). */
class OpenBus implements Device {
  read(_o: number, size: 1 | 2 | 4 | 8): bigint { return (1n << BigInt(size * 8)) - 1n; }
  write(): void { /* nothing there */ }
}

const MIB = 1024 * 1024;
export const BDA_EBDA_SEGMENT = 0x40e, BDA_BASE_MEMORY_KIB = 0x413;
const VGA_WINDOW = 0xa0000, VGA_END = 0xc0000;

export class PcMachine {
  readonly clock: SystemClock;
  readonly memory = new Memory('physical');
  readonly io = new IoBus();
  readonly pics = new PicPair();
  readonly pit: Pit8254;
  readonly rtc: CmosRtc;
  readonly uart: Uart16550;
  /** the channel to kprobe-debug's agent module in the guest (devices/agentChannel.ts): idle until the agent polls it */
  readonly agent = new AgentChannel();
  readonly apicBus = new ApicBus();
  readonly apics: LocalApic[] = [];
  readonly ioApic: IoApic;
  /** the platform's MSRs; one the platform does not have is logged once (the CPU then raises #GP) */
  readonly msrs: PlatformMsrs;
  /** the same MSRs unlogged (for a CPU that logs its own misses with the instruction's rip) */
  readonly platformMsrs: PlatformMsrs;
  readonly boot: LinuxBootPlan;
  readonly cpus: number;
  /** the CPU whose instruction is running: its MMIO reaches its own local APIC */
  currentCpu = 0;
  /** set when the guest reset or powered the machine off */
  stopped: PcStop | null = null;
  private readonly timed: TimedDevice[] = [];
  /** the front ends' listeners: not machine state (time travel keeps them as they are) */
  private readonly consoleListeners: ((byte: number) => void)[] = hostOwned([]);
  private readonly logListeners: ((line: string) => void)[] = hostOwned([]);
  /** quiet: a time-travel re-execution (timetravel/pcTimeTravel.ts) of output the listeners already had */
  readonly replay = hostOwned({ quiet: false });
  /** what the CPU is doing, for log lines (e.g. "cpu0 rip 0xffffffff81000000"), set by the CPU side */
  where: (() => string) | null = null;

  constructor(opts: PcMachineOptions) {
    const cpus = opts.cpus ?? 2;
    const acpi = opts.acpi ?? true;
    if (!Number.isInteger(cpus) || cpus < 1 || cpus > 254) throw new RangeError(`--cpus ${cpus}: 1..254`);
    if (!acpi && cpus > 1) throw new RangeError(`--cpus ${cpus} needs ACPI (Linux finds the other CPUs in the MADT): use --cpus 1 with acpi=off`);
    this.cpus = cpus;
    this.clock = new SystemClock(opts.tscHz);
    const acpiBlob = acpi ? buildAcpi({ cpus, ioApicId: cpus }) : null;
    // the plan holds the kernel and initrd files: never changes, never snapshotted
    this.boot = immutableState(planLinuxBoot({
      kernel: opts.kernel, initrd: opts.initrd, cmdline: opts.cmdline,
      memoryBytes: opts.memoryMiB * MIB, acpiRsdp: acpiBlob?.rsdp,
    }));
    this.mapMemory();
    applyBootPlan(this.memory, this.boot);
    this.writeBiosDataArea();
    if (acpiBlob) this.memory.writeBytes(acpiBlob.base, acpiBlob.bytes, 'loader');

    for (let i = 0; i < cpus; i++) {
      this.apics.push(new LocalApic(i, this.apicBus, this.clock, opts.apicTimerHz, i === 0, i === 0 ? this.pics : null));
    }
    this.ioApic = new IoApic(this.apicBus, cpus);
    const router = new IsaIrqRouter(this.pics, this.ioApic);
    this.platformMsrs = new PcPlatformMsrs(this.apics);
    this.msrs = this.loggedMsrs(this.platformMsrs);
    this.memory.map(APIC_DEFAULT_BASE, 0x1000, PERM_R | PERM_W, 'local APIC', new ApicMmio(this.apicBus, () => this.currentCpu));
    this.memory.map(IOAPIC_DEFAULT_BASE, 0x1000, PERM_R | PERM_W, 'IO-APIC', this.ioApic);

    this.pit = new Pit8254(this.clock, router.line(0));
    this.rtc = new CmosRtc(this.clock, router.line(8), opts.rtcStart ?? DEFAULT_RTC_START);
    this.uart = new Uart16550('ttyS0', COM1, this.clock, router.line(COM1_IRQ), b => { if (!this.replay.quiet) for (const l of this.consoleListeners) l(b); });
    const reset = (via: ResetReason): void => { this.stopped ??= { kind: 'reset', via }; };
    const kbc = new KeyboardControllerReset(reset);
    this.io.register(0x20, 2, this.pics);
    this.io.register(0xa0, 2, this.pics);
    this.io.register(0x4d0, 2, this.pics);
    this.io.register(0x40, 4, this.pit);
    this.io.register(0x61, 1, new PortB(this.pit, this.clock));
    this.io.register(0x60, 1, kbc);
    this.io.register(0x64, 1, kbc);
    this.io.register(0x70, 2, this.rtc);
    this.io.register(0x80, 1, new PostCodePort());
    this.io.register(0x92, 1, new SystemControlA(reset));
    this.io.register(COM1, 8, this.uart);
    this.io.register(0xcf8, 8, new PciConfigNoDevices(new ResetControl(reset)));
    this.io.register(AGENT_PORT, AGENT_PORTS, this.agent);
    if (acpi) {
      this.io.register(PM1A_EVT, 12, new AcpiPm(this.clock, typ => { if (typ === SLP_TYP_S5) this.stopped ??= { kind: 'poweroff' }; }));
    }
    this.timed.push(this.pit, this.rtc, this.uart, ...this.apics);
    this.io.onUnknown = (port, size, write, value) => this.log(
      `no device at I/O port 0x${port.toString(16)} (${write ? `out 0x${(value ?? 0).toString(16)}` : 'in'}, ${size} byte${size > 1 ? 's' : ''})${this.where ? ` at ${this.where()}` : ''}: reads all ones`);
  }

  /** the bootstrap processor's first state (the 64-bit boot protocol's) */
  get entry(): Entry64State { return this.boot.entry; }

  /** what CPU `cpu` asks for interrupts */
  interruptLine(cpu: number): InterruptLine { return this.apics[cpu]; }

  /** the earliest virtual ns at which some device acts by itself (null: none is due) */
  nextEventNs(): bigint | null {
    let next: bigint | null = null;
    for (const d of this.timed) {
      const t = d.nextEventNs();
      if (t !== null && (next === null || t < next)) next = t;
    }
    return next;
  }

  /** move virtual time to `ns` and let every device do what is due */
  advanceDevices(ns: bigint): void {
    if (ns > this.clock.nowNs()) this.clock.advanceTo(ns);
    for (const d of this.timed) d.advance(this.clock.nowNs());
  }

  /** bytes typed at the console */
  consoleInput(bytes: Iterable<number>): void { this.uart.receive(bytes); }
  onConsole(l: (byte: number) => void): void { this.consoleListeners.push(l); }
  onLog(l: (line: string) => void): void { this.logListeners.push(l); }
  log(line: string): void { for (const l of this.logListeners) l(line); }

  private loggedMsrs(inner: PlatformMsrs): PlatformMsrs {
    const seen = new Set<string>();
    const once = (op: string, cpu: number, msr: number, extra: string): void => {
      const key = `${op} ${msr}`;
      if (seen.has(key)) return;
      seen.add(key);
      this.log(`no MSR 0x${msr.toString(16)} on this platform (${op}${extra}) at ${this.where ? this.where() : `cpu${cpu}`}: #GP`);
    };
    return {
      rdmsr: (cpu, msr) => {
        const v = inner.rdmsr(cpu, msr);
        if (v === undefined) once('rdmsr', cpu, msr, '');
        return v;
      },
      wrmsr: (cpu, msr, value) => {
        const ok = inner.wrmsr(cpu, msr, value);
        if (!ok) once('wrmsr', cpu, msr, ` 0x${BigInt.asUintN(64, value).toString(16)}`);
        return ok;
      },
    };
  }

  /**
   * The two BIOS data area words Linux reads (the decompressor places its
   * trampoline and reserve_bios_regions() reserves below them): the EBDA's
   * segment at 0x40e and the conventional memory size in KiB at 0x413.
   */
  private writeBiosDataArea(): void {
    this.memory.write16(BDA_EBDA_SEGMENT, EBDA >> 4);
    this.memory.write16(BDA_BASE_MEMORY_KIB, EBDA >> 10);
  }

  private mapMemory(): void {
    const rw = PERM_R | PERM_W | PERM_X;
    for (const r of ramRanges(this.boot.e820)) {
      // the conventional memory below the EBDA and the RAM above 1 MiB are RAM; so are the EBDA and the BIOS area (reserved, but memory: the ACPI tables live there)
      if (r.addr === 0) {
        this.memory.map(0, VGA_WINDOW, rw, 'RAM (conventional)');
        this.memory.map(VGA_END, 0x100000 - VGA_END, rw, 'RAM (BIOS area)');
      } else {
        this.memory.map(r.addr, r.size, rw, `RAM @0x${r.addr.toString(16)}`);
      }
    }
    this.memory.map(VGA_WINDOW, VGA_END - VGA_WINDOW, PERM_R | PERM_W, 'legacy VGA window (open bus)', new OpenBus());
  }
}
