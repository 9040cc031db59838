/**
 * The translator's one back end: IR blocks (ir.ts) to a WebAssembly module.
 *
 * THIS IS THE ONLY MODULE OF THE EMULATOR THAT COMPILES CODE AT RUN TIME.
 * What it compiles comes only from guest instructions decoded by an
 * architecture's decoder and turned into IR by its front end: no user text
 * (handlers, expressions, file contents) ever reaches it, and nothing here
 * calls eval or Function.
 *
 * One module holds many blocks (those of one guest page) in one function,
 * `run(st, rf, entry, budget, n) -> n'`: a loop around a br_table over
 * the blocks, so a jump from one block of the module to another is a
 * branch inside the function (no return to JavaScript per block). A block
 * is entered only when the budget left covers all its instructions; a jump
 * to an address outside the module, an access the TLB cannot serve, or a
 * helper that changed the flow ends the call with the exit pc and status in
 * the CPU's translator state (layout below) and returns the count of
 * instructions retired since the entry from JavaScript (n counts them on:
 * `n` at the call, the budget is the entry's).
 *
 * Every module's `run` sits in one shared function table; one small hub
 * module (compileHub) is the only function JavaScript calls: it calls a
 * page's `run` through the table and, when that returns at a jump out of
 * the page, looks the target up in the chain table (guest pc and code
 * space -> table index and block) and calls the next page's `run` without
 * returning to JavaScript. A miss returns; the run time fills the entry
 * when it finds the target's block.
 *
 * Per-CPU translator state at `st` (in the guest arena):
 *   +0   exit pc (i64)          +8  exit status (i32): 0 pc at +0; 1 the
 *        helper set the CPU's pc; 2 a helper's instruction faulted (pending)
 *   +12  the code space the CPU runs in (i32: the chain table's key)
 *   +16  the front end's scratch (SCRATCH_BYTES)
 *   +TLB_READ / +TLB_WRITE: TLB_ENTRIES entries of 16 bytes: the virtual
 *        page (address >> 12, i64), the arena offset of its first byte (i32)
 *        and the part of the page mapped there, [lo, hi) (two u16: a
 *        region may start or end inside a page)
 * Imports: fill(st, addrLo, addrHi, write) -> 1 when the entry could be
 * filled (retry) else 0; helper(st, index, retired) -> 0 continue, 1 exit
 * after the instruction, 2 it faulted, 3 it jumped to the pc it stored at
 * +0 (an exit with status 0), each plus HELPER_EXTRA x the instructions it
 * retired after its own; logStore(st, host, size) (lockstep builds only:
 * before every fast-path store).
 */
import { Bytes, encodeModule, I32, I64, OP } from './wasmEncoder';
import type { IrOp, Temp } from './ir';
import type { VAddr } from '../memory/address';

export const ST_PC = 0;
export const ST_STATUS = 8;
export const ST_SPACE = 12;
export const ST_SCRATCH = 16;
export const SCRATCH_BYTES = 256;
export const TLB_ENTRIES = 256;
export const TLB_READ = 512;
export const TLB_WRITE = TLB_READ + TLB_ENTRIES * 16;
export const STATE_BYTES = TLB_WRITE + TLB_ENTRIES * 16;

export const EXIT_PC = 0, EXIT_HELPER = 1, EXIT_FAULT = 2;
/** a helper's result (not a status): its instruction jumped to the pc it stored at ST_PC, nothing else changed */
export const EXIT_JUMP = 3;
/**
 * A helper's result is its code (EXIT_HELPER, EXIT_FAULT, EXIT_JUMP) plus
 * HELPER_EXTRA times the instructions it retired after its own (a stepped
 * slot), which count in the call's instructions.
 */
export const HELPER_EXTRA = 4;

/** a page's run(st, rf, entry, budget, n) -> n */
const T_RUN = { params: [I32, I32, I32, I32, I32], results: [I32] };

/**
 * The chain table: CHAIN_ENTRIES entries of 16 bytes (guest pc i64, code
 * space i32, target i32 = table index << 8 | block), direct-mapped by a
 * multiplicative hash of the pc's low 32 bits (chainSlot).
 */
export const CHAIN_BITS = 13;
export const CHAIN_ENTRIES = 1 << CHAIN_BITS;
export const CHAIN_BYTES = CHAIN_ENTRIES * 16;
const CHAIN_MUL = 0x9e3779b1 | 0;
/** byte offset of pc's entry in the chain table */
export function chainSlot(pcLo: number): number {
  return (Math.imul(pcLo, CHAIN_MUL) >>> (32 - CHAIN_BITS)) << 4;
}

/**
 * The hub: `enter(st, rf, fn, entry, budget, n) -> n'` (n: instructions
 * retired since the entry from JavaScript). Calls table[fn] at block `entry`, then follows jumps out of pages through the chain table
 * at `chain` (an arena offset) while the exit is a plain jump (status 0),
 * progress was made and budget is left.
 */
export function compileHub(chain: number): Uint8Array {
  const c = new Bytes();
  const ST = 0, RF = 1, FN = 2, ENTRY = 3, BUDGET = 4, TOTAL = 5, PREV = 6, E = 7, T = 8, PC = 9;
  const get = (l: number): void => { c.byte(OP.local_get).u32(l); };
  const set = (l: number): void => { c.byte(OP.local_set).u32(l); };
  const mem = (op: number, off: number): void => { c.byte(op).u32(op === OP.i64_load ? 3 : 2).u32(off); };
  c.byte(OP.loop).byte(0x40);
  get(TOTAL); set(PREV);
  get(ST); get(RF); get(ENTRY); get(BUDGET); get(TOTAL); get(FN);
  c.byte(OP.call_indirect).u32(0).u32(0);
  set(TOTAL);
  // a helper's exit or a fault (status != 0), no progress (budget or a first access), or the budget spent: back to JavaScript
  get(ST); mem(OP.i32_load, ST_STATUS);
  get(TOTAL); get(PREV); c.byte(OP.i32_eq); c.byte(OP.i32_or);
  get(TOTAL); get(BUDGET); c.byte(OP.i32_ge_s); c.byte(OP.i32_or);
  c.byte(OP.if).byte(0x40); get(TOTAL); c.byte(OP.return); c.byte(OP.end);
  // the chain table's entry for the exit pc
  get(ST); mem(OP.i64_load, ST_PC); set(PC);
  get(PC); c.byte(OP.i32_wrap_i64); c.byte(OP.i32_const).s32(CHAIN_MUL); c.byte(OP.i32_mul);
  c.byte(OP.i32_const).s32(32 - CHAIN_BITS); c.byte(OP.i32_shr_u); c.byte(OP.i32_const).s32(4); c.byte(OP.i32_shl); set(E);
  get(E); mem(OP.i64_load, chain); get(PC); c.byte(OP.i64_eq);
  get(E); mem(OP.i32_load, chain + 8); get(ST); mem(OP.i32_load, ST_SPACE); c.byte(OP.i32_eq); c.byte(OP.i32_and);
  c.byte(OP.if).byte(0x40);
  get(E); mem(OP.i32_load, chain + 12); c.byte(OP.local_tee).u32(T); c.byte(OP.i32_const).s32(8); c.byte(OP.i32_shr_u); set(FN);
  get(T); c.byte(OP.i32_const).s32(255); c.byte(OP.i32_and); set(ENTRY);
  c.byte(OP.br).u32(1);
  c.byte(OP.end);
  get(TOTAL); c.byte(OP.return);
  c.byte(OP.end); // loop
  c.byte(OP.unreachable);
  return encodeModule({
    types: [T_RUN, { params: [I32, I32, I32, I32, I32, I32], results: [I32] }],
    importFuncs: [],
    memory: { module: 'k', name: 'mem', minPages: 1 },
    table: { module: 'k', name: 'tab', min: 1 },
    funcs: [{ type: 1, locals: [[3, I32], [1, I64]], body: c }],
    exports: [{ name: 'enter', func: 0 }],
  });
}

/** A block as the back end takes it. */
export interface BackendBlock {
  readonly start: VAddr;
  readonly ops: readonly IrOp[];
  readonly temps: number;
  /** guest instructions in the block */
  readonly count: number;
  /** module-wide index of each instruction's helper (for 'helper' ops), by instruction index */
  readonly helperIndex: readonly number[];
  /** address after the last instruction (where 'fall' continues) */
  readonly next: VAddr;
}

export interface CompileOptions {
  /** register-file slots (the hi halves follow the lo halves: hi of slot s is at rf + 4*(slots + s)) */
  slots: number;
  /** call logStore before each fast-path store (lockstep mode) */
  lockstep: boolean;
  /**
   * indirect jumps into the module's own page: the page (address / 4096)
   * and the arena offset of a 4096-entry u16 table (page offset -> block
   * index + 1, 0: no block starts there) the caller filled
   */
  dispatch?: { page: number; table: number };
}

/** The u16 table of opt.dispatch: block index + 1 at each entry's page offset. */
export function dispatchTable(blocks: readonly BackendBlock[], page: number, table: Uint16Array): void {
  blocks.forEach((b, i) => { if (Math.floor(b.start / 4096) === page) table[b.start - page * 4096] = i + 1; });
}

// parameters and fixed locals of run(); L_N, the count retired, is the fifth parameter
const P_ST = 0, P_RF = 1, P_ENTRY = 2, P_BUDGET = 3;
const L_N = 4, L_BLK = 5, L_E = 6, L_H = 7, L_O = 8, L_VP = 9;
/** i64 scratch locals for multi-step operations (mulh) */
const L_X = 10, NX = 6;
const FIRST_TEMP = L_X + NX;

const F_FILL = 0, F_HELPER = 1, F_LOG = 2;

/** binary operations that are one wasm instruction, and comparisons (i32 result widened) */
const SIMPLE: Partial<Record<string, number>> = {
  add: OP.i64_add, sub: OP.i64_sub, mul: OP.i64_mul, and: OP.i64_and, or: OP.i64_or, xor: OP.i64_xor,
  shl: OP.i64_shl, shru: OP.i64_shr_u, shrs: OP.i64_shr_s, rotl: OP.i64_rotl, rotr: OP.i64_rotr,
};
const COMPARE: Partial<Record<string, number>> = {
  eq: OP.i64_eq, ne: OP.i64_ne, ltu: OP.i64_lt_u, lts: OP.i64_lt_s, leu: OP.i64_le_u, les: OP.i64_le_s,
  gtu: OP.i64_gt_u, gts: OP.i64_gt_s, geu: OP.i64_ge_u, ges: OP.i64_ge_s,
};

/** The module's bytes. */
export function compileBlocks(blocks: readonly BackendBlock[], opt: CompileOptions): Uint8Array {
  const entries = new Map<VAddr, number>();
  blocks.forEach((b, i) => entries.set(b.start, i));
  const maxTemps = blocks.reduce((m, b) => Math.max(m, b.temps), 0);
  const code = new Bytes();
  const g = new Gen(code, entries, opt);
  const m = blocks.length - 1;
  code.byte(OP.local_get).u32(P_ENTRY).byte(OP.local_set).u32(L_BLK);
  code.byte(OP.loop).byte(0x40);
  for (let i = 0; i < blocks.length; i++) code.byte(OP.block).byte(0x40);
  code.byte(OP.local_get).u32(L_BLK).byte(OP.br_table).u32(blocks.length);
  for (let i = 0; i < blocks.length; i++) code.u32(i);
  code.u32(0);
  for (let i = 0; i < blocks.length; i++) {
    code.byte(OP.end);
    // block i's code is nested in blocks i+1..m and the loop: the loop is at depth m - i
    g.depth = m - i;
    g.block(blocks[i]);
  }
  code.byte(OP.end); // loop
  code.byte(OP.unreachable);
  return encodeModule({
    types: [T_RUN, { params: [I32, I32, I32], results: [I32] }, { params: [I32, I32, I32], results: [] }, { params: [I32, I32, I32, I32], results: [I32] }],
    importFuncs: [
      { module: 'k', name: 'fill', type: 3 },
      { module: 'k', name: 'helper', type: 1 },
      { module: 'k', name: 'logStore', type: 2 },
    ],
    memory: { module: 'k', name: 'mem', minPages: 1 },
    funcs: [{ type: 0, locals: [[4, I32], [1 + NX + maxTemps, I64]], body: code }],
    exports: [{ name: 'run', func: 3 }],
  });
}

class Gen {
  /** label depth of the dispatch loop from the current position */
  depth = 0;
  private b!: BackendBlock;
  /** index of the current guest instruction in the block */
  private k = 0;
  /** register slot -> temp holding its current value (forwarding inside a block) */
  private regs = new Map<number, Temp>();
  /**
   * register slots and scratch words written by the block and not yet
   * stored: their stores are emitted only where state must be exact (before
   * a helper, at an exit, at the block's end); a later write replaces an
   * earlier one
   */
  private dirtyRegs = new Map<number, Temp>();
  private scratch = new Map<number, Temp>();
  private dirtyScratch = new Set<number>();
  constructor(private readonly c: Bytes, private readonly entries: Map<VAddr, number>, private readonly opt: CompileOptions) {}

  private get(l: number): void { this.c.byte(OP.local_get).u32(l); }
  private set(l: number): void { this.c.byte(OP.local_set).u32(l); }
  private t(x: Temp): number { return FIRST_TEMP + x; }
  private i32(v: number): void { this.c.byte(OP.i32_const).s32(v); }
  private i64(v: bigint): void { this.c.byte(OP.i64_const).s64(v); }
  private mem(op: number, offset: number): void { this.c.byte(op).u32(0).u32(offset); }

  /**
   * the deferred writes as the current instruction started, as undo logs:
   * (slot or scratch offset, its pending temp then, -1 when none) for each
   * one the instruction has written so far. An exit before the instruction
   * must not store what the instruction itself wrote.
   */
  private readonly undoRegs: number[] = [];
  private readonly undoScr: number[] = [];

  private static logged(log: readonly number[], key: number): number {
    for (let i = 0; i < log.length; i += 2) if (log[i] === key) return i;
    return -1;
  }

  /** store the deferred writes as they were when the current instruction started */
  private flushStart(): void {
    const c = this.c, ur = this.undoRegs, us = this.undoScr;
    const reg = (slot: number, t: number): void => {
      this.get(P_RF); this.get(this.t(t)); this.mem(OP.i64_store32, 4 * slot);
      this.get(P_RF); this.get(this.t(t)); this.i64(32n); c.byte(OP.i64_shr_u); this.mem(OP.i64_store32, 4 * (this.opt.slots + slot));
    };
    for (const [slot, t] of this.dirtyRegs) {
      const i = Gen.logged(ur, slot);
      if (i < 0) reg(slot, t); else if (ur[i + 1] >= 0) reg(slot, ur[i + 1]);
    }
    for (const off of this.dirtyScratch) {
      const i = Gen.logged(us, off);
      const t = i < 0 ? this.scratch.get(off) as Temp : us[i + 1];
      if (t >= 0) { this.get(P_ST); this.get(this.t(t)); this.mem(OP.i64_store, ST_SCRATCH + off); }
    }
  }

  /** leave before the current instruction (it is not started: the interpreter runs it) */
  private exitBefore(): void {
    this.flushStart();
    this.get(P_ST); this.c.byte(OP.i64_const).s64n(this.pc); this.mem(OP.i64_store, ST_PC);
    this.get(P_ST); this.i32(0); this.mem(OP.i32_store, ST_STATUS);
    this.get(L_N);
    if (this.k !== 0) { this.i32(this.k); this.c.byte(OP.i32_add); }
    this.c.byte(OP.return);
  }

  /** store every deferred register and scratch write (the state every exit after an instruction and every helper must see) */
  private flush(): void {
    const c = this.c;
    for (const [slot, t] of this.dirtyRegs) {
      this.get(P_RF); this.get(this.t(t)); this.mem(OP.i64_store32, 4 * slot);
      this.get(P_RF); this.get(this.t(t)); this.i64(32n); c.byte(OP.i64_shr_u); this.mem(OP.i64_store32, 4 * (this.opt.slots + slot));
    }
    for (const off of this.dirtyScratch) {
      this.get(P_ST); this.get(this.t(this.scratch.get(off) as Temp)); this.mem(OP.i64_store, ST_SCRATCH + off);
    }
  }

  /** return from run() at pc with `extra` more instructions than n retired */
  private exit(pc: VAddr, extra: number): void {
    this.flush();
    this.get(P_ST); this.c.byte(OP.i64_const).s64n(pc); this.mem(OP.i64_store, ST_PC);
    this.get(P_ST); this.i32(0); this.mem(OP.i32_store, ST_STATUS);
    this.get(L_N);
    if (extra !== 0) { this.i32(extra); this.c.byte(OP.i32_add); }
    this.c.byte(OP.return);
  }

  /** continue at pc: a block of this module (branch to the loop), else exit */
  private goto(pc: VAddr): void {
    const j = this.entries.get(pc);
    if (j === undefined) { this.exit(pc, 0); return; }
    this.flush();
    this.i32(j); this.set(L_BLK);
    this.c.byte(OP.br).u32(this.depth);
  }

  block(b: BackendBlock): void {
    this.b = b;
    this.k = 0;
    this.nextPc = b.next;
    this.undoRegs.length = 0;
    this.undoScr.length = 0;
    this.regs.clear();
    this.dirtyRegs.clear();
    this.scratch.clear();
    this.dirtyScratch.clear();
    const c = this.c;
    // enter only when the budget left covers the whole block (nothing is deferred yet)
    this.get(P_BUDGET); this.get(L_N); c.byte(OP.i32_sub); this.i32(b.count); c.byte(OP.i32_lt_s);
    c.byte(OP.if).byte(0x40); this.depth++;
    this.exit(b.start, 0);
    c.byte(OP.end); this.depth--;
    for (const op of b.ops) this.op(op);
  }

  private retire(): void {
    this.get(L_N); this.i32(this.b.count); this.c.byte(OP.i32_add); this.set(L_N);
  }

  private op(o: IrOp): void {
    const c = this.c;
    switch (o.k) {
      case 'insn': {
        this.k = o.index; this.pc = o.pc;
        this.undoRegs.length = 0;
        this.undoScr.length = 0;
        return;
      }
      case 'const': this.i64(o.v); this.set(this.t(o.d)); return;
      case 'get': {
        const f = this.regs.get(o.slot);
        if (f !== undefined) { this.get(this.t(f)); this.set(this.t(o.d)); return; }
        this.get(P_RF); this.mem(OP.i64_load32_u, 4 * o.slot);
        this.get(P_RF); this.mem(OP.i64_load32_u, 4 * (this.opt.slots + o.slot));
        this.i64(32n); c.byte(OP.i64_shl); c.byte(OP.i64_or);
        this.set(this.t(o.d));
        this.regs.set(o.slot, o.d);
        return;
      }
      case 'set':
        if (Gen.logged(this.undoRegs, o.slot) < 0) this.undoRegs.push(o.slot, this.dirtyRegs.get(o.slot) ?? -1);
        this.regs.set(o.slot, o.a);
        this.dirtyRegs.set(o.slot, o.a);
        return;
      case 'bin': this.bin(o.op, o.a, o.b); this.set(this.t(o.d)); return;
      case 'un': this.un(o.op, o.a); this.set(this.t(o.d)); return;
      case 'sel':
        this.get(this.t(o.a)); this.get(this.t(o.b)); this.get(this.t(o.c)); c.byte(OP.i64_eqz); c.byte(OP.i32_eqz);
        c.byte(OP.select); this.set(this.t(o.d));
        return;
      case 'ld': this.access(o.a, o.size, false, o.d, o.signed); return;
      case 'st': this.access(o.a, o.size, true, o.v, false); return;
      case 'stm': this.access(o.a, 8, true, -1, false, o.vs); return;
      case 'sget': {
        const f = this.scratch.get(o.off);
        if (f !== undefined) { this.get(this.t(f)); this.set(this.t(o.d)); return; }
        this.get(P_ST); this.mem(OP.i64_load, ST_SCRATCH + o.off); this.set(this.t(o.d));
        this.scratch.set(o.off, o.d);
        return;
      }
      case 'sset':
        if (Gen.logged(this.undoScr, o.off) < 0) this.undoScr.push(o.off, this.dirtyScratch.has(o.off) ? this.scratch.get(o.off) as Temp : -1);
        this.scratch.set(o.off, o.a); this.dirtyScratch.add(o.off);
        return;
      case 'helper': this.helper(); return;
      case 'exitIf':
        this.get(this.t(o.c)); c.byte(OP.i64_eqz); c.byte(OP.i32_eqz);
        c.byte(OP.if).byte(0x40); this.depth++;
        this.exitBefore();
        c.byte(OP.end); this.depth--;
        return;
      case 'jind': {
        // a target outside the 48-bit canonical range is not an address the CPU can hold: the interpreter runs the jump
        const a = this.t(o.a);
        this.get(a); this.i64(0x800000000000n); c.byte(OP.i64_add); this.i64(0x1000000000000n); c.byte(OP.i64_ge_u);
        c.byte(OP.if).byte(0x40); this.depth++;
        this.exitBefore();
        c.byte(OP.end); this.depth--;
        this.retire();
        this.flush();
        const d = this.opt.dispatch;
        if (d !== undefined) {
          // a block of this page: continue there inside the module
          this.get(a); this.i64(12n); c.byte(OP.i64_shr_s); this.c.byte(OP.i64_const).s64n(d.page); c.byte(OP.i64_eq);
          c.byte(OP.if).byte(0x40); this.depth++;
          this.get(a); c.byte(OP.i32_wrap_i64); this.i32(0xfff); c.byte(OP.i32_and); this.i32(1); c.byte(OP.i32_shl);
          c.byte(OP.i32_load16_u).u32(0).u32(d.table); c.byte(OP.local_tee).u32(L_H);
          c.byte(OP.if).byte(0x40); this.depth++;
          this.get(L_H); this.i32(1); c.byte(OP.i32_sub); this.set(L_BLK);
          c.byte(OP.br).u32(this.depth);
          c.byte(OP.end); this.depth--;
          c.byte(OP.end); this.depth--;
        }
        this.get(P_ST); this.get(a); this.mem(OP.i64_store, ST_PC);
        this.get(P_ST); this.i32(0); this.mem(OP.i32_store, ST_STATUS);
        this.get(L_N); c.byte(OP.return);
        return;
      }
      case 'jmp': this.retire(); this.goto(o.pc); return;
      case 'fall': this.retire(); this.goto(this.nextPc); return;
      case 'br':
        this.retire();
        this.get(this.t(o.c)); c.byte(OP.i64_eqz);
        c.byte(OP.if).byte(0x40); this.depth++;
        this.goto(o.f);
        c.byte(OP.end); this.depth--;
        this.goto(o.t);
        return;
    }
  }

  /** pc of the current instruction, and of the one after the block's last (for 'fall') */
  private pc: VAddr = 0;
  nextPc: VAddr = 0;

  private helper(): void {
    const c = this.c;
    // the executor reads and writes the register file and (through the front end's sync) the scratch itself
    this.flush();
    this.regs.clear();
    this.dirtyRegs.clear();
    this.scratch.clear();
    this.dirtyScratch.clear();
    this.undoRegs.length = 0;
    this.undoScr.length = 0;
    this.get(P_ST); this.i32(this.b.helperIndex[this.k]); this.get(L_N); this.i32(this.k); c.byte(OP.i32_add);
    c.byte(OP.call).u32(F_HELPER);
    c.byte(OP.local_tee).u32(L_H);
    c.byte(OP.if).byte(0x40); this.depth++;
    // status: the helper's code (h & 3), except a jump (EXIT_JUMP: the pc is at ST_PC, status 0, the hub may chain there)
    this.get(P_ST); this.get(L_H); this.i32(3); c.byte(OP.i32_and); this.get(L_H); this.i32(3); c.byte(OP.i32_and); this.i32(EXIT_JUMP); c.byte(OP.i32_ne); c.byte(OP.i32_mul); this.mem(OP.i32_store, ST_STATUS);
    // the helper's instruction retired unless it faulted (EXIT_HELPER and EXIT_JUMP are odd, EXIT_FAULT even), and the ones it ran after it (h >> 2)
    this.get(L_N); this.i32(this.k); c.byte(OP.i32_add); this.get(L_H); this.i32(1); c.byte(OP.i32_and); c.byte(OP.i32_add);
    this.get(L_H); this.i32(2); c.byte(OP.i32_shr_u); c.byte(OP.i32_add);
    c.byte(OP.return);
    c.byte(OP.end); this.depth--;
  }

  /** ld / st of `size` bytes at a; with `vs` (stm), the 64-bit values vs[j] stored at a + 8j, under one TLB check of all the bytes */
  private access(a: Temp, size0: 1 | 2 | 4 | 8, store: boolean, v: Temp, signed: boolean, vs?: readonly Temp[]): void {
    const c = this.c;
    const tlb = store ? TLB_WRITE : TLB_READ;
    const size = vs === undefined ? size0 : 8 * vs.length;
    c.byte(OP.block).byte(0x40);
    c.byte(OP.loop).byte(0x40);
    this.get(this.t(a)); this.i64(12n); c.byte(OP.i64_shr_s); this.set(L_VP);
    this.get(L_VP); c.byte(OP.i32_wrap_i64); this.i32(TLB_ENTRIES - 1); c.byte(OP.i32_and); this.i32(4); c.byte(OP.i32_shl);
    this.get(P_ST); c.byte(OP.i32_add); this.set(L_E);
    // hit: the page's tag, and the bytes inside the part of the page the entry maps ([lo, hi): a region may cover part of a page)
    this.get(this.t(a)); c.byte(OP.i32_wrap_i64); this.i32(0xfff); c.byte(OP.i32_and); this.set(L_O);
    this.get(L_E); this.mem(OP.i64_load, tlb); this.get(L_VP); c.byte(OP.i64_eq);
    this.get(L_O); this.get(L_E); c.byte(OP.i32_load16_u).u32(0).u32(tlb + 12); c.byte(OP.i32_ge_u); c.byte(OP.i32_and);
    this.get(L_O); this.i32(size); c.byte(OP.i32_add); this.get(L_E); c.byte(OP.i32_load16_u).u32(0).u32(tlb + 14); c.byte(OP.i32_le_u); c.byte(OP.i32_and);
    c.byte(OP.if).byte(0x40);
    this.get(L_E); this.mem(OP.i32_load, tlb + 8);
    this.get(L_O); c.byte(OP.i32_add); this.set(L_H);
    if (store) {
      if (this.opt.lockstep) { this.get(P_ST); this.get(L_H); this.i32(size); c.byte(OP.call).u32(F_LOG); }
      if (vs !== undefined) {
        for (let j = 0; j < vs.length; j++) { this.get(L_H); this.get(this.t(vs[j])); this.mem(OP.i64_store, 8 * j); }
      } else {
        this.get(L_H); this.get(this.t(v));
        this.mem(size === 1 ? OP.i64_store8 : size === 2 ? OP.i64_store16 : size === 4 ? OP.i64_store32 : OP.i64_store, 0);
      }
    } else {
      this.get(L_H);
      this.mem(size === 8 ? OP.i64_load : size === 4 ? (signed ? OP.i64_load32_s : OP.i64_load32_u)
        : size === 2 ? (signed ? OP.i64_load16_s : OP.i64_load16_u) : (signed ? OP.i64_load8_s : OP.i64_load8_u), 0);
      this.set(this.t(v));
    }
    c.byte(OP.br).u32(2);
    c.byte(OP.end); // if
    // miss: an access that crosses a page leaves (the interpreter does it); else ask the TLB to fill the entry and retry
    if (size > 1) {
      this.get(this.t(a)); c.byte(OP.i32_wrap_i64); this.i32(0xfff); c.byte(OP.i32_and); this.i32(4096 - size); c.byte(OP.i32_le_u);
    } else this.i32(1);
    c.byte(OP.if).byte(0x40);
    this.get(P_ST); this.get(this.t(a)); c.byte(OP.i32_wrap_i64); this.get(this.t(a)); this.i64(32n); c.byte(OP.i64_shr_u); c.byte(OP.i32_wrap_i64);
    this.i32(store ? 1 : 0); c.byte(OP.call).u32(F_FILL);
    c.byte(OP.br_if).u32(1);
    c.byte(OP.end);
    this.depth += 2;
    this.exitBefore();
    this.depth -= 2;
    c.byte(OP.end); // loop
    c.byte(OP.end); // block
  }

  private bin(op: string, a: Temp, b: Temp): void {
    const c = this.c;
    const A = this.t(a), B = this.t(b);
    const s = SIMPLE[op], q = COMPARE[op];
    if (s !== undefined) { this.get(A); this.get(B); c.byte(s); return; }
    if (q !== undefined) { this.get(A); this.get(B); c.byte(q); c.byte(OP.i64_extend_i32_u); return; }
    switch (op) {
      case 'mulhu': this.mulhu(A, B); return;
      case 'mulhs':
        // signed high half = unsigned high half - (a < 0 ? b : 0) - (b < 0 ? a : 0)
        this.mulhu(A, B);
        this.get(B); this.get(A); this.i64(63n); c.byte(OP.i64_shr_s); c.byte(OP.i64_and); c.byte(OP.i64_sub);
        this.get(A); this.get(B); this.i64(63n); c.byte(OP.i64_shr_s); c.byte(OP.i64_and); c.byte(OP.i64_sub);
        return;
      case 'divu': case 'remu': {
        // by zero: quotient 0, remainder a
        const q = op === 'divu';
        this.get(A); this.get(B); this.get(B); c.byte(OP.i64_eqz); c.byte(OP.i64_extend_i32_u); c.byte(OP.i64_or);
        c.byte(q ? OP.i64_div_u : OP.i64_rem_u);
        if (q) { this.i64(0n); this.get(B); c.byte(OP.i64_eqz); c.byte(OP.i32_eqz); c.byte(OP.select); }
        else { this.get(A); this.get(B); c.byte(OP.i64_eqz); c.byte(OP.i32_eqz); c.byte(OP.select); }
        return;
      }
      case 'divs': case 'rems': {
        // by zero: quotient 0, remainder a; MIN / -1: quotient MIN (wraps), remainder 0
        const q = op === 'divs';
        // divisor' = b == 0 || b == -1 ? 1 : b
        this.get(A);
        this.i64(1n); this.get(B); this.get(B); c.byte(OP.i64_eqz); this.get(B); this.i64(-1n); c.byte(OP.i64_eq); c.byte(OP.i32_or); c.byte(OP.select);
        c.byte(q ? OP.i64_div_s : OP.i64_rem_s);
        // b == -1: quotient -a, remainder 0
        if (q) { this.i64(0n); this.get(A); c.byte(OP.i64_sub); } else this.i64(0n);
        this.get(B); this.i64(-1n); c.byte(OP.i64_ne); c.byte(OP.select);
        // b == 0: quotient 0, remainder a
        if (q) this.i64(0n); else this.get(A);
        this.get(B); c.byte(OP.i64_eqz); c.byte(OP.i32_eqz); c.byte(OP.select);
        return;
      }
    }
    throw new Error(`jit backend: unknown binary op ${op}`);
  }

  /** high 64 bits of the unsigned 128-bit product of locals A and B (left on the stack) */
  private mulhu(A: number, B: number): void {
    const c = this.c;
    const al = L_X, ah = L_X + 1, bl = L_X + 2, bh = L_X + 3, t = L_X + 4, w = L_X + 5;
    const M32 = 0xffffffffn;
    this.get(A); this.i64(M32); c.byte(OP.i64_and); this.set(al);
    this.get(A); this.i64(32n); c.byte(OP.i64_shr_u); this.set(ah);
    this.get(B); this.i64(M32); c.byte(OP.i64_and); this.set(bl);
    this.get(B); this.i64(32n); c.byte(OP.i64_shr_u); this.set(bh);
    // t = ah*bl + (al*bl >> 32)
    this.get(ah); this.get(bl); c.byte(OP.i64_mul); this.get(al); this.get(bl); c.byte(OP.i64_mul); this.i64(32n); c.byte(OP.i64_shr_u); c.byte(OP.i64_add); this.set(t);
    // w = (t & M32) + al*bh
    this.get(t); this.i64(M32); c.byte(OP.i64_and); this.get(al); this.get(bh); c.byte(OP.i64_mul); c.byte(OP.i64_add); this.set(w);
    // hi = ah*bh + (t >> 32) + (w >> 32)
    this.get(ah); this.get(bh); c.byte(OP.i64_mul); this.get(t); this.i64(32n); c.byte(OP.i64_shr_u); c.byte(OP.i64_add);
    this.get(w); this.i64(32n); c.byte(OP.i64_shr_u); c.byte(OP.i64_add);
  }

  private un(op: string, a: Temp): void {
    const c = this.c;
    this.get(this.t(a));
    switch (op) {
      case 'eqz': c.byte(OP.i64_eqz); c.byte(OP.i64_extend_i32_u); return;
      case 'clz': c.byte(OP.i64_clz); return;
      case 'ctz': c.byte(OP.i64_ctz); return;
      case 'popcnt': c.byte(OP.i64_popcnt); return;
      case 'sext8': c.byte(OP.i64_extend8_s); return;
      case 'sext16': c.byte(OP.i64_extend16_s); return;
      case 'sext32': c.byte(OP.i64_extend32_s); return;
      case 'zext8': this.i64(0xffn); c.byte(OP.i64_and); return;
      case 'zext16': this.i64(0xffffn); c.byte(OP.i64_and); return;
      case 'zext32': this.i64(0xffffffffn); c.byte(OP.i64_and); return;
    }
    throw new Error(`jit backend: unknown unary op ${op}`);
  }
}
