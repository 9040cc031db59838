/**
 * The x86_64 CPU's system half: the privileged state a full-system machine's
 * CPU has (SDM vol. 3 ch. 2): the control registers, EFER and the MSRs
 * Linux touches, the descriptor-table registers, the segment selectors and
 * the current privilege level, the interrupt shadow, the halt state, and
 * the platform the CPU talks to (I/O ports, its interrupt line, the
 * platform's MSRs, the virtual clock). A CPU without one (`X86Cpu.sys`
 * null: the emulated-kernel machine's) behaves as before.
 *
 * Only CPL 0 and 3 exist (Linux uses no other ring); the code segment is
 * always 64-bit (long mode is entered by the loader: the 32-bit and 16-bit
 * modes are not emulated).
 */
import type { IoPorts, InterruptLine, PlatformMsrs, VirtualClock } from '../../../system/types';
import type { X86Cpu } from '../cpu';
import type { VAddr } from '../../../memory/address';
import { fromVAddr, toVAddr } from '../../../memory/address';
import { PagedMemory } from './paging';
import { gp } from './exception';

export interface X86Platform {
  readonly io: IoPorts;
  readonly irq: InterruptLine;
  readonly msrs: PlatformMsrs;
  readonly clock: VirtualClock;
  /** the block translator's mode for this CPU (else the process default, KPROBE_TRANSLATE) */
  readonly translate?: 'on' | 'off' | 'lockstep';
}

/** What ends a system-mode machine rather than the guest's code (reported, never a host exception). */
export interface MachineEvent {
  /** debugBreak: an execute breakpoint of the debugger (delivery.ts DEBUGGER_SLOT0), not an end: the debugger clears `event` to go on */
  kind: 'tripleFault' | 'busError' | 'unsupported' | 'debugBreak';
  /** rip of the instruction at fault */
  rip: bigint;
  detail: string;
}

export const CR0_PE = 1, CR0_MP = 2, CR0_EM = 4, CR0_TS = 8, CR0_ET = 0x10, CR0_NE = 0x20, CR0_WP = 0x10000, CR0_AM = 0x40000,
  CR0_NW = 0x20000000, CR0_CD = 0x40000000, CR0_PG = 0x80000000;
/** CR4 bits this CPU implements: DE PSE PAE MCE PGE PCE OSFXSR OSXMMEXCPT TSD (LA57, PCIDE, FSGSBASE, OSXSAVE, SMEP, SMAP, UMIP are not offered) */
export const CR4_TSD = 4, CR4_DE = 8, CR4_PSE = 0x10, CR4_PAE = 0x20, CR4_MCE = 0x40, CR4_PGE = 0x80, CR4_PCE = 0x100,
  CR4_OSFXSR = 0x200, CR4_OSXMMEXCPT = 0x400;
export const CR4_SUPPORTED = CR4_TSD | CR4_DE | CR4_PSE | CR4_PAE | CR4_MCE | CR4_PGE | CR4_PCE | CR4_OSFXSR | CR4_OSXMMEXCPT;
export const EFER_SCE = 1n, EFER_LME = 0x100n, EFER_LMA = 0x400n, EFER_NXE = 0x800n;
const EFER_WRITABLE = EFER_SCE | EFER_LME | EFER_NXE;

export const MSR_TSC = 0x10, MSR_APIC_BASE = 0x1b, MSR_UCODE_REV = 0x8b, MSR_ARCH_CAPABILITIES = 0x10a, MSR_MISC_ENABLE = 0x1a0,
  MSR_PAT = 0x277, MSR_EFER = 0xc0000080, MSR_STAR = 0xc0000081, MSR_LSTAR = 0xc0000082, MSR_CSTAR = 0xc0000083,
  MSR_SFMASK = 0xc0000084, MSR_FS_BASE = 0xc0000100, MSR_GS_BASE = 0xc0000101, MSR_KERNEL_GS_BASE = 0xc0000102,
  MSR_TSC_AUX = 0xc0000103, MSR_DEBUGCTL = 0x1d9, MSR_SYSENTER_CS = 0x174, MSR_SYSENTER_ESP = 0x175, MSR_SYSENTER_EIP = 0x176;
/**
 * IA32_ARCH_CAPABILITIES: RDCL_NO, SKIP_L1DFL_VMENTRY, SSB_NO, MDS_NO, PSCHANGE_MC_NO, TAA_NO,
 * SBDR_SSDP_NO, FBSDP_NO, PSDP_NO: an emulator has none of these speculation flaws, and saying so keeps
 * Linux off the mitigations (page-table isolation, buffer clearing) that would only cost time
 */
export const ARCH_CAPABILITIES = 1n | 8n | 16n | 32n | 64n | 256n | (1n << 13n) | (1n << 14n) | (1n << 15n);
/** IA32_PAT at reset (SDM vol. 3 11.12.4) */
const PAT_RESET = 0x0007040600070406n;
/** IA32_MISC_ENABLE: fast strings (bit 0), and bit 11/12 (no BTS, no PEBS) read as 1 */
const MISC_ENABLE_RESET = 1n | (1n << 11n) | (1n << 12n);

export class SystemState {
  cr0 = CR0_PE | CR0_ET | CR0_PG | CR0_WP | CR0_NE;
  cr2: VAddr = 0;
  cr3 = 0;
  cr4 = CR4_PAE;
  /** CR8: the task-priority class (the local APIC's TPR bits 7:4 belong to the platform; this is the CPU's copy) */
  cr8 = 0;
  efer = EFER_LME | EFER_LMA;
  /** selectors (the descriptor caches are implied: flat segments, 64-bit code) */
  cs = 0x10; ss = 0x18; ds = 0; es = 0; fs = 0; gs = 0;
  gdtBase: VAddr = 0; gdtLimit = 0xffff;
  idtBase: VAddr = 0; idtLimit = 0xffff;
  tr = 0; trBase: VAddr = 0; trLimit = 0;
  ldtr = 0; ldtBase: VAddr = 0; ldtLimit = 0;
  star = 0n; lstar: VAddr = 0; cstar = 0n; sfmask = 0n; kernelGsBase: VAddr = 0; tscAux = 0n;
  pat = PAT_RESET; miscEnable = MISC_ENABLE_RESET;
  /** IA32_SYSENTER_CS / ESP / EIP: what SYSENTER and SYSEXIT use (exec/privileged.ts; Linux's syscall_init writes them) */
  readonly sysenter = [0n, 0n, 0n];
  /** added to the clock's TSC value (a write to IA32_TSC) */
  tscOffset = 0n;
  /** the instruction after STI (or MOV SS) runs before any interrupt */
  intShadow = false;
  /** HLT: no instruction runs until an interrupt (or NMI) arrives */
  halted = false;
  /** an NMI handler runs (until IRET) */
  nmiBlocked = false;
  /** set when the machine must stop (triple fault, a physical address nothing backs) */
  event: MachineEvent | null = null;
  /** MSRs and ports the platform lacks, logged once each (by the platform's logger: `log`) */
  readonly reported = new Set<string>();
  log: (line: string) => void = () => { /* the platform's logger */ };

  constructor(readonly mem: PagedMemory, readonly platform: X86Platform) {}

  /** current privilege level (0 or 3) */
  get cpl(): number { return this.cs & 3; }

  /** log a missing MSR / port once, with the rip */
  reportOnce(key: string, line: string): void {
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.log(line);
  }

  /** the TSC: the virtual clock's nanoseconds at the advertised frequency, plus the offset a WRMSR set */
  tsc(): bigint {
    const c = this.platform.clock;
    return BigInt.asUintN(64, (c.nowNs() * c.tscHz) / 1000000000n + this.tscOffset);
  }

  /** the paging controls the linear address space reads, after a CR0/CR3/CR4/EFER change */
  syncPaging(): void {
    const m = this.mem;
    m.paging = (this.cr0 & CR0_PG) !== 0;
    m.wp = (this.cr0 & CR0_WP) !== 0;
    m.nxe = (this.efer & EFER_NXE) !== 0n;
    m.pge = (this.cr4 & CR4_PGE) !== 0;
    m.root = Math.floor(this.cr3 / 4096) * 4096 % 2 ** 40;
  }
}

function canon(v: bigint, what: string): VAddr {
  const a = toVAddr(v);
  if (a === null) throw gp(0, `wrmsr ${what}: 0x${v.toString(16)} is not canonical`);
  return a;
}

/** RDMSR (CPL 0 checked by the caller): the value, or #GP(0) for an MSR neither the CPU nor the platform has */
export function readMsr(cpu: X86Cpu, s: SystemState, msr: number, at: VAddr): bigint {
  switch (msr) {
    case MSR_EFER: return s.efer;
    case MSR_STAR: return s.star;
    case MSR_LSTAR: return fromVAddr(s.lstar);
    case MSR_CSTAR: return s.cstar;
    case MSR_SFMASK: return s.sfmask;
    case MSR_FS_BASE: return fromVAddr(cpu.fsBase);
    case MSR_GS_BASE: return fromVAddr(cpu.gsBase);
    case MSR_KERNEL_GS_BASE: return fromVAddr(s.kernelGsBase);
    case MSR_TSC_AUX: return s.tscAux;
    case MSR_TSC: return s.tsc();
    case MSR_PAT: return s.pat;
    case MSR_MISC_ENABLE: return s.miscEnable;
    case MSR_ARCH_CAPABILITIES: return ARCH_CAPABILITIES;
    case MSR_UCODE_REV: return 1n << 32n;
    case MSR_DEBUGCTL: return 0n;
    case MSR_SYSENTER_CS: case MSR_SYSENTER_ESP: case MSR_SYSENTER_EIP: return s.sysenter[msr - MSR_SYSENTER_CS];
    default: {
      const v = s.platform.msrs.rdmsr(cpu.id, msr);
      if (v !== undefined) return BigInt.asUintN(64, v);
      s.reportOnce(`rdmsr:${msr}`, `cpu ${cpu.id}: rdmsr 0x${msr.toString(16)}: no such MSR (#GP) at rip 0x${fromVAddr(at).toString(16)}`);
      throw gp(0, `rdmsr 0x${msr.toString(16)}: no such MSR`);
    }
  }
}

/** WRMSR (CPL 0 checked by the caller): #GP(0) for an unknown MSR or a value with reserved bits */
export function writeMsr(cpu: X86Cpu, s: SystemState, msr: number, v: bigint, at: VAddr): void {
  switch (msr) {
    case MSR_EFER: {
      if ((v & ~EFER_WRITABLE & ~EFER_LMA) !== 0n) throw gp(0, `wrmsr EFER: reserved bits in 0x${v.toString(16)}`);
      // LMA is read-only; LME may not change while paging is on
      if (((v ^ s.efer) & EFER_LME) !== 0n) throw gp(0, 'wrmsr EFER: LME changed with paging on');
      const nxeChanged = ((v ^ s.efer) & EFER_NXE) !== 0n;
      s.efer = (v & EFER_WRITABLE) | (s.efer & EFER_LMA);
      s.syncPaging();
      if (nxeChanged) s.mem.flushAll();
      return;
    }
    case MSR_STAR: s.star = v; return;
    case MSR_LSTAR: s.lstar = canon(v, 'LSTAR'); return;
    case MSR_CSTAR: canon(v, 'CSTAR'); s.cstar = v; return;
    case MSR_SFMASK: s.sfmask = v & 0xffffffffn; return;
    case MSR_FS_BASE: cpu.fsBase = canon(v, 'FS_BASE'); return;
    case MSR_GS_BASE: cpu.gsBase = canon(v, 'GS_BASE'); return;
    case MSR_KERNEL_GS_BASE: s.kernelGsBase = canon(v, 'KERNEL_GS_BASE'); return;
    case MSR_TSC_AUX:
      if (v >> 32n !== 0n) throw gp(0, 'wrmsr TSC_AUX: bits 63:32 are reserved');
      s.tscAux = v; return;
    case MSR_TSC: s.tscOffset = 0n; s.tscOffset = v - s.tsc(); return;
    case MSR_PAT:
      for (let k = 0n; k < 64n; k += 8n) {
        const t = (v >> k) & 0xffn;
        if (t === 2n || t === 3n || t > 7n) throw gp(0, `wrmsr PAT: bad memory type in 0x${v.toString(16)}`);
      }
      s.pat = v; return;
    case MSR_MISC_ENABLE: s.miscEnable = v; return;
    case MSR_UCODE_REV: return; // writing 0 before CPUID(1) makes the revision readable: nothing to do
    case MSR_SYSENTER_CS: s.sysenter[0] = v & 0xffffn; return;
    case MSR_SYSENTER_ESP: case MSR_SYSENTER_EIP: s.sysenter[msr - MSR_SYSENTER_CS] = fromVAddr(canon(v, 'SYSENTER')); return;
    case MSR_DEBUGCTL:
      // no last-branch records, no branch single-step: only 0 is a value this CPU has
      if (v !== 0n) throw gp(0, `wrmsr DEBUGCTL 0x${v.toString(16)}: LBR/BTF are not emulated`);
      return;
    default:
      if (s.platform.msrs.wrmsr(cpu.id, msr, v)) return;
      s.reportOnce(`wrmsr:${msr}`, `cpu ${cpu.id}: wrmsr 0x${msr.toString(16)} = 0x${v.toString(16)}: no such MSR (#GP) at rip 0x${fromVAddr(at).toString(16)}`);
      throw gp(0, `wrmsr 0x${msr.toString(16)}: no such MSR or value refused`);
  }
}
