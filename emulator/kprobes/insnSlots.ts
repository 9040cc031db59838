/**
 * Instruction slots (kernel/kprobes.c get_insn_slot/free_insn_slot): fixed
 * size slots carved from executable pages of the kernel's exec area
 * (KernelApi.allocExec). Pages are never given back; freed slots are reused.
 * Slot contents are written with textPoke (the exec area may be read-only).
 * Every page, and every block of other engine code allocated here
 * (allocCode: trampolines, detour buffers, stubs), is registered in the
 * engine's code registry (codeRegistry.ts) with its symbol.
 */
import type { KernelApi } from '../kernel/types';
import { mustVAddr } from '../memory/address';
import { textPoke } from '../memory/textPoke';
import type { EngineCode, EngineCodeHandlers, EngineCodeRegistry } from './codeRegistry';

export const SLOT_PAGE_SIZE = 4096;

/** the symbol of a slot page (kprobe_insn_cache's; named per slot by its probe when it has one) */
export const INSN_SLOT_SYMBOL = 'kprobe_insn_slot';

export class InsnSlots {
  private readonly free: bigint[] = [];
  private pages = 0;

  /**
   * `registry` receives every page and allocCode block; `pageHandlers` are
   * attached to each slot page (the engine's: slot names, step breakpoints).
   */
  constructor(
    private readonly kernel: KernelApi, readonly slotSize: number,
    private readonly registry: EngineCodeRegistry, private readonly pageHandlers: EngineCodeHandlers = {},
  ) {}

  /** get_insn_slot: a free slot address */
  get(): bigint {
    if (this.free.length === 0) {
      const page = this.kernel.allocExec(SLOT_PAGE_SIZE, SLOT_PAGE_SIZE);
      this.registry.add(page, SLOT_PAGE_SIZE, INSN_SLOT_SYMBOL, this.pageHandlers);
      this.pages++;
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

  /**
   * Allocate executable memory owned by the engine (trampolines, detour
   * buffers, stubs), registered as code named `symbol` (Linux's name for
   * it: kretprobe_trampoline, ftrace_trampoline, ...).
   */
  allocCode(size: number, symbol: string, handlers: EngineCodeHandlers = {}): bigint {
    const a = this.kernel.allocExec(size, 16);
    this.registry.add(a, size, symbol, handlers);
    return a;
  }

  /** the slot (its first byte) holding addr of a slot page */
  slotOf(page: EngineCode, addr: bigint): bigint {
    const size = BigInt(this.slotSize);
    return page.start + (addr - page.start) / size * size;
  }

  inUse(): number { return this.pages * Math.floor(SLOT_PAGE_SIZE / this.slotSize) - this.free.length; }
}
