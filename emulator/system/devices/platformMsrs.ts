/**
 * The model-specific registers the PC platform owns (the CPU's system half
 * asks here for MSRs it does not implement itself; undefined / false make
 * it raise #GP(0), as Linux's rdmsr_safe / wrmsr_safe expect):
 *   IA32_APIC_BASE (0x1b)   the local APIC's base, global enable, BSP flag;
 *                           x2APIC mode (EXTD) is not offered, relocation
 *                           away from 0xfee00000 is refused;
 *   IA32_TSC_DEADLINE (0x6e0) the local APIC timer's deadline.
 */
import type { PlatformMsrs } from '../types';
import type { LocalApic } from './localApic';
import { APIC_BASE_BSP, APIC_BASE_EN, APIC_BASE_EXTD, APIC_DEFAULT_BASE } from './localApic';

export const MSR_IA32_APIC_BASE = 0x1b;
export const MSR_IA32_TSC_DEADLINE = 0x6e0;

export class PcPlatformMsrs implements PlatformMsrs {
  constructor(private readonly apics: readonly LocalApic[]) {}

  rdmsr(cpu: number, msr: number): bigint | undefined {
    const apic = this.apics[cpu];
    if (!apic) return undefined;
    if (msr === MSR_IA32_APIC_BASE) return apic.apicBase;
    if (msr === MSR_IA32_TSC_DEADLINE) return apic.readTscDeadline();
    return undefined;
  }

  wrmsr(cpu: number, msr: number, value: bigint): boolean {
    const apic = this.apics[cpu];
    if (!apic) return false;
    if (msr === MSR_IA32_TSC_DEADLINE) { apic.writeTscDeadline(value); return true; }
    if (msr !== MSR_IA32_APIC_BASE) return false;
    const v = BigInt.asUintN(64, value);
    const reserved = ~(0xfffff000n | APIC_BASE_EN | APIC_BASE_EXTD | APIC_BASE_BSP) & 0xffffffffffffffffn;
    if (v & reserved) return false;
    if (v & APIC_BASE_EXTD) return false; // no x2APIC
    if ((v & 0xfffff000n) !== BigInt(APIC_DEFAULT_BASE)) return false;
    const wasEnabled = apic.hardwareEnabled;
    apic.apicBase = (v & ~APIC_BASE_BSP) | (apic.apicBase & APIC_BASE_BSP);
    if (wasEnabled && !apic.hardwareEnabled) apic.reset(); // a globally disabled APIC loses its state
    return true;
  }
}
