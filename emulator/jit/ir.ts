/**
 * The translator's intermediate form: ISA-neutral operations on 64-bit
 * temporaries, one list per translated block. Every architecture's front
 * end (emulator/arch/<arch>/jit.ts) writes only this; one back end
 * (backend.ts) turns it into WebAssembly.
 *
 * A block is a run of guest instructions from one entry address, in
 * address order, ending at a control transfer or a length limit. Each
 * guest instruction starts with an `insn` mark; between marks the front end
 * may emit:
 *  - temporaries: const, get/set of a guest register slot (the CPU's lo/hi
 *    register file), binary and unary arithmetic, select;
 *  - memory: ld/st through the CPU's TLB (a miss the TLB cannot fill ends
 *    the block before this instruction: the interpreter runs it, exactly);
 *    stm, consecutive 64-bit stores under one check (all in one page, or
 *    none: the block ends before this instruction);
 *  - scratch: sget/sset of the architecture's words in the CPU's translator
 *    state (x86's lazy flags record), kept equal to the interpreter's
 *    fields at every helper call and exit (FrontEnd.syncIn / syncOut);
 *  - helper: run this instruction through the interpreter's executor
 *    (rare instructions, traps, anything the front end does not emit);
 *    the block ends after it when it changed the flow or stopped the run;
 *  - exitIf: leave before this instruction when a condition holds (the
 *    interpreter then runs it: faults and rare cases stay exact).
 * Rule for front ends: an instruction's memory accesses come before its
 * register, scratch and pc writes, so that an access that leaves the fast
 * path leaves the instruction not started.
 * The last instruction ends with a terminator: jmp (direct), br (two-way
 * direct), jind (indirect) or fall (continue at the next instruction's
 * address).
 */
import type { VAddr } from '../memory/address';

export type Temp = number;

export type BinOp =
  | 'add' | 'sub' | 'mul' | 'and' | 'or' | 'xor' | 'shl' | 'shru' | 'shrs' | 'rotl' | 'rotr'
  | 'eq' | 'ne' | 'ltu' | 'lts' | 'leu' | 'les' | 'gtu' | 'gts' | 'geu' | 'ges'
  /** high 64 bits of the 128-bit product, unsigned / signed */
  | 'mulhu' | 'mulhs'
  /** division with the guest's results for x/0 and MIN/-1 supplied by the front end through select (never traps: the back end guards) */
  | 'divu' | 'divs' | 'remu' | 'rems';
export type UnOp = 'eqz' | 'clz' | 'ctz' | 'popcnt' | 'sext8' | 'sext16' | 'sext32' | 'zext8' | 'zext16' | 'zext32';

export type IrOp =
  | { k: 'insn'; index: number; pc: VAddr }
  | { k: 'const'; d: Temp; v: bigint }
  | { k: 'get'; d: Temp; slot: number }
  | { k: 'set'; slot: number; a: Temp }
  | { k: 'bin'; op: BinOp; d: Temp; a: Temp; b: Temp }
  | { k: 'un'; op: UnOp; d: Temp; a: Temp }
  | { k: 'sel'; d: Temp; c: Temp; a: Temp; b: Temp }
  | { k: 'ld'; d: Temp; a: Temp; size: 1 | 2 | 4 | 8; signed: boolean }
  | { k: 'st'; a: Temp; v: Temp; size: 1 | 2 | 4 | 8 }
  /** store the 64-bit values vs[j] at a + 8j: all of them or, when their bytes are not in one page the TLB serves, none (the block ends before the instruction) */
  | { k: 'stm'; a: Temp; vs: readonly Temp[] }
  | { k: 'sget'; d: Temp; off: number }
  | { k: 'sset'; off: number; a: Temp }
  | { k: 'helper' }
  | { k: 'exitIf'; c: Temp }
  | { k: 'jmp'; pc: VAddr }
  | { k: 'jind'; a: Temp }
  | { k: 'br'; c: Temp; t: VAddr; f: VAddr }
  | { k: 'fall' };

/** The guest instructions of a block, in order. */
export interface BlockInsn<I> { readonly insn: I; readonly pc: VAddr; readonly next: VAddr }

/** One block under construction. */
export class IrBuilder<I> {
  readonly ops: IrOp[] = [];
  readonly insns: BlockInsn<I>[] = [];
  /** by instruction index: what a helper of that instruction runs instead of it (helper(run)) */
  readonly helperRuns = new Map<number, I>();
  /** by instruction index: the pc after which the block goes on when the helper's instruction jumps there (helper(run, then)) */
  readonly helperThens = new Map<number, VAddr>();
  temps = 0;
  private ended = false;
  constructor(readonly start: VAddr) {}

  get isEnded(): boolean { return this.ended; }

  /** Start guest instruction `insn` at pc (the front end calls this through the translator). */
  begin(insn: I, pc: VAddr, next: VAddr): void {
    this.ops.push({ k: 'insn', index: this.insns.length, pc });
    this.insns.push({ insn, pc, next });
  }

  private t(): Temp { return this.temps++; }
  const(v: bigint | number): Temp { const d = this.t(); this.ops.push({ k: 'const', d, v: BigInt.asIntN(64, BigInt(v)) }); return d; }
  get(slot: number): Temp { const d = this.t(); this.ops.push({ k: 'get', d, slot }); return d; }
  set(slot: number, a: Temp): void { this.ops.push({ k: 'set', slot, a }); }
  bin(op: BinOp, a: Temp, b: Temp): Temp { const d = this.t(); this.ops.push({ k: 'bin', op, d, a, b }); return d; }
  un(op: UnOp, a: Temp): Temp { const d = this.t(); this.ops.push({ k: 'un', op, d, a }); return d; }
  sel(c: Temp, a: Temp, b: Temp): Temp { const d = this.t(); this.ops.push({ k: 'sel', d, c, a, b }); return d; }
  ld(a: Temp, size: 1 | 2 | 4 | 8, signed = false): Temp { const d = this.t(); this.ops.push({ k: 'ld', d, a, size, signed }); return d; }
  st(a: Temp, v: Temp, size: 1 | 2 | 4 | 8): void { this.ops.push({ k: 'st', a, v, size }); }
  /** consecutive 64-bit stores from a (a register save), under one memory check: all or none */
  stm(a: Temp, vs: readonly Temp[]): void { this.ops.push({ k: 'stm', a, vs }); }
  sget(off: number): Temp { const d = this.t(); this.ops.push({ k: 'sget', d, off }); return d; }
  sset(off: number, a: Temp): void { this.ops.push({ k: 'sset', off, a }); }
  /**
   * run the current instruction through the interpreter's executor, or
   * through `run` (an instruction object the front end made: the same
   * instruction with an executor that knows what the IR before it did).
   * `then`: the pc the instruction is expected to jump to; when it does
   * (and nothing else makes the block end), the IR after the helper runs
   * (the front end ends the block with jmp(then)); any other pc, the
   * instruction's next included, is a jump the run loop's dispatcher
   * follows as usual.
   */
  helper(run?: I, then?: VAddr): void {
    if (run !== undefined) this.helperRuns.set(this.insns.length - 1, run);
    if (then !== undefined) this.helperThens.set(this.insns.length - 1, then);
    this.ops.push({ k: 'helper' });
  }
  /** leave before this instruction when c != 0 (the interpreter runs it: a fault, a rare case); only before the instruction's writes */
  exitIf(c: Temp): void { this.ops.push({ k: 'exitIf', c }); }
  jmp(pc: VAddr): void { this.ops.push({ k: 'jmp', pc }); this.ended = true; }
  /**
   * indirect jump to the address in a (ret, jmp/call through a register,
   * br, jalr): the front end has already left through exitIf when the
   * interpreter would fault on that address (the back end also leaves
   * before the instruction when a is not a 48-bit canonical address)
   */
  jind(a: Temp): void { this.ops.push({ k: 'jind', a }); this.ended = true; }
  br(c: Temp, t: VAddr, f: VAddr): void { this.ops.push({ k: 'br', c, t, f }); this.ended = true; }
  fall(): void { this.ops.push({ k: 'fall' }); this.ended = true; }

  // ---- shorthands
  add(a: Temp, b: Temp): Temp { return this.bin('add', a, b); }
  addi(a: Temp, v: bigint | number): Temp { return this.bin('add', a, this.const(v)); }
  and(a: Temp, b: Temp): Temp { return this.bin('and', a, b); }
  andi(a: Temp, v: bigint | number): Temp { return this.bin('and', a, this.const(v)); }
}

/** What an architecture supplies to the translator (emulator/arch/<arch>/jit.ts). */
export interface FrontEnd<C, I> {
  /** register-file slots the CPU has (lo and hi arrays are this long) */
  readonly slots: number;
  /** scratch bytes the front end uses in the CPU's translator state (multiple of 8, at most 256) */
  readonly scratchBytes: number;
  /**
   * Emit instruction `insn` (builder.begin already called). Return false to
   * have it run by the interpreter's executor (the translator emits a
   * helper). The front end may end the block (jmp / br / fall).
   */
  emit(b: IrBuilder<I>, insn: I, cpu: C): boolean;
  /** true when the instruction must end its block even when it runs as a helper (calls, returns, branches, traps) */
  endsBlock(insn: I): boolean;
  /**
   * true when the instruction never runs in translated code on this CPU (a
   * full-system CPU's system instructions: port and MSR accesses, control
   * registers, interrupt flag changes, privilege changes): its block ends
   * before it and the interpreter runs it.
   */
  interpretOnly?(insn: I, cpu: C): boolean;
  /** Copy the interpreter's state the scratch mirrors into it (before translated code runs, after a helper). */
  syncIn(cpu: C, scratch: DataView, off: number): void;
  /** Copy the scratch back into the interpreter's fields (before a helper, at exit). */
  syncOut(cpu: C, scratch: DataView, off: number): void;
}
