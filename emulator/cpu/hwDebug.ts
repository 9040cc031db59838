/**
 * The match unit behind hardware breakpoints and watchpoints, one per CPU,
 * shared by every architecture's debug registers (x86 DR0-DR7, arm64
 * DBGBVR/DBGBCR and DBGWVR/DBGWCR). The arch's register semantics decide
 * what each slot watches (its decode of DR7 / DBGxCR) and call setSlot();
 * the unit answers the two questions the CPU asks:
 *
 *  - execution: does the instruction about to execute at pc match an
 *    execute slot? The run loop tests `execArmed` once per instruction (a
 *    field load when nothing is armed) and calls execHit() only then.
 *  - data: does an access match a watch slot? While a data slot is armed,
 *    the unit is its CPU's address space's `watcher` (Memory tests one field
 *    per access; null when nothing is watched) and sees every load and
 *    store of the CPU, and the writes the emulator makes on the guest's
 *    behalf that hardware would see (memory/writeSource.ts).
 *
 * Data timing is the architecture's:
 *  - 'after' (x86): a data breakpoint is a trap. The access completes, the
 *    matching slots are recorded in `hits`, and the run stops after the
 *    instruction (InterpCpu.stop with STOP_HW_BREAKPOINT); the trap's pc is
 *    the next instruction. If the instruction faults after all, its hits
 *    are void (it did not complete). A write the emulator made outside an
 *    instruction is reported at the CPU's next instruction boundary.
 *  - 'before' (arm64): a watchpoint is a fault. The access throws
 *    HwBreakpointFault before memory changes; the trap's pc is the
 *    instruction and its addr the accessed address (FAR).
 *
 * Execution breakpoints are faults before the instruction on both (x86
 * RF / arm64's disable-step-enable keep the restart from hitting again).
 */
import type { VAddr } from '../memory/address';
import { fromVAddr } from '../memory/address';
import type { Trap } from '../arch/types';

/** What one slot watches (decoded from the arch's control register). */
export interface HwSlotMatch {
  /** first byte watched */
  lo: VAddr;
  /** bytes watched from lo (x86: the DR7 LEN; arm64: the byte-address-select span or the MASK range) */
  len: number;
  /** execute slot: matches an instruction starting at lo (x86 DR7 RW=00, arm64 breakpoint registers) */
  exec: boolean;
  /** data slot: loads match */
  read: boolean;
  /** data slot: stores match */
  write: boolean;
  /**
   * arm64 byte-address-select: bit i set = byte lo+i is watched (a
   * non-contiguous selection); undefined = every byte of [lo, lo+len).
   */
  byteMask?: number;
}

/** An access matched a watch slot before it happened (arm64 watchpoints): the instruction does not complete. */
export class HwBreakpointFault {
  constructor(readonly hits: number, readonly addr: VAddr, readonly write: boolean) {}
  toTrap(pc: bigint): Trap {
    return { kind: 'hwBreakpoint', pc, hits: this.hits, addr: fromVAddr(this.addr), access: this.write ? 'write' : 'read' };
  }
}

/** An instruction about to execute matched an execute slot. */
export class HwExecFault {
  constructor(readonly hits: number) {}
  toTrap(pc: bigint): Trap { return { kind: 'hwBreakpoint', pc, hits: this.hits, addr: pc, access: 'exec' }; }
}

interface Slot extends HwSlotMatch { bit: number; hi: VAddr }

export class HwDebugUnit {
  private readonly slots: (Slot | null)[] = [];
  private execSlots: Slot[] = [];
  /** the execute slots' lo, hi, byte mask (-1: all bytes) and bit, flat */
  private exLo = new Float64Array(0);
  private exHi = new Float64Array(0);
  private exMask = new Int32Array(0);
  private exBit = new Int32Array(0);
  /** the data slots' lo, hi and kinds (1 read, 2 write), flat */
  private daLo = new Float64Array(0);
  private daHi = new Float64Array(0);
  private daRw = new Int32Array(0);
  private dataSlots: Slot[] = [];
  /** some execute slot is armed: the run loop's only test */
  execArmed = false;
  /** the span every execute / data slot lies in: most checks end with these two compares */
  private execLo = 0;
  private execHi = 0;
  private dataLo = 0;
  private dataHi = 0;
  /** some data slot is armed: the unit watches its CPU's memory accesses */
  dataArmed = false;
  /** slots matched by data accesses not yet reported (bit n = slot n), 'after' timing */
  hits = 0;
  /** the first access that matched since the last report */
  hitAddr: VAddr = 0;
  hitWrite = false;

  /**
   * The watcher an address space keeps between its CPU's runs: accesses the
   * emulator makes for the guest there (the kernel, the kprobes engine, a
   * .kprobe handler reading or writing guest memory through the CPU-style
   * accessors) are recorded, never thrown, and reported at the CPU's next
   * instruction boundary.
   */
  readonly outside = { access: (a: VAddr, len: number, write: boolean): void => this.bulk(a, len, write), bulk: (a: VAddr, len: number, write: boolean): void => this.bulk(a, len, write) };

  /**
   * `timing`: 'after' (x86 trap) or 'before' (arm64 fault); `onHit`: an
   * 'after' hit during an instruction (the CPU stops its run after it).
   */
  constructor(readonly timing: 'after' | 'before', private readonly onHit: () => void,
    /** the armed slots changed (the CPU points its address space's watcher at the unit, or away) */
    private readonly onArmChange: () => void = () => undefined) {}

  /** Arm slot `index` with `m`, or disarm it (null). */
  setSlot(index: number, m: HwSlotMatch | null): void {
    this.slots[index] = m === null ? null : { ...m, bit: 1 << index, hi: m.lo + m.len };
    const all = this.slots.filter((s): s is Slot => s !== null);
    this.execSlots = all.filter(s => s.exec);
    this.dataSlots = all.filter(s => !s.exec && (s.read || s.write));
    this.execArmed = this.execSlots.length > 0;
    this.dataArmed = this.dataSlots.length > 0;
    this.exLo = Float64Array.from(this.execSlots, x => x.lo);
    this.exHi = Float64Array.from(this.execSlots, x => x.hi);
    this.exMask = Int32Array.from(this.execSlots, x => x.byteMask ?? -1);
    this.exBit = Int32Array.from(this.execSlots, x => x.bit);
    this.daLo = Float64Array.from(this.dataSlots, x => x.lo);
    this.daHi = Float64Array.from(this.dataSlots, x => x.hi);
    this.daRw = Int32Array.from(this.dataSlots, x => (x.read ? 1 : 0) | (x.write ? 2 : 0));
    this.execLo = Math.min(...this.execSlots.map(s => s.lo));
    this.execHi = Math.max(...this.execSlots.map(s => s.hi));
    this.dataLo = Math.min(...this.dataSlots.map(s => s.lo));
    this.dataHi = Math.max(...this.dataSlots.map(s => s.hi));
    this.onArmChange();
  }

  slot(index: number): HwSlotMatch | null { return this.slots[index] ?? null; }

  /** Slots whose execute condition matches an instruction at pc (bitmask; 0: none). */
  execHit(pc: VAddr): number {
    if (pc < this.execLo || pc >= this.execHi) return 0;
    // the slots as flat arrays: this runs once per instruction while the span test passes
    const lo = this.exLo, hi = this.exHi, mask = this.exMask;
    let m = 0;
    for (let k = 0; k < lo.length; k++) {
      if (pc >= lo[k] && pc < hi[k] && (mask[k] < 0 || (mask[k] >> (pc - lo[k])) & 1)) m |= this.exBit[k];
    }
    return m;
  }

  /** the slots a data access [a, a+len) matches */
  private dataHit(a: VAddr, len: number, write: boolean): number {
    const end = a + len;
    if (end <= this.dataLo || a >= this.dataHi) return 0;
    let m = 0;
    const lo = this.daLo, hi = this.daHi, rw = this.daRw, need = write ? 2 : 1;
    for (let k = 0; k < lo.length; k++) {
      if ((rw[k] & need) === 0 || a >= hi[k] || end <= lo[k]) continue;
      const s = this.dataSlots[k];
      if (s.byteMask !== undefined) {
        let any = false;
        for (let b = Math.max(a, s.lo); b < Math.min(end, s.hi); b++) if ((s.byteMask >> (b - s.lo)) & 1) { any = true; break; }
        if (!any) continue;
      }
      m |= s.bit;
    }
    return m;
  }

  /** A load or store of the CPU (Memory calls this before the access while the unit is its watcher). */
  access(a: VAddr, len: number, write: boolean): void {
    const m = this.dataHit(a, len, write);
    if (m === 0) return;
    if (this.timing === 'before') throw new HwBreakpointFault(m, a, write);
    if (this.hits === 0) { this.hitAddr = a; this.hitWrite = write; }
    this.hits |= m;
    this.onHit();
  }

  /**
   * A write the emulator made for the guest outside an instruction (the
   * kernel's copy_to_user, the kprobes engine's pt_regs frames): recorded,
   * reported at the CPU's next instruction boundary on either timing (the
   * bytes are already written).
   */
  bulk(a: VAddr, len: number, write: boolean): void {
    const m = this.dataHit(a, len, write);
    if (m === 0) return;
    if (this.hits === 0) { this.hitAddr = a; this.hitWrite = write; }
    this.hits |= m;
  }

  /** The recorded hits as a trap at pc (and forget them). */
  takeTrap(pc: bigint): Trap {
    const t: Trap = { kind: 'hwBreakpoint', pc, hits: this.hits, addr: fromVAddr(this.hitAddr), access: this.hitWrite ? 'write' : 'read' };
    this.hits = 0;
    return t;
  }
}
