/**
 * The guest kernel's own state as a debugger's views show it: one
 * GuestKernel per booted machine and vmlinux (with DWARF), and snapshot()
 * at a stop (or, throttled, while running: between the run loop's slices)
 * reads the modules, the registered kprobes, the dynamic trace events with
 * their hit counts and the uprobes out of guest memory. Each snapshot also
 * renders what the guest itself would print for the same files
 * (/sys/kernel/debug/kprobes/list, /proc/modules, tracefs kprobe_events,
 * kprobe_profile, uprobe_events, uprobe_profile).
 *
 *   const g = new GuestKernel(loadElf(vmlinuxPath), run.machine.memory);
 *   const s = g.snapshot();          // s.kprobes, s.modules, s.events, s.uprobes
 *   s.render.kprobesList             // == `cat /sys/kernel/debug/kprobes/list`
 *
 * The first snapshot builds the DWARF type index of the vmlinux (seconds on
 * Debian's); later ones only read guest memory.
 */
import type { ElfImage } from '../../elf/types';
import type { Memory } from '../../memory/memory';
import { GuestMemory, findKernel, type KernelSymbols } from './guestMemory';
import { KernelLayout } from './kernelLayout';
import { readModules, renderProcModules, type GuestModule } from './modules';
import { readKprobes, renderKprobesList, type GuestKprobe } from './kprobes';
import { readDynEvents, renderKprobeEvents, renderKprobeProfile, renderUprobeEvents, renderUprobeProfile, type DynEvent } from './dynEvents';
import { readUprobes, type GuestUprobe } from './uprobes';

export interface GuestSnapshot {
  readonly modules: readonly GuestModule[];
  readonly kprobes: readonly GuestKprobe[];
  readonly events: readonly DynEvent[];
  readonly uprobes: readonly GuestUprobe[];
  readonly render: {
    readonly kprobesList: string;
    readonly procModules: string;
    readonly kprobeEvents: string;
    readonly kprobeProfile: string;
    readonly uprobeEvents: string;
    readonly uprobeProfile: string;
  };
}

export class GuestKernel {
  readonly layout: KernelLayout;
  readonly symbols: KernelSymbols;
  private mem: GuestMemory | null = null;

  constructor(readonly vmlinux: ElfImage, readonly phys: Memory) {
    this.layout = new KernelLayout(vmlinux);
    this.symbols = { addressOf: name => vmlinux.symbols.lookup(name)?.value };
  }

  /** guest virtual memory through the kernel's page tables (found on first use) */
  memory(): GuestMemory {
    this.mem ??= new GuestMemory(this.phys, findKernel(this.phys, this.symbols));
    this.mem.clear();
    return this.mem;
  }

  snapshot(): GuestSnapshot {
    try {
      return this.read();
    } catch (e) {
      // read early in the boot, the kernel's place may not be final (the banner found before the
      // kernel is where it runs from, page tables not built yet): look for it again next time
      this.mem = null;
      throw e;
    }
  }

  private read(): GuestSnapshot {
    const mem = this.memory(), L = this.layout, syms = this.symbols;
    const modules = readModules(mem, L, syms);
    const kprobes = readKprobes(mem, L, syms, this.vmlinux, modules);
    const events = readDynEvents(mem, L, syms);
    const uprobes = readUprobes(mem, L, syms, this.vmlinux, modules, events);
    return {
      modules, kprobes, events, uprobes,
      render: {
        kprobesList: renderKprobesList(kprobes), procModules: renderProcModules(mem, L, syms, modules),
        kprobeEvents: renderKprobeEvents(events), kprobeProfile: renderKprobeProfile(events),
        uprobeEvents: renderUprobeEvents(events), uprobeProfile: renderUprobeProfile(events),
      },
    };
  }
}
