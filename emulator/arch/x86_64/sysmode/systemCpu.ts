/**
 * How the full-system machine makes and runs an x86_64 CPU with its system
 * half: from the state a boot loader leaves for the 64-bit boot protocol
 * (Linux's Documentation/arch/x86/boot.rst "64-bit Boot Protocol": long
 * mode, paging on with the loader's identity-mapped page tables, a GDT
 * whose __BOOT_CS (0x10) is 64-bit code and __BOOT_DS (0x18) flat data,
 * interrupts off, rsi = the boot_params), or an application processor's
 * start in long mode.
 *
 * The platform's side of the contract (emulator/system/types.ts):
 * - physical memory: one Memory shared by every CPU; RAM regions mapped
 *   PERM_R|W|X (executable physical bytes are what tells the decode caches
 *   of every CPU that code changed), MMIO as Device regions. A translated
 *   access nothing backs ends the run with a 'busError' event.
 * - interrupts: runSystemCpu asks the InterruptLine between runs of the
 *   interpreter (an instruction boundary): NMI first (nmiPending() is an
 *   edge: answer true once per NMI; it is not asked while an NMI handler
 *   runs, until its IRETQ), then pendingVector() when RFLAGS.IF = 1 and no
 *   STI / MOV SS shadow is pending, acknowledge(vector) as it is taken. A
 *   run ends early after STI, POPF/IRETQ/SYSRETQ setting IF, WRMSR, MOV
 *   CR8, OUT/OUTS and INT n, so an interrupt they make deliverable is taken
 *   at the next boundary; when an MMIO write (an EOI, the TPR) or another
 *   CPU (an IPI) makes one deliverable while this CPU runs, call its
 *   endRun(), or give it short slices.
 * - HLT: the run returns { halted: true } and the CPU stays halted until an
 *   interrupt is taken (or an NMI); the platform advances its virtual clock
 *   to its next device event (the idle time skipped) and calls again.
 * - the TSC is VirtualClock.nowNs() at VirtualClock.tscHz (CPUID 0x15/0x16
 *   advertise it), plus the offset a WRMSR to IA32_TSC sets.
 * - MSRs the CPU does not own go to PlatformMsrs (IA32_APIC_BASE, TSC
 *   deadline, ...); undefined / false there is #GP(0), logged once per MSR
 *   with the rip through SystemState.log.
 * - events (triple fault, bus error, a mode that is not emulated) are
 *   { event } results: the guest stops, the host does not throw.
 *
 * Application processors: only long mode is emulated. Linux 6.1 starts an
 * AP with INIT + SIPI at the real-mode trampoline (arch/x86/realmode/rm/
 * trampoline_64.S), which goes 16 -> 32 -> 64-bit and jumps to
 * trampoline_header->start (secondary_startup_64) with CR3 =
 * trampoline_pgd, CR4 = trampoline_header->cr4, EFER = trampoline_header
 * ->efer. The route without 16/32-bit emulation: on the SIPI, the platform
 * reads those fields through the real_mode_header at vector << 12 (its
 * layout follows the kernel's configuration: check it against the booted
 * kernel's realmode/rm/header.S) and creates the AP with createSystemCpu
 * at that state (any GDT with a 64-bit code segment at 0x10 and data at
 * 0x18: secondary_startup_64 loads its own at once).
 *
 * The block translator (emulator/jit) runs a system-mode CPU as it runs
 * the emulated kernel's, in the mode the platform asks for
 * (X86Platform.translate, else KPROBE_TRANSLATE): its TLB is filled
 * through this CPU's page walk (PagedMemory.directAddress: the access's
 * own translation, A/D bits and all; a walk that would fault leaves
 * translated code before the instruction and the interpreter raises the
 * #PF), and is flushed whenever the paged TLB is (tlbGeneration: MOV CR3,
 * INVLPG, CR0/CR4/EFER changes) or the privilege changes. Translations
 * are keyed by linear address and dropped as the paged TLB drops the
 * linear page's mapping (the decode caches' rule below: a CR3 load drops
 * the non-global code pages, INVLPG its page, a CR4.PGE flip all) or its
 * physical bytes are written through any mapping; translated stores never
 * go straight into a physical page some CPU decoded from. System
 * instructions end a block and run in the interpreter (jit.ts
 * interpretOnly), so interrupts are taken at the same boundaries.
 */
import type { Memory } from '../../../memory/memory';
import { PERM_X } from '../../../memory/memory';
import { X86Cpu } from '../cpu';
import { PagedMemory } from './paging';
import { CR0_ET, CR0_PE, CR0_PG, CR4_PAE, EFER_LMA, EFER_LME, SystemState, X86Platform } from './state';
import { runSystem, SystemRunResult } from './delivery';
import { mustVAddr } from '../../../memory/address';
import type { LongModeStart } from '../../../system/types';
import { defaultTranslateMode, translatorFor, type FrontEnd } from '../../../jit';
import { x86FrontEnd } from '../jit';

/** where and how a CPU starts in long mode: the platform's contract (emulator/system/types.ts) */
export type LongModeEntry = LongModeStart;

/** A CPU with its system half, at the loader's 64-bit entry state. */
export function createSystemCpu(id: number, phys: Memory, platform: X86Platform, entry: LongModeEntry): X86Cpu {
  for (const r of phys.allRegions()) {
    if (!r.device && (r.perms & PERM_X) === 0) throw new RangeError(`physical RAM region ${r.name} must be mapped executable (PERM_X): code writes reach the decode caches through it`);
  }
  const mem = new PagedMemory(phys, `cpu${id} linear`);
  const cpu = new X86Cpu(id, mem);
  const s = new SystemState(mem, platform);
  s.cr0 = (entry.cr0 ?? (CR0_PE | CR0_ET | CR0_PG)) >>> 0;
  s.cr4 = entry.cr4 ?? CR4_PAE;
  s.efer = entry.efer ?? (EFER_LME | EFER_LMA);
  s.cr3 = Number(entry.cr3);
  s.gdtBase = mustVAddr(entry.gdtBase);
  s.gdtLimit = entry.gdtLimit;
  s.idtLimit = 0;
  s.cs = entry.cs ?? 0x10;
  s.ss = s.ds = s.es = entry.ds ?? 0x18;
  s.syncPaging();
  cpu.sys = s;
  cpu.userMode = false;
  cpu.setRflags(0x2);
  for (const [r, v] of entry.regs ?? []) {
    const u = BigInt.asUintN(64, v);
    cpu.lo[r] = Number(u & 0xffffffffn) | 0;
    cpu.hi[r] = Number(u >> 32n) | 0;
  }
  cpu.setPc(entry.rip);
  const t = translatorFor('x86_64', x86FrontEnd as unknown as FrontEnd<unknown, never>, platform.translate ?? defaultTranslateMode());
  cpu.jit = t as unknown as X86Cpu['jit'];
  return cpu;
}

/** the system half of a CPU made by createSystemCpu */
export function systemOf(cpu: X86Cpu): SystemState {
  if (cpu.sys === null) throw new Error(`x86_64 cpu ${cpu.id} has no system half`);
  return cpu.sys;
}

/**
 * Run up to `budget` instructions: interrupts from the platform's
 * InterruptLine between instructions when IF = 1, exceptions through the
 * IDT. `halted`: the CPU waits in HLT (advance the clock to the next
 * device event, then call again); `event`: the machine must stop (triple
 * fault, a physical address nothing backs).
 */
export function runSystemCpu(cpu: X86Cpu, budget: number): SystemRunResult {
  return runSystem(cpu, systemOf(cpu), budget);
}

export type { SystemRunResult };
