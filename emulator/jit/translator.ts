/**
 * The block translator's run time: tiering, the code cache, invalidation,
 * the per-CPU TLB and the helpers translated code calls.
 *
 * Tiering: the interpreter's run loop counts arrivals at an instruction by
 * a jump (the first instruction of a run, a taken branch, an exit from
 * translated code) or by falling into the next page (a block ends at its
 * page's end, so straight-line code across pages gets hot in both pages
 * together); at hotArrivals (JIT_HOT_ARRIVALS; a fixed number: the same run
 * translates at the same point every time) the translator builds the
 * block there and re-translates that guest page's module with every block
 * of the page found hot so far (many blocks per module, chained inside it),
 * and the blocks those lead to in the page that the CPU already ran (their
 * instructions are decoded): straight-line code longer than a block, or a
 * branch's other side, is not left to the interpreter until each piece has
 * arrivals of its own.
 *
 * Invalidation: any write to executable bytes (a store through an alias,
 * textPoke of int3 / jmp rel32 / brk / ebreak, the loader, a module's
 * unload, a uprobe) reaches the decode cache's code-write listener, which
 * drops the overlapping decoded instructions; the translator's listener
 * drops the modules of every page those bytes touch. Translated stores
 * never write a page that is executable somewhere (the TLB refuses it):
 * such a store leaves translated code before the instruction and the
 * interpreter does it, so a store into the running block takes effect
 * before the next instruction.
 *
 * Exactness: translated code retires whole instructions and stops only at
 * instruction boundaries with the interpreter's state (the count of
 * instructions retired, the pc, the registers, the lazy flags); a block is
 * entered only when the budget left covers it. Pages run in the
 * interpreter while the CPU single-steps, has an execute breakpoint armed,
 * or a data watch (the run loop does not enter translated code then).
 *
 * Lockstep (checking every entry against the interpreter) is lockstep.ts;
 * the code cache's records (units, code spaces) codeCache.ts; a CPU's state
 * block and TLB fill rule cpuState.ts; block formation blockBuilder.ts.
 *
 * The code cache holds at most CODE_CACHE_BYTES of WebAssembly (a stated
 * ceiling; the engine's machine code for it is a small multiple of it):
 * when a new module would pass it, every module is dropped and translation
 * starts again.
 */
import { compileBlocks, compileHub, chainSlot, dispatchTable, BackendBlock, CHAIN_BYTES, EXIT_FAULT, EXIT_HELPER, EXIT_JUMP, HELPER_EXTRA, ST_PC, ST_SPACE, ST_STATUS, ST_SCRATCH, STATE_BYTES } from './backend';
import { buildBlock } from './blockBuilder';
import { CodeSpace, FnSlot, JitEntry, PAGE, Unit, listPages, unlistPages } from './codeCache';
import { AnyCpu, CpuJit, fillTlb, flushTlb } from './cpuState';
import type { FrontEnd } from './ir';
import type { DecodeCache } from '../cpu/decodeCache';
import { JIT_HOT_ARRIVALS, JIT_HOT_ARRIVALS_LOCKSTEP } from '../cpu/interp';
import type { InterpCpu, RunnableInsn } from '../cpu/interp';
import { Memory } from '../memory/memory';
import { VAddr, vaddrFromHalves } from '../memory/address';
import { arenaOffset, guestBuffer, guestBytes, guestMemory, guestTableBytes } from '../memory/guestRam';
import { hostOwned } from '../base/marks';
import { enterLockstep, logCpuStore, StoreLog } from './lockstep';

/** arrivals at an instruction before its block is translated */
// tiering threshold: JIT_HOT_ARRIVALS in cpu/interp.ts
/** blocks per module (one guest page) at most */
const MAX_UNIT_BLOCKS = 128;
/** arrivals that make an instruction join its page's next translation early: hotArrivals / WARM_DIVISOR, at least MIN_WARM */
const WARM_DIVISOR = 64, MIN_WARM = 4;
/** arrivals at hot blocks waiting for their page's next translation that make it happen (whatever their number) */
const REJIT_ARRIVALS = 256;
/** re-translations of a page after which only the size rule makes another (REJIT_ARRIVALS no longer does) */
const MAX_REJITS = 16;
/** invalidations of a page after which it is no longer translated */
const MAX_REWRITES = 16;
/** code-cache ceiling: bytes of WebAssembly */
export const CODE_CACHE_BYTES = 32 * 1024 * 1024;

/** A decoded instruction as the translator sees it (every arch's decoded instructions have these fields). */
export type JitInsn<C> = RunnableInsn<C>;

/** translate(): not now (the block waits for its page's next translation) */
const LATER = Symbol('later');

export interface TranslatorStats {
  /** invalidations: modules dropped because bytes they translated were written (re-translations that replace a module are not counted) */
  translations: number; modules: number; codeBytes: number; invalidations: number; flushes: number;
  entries: number; translatedInsns: number; compileMs: number;
  /** calls from JavaScript into translated code (the hub; an entry makes one or more: one more per jump the chain table did not know) */
  calls: number;
  /** lockstep: entries compared with the interpreter, and entries not compared (host code ran inside) */
  lockstepChecked: number; lockstepSkipped: number;
}

export class Translator<C, I extends RunnableInsn<C>> {
  private readonly spaces = new WeakMap<object, CodeSpace>();
  /** CPUs by the arena offset of their state (weak: a finished machine's CPUs go away) */
  private readonly cpus = new Map<number, WeakRef<AnyCpu>>();
  private readonly cpuState = new WeakMap<object, CpuJit>();
  /** every unit not yet dropped (weak: units of a finished machine's address spaces go with them) */
  private readonly live = new Set<WeakRef<Unit>>();
  /**
   * A collected unit (no decoded instruction of any space leads to it, and
   * its space no longer holds it): its code bytes and its table index go.
   * Units are collected with their machine: the table holds their modules,
   * whose imports hold only the table index (imports()).
   */
  private readonly unitGone = new FinalizationRegistry<{ ref: WeakRef<Unit>; bytes: number; slot: FnSlot }>(h => {
    if (this.live.delete(h.ref)) this.codeBytes -= h.bytes;
    this.freeFn(h.slot);
  });
  /**
   * Units by table index, weakly (the helper import's way to its unit), and
   * the last one a helper found: kept only while translated code runs (the
   * outermost entry forgets it), so that nothing here holds a machine.
   */
  private readonly fnUnits: (WeakRef<Unit> | undefined)[] = [];
  private hotFn = -1;
  private hotUnit: Unit | null = null;
  /**
   * The one found before it, kept the same way: a probe hit's helpers
   * alternate between units (the probed function's breakpoint, the slot's
   * step breakpoint, the kretprobe trampoline), and WeakRef.deref is a
   * runtime call (it keeps its target alive until the job ends).
   */
  private prevFn = -1;
  private prevUnit: Unit | null = null;
  private codeBytes = 0;
  private readonly view: DataView;
  readonly stats: TranslatorStats = { translations: 0, modules: 0, codeBytes: 0, invalidations: 0, flushes: 0, entries: 0, translatedInsns: 0, compileMs: 0, calls: 0, lockstepChecked: 0, lockstepSkipped: 0 };
  /** lockstep: compare with the interpreter at every exit (set by the machine) */
  private lockstepMode = false;
  get lockstep(): boolean { return this.lockstepMode; }
  set lockstep(on: boolean) { this.lockstepMode = on; this.hotArrivals = on ? JIT_HOT_ARRIVALS_LOCKSTEP : JIT_HOT_ARRIVALS; }
  /** arrivals at an instruction before its block is translated (cpu/interp.ts) */
  hotArrivals = JIT_HOT_ARRIVALS;
  /** old bytes of every store of the current entry (lockstep) */
  storeLog: StoreLog | null = null;

  /** every module's run(), by Unit.fn: the hub calls them through it */
  private readonly table: WebAssembly.Table;
  private readonly freeFns: number[] = [];
  private nextFn = 0;
  /** the chain table (backend.ts): its bytes in the arena (kept alive here) and their offset */
  private readonly chainBytes: Uint8Array;
  private readonly chain: number;
  /** the hub's enter(st, rf, fn, entry, budget, n) -> n: the one function JavaScript calls into translated code through */
  private readonly hub: (st: number, rf: number, fn: number, entry: number, budget: number, n: number) => number;

  constructor(readonly fe: FrontEnd<C, I>, readonly arch: string) {
    hostOwned(this); // shared by every machine of the process; time travel tells it what changed (Memory.codeWriteListeners)
    const buf = guestBuffer();
    if (buf === null) throw new Error('translator: no guest arena (WebAssembly memory could not be reserved)');
    this.view = new DataView(buf);
    this.chainBytes = guestTableBytes(CHAIN_BYTES);
    this.chain = arenaOffset(this.chainBytes);
    if (this.chain < 0) throw new Error('translator: no room in the guest arena for the chain table');
    this.table = new WebAssembly.Table({ element: 'anyfunc', initial: 256 });
    const hub = new WebAssembly.Instance(new WebAssembly.Module(compileHub(this.chain)), { k: { mem: guestMemory() as WebAssembly.Memory, tab: this.table } });
    this.hub = hub.exports.enter as Translator<C, I>['hub'];
  }

  /** function-table slots holding a module now (a finished machine's are freed once its code spaces are collected) */
  get tableInUse(): number { return this.nextFn - this.freeFns.length; }

  /** a free index in the function table */
  private allocFn(): number {
    const f = this.freeFns.pop();
    if (f !== undefined) return f;
    if (this.nextFn === this.table.length) this.table.grow(this.table.length);
    return this.nextFn++;
  }

  /** the chain table sends jumps to pc in space sp to block `index` of unit u */
  private link(sp: CodeSpace, pc: VAddr, u: Unit, index: number): void {
    if (u.home !== sp.id && !sp.adopted.has(u)) this.adopt(sp, u);
    const e = this.chain + chainSlot(pc | 0), v = this.view;
    v.setInt32(e, pc | 0, true);
    v.setInt32(e + 4, Math.floor(pc / 4294967296), true);
    v.setInt32(e + 8, sp.id, true);
    v.setInt32(e + 12, (u.fn << 8) | index, true);
  }

  /** space sp runs unit u of another space (CodeSpace.adopted) */
  private adopt(sp: CodeSpace, u: Unit): void {
    sp.adopted.add(u);
    listPages(sp, u);
    (u.adopters ??= []).push(new WeakRef(sp));
  }

  /** true when translation can work in this process (the guest arena exists) */
  static available(): boolean { return guestMemory() !== null; }

  /** the CPU's translator state, or null when the CPU cannot run translated code (its registers or state are not in the guest arena: the arena was full) */
  private state(cpu: AnyCpu): CpuJit | null {
    const last = cpu.jitState as CpuJit | null;
    if (last !== null && last.owner === this) return last;
    let s = this.cpuState.get(cpu);
    if (s === undefined) {
      if (arenaOffset(cpu.lo) < 0 || arenaOffset(cpu.hi) !== arenaOffset(cpu.lo) + 4 * this.fe.slots) return null;
      const bytes = guestBytes(STATE_BYTES);
      const st = arenaOffset(bytes);
      if (st < 0) return null;
      s = new CpuJit(this, st, bytes);
      this.cpuState.set(cpu, s);
      this.cpus.set(st, new WeakRef(cpu));
      flushTlb(s);
    }
    cpu.jitState = s;
    return s;
  }

  private space(cache: DecodeCache<RunnableInsn<unknown>>, mem: Memory): CodeSpace {
    let sp = this.spaces.get(cache);
    if (sp === undefined) {
      const made = new CodeSpace(cache);
      sp = made;
      this.spaces.set(cache, made);
      mem.codeWriteListeners.push((a, len) => this.invalidate(made, a, len));
    }
    return sp;
  }


  // ---------------------------------------------------------------- invalidation
  private invalidate(sp: CodeSpace, addr: VAddr, len: number): void {
    const k0 = Math.floor((addr - 16) / PAGE), k1 = Math.floor((addr + len - 1) / PAGE);
    for (let k = k0; k <= k1; k++) {
      sp.waiting.delete(k); // their instructions may be gone
      sp.waitingArrivals.delete(k);
      const us = sp.byPage.get(k);
      if (us === undefined || us.size === 0) continue;
      sp.rewrites.set(k, (sp.rewrites.get(k) ?? 0) + 1);
      this.stats.invalidations += us.size;
      for (const u of [...us]) this.drop(u);
    }
  }

  private drop(u: Unit): void {
    if (u.dead) return;
    u.dead = true;
    const v = this.view;
    for (const e of u.entries) {
      const j = e as unknown as { jit: JitEntry | null; hot: number };
      if (j.jit?.unit === u) { j.jit = null; j.hot = 0; }
      // the chain table no longer leads there (an entry of another unit in that slot stays)
      const c = this.chain + chainSlot(e.addr | 0);
      if ((v.getInt32(c + 12, true) >> 8) === u.fn) v.setInt32(c + 8, 0, true);
    }
    this.freeFn(u.slot);
    const sp = u.space.deref();
    if (sp !== undefined) {
      if (sp.units.get(u.key) === u) sp.units.delete(u.key);
      unlistPages(sp, u);
    }
    for (const r of u.adopters ?? []) {
      const a = r.deref();
      if (a === undefined) continue;
      a.adopted.delete(u);
      unlistPages(a, u);
    }
    u.adopters = null;
    if (u.ref !== null && this.live.delete(u.ref)) this.codeBytes -= u.bytes;
  }

  /** the table index of a unit that was dropped or collected goes back to the free list (once) */
  private freeFn(slot: FnSlot): void {
    const f = slot.fn;
    if (f < 0) return;
    slot.fn = -1;
    this.table.set(f, null);
    this.fnUnits[f] = undefined;
    if (this.hotFn === f) { this.hotFn = -1; this.hotUnit = null; }
    if (this.prevFn === f) { this.prevFn = -1; this.prevUnit = null; }
    this.freeFns.push(f);
  }

  /**
   * A module's imports. Made here, not in translate(): they hold only the
   * translator and the unit's table index (the helper finds the unit
   * through fnUnits). The table is the translator's, shared by every
   * machine, and keeps the module as long as the unit has its index:
   * anything of the machine's the imports held (a closure's context in
   * translate() holds the unit, and its helpers' instructions lead to the
   * machine) would keep the unit, and the machine, alive for ever.
   */
  private imports(fn: number): WebAssembly.Imports {
    return {
      k: {
        mem: guestMemory() as WebAssembly.Memory,
        fill: (st: number, lo: number, hi: number, write: number) => fillTlb(this.view, this.cpus.get(st)?.deref(), st, lo, hi, write),
        helper: (st: number, index: number, retired: number) => this.helper(fn, st, index, retired),
        logStore: (_st: number, host: number, size: number) => this.logStore(host, size),
      },
    };
  }

  /** Drop every translation (code cache full, or a caller's request). */
  flushAll(): void {
    for (const r of [...this.live]) { const u = r.deref(); if (u !== undefined) this.drop(u); else this.live.delete(r); }
    this.stats.flushes++;
  }

  // ---------------------------------------------------------------- translation
  /** Translate the block at `insn` (and the page's other hot blocks); null when it cannot be. */
  private translate(cpu: AnyCpu, sp: CodeSpace, insn: RunnableInsn<unknown>): JitEntry | null | typeof LATER {
    const key = Math.floor(insn.addr / PAGE);
    if ((sp.rewrites.get(key) ?? 0) > MAX_REWRITES) return null; // self-modifying code: the page stays interpreted
    const old = sp.units.get(key);
    if (old !== undefined) {
      // the page has a module: it is re-translated once the blocks waiting for it are half as many as it has (few re-translations)
      let waiting = sp.waiting.get(key);
      if (waiting === undefined) { waiting = new Set(); sp.waiting.set(key, waiting); }
      waiting.add(insn);
      // ... or once arrivals at blocks waiting for it reach REJIT_ARRIVALS (a block that keeps arriving is not left to the interpreter)
      const arrivals = (sp.waitingArrivals.get(key) ?? 0) + 1;
      sp.waitingArrivals.set(key, arrivals);
      if (waiting.size * 2 < old.entries.length && (arrivals < REJIT_ARRIVALS || old.generation >= MAX_REJITS)) return LATER;
    }
    const waiting = sp.waiting.get(key);
    sp.waiting.delete(key);
    sp.waitingArrivals.delete(key);
    // the page's blocks so far, this one, and the page's warm arrivals (fewer re-translations as a program warms up)
    const starts: RunnableInsn<unknown>[] = old ? old.entries.filter(e => e !== insn) : [];
    starts.push(insn);
    if (waiting !== undefined) for (const w of waiting) if (w !== insn && w.jit === null) starts.push(w);
    const page = sp.cache.peekPage(key * PAGE);
    if (page !== undefined) {
      const warm = Math.max(MIN_WARM, Math.floor(this.hotArrivals / WARM_DIVISOR));
      for (let i = 0; i < PAGE && starts.length < MAX_UNIT_BLOCKS; i++) {
        const w = page[i];
        if (w !== undefined && w.jit === null && w.hot >= warm && w !== insn) starts.push(w);
      }
    }
    if (starts.length > MAX_UNIT_BLOCKS) starts.splice(0, starts.length - MAX_UNIT_BLOCKS);
    const t0 = performance.now();
    const unit = new Unit(sp, key);
    unit.owner = this;
    unit.generation = old === undefined ? 0 : old.generation + 1;
    const blocks: BackendBlock[] = [];
    const pages = new Set<number>([key]);
    const starting = new Set(starts);
    for (let k = 0; k < starts.length; k++) {
      const s = starts[k];
      // a block the page's previous module had is reused as it was built (its instructions are unchanged: a change would have dropped that module)
      const b = old?.built.get(s) ?? buildBlock(this.fe, cpu, sp, s, key);
      if (b === null) continue;
      // straight-line code longer than a block: the block it falls into in this page joins the module (else each
      // piece would wait for hotArrivals exits of its own while the interpreter runs the rest) ...
      // and so do the blocks its direct jumps and branches lead to in this page, when the CPU ran there already
      for (const o of b.ops) {
        const to = o.k === 'fall' ? b.next : o.k === 'jmp' ? o.pc : NaN;
        for (const pc of o.k === 'br' ? [o.t, o.f] : [to]) {
          if (starts.length >= MAX_UNIT_BLOCKS || Math.floor(pc / PAGE) !== key) continue;
          const nx = sp.cache.peek(pc);
          if (nx !== undefined && nx.hot > -1e8 && !starting.has(nx)) { starting.add(nx); starts.push(nx); }
        }
      }
      unit.built.set(s, b);
      for (const p of b.pages) pages.add(p);
      const helperIndex = b.helpers.map((h, k) => {
        if (h === null) return -1;
        unit.helpers.push(h);
        unit.helperThens.push(b.thens[k]);
        return unit.helpers.length - 1;
      });
      const { thens: _thens, ...backend } = b;
      blocks.push({ ...backend, helperIndex });
      unit.entries.push(s);
    }
    if (blocks.length === 0) return null;
    const tbytes = guestBytes(8192);
    const table = arenaOffset(tbytes);
    let dispatch: { page: number; table: number } | undefined;
    if (table >= 0) {
      unit.tableBytes = tbytes;
      dispatchTable(blocks, key, new Uint16Array(tbytes.buffer, table, 4096));
      dispatch = { page: key, table };
    }
    const bytes = compileBlocks(blocks, { slots: this.fe.slots, lockstep: this.lockstep, dispatch });
    if (this.codeBytes + bytes.length > CODE_CACHE_BYTES) this.flushAll();
    const fn = this.allocFn();
    const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), this.imports(fn));
    unit.slot.fn = fn;
    this.table.set(fn, inst.exports.run);
    unit.bytes = bytes.length;
    unit.pages = [...pages];
    if (old) this.drop(old);
    sp.units.set(key, unit);
    listPages(sp, unit);
    unit.ref = new WeakRef(unit);
    this.fnUnits[fn] = unit.ref;
    this.live.add(unit.ref);
    this.unitGone.register(unit, { ref: unit.ref, bytes: bytes.length, slot: unit.slot });
    this.codeBytes += bytes.length;
    for (let i = 0; i < unit.entries.length; i++) (unit.entries[i] as unknown as { jit: JitEntry | null }).jit = { unit, index: i };
    this.stats.translations++;
    this.stats.modules = this.live.size;
    this.stats.codeBytes = this.codeBytes;
    this.stats.compileMs += performance.now() - t0;
    return (insn as unknown as { jit: JitEntry | null }).jit;
  }

  // ---------------------------------------------------------------- running
  /**
   * Run translated code from `insn` (translating it first when needed) with
   * at most `budget` instructions: returns the count retired (the CPU's pc
   * and state are the interpreter's at that boundary), or -1 when the
   * block cannot be translated (the interpreter runs it).
   */
  enter(cpu0: InterpCpu<C, I>, cache: DecodeCache<I>, insn: I, budget: number): number {
    if (this.lockstep) return enterLockstep(this, cpu0, cache, insn, budget);
    return this.enterTranslated(cpu0, cache, insn, budget);
  }

  /** @internal (lockstep.ts) whether host code ran in the CPU's last entry (lockstep does not replay such an entry), and its reset */
  impureEntry(cpu: object): boolean { return this.cpuState.get(cpu)?.impure ?? false; }
  clearImpure(cpu: object): void { const s = this.cpuState.get(cpu); if (s !== undefined) s.impure = false; }

  /** @internal (lockstep.ts) run translated code from insn (enter() without lockstep) */
  enterTranslated(cpu0: InterpCpu<C, I>, cache: DecodeCache<I>, insn: I, budget: number): number {
    const cpu = cpu0 as unknown as AnyCpu;
    const ji = insn as unknown as { jit: JitEntry | null; hot: number };
    const s = this.state(cpu);
    if (s === null) { (cpu as { jit: unknown }).jit = null; return -1; } // this CPU stays in the interpreter
    let sp = s.space as CodeSpace;
    if (s.cache !== cache) { sp = this.space(cache as unknown as DecodeCache<RunnableInsn<unknown>>, cpu.mem); s.cache = cache; s.space = sp; }
    let e = ji.jit;
    if (e !== null && e.unit.owner !== this) { e = null; ji.jit = null; }
    if (e === null) {
      const t = this.translate(cpu, sp, insn as unknown as RunnableInsn<unknown>);
      if (t === LATER) return -1;
      if (t === null) { ji.hot = -1e9; return -1; }
      e = t;
    }
    const mem = cpu.mem;
    if (s.tlbMem !== mem || s.tlbUser !== cpu.userMode || s.tlbGen !== mem.tlbGeneration) {
      flushTlb(s); s.tlbMem = mem; s.tlbUser = cpu.userMode; s.tlbGen = mem.tlbGeneration;
    }
    if (s.lo !== cpu.lo) { s.lo = cpu.lo; s.rf = arenaOffset(cpu.lo); }
    const v = this.view, st = s.st, rf = s.rf;
    // entries nest (a helper's instruction may run guest code in a nested run that enters translated code again)
    const outerBase = s.base, outerBudget = s.budget, outerError = s.error, outerLast = s.lastHelper, outerCpu = this.curCpu, outerS = this.curS;
    this.curCpu = cpu; this.curS = s;
    this.fe.syncIn(cpu as unknown as C, v, st + ST_SCRATCH);
    s.base = cpu.instret;
    s.budget = budget;
    s.error = null;
    s.lastHelper = null;
    this.stats.entries++;
    v.setInt32(st + ST_SPACE, sp.id, true);
    this.link(sp, insn.addr, e.unit, e.index);
    let total = 0;
    const user = cpu.userMode;
    for (;;) {
      // the hub runs blocks and follows jumps between pages through the chain table; it returns at a helper's exit, a fault, a jump it has no entry for, or the budget's end
      const before = total;
      this.stats.calls++;
      total = this.hub(st, rf, e.unit.fn, e.index, budget, total);
      const status = v.getInt32(st + ST_STATUS, true);
      let pc: VAddr;
      if (status === EXIT_FAULT) break;
      if (status === EXIT_HELPER) {
        // a helper's instruction jumped (or stopped the run, or changed the mode or the mappings): the pc is set
        if (cpu.jitMustExit() || cpu.mem !== mem || cpu.userMode !== user || mem.tlbGeneration !== s.tlbGen || s.impure) break;
        pc = cpu.pc;
      } else {
        pc = vaddrFromHalves(v.getInt32(st + ST_PC, true), v.getInt32(st + ST_PC + 4, true)) as VAddr;
        cpu.pc = pc;
        if (total === before) break; // the budget left does not cover the block, or its first access left the fast path
      }
      if (total >= budget) break;
      // the next block, in this module or another one, through this dispatcher; an exit to code without a block is an arrival there (tiering)
      const nx = cache.peek(pc) as unknown as (RunnableInsn<unknown> & { jit: JitEntry | null; hot: number }) | undefined;
      if (nx === undefined) break;
      if (nx.jit !== null && nx.jit.unit.owner !== this) nx.jit = null;
      if (nx.jit === null) {
        if (++nx.hot < this.hotArrivals) break;
        const t = this.translate(cpu, sp, nx);
        if (t === LATER) break;
        if (t === null) { nx.hot = -1e9; break; }
        // translating may have decoded new pages (stores to them now leave): the TLB follows
        if (mem.tlbGeneration !== s.tlbGen) { flushTlb(s); s.tlbGen = mem.tlbGeneration; }
        e = t;
        this.link(sp, pc, e.unit, e.index);
        continue;
      }
      e = nx.jit;
      this.link(sp, pc, e.unit, e.index);
    }
    this.fe.syncOut(cpu as unknown as C, v, st + ST_SCRATCH);
    // s.base: instret at the entry plus the instructions of runs nested in helpers
    s.base += total;
    cpu.instret = s.base;
    this.stats.translatedInsns += total;
    this.lastHelper = s.lastHelper;
    this.lastError = s.error;
    s.base = outerBase; s.budget = outerBudget; s.error = outerError; s.lastHelper = outerLast;
    this.curCpu = outerCpu; this.curS = outerS;
    if (outerCpu === null) { this.hotFn = -1; this.hotUnit = null; this.prevFn = -1; this.prevUnit = null; } // no translated code runs now
    return total;
  }

  /** the CPU running translated code now and its state (helpers find them here; entries nest) */
  private curCpu: AnyCpu | null = null;
  private curS: CpuJit | null = null;

  /** what the last entry's helpers left for the run loop (JitRunner): the instruction a helper ran last, and what it threw */
  lastHelper: RunnableInsn<unknown> | null = null;
  lastError: unknown = null;


  private helper(fn: number, st: number, index: number, retired: number): number {
    let cpu = this.curCpu as AnyCpu, s = this.curS as CpuJit;
    if (s === null || s.st !== st) { cpu = this.cpus.get(st)?.deref() as AnyCpu; s = this.cpuState.get(cpu) as CpuJit; }
    // the calling module's unit holds its index while its code can run (a dropped one's code exits at its helper's return)
    const unit = fn === this.hotFn ? this.hotUnit as Unit : this.helperUnit(fn);
    const insn = unit.helpers[index];
    const v = this.view;
    cpu.instret = s.base + retired;
    this.fe.syncOut(cpu as unknown as C, v, st + ST_SCRATCH);
    const mem = cpu.mem, gen = mem.tlbGeneration, user = cpu.userMode;
    s.lastHelper = insn;
    cpu.pc = insn.next;
    const logging = this.storeLog !== null;
    // lockstep: the instruction's stores are logged and its host code marks the entry impure (closures made
    // elsewhere: a closure here would give every call of this hot function a context to allocate)
    const inline = logging ? this.startLogging(cpu, s, mem) : null;
    const before = cpu.instret;
    try {
      insn.exec(cpu, insn);
    } catch (e) {
      s.error = e;
      cpu.pc = insn.addr;
      return EXIT_FAULT;
    } finally {
      if (logging) { mem.watcher = null; cpu.inlineBreakpoint = inline; }
      // instructions of runs nested in this one (an inline breakpoint calling a kernel function) count in instret
      s.base += cpu.instret - before;
    }
    // The instruction armed a single-step the CPU handles inline (x86: a kprobe's TF step of its slot): the
    // stepped instruction runs here, as the interpreter would run it, when the call's budget covers it
    // (this instruction and the stepped one), and counts in the call's instructions (HELPER_EXTRA).
    let extra = 0;
    if (cpu.stepTrap && !logging && retired + 2 <= s.budget) {
      // this instruction has retired (the wasm side counts it): the step's handlers see the count the interpreter's would
      cpu.instret++;
      const b2 = cpu.instret;
      try {
        if (cpu.stepOneInline()) { extra = 1; s.lastHelper = cpu.steppedInsn; }
      } catch (e) {
        s.base += cpu.instret - b2;
        s.error = e;
        s.lastHelper = cpu.steppedInsn;
        this.fe.syncIn(cpu as unknown as C, v, st + ST_SCRATCH);
        return EXIT_FAULT + HELPER_EXTRA; // this instruction retired, the stepped one faulted (its pc is set)
      }
      // runs nested in the step's handlers count in instret as above; the stepped instruction counts in the call's
      s.base += cpu.instret - b2 - extra;
    }
    this.fe.syncIn(cpu as unknown as C, v, st + ST_SCRATCH);
    const x = extra * HELPER_EXTRA;
    // lockstep: an entry in which host code ran is not compared, so it ends here (the next one is)
    if (cpu.jitMustExit() || unit.dead || cpu.mem !== mem || cpu.userMode !== user || mem.tlbGeneration !== gen || (logging && s.impure)) return EXIT_HELPER + x;
    // the block goes on past the helper at the pc it expects there: its `then` when it has one (any other pc, its next included, is a jump)
    const then = unit.helperThens[index];
    if ((then === then ? cpu.pc !== then : cpu.pc !== insn.next) || x !== 0) {
      // a plain jump (an optimized probe's detour, a boosted probe's return, a probe's stepped slot): the hub follows it like a translated jump
      const pc = cpu.pc;
      v.setInt32(st + ST_PC, pc | 0, true);
      v.setInt32(st + ST_PC + 4, Math.floor(pc / 4294967296), true);
      return EXIT_JUMP + x;
    }
    return 0;
  }

  /** the unit of a helper's module (table index fn) when it is not the hot one: the previous one, else through fnUnits */
  private helperUnit(fn: number): Unit {
    let u: Unit | undefined;
    if (fn === this.prevFn) u = this.prevUnit as Unit;
    else {
      u = this.fnUnits[fn]?.deref();
      if (u === undefined) throw new Error(`translator: a translated module called a helper with no unit at table index ${fn}`);
    }
    this.prevFn = this.hotFn; this.prevUnit = this.hotUnit;
    this.hotFn = fn; this.hotUnit = u;
    return u;
  }

  /** lockstep, around a helper's instruction: log its stores, mark the entry impure when host code runs; returns the CPU's inline breakpoint to put back */
  private startLogging(cpu: AnyCpu, s: CpuJit, mem: Memory): AnyCpu['inlineBreakpoint'] {
    const inline = cpu.inlineBreakpoint;
    mem.watcher = { access: (a: VAddr, len: number, w: boolean) => { if (w) logCpuStore(this.storeLog, mem, a, len); }, bulk: () => undefined };
    if (inline !== null) cpu.inlineBreakpoint = (c, at) => { s.impure = true; return inline(c, at); };
    return inline;
  }

  private logStore(host: number, size: number): void {
    const bytes = new Uint8Array(guestBuffer() as ArrayBuffer);
    this.storeLog?.push({ bytes, off: host, old: bytes.slice(host, host + size) });
  }
}
