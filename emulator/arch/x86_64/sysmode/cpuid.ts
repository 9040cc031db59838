/**
 * CPUID of a system-mode CPU: what the full-system machine emulates and
 * nothing more, for Linux 6.1 (arch/x86/kernel/cpu/). GenuineIntel family
 * 6 model 0x3a stepping 9 (the same signature the emulated-kernel machine's
 * CPUID gives), with IA32_ARCH_CAPABILITIES saying the speculation flaws
 * are absent, so that Linux takes no page-table-isolation or buffer-clearing
 * path.
 *
 * Leaves: 0 (max 0x16), 1, 7.0, 0x15 / 0x16 (the TSC frequency from the
 * virtual clock: Linux's native_calibrate_tsc reads it, and marks the
 * frequency known), 0x80000000 (max 0x80000008), 0x80000001, 0x80000002-4
 * (brand), 0x80000007 (invariant TSC), 0x80000008 (40 physical, 48 linear
 * address bits: 4-level paging, no LA57). Every other leaf (4, 0xb, 0xd:
 * no XSAVE) reads as zeros, which Linux takes as "not enumerated".
 *
 * Leaf 1 edx: fpu de pse tsc msr pae cx8 apic sep pge cmov pat clflush fxsr
 * sse sse2 (sep: SYSENTER/SYSEXIT as Intel runs them in 64-bit mode); ecx:
 * cx16 popcnt. Leaf 7 ebx: bmi1; ecx: rdpid (Linux's vDSO getcpu then reads
 * IA32_TSC_AUX with it instead of LSL of its per-CPU GDT entry; both are
 * emulated); edx: arch_capabilities.
 * 0x80000001 ecx: lahf_lm abm(lzcnt); edx: syscall nx pdpe1gb rdtscp lm.
 * Not offered: mce/mca, mtrr, mmx, sse3+, xsave/avx, fsgsbase, smep,
 * smap, umip, pcid, invpcid, la57, x2apic, tsc-deadline, hypervisor.
 */
import type { X86Cpu } from '../cpu';
import type { SystemState } from './state';

const VENDOR = 'GenuineIntel';
const BRAND = 'kprobe-debug virtual x86_64 CPU';
function str4(s: string, k: number): number {
  return (s.charCodeAt(k) || 0) | ((s.charCodeAt(k + 1) || 0) << 8) | ((s.charCodeAt(k + 2) || 0) << 16) | ((s.charCodeAt(k + 3) || 0) << 24);
}
const bit = (...ns: number[]): number => ns.reduce((a, n) => a | (1 << n), 0);

export const SYS_CPUID1_EDX = bit(0, 2, 3, 4, 5, 6, 8, 9, 11, 13, 15, 16, 19, 24, 25, 26);
export const SYS_CPUID1_ECX = bit(13, 23);
export const SYS_CPUID7_EBX = bit(3);
export const SYS_CPUID7_ECX = bit(22);
export const SYS_CPUID7_EDX = bit(29);
export const SYS_EXT1_ECX = bit(0, 5);
export const SYS_EXT1_EDX = bit(11, 20, 26, 27, 29);

export function cpuidSys(cpu: X86Cpu, s: SystemState): void {
  const leaf = cpu.lo[0] >>> 0, sub = cpu.lo[1] >>> 0;
  let a = 0, b = 0, c = 0, d = 0;
  switch (leaf) {
    case 0: a = 0x16; b = str4(VENDOR, 0); d = str4(VENDOR, 4); c = str4(VENDOR, 8); break;
    case 1: a = 0x000306a9; b = (cpu.id << 24) | (8 << 8); c = SYS_CPUID1_ECX; d = SYS_CPUID1_EDX; break;
    case 7: if (sub === 0) { b = SYS_CPUID7_EBX; c = SYS_CPUID7_ECX; d = SYS_CPUID7_EDX; } break;
    case 0x15: {
      // TSC = crystal * ebx / eax: a crystal at the TSC's own frequency, ratio 1
      const hz = s.platform.clock.tscHz;
      if (hz > 0n && hz < 0x100000000n) { a = 1; b = 1; c = Number(hz) | 0; }
      break;
    }
    case 0x16: { const mhz = Number(s.platform.clock.tscHz / 1000000n) & 0xffff; a = mhz; b = mhz; c = 100; break; }
    case 0x80000000: a = 0x80000008 | 0; break;
    case 0x80000001: c = SYS_EXT1_ECX; d = SYS_EXT1_EDX; break;
    case 0x80000002: case 0x80000003: case 0x80000004: {
      const o = (leaf - 0x80000002) * 16;
      a = str4(BRAND, o); b = str4(BRAND, o + 4); c = str4(BRAND, o + 8); d = str4(BRAND, o + 12);
      break;
    }
    case 0x80000007: d = bit(8); break;
    case 0x80000008: a = 0x3028; break;
    default: break;
  }
  const lo = cpu.lo, hi = cpu.hi;
  lo[0] = a; lo[3] = b; lo[1] = c; lo[2] = d;
  hi[0] = hi[3] = hi[1] = hi[2] = 0;
}
