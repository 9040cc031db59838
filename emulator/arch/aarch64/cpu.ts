/**
 * The A64 CPU on the arch-neutral interpreter core (emulator/cpu/interp.ts):
 * x0..x30 and sp as (lo, hi) int32 halves, NZCV as four 0/1 numbers, DAIF,
 * tpidr_el0/tpidr_el1, the exclusive monitor, and the operand helpers the
 * executors share (64-bit add-with-carry and its flags, shifts of a 64-bit
 * pair, extends, conditions, loads and stores).
 *
 * EL0 / EL1 is Cpu.userMode. 64-bit helpers return the low half and leave
 * the high half in `th` (the x86 CPU's convention).
 *
 * Hardware breakpoints and watchpoints: the debug registers (debugRegs.ts,
 * `dbg`) decode into the interpreter core's match unit (`hw`) with arm64
 * timing ('before'): a watched load or store is a fault before memory
 * changes (pc = the instruction, addr = the accessed address), as is an
 * instruction at a breakpoint. Accesses made of several elements (pairs,
 * 8-byte accesses done as two words, vectors) are shown to the unit whole,
 * element by element, before any of them moves (watchAccess).
 */
import { Cpu, CpuContext, RunResult } from '../types';
import { Memory, MemoryFault } from '../../memory/memory';
import { VAddr, fromVAddr } from '../../memory/address';
import { guestRegisterFile } from '../../memory/guestRam';
import { InterpCpu } from '../../cpu/interp';
import { DecodeCaches } from '../../cpu/decodeCache';
import { GuestFault } from '../../cpu/faults';
import { A64Insn } from './insn';
import { decodeAt } from './decoder';
import { NSLOTS, PT_REGS, PT_PC, PT_PSTATE, PT_TPIDR_EL0, PT_TPIDR_EL1, ZR_READ } from './regs';
import { A64DebugRegs } from './debugRegs';

const TWO32 = 4294967296;

export interface A64Context extends CpuContext {
  readonly arch: 'aarch64';
  lo: Int32Array; hi: Int32Array; pc: number; pstate: number; tpidr0: bigint; tpidr1: bigint;
  /** V0..V31 (4 words each), FPCR, FPSR */
  v?: Int32Array; fpcr?: number; fpsr?: number;
}

/** the decode caches of every A64 CPU (shared per Memory and privilege mode) */
const A64_DECODE_CACHES = new DecodeCaches<A64Insn>(decodeAt, 4);

export class A64Cpu extends InterpCpu<A64Cpu, A64Insn> implements Cpu {
  private readonly regFile = guestRegisterFile(NSLOTS);
  /** general registers' low and high halves (in the arena: translated code reads them, emulator/jit) */
  readonly lo: Int32Array = this.regFile.lo;
  readonly hi: Int32Array = this.regFile.hi;
  /** high-half return slot */
  th = 0;
  nf = 0; zf = 0; cf = 0; vf = 0;
  private daifBits = 0xf;
  /** PSTATE.{D,A,I,F} as bits 3..0 (D masks breakpoints and watchpoints at EL1: the debug registers re-decode when it changes) */
  get daif(): number { return this.daifBits; }
  set daif(v: number) {
    const changed = (v ^ this.daifBits) & 8;
    this.daifBits = v;
    if (changed !== 0) this.dbg.sync();
  }
  tpidr0 = 0n;
  tpidr1 = 0n;
  /** the SIMD&FP registers V0..V31 (16 bytes each, little-endian; slot 32 is a scratch), as bytes, halfwords, words */
  readonly vbuf = new ArrayBuffer(33 * 16);
  readonly vb = new Uint8Array(this.vbuf);
  readonly vh = new Uint16Array(this.vbuf);
  readonly vw = new Int32Array(this.vbuf);
  /** the same bytes as singles and doubles (the FP fast paths: values that are not NaNs) */
  readonly vs = new Float32Array(this.vbuf);
  readonly vd = new Float64Array(this.vbuf);
  /** FP control (rounding, default NaN, flush to zero) and status (cumulative exception flags) */
  fpcr = 0;
  fpsr = 0;
  /** exclusive monitor: address (NaN = open), size in bytes, and the value(s) loaded (lo, hi, lo2, hi2) */
  exclAddr = NaN;
  exclSize = 0;
  exclVal: [number, number, number, number] = [0, 0, 0, 0];
  /** DBGBVR/DBGBCR, DBGWVR/DBGWCR, MDSCR_EL1, ID_AA64DFR0_EL1 (decoded into `hw`) */
  readonly dbg = new A64DebugRegs(this);

  // arm64 watchpoints are faults before the access ('before' timing of the match unit)
  constructor(id: number, mem: Memory) { super(id, mem, A64_DECODE_CACHES, 'aarch64', 'before'); }

  /** the debug registers follow the EL the run starts at (userMode changes only between runs on this CPU) */
  override run(budget: number): RunResult {
    this.dbg.sync();
    return super.run(budget);
  }

  protected describe(insn: A64Insn): string {
    return `${insn.row?.name ?? '?'} (${(insn.word >>> 0).toString(16).padStart(8, '0')})`;
  }

  // ---------------------------------------------------------------- registers
  x64(r: number): bigint { return (BigInt(this.hi[r] >>> 0) << 32n) | BigInt(this.lo[r] >>> 0); }
  setX64(r: number, v: bigint): void {
    this.lo[r] = Number(BigInt.asIntN(32, v)); this.hi[r] = Number(BigInt.asIntN(32, v >> 32n));
  }
  /** register value of an operation of width sf (bigint, unsigned) */
  xv(r: number, sf: number): bigint { return sf ? this.x64(r) : BigInt(this.lo[r] >>> 0); }
  /** write an sf-wide result (32-bit results zero the upper half) */
  setXv(r: number, v: bigint, sf: number): void {
    if (sf) this.setX64(r, v); else { this.lo[r] = Number(BigInt.asIntN(32, v)); this.hi[r] = 0; }
  }
  /** register as an address; non-canonical values are translation faults */
  addrOf(r: number, access: 'read' | 'write'): VAddr {
    const h = this.hi[r];
    const a = h * TWO32 + (this.lo[r] >>> 0);
    if (h > 0x7fff || h < -0x8000) throw new MemoryFault(a, access, false, this.userMode);
    return a;
  }
  setAddr(r: number, a: VAddr): void {
    const h = Math.floor(a / TWO32);
    this.hi[r] = h; this.lo[r] = (a - h * TWO32) | 0;
  }

  // ---------------------------------------------------------------- flags
  setNZ32(v: number): void { this.nf = v >>> 31; this.zf = v === 0 ? 1 : 0; }
  setNZ64(l: number, h: number): void { this.nf = h >>> 31; this.zf = (l | h) === 0 ? 1 : 0; }
  nzcv(): number { return (this.nf << 3) | (this.zf << 2) | (this.cf << 1) | this.vf; }
  setNzcv(v: number): void { this.nf = (v >> 3) & 1; this.zf = (v >> 2) & 1; this.cf = (v >> 1) & 1; this.vf = v & 1; }

  /** ConditionHolds(cond) */
  cond(c: number): boolean {
    let r: boolean;
    switch (c >> 1) {
      case 0: r = this.zf === 1; break;
      case 1: r = this.cf === 1; break;
      case 2: r = this.nf === 1; break;
      case 3: r = this.vf === 1; break;
      case 4: r = this.cf === 1 && this.zf === 0; break;
      case 5: r = this.nf === this.vf; break;
      case 6: r = this.nf === this.vf && this.zf === 0; break;
      default: return true;
    }
    return (c & 1) !== 0 ? !r : r;
  }

  /**
   * AddWithCarry of (alo, ahi) + (blo, bhi) + cin at width sf into slot d;
   * sets NZCV when flags. For a subtraction pass the complement of b and cin 1.
   */
  addc(d: number, alo: number, ahi: number, blo: number, bhi: number, cin: number, sf: number, flags: boolean): void {
    const l = (alo >>> 0) + (blo >>> 0) + cin;
    if (sf === 0) {
      const r = l | 0;
      this.lo[d] = r; this.hi[d] = 0;
      if (flags) {
        const s = (alo | 0) + (blo | 0) + cin;
        this.nf = r >>> 31; this.zf = r === 0 ? 1 : 0;
        this.cf = l > 0xffffffff ? 1 : 0; this.vf = s > 0x7fffffff || s < -0x80000000 ? 1 : 0;
      }
      return;
    }
    const c32 = l > 0xffffffff ? 1 : 0;
    const rl = l | 0;
    const hu = (ahi >>> 0) + (bhi >>> 0) + c32;
    const rh = hu | 0;
    this.lo[d] = rl; this.hi[d] = rh;
    if (flags) {
      const hs = (ahi | 0) + (bhi | 0) + c32;
      this.nf = rh >>> 31; this.zf = (rl | rh) === 0 ? 1 : 0;
      this.cf = hu > 0xffffffff ? 1 : 0; this.vf = hs > 0x7fffffff || hs < -0x80000000 ? 1 : 0;
    }
  }

  /** Shift the pair (l, h) by amt (0..63): type 0 lsl, 1 lsr, 2 asr, 3 ror. Returns lo; th = hi. */
  shift64(l: number, h: number, type: number, amt: number): number {
    if (amt === 0) { this.th = h; return l; }
    switch (type) {
      case 0:
        if (amt < 32) { this.th = (h << amt) | (l >>> (32 - amt)); return l << amt; }
        this.th = l << (amt - 32); return 0;
      case 1:
        if (amt < 32) { this.th = h >>> amt; return (l >>> amt) | (h << (32 - amt)); }
        this.th = 0; return h >>> (amt - 32);
      case 2:
        if (amt < 32) { this.th = h >> amt; return (l >>> amt) | (h << (32 - amt)); }
        this.th = h >> 31; return h >> (amt - 32);
      default: {
        if (amt === 32) { this.th = l; return h; }
        if (amt < 32) { this.th = (h >>> amt) | (l << (32 - amt)); return (l >>> amt) | (h << (32 - amt)); }
        const a = amt - 32;
        this.th = (l >>> a) | (h << (32 - a)); return (h >>> a) | (l << (32 - a));
      }
    }
  }
  /** 32-bit shift of v by amt (0..31) */
  static shift32(v: number, type: number, amt: number): number {
    switch (type) {
      case 0: return v << amt;
      case 1: return v >>> amt;
      case 2: return v >> amt;
      default: return amt === 0 ? v : (v >>> amt) | (v << (32 - amt));
    }
  }
  /** ExtendReg of slot r: type 0..7 = uxtb uxth uxtw uxtx sxtb sxth sxtw sxtx, then lsl sh (0..4). Returns lo; th = hi. */
  extend(r: number, type: number, sh: number): number {
    let l = this.lo[r], h = this.hi[r];
    switch (type) {
      case 0: l &= 0xff; h = 0; break;
      case 1: l &= 0xffff; h = 0; break;
      case 2: h = 0; break;
      case 4: l = (l << 24) >> 24; h = l >> 31; break;
      case 5: l = (l << 16) >> 16; h = l >> 31; break;
      case 6: h = l >> 31; break;
      default: break;
    }
    return this.shift64(l, h, 0, sh);
  }

  // ---------------------------------------------------------------- memory
  /**
   * One architectural access [a, a+len) shown to the debug registers before
   * any of its bytes move: a watchpoint it matches throws (the instruction
   * has no effect). Loads and stores of one to four bytes are seen by the
   * address space itself; this is for accesses the CPU makes in pieces.
   */
  watchAccess(a: VAddr, len: number, write: boolean): void {
    const w = this.mem.watcher;
    if (w !== null) w.access(a, len, write);
  }
  /** two consecutive elements of `size` bytes (a pair), both checked before either moves */
  watchPair(a: VAddr, size: number, write: boolean): void {
    const w = this.mem.watcher;
    if (w !== null) { w.access(a, size, write); w.access(a + size, size, write); }
  }
  /** Load size bytes (1, 2, 4, 8) zero-extended: returns lo, th = hi. */
  load(a: VAddr, size: number): number {
    const m = this.mem;
    switch (size) {
      case 1: this.th = 0; return m.read8(a);
      case 2: this.th = 0; return m.read16(a);
      case 4: this.th = 0; return m.read32(a) | 0;
      default: {
        if (m.watcher !== null) m.watcher.access(a, 8, false);
        const l = m.read32(a) | 0; this.th = m.read32(a + 4) | 0; return l;
      }
    }
  }
  store(a: VAddr, size: number, l: number, h: number): void {
    const m = this.mem;
    switch (size) {
      case 1: m.write8(a, l & 0xff); return;
      case 2: m.write16(a, l & 0xffff); return;
      case 4: m.write32(a, l); return;
      default:
        if (m.watcher !== null) m.watcher.access(a, 8, true);
        m.write32(a, l); m.write32(a + 4, h); // low half first: the fault address is the first unmapped byte (a store straddling a region's end may be partly done, as the architecture allows)
    }
  }
  /** a load the emulator makes for its own bookkeeping (the exclusive monitor's check): not an access the debug registers see */
  loadUnwatched(a: VAddr, size: number): number {
    const m = this.mem, w = m.watcher;
    if (w === null) return this.load(a, size);
    m.watcher = null;
    try { return this.load(a, size); } finally { m.watcher = w; }
  }
  /** alignment fault for exclusives / atomics */
  checkAligned(a: VAddr, size: number, write: boolean): void {
    if (a % size !== 0) throw new MemoryFault(a, write ? 'write' : 'read', true, this.userMode);
  }

  // ---------------------------------------------------------------- pstate / Cpu interface
  pstate(): number {
    return (this.nzcv() << 28) | (this.daif << 6) | (this.userMode ? 0 : 0x5);
  }
  setPstate(v: number): void {
    this.setNzcv((v >>> 28) & 0xf);
    this.daif = (v >>> 6) & 0xf;
  }

  gprSlot(index: number): number {
    const r = PT_REGS[index];
    return r !== undefined && r >= 0 ? r : -1;
  }

  getReg(index: number): bigint {
    const r = PT_REGS[index];
    if (r === undefined) throw new RangeError(`aarch64: no register index ${index}`);
    if (r >= 0) return this.x64(r);
    switch (r) {
      case PT_PC: return fromVAddr(this.pc);
      case PT_PSTATE: return BigInt(this.pstate() >>> 0);
      case PT_TPIDR_EL0: return this.tpidr0;
      case PT_TPIDR_EL1: return this.tpidr1;
      default: throw new RangeError(`aarch64: no register index ${index}`);
    }
  }
  setReg(index: number, value: bigint): void {
    const r = PT_REGS[index];
    if (r === undefined) throw new RangeError(`aarch64: no register index ${index}`);
    const u = BigInt.asUintN(64, value);
    if (r >= 0) { this.setX64(r, u); return; }
    switch (r) {
      case PT_PC: this.setPc(u); return;
      case PT_PSTATE: this.setPstate(Number(u & 0xffffffffn)); return;
      case PT_TPIDR_EL0: this.tpidr0 = u; return;
      case PT_TPIDR_EL1: this.tpidr1 = u; return;
      default: throw new RangeError(`aarch64: no register index ${index}`);
    }
  }

  saveContext(): A64Context {
    return {
      arch: 'aarch64', lo: this.lo.slice(), hi: this.hi.slice(), pc: this.pc, pstate: this.pstate(), tpidr0: this.tpidr0, tpidr1: this.tpidr1,
      v: this.vw.slice(0, 128), fpcr: this.fpcr, fpsr: this.fpsr,
    };
  }
  restoreContext(ctx: CpuContext): void {
    if (ctx.arch !== 'aarch64') throw new Error(`aarch64 cpu ${this.id}: cannot restore a ${ctx.arch} context`);
    const c = ctx as A64Context;
    this.lo.set(c.lo); this.hi.set(c.hi); this.pc = c.pc; this.setPstate(c.pstate);
    this.tpidr0 = c.tpidr0; this.tpidr1 = c.tpidr1;
    if (c.v) this.vw.set(c.v); else this.vw.fill(0, 0, 128);
    this.fpcr = c.fpcr ?? 0; this.fpsr = c.fpsr ?? 0;
    this.lo[ZR_READ] = 0; this.hi[ZR_READ] = 0;
    this.exclAddr = NaN;
  }

  /** undefined-instruction fault (thrown from an executor) */
  static readonly UNDEF = new GuestFault('undefined');
}
