/**
 * The registry of the engine's own code (Linux kernel/kprobes.c keeps a
 * struct kprobe_insn_cache per kind of engine code, each with its `sym`
 * shown by kallsyms: "kprobe_insn_page", "kprobe_optinsn_page"). Every
 * executable range the engine owns registers here once: instruction slot
 * pages, optprobe detour buffers, the kretprobe trampolines, the ftrace
 * trampoline, the nested-call return stub. A range carries its symbol
 * name and, once its owner attaches them, its handlers: the breakpoint
 * trap inside it (trampoline callbacks, detour callbacks, native entries,
 * a step breakpoint in a slot), its native entry for the CPU's inline
 * breakpoint, its synthetic %pS name and its BreakpointSite kind.
 *
 * Trap routing (traps.ts), symbolization (symbolize.ts) and the refusal of
 * probes on engine code (check_kprobe_address_safe) are lookups here:
 * sorted by start, binary search; ranges never overlap.
 */
import type { Cpu } from '../arch/types';
import { mustVAddr, VAddr } from '../memory/address';
import type { BreakpointSite } from './engineTypes';
import type { NativeEntryFrame } from '../cpu/interp';
import type { KprobeCtlblk } from './kprobe';
import type { PtRegs } from './ptRegs';

/** The counter of KprobeStats a native entry handled inside the CPU's int3 counts in. */
export type InlineEntryStat = 'inlineOptEntries' | 'inlineKretEntries' | 'inlineFtraceEntries';

/** What the owner of a range attaches to it (all optional: a range without handlers is only owned and named). */
export interface EngineCodeHandlers {
  /**
   * A breakpoint trap at `addr` (the breakpoint's own address; `at`: the
   * same as a VAddr) inside the range: true when handled; false: not one of
   * this code's breakpoints.
   */
  breakpoint?(cpu: Cpu, regs: PtRegs, kcb: KprobeCtlblk, addr: bigint, code: EngineCode, at: VAddr): boolean;
  /** %pS of an address inside (default: `symbol+0xoff` from the range start) */
  symbolize?(addr: bigint, code: EngineCode): string;
  /** what a breakpoint at addr is for the cost model and the debugger (default 'none') */
  site?(addr: bigint, code: EngineCode): BreakpointSite;
  /**
   * The range's native entry (a breakpoint the CPU's inline breakpoint may
   * handle from inside the int3), its VAddr, and the counter it counts in.
   */
  nativeEntry?: NativeEntryInfo;
  /**
   * what the owner keeps of this range for its handlers: handlers shared by
   * many ranges (one function per owner, not closures per range) find their
   * range's own data here through the `code` argument they are given
   */
  data?: unknown;
}

/** A range's native entry: its address, as a VAddr, the counter it counts in and what the block translator may know of it. */
export interface NativeEntryInfo {
  readonly addr: bigint;
  readonly at: VAddr;
  readonly stat: InlineEntryStat;
  /** its frame and the handlers' ip, when they are the same at every hit (InterpCpu.nativeEntryAt) */
  readonly route?: NativeEntryFrame;
}

/** One registered range of engine code. */
export interface EngineCode extends EngineCodeHandlers {
  readonly start: bigint;
  /** exclusive */
  readonly end: bigint;
  /** start as a VAddr */
  readonly startV: VAddr;
  readonly endV: VAddr;
  /** the symbol Linux-style listings show for this code (kretprobe_trampoline, ftrace_trampoline, ...) */
  readonly symbol: string;
}

/** insert v at index i (an append is a push) */
function insertAt<T>(a: T[], i: number, v: T): void {
  if (i === a.length) a.push(v);
  else a.splice(i, 0, v);
}

/** `+0xoff` of addr from start */
export function offsetFrom(addr: bigint, start: bigint): string {
  return `+0x${(addr - start).toString(16)}`;
}

export class EngineCodeRegistry {
  /** ranges sorted by start (unsigned 64-bit) */
  private readonly byStart: EngineCode[] = [];
  /** the same ranges sorted by startV (signed VAddr order) */
  private readonly byStartV: EngineCode[] = [];
  /**
   * The two ranges findV found last (the hot path asks for the same ones
   * hit after hit: a detour buffer; a slot page's step breakpoint and the
   * kretprobe trampoline in turn).
   */
  private lastV: EngineCode | undefined;
  private prevV: EngineCode | undefined;
  /** the lowest start and highest end of all ranges (VAddr; no range: an empty interval) */
  minV: VAddr = Infinity;
  maxV: VAddr = -Infinity;
  /**
   * Told of a native entry attached or taken back (attach): decoded and
   * translated code that relied on what the breakpoint there stands for
   * must go (the engine calls Memory.codeMeaningChanged).
   */
  onNativeEntryChange: ((at: VAddr) => void) | null = null;

  /** Register [start, start+size) as engine code named `symbol`; throws a RangeError naming both ranges on an overlap. */
  add(start: bigint, size: number, symbol: string, handlers: EngineCodeHandlers = {}): EngineCode {
    if (!(size > 0)) throw new RangeError(`kprobes code registry: ${symbol} at 0x${start.toString(16)} has no size (${size})`);
    const end = start + BigInt(size);
    const startV = mustVAddr(start);
    const code: EngineCode = {
      start, end, startV, endV: startV + size, symbol,
      breakpoint: handlers.breakpoint, symbolize: handlers.symbolize, site: handlers.site, nativeEntry: handlers.nativeEntry,
      data: handlers.data,
    };
    // the exec area hands out ascending addresses: most ranges go at the end (no search)
    const bs = this.byStart, last = bs[bs.length - 1];
    const i = last === undefined || last.start <= start ? bs.length : this.upperBound(start);
    this.checkOverlap(bs[i - 1], code);
    this.checkOverlap(bs[i], code);
    insertAt(bs, i, code);
    const bv = this.byStartV, lastV = bv[bv.length - 1];
    insertAt(bv, lastV === undefined || lastV.startV <= startV ? bv.length : this.upperBoundV(startV), code);
    if (code.startV < this.minV) this.minV = code.startV;
    if (code.endV > this.maxV) this.maxV = code.endV;
    return code;
  }

  private checkOverlap(o: EngineCode | undefined, c: EngineCode): void {
    if (o && o.start < c.end && c.start < o.end) {
      throw new RangeError(`kprobes code registry: ${c.symbol} [0x${c.start.toString(16)}, 0x${c.end.toString(16)}) overlaps ${o.symbol} [0x${o.start.toString(16)}, 0x${o.end.toString(16)})`);
    }
  }

  /** The range holding addr, or undefined (binary search). */
  find(addr: bigint): EngineCode | undefined {
    const c = this.byStart[this.upperBound(addr) - 1];
    return c !== undefined && addr < c.end ? c : undefined;
  }

  /** find() by VAddr (the CPU's inline breakpoint asks with a number) */
  findV(at: VAddr): EngineCode | undefined {
    // ranges are never removed nor overlap: the last one found stays right for the addresses it holds
    const last = this.lastV;
    if (last !== undefined && at >= last.startV && at < last.endV) return last;
    const prev = this.prevV;
    if (prev !== undefined && at >= prev.startV && at < prev.endV) { this.prevV = last; this.lastV = prev; return prev; }
    if (!(at >= this.minV && at < this.maxV)) return undefined;
    const c = this.byStartV[this.upperBoundV(at) - 1];
    if (c !== undefined && at < c.endV) { this.prevV = last; this.lastV = c; return c; }
    return undefined;
  }

  /** the engine owns addr (probes there are refused) */
  owns(addr: bigint): boolean { return this.find(addr) !== undefined; }

  /** owns() by VAddr, without touching findV's hot-path memory (registration asks it of every probe address) */
  ownsV(at: VAddr): boolean {
    if (!(at >= this.minV && at < this.maxV)) return false;
    const c = this.byStartV[this.upperBoundV(at) - 1];
    return c !== undefined && at < c.endV;
  }

  /** Attach (or, with {}, take back) the handlers of the range starting at `start`; false when no range starts there. */
  attach(start: bigint, handlers: EngineCodeHandlers): boolean {
    // owners attach to the range they just added: the last one, most of the time
    const last = this.byStart[this.byStart.length - 1];
    const c = last !== undefined && last.start === start ? last : this.find(start);
    if (!c || c.start !== start) return false;
    c.breakpoint = handlers.breakpoint;
    c.symbolize = handlers.symbolize;
    c.site = handlers.site;
    c.data = handlers.data;
    const before = c.nativeEntry;
    c.nativeEntry = handlers.nativeEntry;
    if (before !== c.nativeEntry && this.onNativeEntryChange !== null) {
      if (before !== undefined) this.onNativeEntryChange(before.at);
      if (c.nativeEntry !== undefined && c.nativeEntry.at !== before?.at) this.onNativeEntryChange(c.nativeEntry.at);
    }
    return true;
  }

  /** %pS of an engine address: its handler's name, else `symbol+0xoff`; undefined when not engine code */
  symbolize(addr: bigint): string | undefined {
    const c = this.find(addr);
    if (!c) return undefined;
    return c.symbolize ? c.symbolize(addr, c) : `${c.symbol}${offsetFrom(addr, c.start)}`;
  }

  /** every range, ascending (debugging, tests) */
  ranges(): readonly EngineCode[] { return this.byStart; }

  /** number of ranges whose start <= addr */
  private upperBound(addr: bigint): number {
    const a = this.byStart;
    let lo = 0, hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid].start <= addr) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  private upperBoundV(at: VAddr): number {
    const a = this.byStartV;
    let lo = 0, hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid].startV <= at) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
}
