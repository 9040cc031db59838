/**
 * Instruction slots (kernel/kprobes.c get_insn_slot/free_insn_slot): fixed
 * size slots carved from executable pages of the kernel's exec area
 * (KernelApi.allocExec). Pages are never given back; freed slots are reused.
 * Slot contents are written with textPoke (the exec area may be read-only).
 */
import type { KernelApi } from '../kernel/types';
import { mustVAddr } from '../memory/address';
import { textPoke } from '../memory/textPoke';

export const SLOT_PAGE_SIZE = 4096;

export class InsnSlots {
  private readonly pages: bigint[] = [];
  private readonly free: bigint[] = [];
  /** every executable range the engine owns (slot pages, trampolines) */
  private readonly owned: { start: bigint; end: bigint }[] = [];

  constructor(private readonly kernel: KernelApi, readonly slotSize: number) {}

  /** get_insn_slot: a free slot address */
  get(): bigint {
    if (this.free.length === 0) {
      const page = this.kernel.allocExec(SLOT_PAGE_SIZE, SLOT_PAGE_SIZE);
      this.pages.push(page);
      this.owned.push({ start: page, end: page + BigInt(SLOT_PAGE_SIZE) });
      // lowest address handed out first (pop takes from the end)
      for (let off = SLOT_PAGE_SIZE - this.slotSize; off >= 0; off -= this.slotSize) this.free.push(page + BigInt(off));
    }
    return this.free.pop() as bigint;
  }

  /** free_insn_slot */
  put(slot: bigint): void {
    this.free.push(slot);
  }

  /** write code into a slot (or any owned executable range) */
  write(addr: bigint, bytes: Uint8Array): void {
    textPoke(this.kernel.mem, mustVAddr(addr), bytes);
  }

  /** allocate executable memory owned by the engine (trampolines) */
  allocCode(size: number): bigint {
    const a = this.kernel.allocExec(size, 16);
    this.owned.push({ start: a, end: a + BigInt(size) });
    return a;
  }

  /** the engine's own code: probes there are refused */
  owns(addr: bigint): boolean {
    for (const r of this.owned) if (addr >= r.start && addr < r.end) return true;
    return false;
  }

  /** the slot (its first byte) of a slot page holding addr, or undefined */
  slotContaining(addr: bigint): bigint | undefined {
    for (const p of this.pages) {
      if (addr >= p && addr < p + BigInt(SLOT_PAGE_SIZE)) return p + (addr - p) / BigInt(this.slotSize) * BigInt(this.slotSize);
    }
    return undefined;
  }

  /** the engine-owned executable range holding addr (slot page or allocCode block), or undefined */
  rangeContaining(addr: bigint): { start: bigint; end: bigint } | undefined {
    return this.owned.find(r => addr >= r.start && addr < r.end);
  }

  inUse(): number { return this.pages.length * Math.floor(SLOT_PAGE_SIZE / this.slotSize) - this.free.length; }
}
