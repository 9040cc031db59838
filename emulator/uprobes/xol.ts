/**
 * The execute-out-of-line area (Linux struct xol_area): one page mapped
 * into a probed process on its first hit, "[uprobes]" in /proc/PID/maps,
 * executable and not writable by the process. Slot 0 holds the uretprobe
 * trampoline (the breakpoint instruction, as Linux's
 * uprobe_get_trampoline_vaddr); the other slots are handed to tasks for
 * the copy of a probed instruction while it is stepped (one per task at a
 * time; this kernel's processes are single-threaded, so one is in use).
 * Slots are written through textPoke (the page is not writable), so the
 * CPU's decoded code of a reused slot is dropped.
 */
import { Memory, PERM_R, PERM_U, PERM_X, Region } from '../memory/memory';
import { PAGE_SIZE } from '../memory/backing';
import { guestBytes } from '../memory/guestRam';
import { fromVAddr, mustVAddr } from '../memory/address';
import { textPoke } from '../memory/textPoke';

export const XOL_AREA_NAME = '[uprobes]';

export class XolArea {
  private readonly free: number[] = [];
  private readonly slots: number;
  /** what each slot holds (the key given with its code): a slot taken again for the same copy is not rewritten */
  private readonly holds = new Map<number, unknown>();

  constructor(readonly region: Region, readonly slotBytes: number) {
    this.slots = Math.floor(PAGE_SIZE / slotBytes);
    for (let i = this.slots - 1; i >= 1; i--) this.free.push(i);
  }

  get base(): bigint { return fromVAddr(this.region.base); }
  /** uprobe_get_trampoline_vaddr */
  get trampoline(): bigint { return this.base; }

  /** xol_get_insn_slot + arch_uprobe_copy_ixol: a slot with `code(slot)` written in it; null when all are in use */
  getSlot(mm: Memory, code: (slot: bigint) => Uint8Array, key?: unknown): bigint | null {
    const i = this.free.pop();
    if (i === undefined) return null;
    const at = this.base + BigInt(i * this.slotBytes);
    // the copy of the same probed instruction is still there (and its decoded form in the CPU's cache)
    if (key !== undefined && this.holds.get(i) === key) return at;
    const fill = new Uint8Array(this.slotBytes);
    fill.set(code(at).subarray(0, this.slotBytes));
    textPoke(mm, mustVAddr(at), fill);
    this.holds.set(i, key);
    return at;
  }

  /** xol_free_insn_slot */
  putSlot(at: bigint): void {
    const i = Number((at - this.base) / BigInt(this.slotBytes));
    if (i >= 1 && i < this.slots && !this.free.includes(i)) this.free.push(i);
  }

  contains(addr: bigint): boolean { return addr >= this.base && addr < this.base + BigInt(PAGE_SIZE); }
}

/**
 * xol_add_vma: map the area in a free page of the process (`place` finds
 * one, as get_unmapped_area does) with the trampoline in slot 0.
 */
export function addXolArea(mm: Memory, place: () => number | null, swbp: Uint8Array, slotBytes: number): XolArea | null {
  const base = place();
  if (base === null) return null;
  const bytes = guestBytes(PAGE_SIZE);
  bytes.set(swbp, 0);
  const r = mm.map(base, PAGE_SIZE, PERM_R | PERM_X | PERM_U, XOL_AREA_NAME, undefined, bytes);
  return new XolArea(r, slotBytes);
}
