/**
 * A CPU's side of translated code: its state block in the guest arena
 * (exit status, pc, scratch, the read and write TLBs) with what the TLB was
 * filled for and the current call's bookkeeping, and the TLB's fill rule:
 * which pages translated code may load from and store to directly.
 */
import { TLB_ENTRIES, TLB_READ, TLB_WRITE } from './backend';
import type { CodeSpace } from './codeCache';
import { PAGE } from './codeCache';
import type { InterpCpu, RunnableInsn } from '../cpu/interp';
import { Memory, PERM_R, PERM_U, PERM_W, PERM_X, Region } from '../memory/memory';
import { VAddr, vaddrFromHalves } from '../memory/address';
import { arenaOffset } from '../memory/guestRam';
import { hostOwned } from '../base/marks';

export type AnyCpu = InterpCpu<unknown, RunnableInsn<unknown>> & { lo: Int32Array; hi: Int32Array };

/** Per-CPU translator state: its block in the arena (exit, scratch, TLB) and what its TLB was filled for. */
export class CpuJit {
  tlbMem: Memory | null = null;
  tlbUser = false;
  tlbGen = -1;
  /** instret when the current call into translated code started (helpers keep the CPU's count exact) */
  base = 0;
  /** the current call's budget (instructions it may retire) */
  budget = 0;
  lastHelper: RunnableInsn<unknown> | null = null;
  error: unknown = null;
  /** lockstep: a helper ran host code (an inline breakpoint's handlers) that a replay would run twice */
  impure = false;
  /** the register file the CPU's rf offset was taken from, and that offset */
  lo: Int32Array | null = null;
  rf = -1;
  /** the decode cache of the last entry and its code space */
  cache: object | null = null;
  space: CodeSpace | null = null;
  /** the state's bytes as int32 words */
  readonly words: Int32Array;
  /** the translator whose state this is (a CPU may be run by another one later: lockstep and on in tests) */
  constructor(readonly owner: object, readonly st: number, readonly bytes: Uint8Array) {
    this.words = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2);
    hostOwned(this); // the translator's, though the CPU holds it (InterpCpu.jitState): not machine state
  }
}

/** every TLB entry of the CPU invalid */
export function flushTlb(s: CpuJit): void {
  // every word 0x7fffffff: a tag (0x7fffffff7fffffff) no page number can equal (the read and write TLBs are adjacent)
  s.words.fill(0x7fffffff, TLB_READ >> 2, (TLB_WRITE + TLB_ENTRIES * 16) >> 2);
}

/**
 * A TLB miss of translated code (its `fill` import): the entry for the page of
 * the address lo:hi in the read or write TLB of the CPU whose state is at st,
 * when translated code may access it directly (1), else 0 (the access leaves
 * translated code: a device, a watched memory, no permission, bytes some CPU
 * decoded, memory outside the arena).
 */
export function fillTlb(view: DataView, cpu: AnyCpu | undefined, st: number, lo: number, hi: number, write: number): number {
  if (cpu === undefined) return 0;
  const a = vaddrFromHalves(lo, hi);
  const mem = cpu.mem;
  if (a === null || mem.watcher !== null) return 0;
  // a paged space: the bytes are in its physical memory, where the access's translation leads (NaN: it faults)
  const target = mem.directMemory, paged = target !== mem;
  const pa = mem.directAddress(a, write !== 0);
  if (pa !== pa) return 0;
  const page = Math.floor(a / PAGE) * PAGE;
  const ppage = Math.floor(pa / PAGE) * PAGE;
  const r = target.regionAt(pa);
  if (r === undefined || r.device) return 0;
  const p = r.perms;
  if (!paged && cpu.userMode && (p & PERM_U) === 0) return 0;
  if (write) {
    if ((p & PERM_W) === 0 || mem.isObserved || target.isObserved) return 0;
    // executable bytes: only a page from which no CPU decoded, through any window in any space
    if (r.codeMapped && decodedAnywhere(r, ppage)) return 0;
  }
  else if ((p & PERM_R) === 0) return 0;
  const host = arenaOffset(r.bytes);
  if (host < 0) return 0;
  const vp = page / PAGE;
  const e = st + (write ? TLB_WRITE : TLB_READ) + ((vp & (TLB_ENTRIES - 1)) << 4);
  const v = view;
  v.setInt32(e, vp | 0, true);
  v.setInt32(e + 4, Math.floor(vp / 4294967296), true);
  // the region's part of the page (the arena offset of the page's first byte may lie before the region's bytes: only [lo, hi) is used)
  v.setInt32(e + 8, host + (ppage - r.base), true);
  v.setUint16(e + 12, Math.max(ppage, r.base) - ppage, true);
  v.setUint16(e + 14, Math.min(ppage + PAGE, r.end) - ppage, true);
  return 1;
}

/** whether some CPU decoded instructions from the page's bytes, through any executable window of them in any address space */
function decodedAnywhere(r: Region, page: VAddr): boolean {
  const off = r.offset + (page - r.base);
  return r.backing.aliases(off, PAGE).some(a => (a.region.perms & PERM_X) !== 0
    && (a.memory.codePages.has(Math.floor(a.vaddr / PAGE)) || a.memory.codePages.has(Math.floor((a.vaddr + a.len - 1) / PAGE))));
}
