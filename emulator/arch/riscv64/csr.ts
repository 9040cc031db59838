/**
 * The supervisor CSRs the emulated kernel and user code touch (Zicsr):
 * numbers, privilege, read/write masks. User mode reads the counters
 * (cycle, time, instret) and reads and writes the floating-point CSRs
 * (fflags, frm, fcsr); everything else is an illegal instruction there.
 */
export const CSR = {
  fflags: 0x001, frm: 0x002, fcsr: 0x003,
  sstatus: 0x100, sie: 0x104, stvec: 0x105, scounteren: 0x106,
  sscratch: 0x140, sepc: 0x141, scause: 0x142, stval: 0x143, sip: 0x144,
  satp: 0x180,
  cycle: 0xc00, time: 0xc01, instret: 0xc02,
} as const;

/** sstatus bits software may change: SIE, SPIE, SPP, SUM, MXR (plus UXL read-only = 2) */
export const SSTATUS_WMASK = 0x2n | 0x20n | 0x100n | 0x40000n | 0x80000n;
export const SSTATUS_SPP = 0x100n;
export const SSTATUS_SIE = 0x2n;
export const SSTATUS_SPIE = 0x20n;
/** UXL = 2 (64-bit user mode), read-only */
export const SSTATUS_UXL64 = 2n << 32n;

/** CSR names as llvm-objdump prints them. */
export const CSR_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(CSR).map(([k, v]) => [v, k]),
);
