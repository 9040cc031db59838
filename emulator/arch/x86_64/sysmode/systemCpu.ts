/**
 * How the full-system machine makes and runs an x86_64 CPU with its system
 * half: from the state a boot loader leaves for the 64-bit boot protocol
 * (Linux's Documentation/arch/x86/boot.rst "64-bit Boot Protocol": long
 * mode, paging on with the loader's identity-mapped page tables, a GDT
 * whose __BOOT_CS (0x10) is 64-bit code and __BOOT_DS (0x18) flat data,
 * interrupts off, rsi = the boot_params), or an application processor's
 * start in long mode.
 *
 * The CPU's memory is a PagedMemory over the platform's physical Memory
 * (RAM regions must be mapped PERM_R|W|X there: executable physical bytes
 * are what tells the decode caches of every CPU that code changed). The
 * block translator is not attached (X86Cpu.jit stays null): system mode is
 * interpreted.
 */
import type { Memory } from '../../../memory/memory';
import { PERM_X } from '../../../memory/memory';
import { X86Cpu } from '../cpu';
import { PagedMemory } from './paging';
import { CR0_ET, CR0_PE, CR0_PG, CR4_PAE, EFER_LMA, EFER_LME, SystemState, X86Platform } from './state';
import { runSystem, SystemRunResult } from './delivery';
import { mustVAddr } from '../../../memory/address';

export interface LongModeEntry {
  /** where the CPU starts (startup_64: the kernel's load address + 0x200) */
  rip: bigint;
  /** the PML4's physical address */
  cr3: bigint;
  /** the GDT the loader built (its 0x10 a 64-bit code segment, 0x18 a data segment) */
  gdtBase: bigint;
  gdtLimit: number;
  /** general registers by hardware number (rsi = 6: the boot_params' physical address) */
  regs?: ReadonlyMap<number, bigint>;
  /** selectors; default __BOOT_CS 0x10 and __BOOT_DS 0x18 */
  cs?: number;
  ds?: number;
  /** CR0 (default PE | ET | PG), CR4 (default PAE), EFER (default LME | LMA) */
  cr0?: number;
  cr4?: number;
  efer?: bigint;
}

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
