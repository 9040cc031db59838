/**
 * The arm64 self-hosted debug registers of one A64 CPU: breakpoint pairs
 * DBGBVR<n>_EL1 / DBGBCR<n>_EL1 (n < 6), watchpoint pairs DBGWVR<n>_EL1 /
 * DBGWCR<n>_EL1 (n < 4), MDSCR_EL1 and the read-only ID_AA64DFR0_EL1 that
 * advertises the counts. MRS/MSR (exec/system.ts) and the port's
 * hw_breakpoint hooks (hwBreakpoint.ts) both read and write them here, and
 * every write is decoded at once into the CPU's arch-neutral match unit
 * (cpu/hwDebug.ts, `cpu.hw`).
 *
 * Slot numbering in the match unit (so a trap's `hits` names its kind):
 *   bit n      (n < 6):  breakpoint register pair n (DBGBVR<n>/DBGBCR<n>)
 *   bit 16 + n (n < 4):  watchpoint register pair n (DBGWVR<n>/DBGWCR<n>)
 *
 * What is modelled (Arm ARM D2 "Breakpoint / Watchpoint exceptions"):
 *  - Enabling (the debug exception is taken from the current EL, the
 *    debug target EL being EL1): MDSCR_EL1.MDE must be 1; at EL0 that is
 *    enough; at EL1 also MDSCR_EL1.KDE = 1 and PSTATE.D = 0. The OS Lock
 *    and OS Double Lock are not implemented (always unlocked).
 *  - Privilege (DBGxCR.PMC with HMC = 0, SSC = 0b00, the only EL1/EL0
 *    combinations there are without EL2/EL3): PMC bit 0 matches at EL1,
 *    bit 1 at EL0; HMC and SSC are stored and ignored. The unit has no
 *    privilege filter, so the CPU re-decodes the pairs whenever its EL or
 *    PSTATE.D changes (A64Cpu.run entry, DAIF writes): a pair whose PMC
 *    excludes the current EL is not armed. Unprivileged loads/stores
 *    (LDTR/STTR) are checked against the current EL, not as EL0.
 *  - Breakpoints: BT = 0b0000 (unlinked instruction address match) only;
 *    linked and context / VMID / mismatch types never match (no
 *    context-ID comparison is implemented). The address is DBGBVR[48:2]
 *    sign-extended from bit 48. BAS: A64 instructions are matched by
 *    BAS = 0b1111; 0b0000 never matches; the other (T32 halfword) values
 *    are CONSTRAINED UNPREDICTABLE for A64 and here match when BAS bit 0
 *    selects the instruction's first halfword (Linux's breakpoint_handler
 *    test).
 *  - Watchpoints: WT = 0 (unlinked) only; LSC 01 load, 10 store, 11 both,
 *    00 (reserved) never matches. BAS selects bytes of the doubleword at
 *    DBGWVR[48:3] (or, when DBGWVR[2] = 1 - deprecated -, BAS[3:0] bytes
 *    of the word at DBGWVR[48:2], BAS[7:4] ignored); a non-contiguous BAS
 *    (CONSTRAINED UNPREDICTABLE in the architecture) matches exactly the
 *    selected bytes. MASK = 3..31 watches the 2^MASK-byte block containing
 *    DBGWVR (its low MASK bits are ignored); MASK = 1, 2 (reserved) never
 *    match; with MASK set BAS should be all ones, any other non-zero BAS
 *    is treated as all ones (BAS = 0 never matches).
 *  - An access matches when any byte it touches is watched (the unit's
 *    overlap rule); a load/store pair or a vector access is checked per
 *    element before any element moves (A64Cpu.watchAccess).
 * Writes to RES0 bits are dropped (a read returns the defined fields).
 */
import type { HwDebugUnit, HwSlotMatch } from '../../cpu/hwDebug';

/** breakpoint register pairs (ID_AA64DFR0_EL1.BRPs + 1) */
export const A64_BRPS = 6;
/** watchpoint register pairs (ID_AA64DFR0_EL1.WRPs + 1) */
export const A64_WRPS = 4;
/** the match-unit slot of watchpoint pair 0 (breakpoint pair n is slot n) */
export const A64_WATCH_SLOT = 16;

/** MDSCR_EL1 bits: SS (software step; stored, not modelled), TDCC, KDE, MDE */
export const MDSCR_SS = 1 << 0;
export const MDSCR_TDCC = 1 << 12;
export const MDSCR_KDE = 1 << 13;
export const MDSCR_MDE = 1 << 15;
const MDSCR_RW = MDSCR_SS | MDSCR_TDCC | MDSCR_KDE | MDSCR_MDE;

/** DBGxCR fields */
export const DBGCR_E = 1;
const DBGBCR_RW = 0x00ffe1e7; // E, PMC, BAS[8:5], HMC, SSC, LBN, BT
const DBGWCR_RW = 0x1f1fffff; // E, PAC, LSC, BAS[12:5], HMC, SSC, LBN, WT, MASK

/**
 * ID_AA64DFR0_EL1: DebugVer [3:0] = 0b0110 (Armv8.0 debug), TraceVer and
 * PMUVer 0 (not implemented), BRPs [15:12] = 6 - 1, WRPs [23:20] = 4 - 1,
 * CTX_CMPs [31:28] = 0 (one context-aware breakpoint, the architectural
 * minimum: BRP 5; context matching itself is not implemented).
 */
export const ID_AA64DFR0_EL1 = BigInt(0x6 | ((A64_BRPS - 1) << 12) | ((A64_WRPS - 1) << 20));

/** one debug system register: its kind and pair number */
type DebugReg = { kind: 'bvr' | 'bcr' | 'wvr' | 'wcr'; n: number } | { kind: 'mdscr' | 'dfr0'; n: 0 };

/** system register encodings (op0:op1:CRn:CRm:op2 as 16 bits, exec/system.ts) -> name */
export const DEBUG_SYSREGS: Record<number, string> = {};
const BY_NAME = new Map<string, DebugReg>();
function sysenc(op0: number, op1: number, crn: number, crm: number, op2: number): number {
  return (op0 << 14) | (op1 << 11) | (crn << 7) | (crm << 3) | op2;
}
function define(name: string, e: number, r: DebugReg): void { DEBUG_SYSREGS[e] = name; BY_NAME.set(name, r); }
for (let n = 0; n < A64_BRPS; n++) {
  define(`DBGBVR${n}_EL1`, sysenc(2, 0, 0, n, 4), { kind: 'bvr', n });
  define(`DBGBCR${n}_EL1`, sysenc(2, 0, 0, n, 5), { kind: 'bcr', n });
}
for (let n = 0; n < A64_WRPS; n++) {
  define(`DBGWVR${n}_EL1`, sysenc(2, 0, 0, n, 6), { kind: 'wvr', n });
  define(`DBGWCR${n}_EL1`, sysenc(2, 0, 0, n, 7), { kind: 'wcr', n });
}
define('MDSCR_EL1', sysenc(2, 0, 0, 2, 2), { kind: 'mdscr', n: 0 });
define('ID_AA64DFR0_EL1', sysenc(3, 0, 0, 5, 0), { kind: 'dfr0', n: 0 });

/** whether `name` is one of these registers */
export function isDebugSysreg(name: string): boolean { return BY_NAME.has(name); }

/** What the registers need from their CPU (A64Cpu). */
export interface DebugHost {
  readonly hw: HwDebugUnit;
  /** EL0 (true) or EL1 */
  readonly userMode: boolean;
  /** PSTATE.{D,A,I,F} as bits 3..0 */
  readonly daif: number;
}

const VA_LIMIT = 2 ** 47;

/** DBGxVR -> the VAddr it names (bits [48:low] sign-extended from bit 48), or null when no 48-bit VA can match */
function vaOf(v: bigint, alignBits: number): number | null {
  const va = BigInt.asIntN(49, v) & ~((1n << BigInt(alignBits)) - 1n);
  if (va >= BigInt(VA_LIMIT) || va < -BigInt(VA_LIMIT)) return null;
  return Number(va);
}

export class A64DebugRegs {
  readonly bvr: bigint[] = new Array<bigint>(A64_BRPS).fill(0n);
  readonly bcr: number[] = new Array<number>(A64_BRPS).fill(0);
  readonly wvr: bigint[] = new Array<bigint>(A64_WRPS).fill(0n);
  readonly wcr: number[] = new Array<number>(A64_WRPS).fill(0);
  mdscr = 0;
  /** the context the slots were last decoded for: bit 0 debug exceptions enabled, bit 1 EL0; -1 = stale */
  private applied = -1;

  constructor(private readonly host: DebugHost) {}

  /** MRS: the register's value; undefined when `name` is not a debug register */
  read(name: string): bigint | undefined {
    const r = BY_NAME.get(name);
    if (r === undefined) return undefined;
    switch (r.kind) {
      case 'bvr': return this.bvr[r.n];
      case 'bcr': return BigInt(this.bcr[r.n]);
      case 'wvr': return this.wvr[r.n];
      case 'wcr': return BigInt(this.wcr[r.n]);
      case 'mdscr': return BigInt(this.mdscr);
      default: return ID_AA64DFR0_EL1;
    }
  }

  /** MSR: false when `name` is not a writable debug register (the MSR is UNDEFINED) */
  write(name: string, v: bigint): boolean {
    const r = BY_NAME.get(name);
    if (r === undefined) return false;
    const u = BigInt.asUintN(64, v);
    switch (r.kind) {
      case 'bvr': this.bvr[r.n] = u & ~3n; break;
      case 'bcr': this.bcr[r.n] = Number(u & 0xffffffffn) & DBGBCR_RW; break;
      case 'wvr': this.wvr[r.n] = u & ~3n; break;
      case 'wcr': this.wcr[r.n] = Number(u & 0xffffffffn) & DBGWCR_RW; break;
      case 'mdscr': this.mdscr = Number(u & 0xffffffffn) & MDSCR_RW; break;
      default: return false; // ID_AA64DFR0_EL1 is read-only
    }
    this.applied = -1;
    this.sync();
    return true;
  }

  /** breakpoint / watchpoint debug exceptions are enabled at the current EL */
  enabled(): boolean {
    const h = this.host;
    if ((this.mdscr & MDSCR_MDE) === 0) return false;
    return h.userMode || ((this.mdscr & MDSCR_KDE) !== 0 && (h.daif & 8) === 0);
  }

  /**
   * Decode the pairs into the match unit for the current EL and enables
   * (cheap when nothing changed: the CPU calls it as each run starts and
   * when PSTATE.D changes).
   */
  sync(): void {
    const h = this.host;
    const en = this.enabled();
    const ctx = (en ? 1 : 0) | (h.userMode ? 2 : 0);
    if (ctx === this.applied) return;
    this.applied = ctx;
    const el0 = h.userMode;
    for (let n = 0; n < A64_BRPS; n++) setIfChanged(h.hw, n, en ? this.breakpoint(n, el0) : null);
    // (the unit tells its CPU when the armed slots change: the address space's watcher follows, even mid-run)
    for (let n = 0; n < A64_WRPS; n++) setIfChanged(h.hw, A64_WATCH_SLOT + n, en ? this.watchpoint(n, el0) : null);
  }

  /** the breakpoint pair n as a match at EL0 (el0) or EL1, or null when it cannot match there */
  private breakpoint(n: number, el0: boolean): HwSlotMatch | null {
    const c = this.bcr[n];
    if ((c & DBGCR_E) === 0 || !pmcAllows(c, el0)) return null;
    const bt = (c >>> 20) & 0xf, bas = (c >>> 5) & 0xf;
    if (bt !== 0 || (bas & 1) === 0) return null;
    const lo = vaOf(this.bvr[n], 2);
    return lo === null ? null : { lo, len: 4, exec: true, read: false, write: false };
  }

  /** the watchpoint pair n as a match at EL0 (el0) or EL1, or null when it cannot match there */
  private watchpoint(n: number, el0: boolean): HwSlotMatch | null {
    const c = this.wcr[n];
    if ((c & DBGCR_E) === 0 || !pmcAllows(c, el0)) return null;
    const lsc = (c >>> 3) & 3, wt = (c >>> 20) & 1, mask = (c >>> 24) & 0x1f;
    let bas = (c >>> 5) & 0xff;
    if (lsc === 0 || wt !== 0 || bas === 0) return null;
    const read = (lsc & 1) !== 0, write = (lsc & 2) !== 0;
    if (mask !== 0) {
      if (mask < 3) return null;
      const lo = vaOf(this.wvr[n], mask);
      return lo === null ? null : { lo, len: 2 ** mask, exec: false, read, write };
    }
    let lo: number | null;
    if ((this.wvr[n] & 4n) !== 0n) { lo = vaOf(this.wvr[n], 2); bas &= 0xf; if (bas === 0) return null; }
    else lo = vaOf(this.wvr[n], 3);
    if (lo === null) return null;
    // the span from the doubleword (word) to the last selected byte; byteMask when the selection has holes
    const first = 31 - Math.clz32(bas & -bas), last = 31 - Math.clz32(bas);
    const span = bas >>> first;
    const contiguous = (span & (span + 1)) === 0;
    return contiguous
      ? { lo: lo + first, len: last - first + 1, exec: false, read, write }
      : { lo, len: last + 1, exec: false, read, write, byteMask: bas };
  }

  /** the enabled pairs and MDSCR_EL1 as (name, value) for the debugger's views */
  snapshot(): { name: string; value: bigint }[] {
    const out: { name: string; value: bigint }[] = [];
    for (let n = 0; n < A64_BRPS; n++) {
      if (this.bcr[n] & DBGCR_E) out.push({ name: `DBGBVR${n}_EL1`, value: this.bvr[n] }, { name: `DBGBCR${n}_EL1`, value: BigInt(this.bcr[n]) });
    }
    for (let n = 0; n < A64_WRPS; n++) {
      if (this.wcr[n] & DBGCR_E) out.push({ name: `DBGWVR${n}_EL1`, value: this.wvr[n] }, { name: `DBGWCR${n}_EL1`, value: BigInt(this.wcr[n]) });
    }
    out.push({ name: 'MDSCR_EL1', value: BigInt(this.mdscr) });
    return out;
  }
}

/** PMC (bits [2:1]) with HMC = 0, SSC = 0b00: bit 0 matches at EL1, bit 1 at EL0 */
function pmcAllows(ctrl: number, el0: boolean): boolean {
  return ((ctrl >>> 1) & (el0 ? 2 : 1)) !== 0;
}

function sameMatch(a: HwSlotMatch | null, b: HwSlotMatch | null): boolean {
  if (a === null || b === null) return a === b;
  return a.lo === b.lo && a.len === b.len && a.exec === b.exec && a.read === b.read && a.write === b.write && a.byteMask === b.byteMask;
}
function setIfChanged(hw: HwDebugUnit, index: number, m: HwSlotMatch | null): void {
  if (!sameMatch(hw.slot(index), m)) hw.setSlot(index, m);
}
