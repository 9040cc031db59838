/**
 * The x86_64 CPU: register file (lo/hi int32 halves), lazy flags, operand
 * access helpers used by the executors, and the run loop with its
 * per-address decoded-instruction cache.
 *
 * Stops: a trap-style instruction (int3, int n, ud*, hlt, syscall, vmcall)
 * ends the run without a JS exception — its executor calls stop(), which
 * records the signal and sets the loop's instret limit to -1, so the
 * loop's existing `instret < limit` test ends it after the instruction.
 * Faults found deeper (#PF from the bus, #GP on an address, #DE) are
 * thrown and caught by run(). run() is re-entrant: code called from inside
 * an instruction (X86Cpu.inlineBreakpoint) may run nested code; a nested
 * run keeps the outer run's limit and pending stop, and its instructions
 * count in instret but not in the outer run's `executed` or budget.
 *
 * Representation: GPR n is (lo[n], hi[n]); rip is a VAddr (signed number,
 * see memory/address.ts); fs/gs bases are VAddr. Values of 8/16-bit operands
 * are returned masked and non-negative, 32-bit values as int32, 64-bit
 * values as (lo int32, this.th int32) — `th` is the "high half" return slot
 * of every helper that returns a 64-bit value.
 */
import { Cpu, CpuContext, RunResult, Trap } from '../types';
import { Memory, MemoryFault } from '../../memory/memory';
import { VAddr, fromVAddr, hex, toVAddr } from '../../memory/address';
import { LazyFlags, ARITH_MASK, TF, DF } from './flags';
import { Insn } from './insn';
import { DecodeCache, cacheFor } from './cache';
import { GuestFault, GuestStop } from './faults';
import { PT_REGS, PT_ORIG_AX, PT_IP, PT_CS, PT_FLAGS, PT_SS, PT_FS_BASE, PT_GS_BASE } from './regs';

const TWO32 = 4294967296;
const CANON = 140737488355328; // 2^47
/** rflags bits other than the arithmetic ones, TF and DF that software may set */
const OTHER_FLAGS_MASK = 0x200 | 0x40000 | 0x200000 | 0x3000 | 0x4000;

export const KERNEL_CS = 0x10n, KERNEL_SS = 0x18n, USER_CS = 0x33n, USER_SS = 0x2bn;

export interface X86Context extends CpuContext {
  readonly arch: 'x86_64';
  lo: Int32Array; hi: Int32Array; rip: number; rflags: number;
  fsBase: number; gsBase: number; origAx: bigint;
}

function faultTrap(f: GuestFault, pc: bigint): Trap {
  return f.kind === 'generalProtection' ? { kind: 'generalProtection', pc, reason: f.reason } : { kind: f.kind, pc };
}

export class X86Cpu extends LazyFlags implements Cpu {
  readonly lo = new Int32Array(16);
  readonly hi = new Int32Array(16);
  rip: VAddr = 0;
  /** high-half return slot */
  th = 0;
  df = false;
  tf = false;
  /** IF, IOPL, NT, AC, ID bits and bit 1 */
  otherFlags = 0x2;
  fsBase: VAddr = 0;
  gsBase: VAddr = 0;
  origAx = -1n;
  userMode = false;
  instret = 0;
  /** the run loop's instret limit; -1 once an executor called stop() */
  private limit = 0;
  /** what stop() recorded for the current instruction */
  private pending: GuestStop | GuestFault | null = null;
  /** instructions counted by runs nested inside an instruction (excluded from the outer run's count) */
  private innerInsns = 0;
  /** instret and innerInsns at the start of the innermost run in progress (retiredInRun) */
  private runStart = 0;
  private runInner0 = 0;
  /**
   * Host fast path for breakpoints owned by the host (the kprobes engine's
   * native entries): consulted by int3 before it stops the run, unless TF
   * is set. `at` is the int3's address; rip is already past it. true: the
   * owner handled the breakpoint inline (it set rip; it may run nested code
   * through run()); the int3 retires without a trap and the run goes on
   * (endRun() to stop it). false: the int3 stops the run as a breakpoint.
   */
  inlineBreakpoint: ((cpu: X86Cpu, at: VAddr) => boolean) | null = null;
  private cache: DecodeCache | null = null;
  private cacheMem: Memory | null = null;
  private cacheUser = false;

  constructor(readonly id: number, public mem: Memory) { super(); }

  // ---------------------------------------------------------------- registers
  /** Read register r at size; 8-bit r 16..19 = ah ch dh bh. Sets th for 64-bit. */
  getR(size: number, r: number): number {
    switch (size) {
      case 1: return r < 16 ? this.lo[r] & 0xff : (this.lo[r - 16] >> 8) & 0xff;
      case 2: return this.lo[r] & 0xffff;
      case 4: return this.lo[r];
      default: this.th = this.hi[r]; return this.lo[r];
    }
  }
  setR(size: number, r: number, v: number, h: number): void {
    switch (size) {
      case 1:
        if (r < 16) this.lo[r] = (this.lo[r] & ~0xff) | (v & 0xff);
        else this.lo[r - 16] = (this.lo[r - 16] & ~0xff00) | ((v & 0xff) << 8);
        return;
      case 2: this.lo[r] = (this.lo[r] & ~0xffff) | (v & 0xffff); return;
      case 4: this.lo[r] = v; this.hi[r] = 0; return;
      default: this.lo[r] = v; this.hi[r] = h;
    }
  }
  /** Register as a 64-bit address (VAddr); #GP when not canonical. */
  regAddr(r: number): VAddr {
    const h = this.hi[r];
    if (h > 0x7fff || h < -0x8000) throw new GuestFault('generalProtection', `non-canonical address in register ${r}`);
    return h * TWO32 + (this.lo[r] >>> 0);
  }
  setRegAddr(r: number, a: VAddr): void {
    const h = Math.floor(a / TWO32);
    this.hi[r] = h; this.lo[r] = (a - h * TWO32) | 0;
  }

  // ---------------------------------------------------------------- memory
  /**
   * Effective address of the memory operand (with segment base); #GP when non-canonical.
   * Registers outside the canonical range take the exact (bigint) path so the double sum never rounds.
   * 67 prefix: base + index*scale + disp over the low 32 bits of the registers, truncated to
   * 32 bits and zero-extended (rip-relative: the decoder already truncated eip + disp).
   */
  ea(i: Insn): VAddr {
    let a = i.disp;
    let big = false;
    if (i.ripRel) { /* absolute address resolved at decode time */ }
    else if (i.asize === 4) a = this.ea32(i);
    else {
      if (i.base >= 0) {
        const h = this.hi[i.base];
        if (h >= 0x8000 || h < -0x8000) big = true;
        a += h * TWO32 + (this.lo[i.base] >>> 0);
      }
      if (i.index >= 0) {
        const h = this.hi[i.index];
        if (h >= 0x8000 || h < -0x8000) big = true;
        a += (h * TWO32 + (this.lo[i.index] >>> 0)) * (1 << i.scale);
      }
      if (big) a = this.eaExact(i);
    }
    if (i.seg !== 0) a += i.seg === 1 ? this.fsBase : this.gsBase;
    if (a >= CANON || a < -CANON) throw new GuestFault('generalProtection', `non-canonical address 0x${fromVAddr(a).toString(16)}`);
    return a;
  }
  /** 32-bit effective address (67 prefix), without segment base: the sum of int32s modulo 2^32 */
  private ea32(i: Insn): number {
    let v = i.disp;
    if (i.base >= 0) v += this.lo[i.base];
    if (i.index >= 0) v += this.lo[i.index] << i.scale;
    return v >>> 0;
  }
  /**
   * Address of the operand-sized word `delta` bytes from the memory operand (bt* bit strings):
   * with a 67 prefix the offset wraps within the 32-bit address space, before the segment base.
   */
  eaPlus(i: Insn, delta: number): VAddr {
    if (i.asize !== 4 || i.ripRel) {
      const a = this.ea(i) + delta;
      if (a >= CANON || a < -CANON) throw new GuestFault('generalProtection', `non-canonical address 0x${fromVAddr(a).toString(16)}`);
      return a;
    }
    let a = (((this.ea32(i) + delta) % TWO32) + TWO32) % TWO32;
    if (i.seg !== 0) a += i.seg === 1 ? this.fsBase : this.gsBase;
    if (a >= CANON || a < -CANON) throw new GuestFault('generalProtection', `non-canonical address 0x${fromVAddr(a).toString(16)}`);
    return a;
  }
  private eaExact(i: Insn): VAddr {
    let v = BigInt(i.disp);
    if (i.base >= 0) v += BigInt(this.hi[i.base]) * 4294967296n + BigInt(this.lo[i.base] >>> 0);
    if (i.index >= 0) v += (BigInt(this.hi[i.index]) * 4294967296n + BigInt(this.lo[i.index] >>> 0)) << BigInt(i.scale);
    const s = BigInt.asIntN(64, v);
    if (s >= 140737488355328n || s < -140737488355328n) {
      throw new GuestFault('generalProtection', `non-canonical address ${hex(s)}`);
    }
    return Number(s);
  }
  readM(size: number, a: VAddr): number {
    switch (size) {
      case 1: return this.mem.read8(a);
      case 2: return this.mem.read16(a);
      case 4: return this.mem.read32(a) | 0;
      default: { const l = this.mem.read32(a) | 0; this.th = this.mem.read32(a + 4) | 0; return l; }
    }
  }
  writeM(size: number, a: VAddr, v: number, h: number): void {
    switch (size) {
      case 1: this.mem.write8(a, v & 0xff); return;
      case 2: this.mem.write16(a, v & 0xffff); return;
      case 4: this.mem.write32(a, v); return;
      default:
        // high half first: a fault at a region's end leaves memory unchanged
        this.mem.write32(a + 4, h); this.mem.write32(a, v);
    }
  }
  /** Read the r/m operand (register or memory) at the insn's size. */
  readE(i: Insn, size: number): number {
    if (i.rm >= 0) return this.getR(size, i.rm);
    return this.readM(size, this.ea(i));
  }
  writeE(i: Insn, size: number, v: number, h: number): void {
    if (i.rm >= 0) this.setR(size, i.rm, v, h);
    else this.writeM(size, this.ea(i), v, h);
  }
  push64(l: number, h: number): void {
    const sp = this.regAddr(4) - 8;
    this.mem.write32(sp + 4, h);
    this.mem.write32(sp, l);
    this.setRegAddr(4, sp);
  }
  /** Pop 64 bits: returns lo, th = hi. */
  pop64(): number {
    const sp = this.regAddr(4);
    const l = this.mem.read32(sp) | 0;
    this.th = this.mem.read32(sp + 4) | 0;
    this.setRegAddr(4, sp + 8);
    return l;
  }
  /** Push a VAddr (return address). */
  pushAddr(a: VAddr): void {
    const h = Math.floor(a / TWO32);
    this.push64((a - h * TWO32) | 0, h);
  }

  // ---------------------------------------------------------------- flags
  getRflags(): number {
    return this.arithFlags() | (this.tf ? TF : 0) | (this.df ? DF : 0) | this.otherFlags | 0x2;
  }
  setRflags(v: number): void {
    this.setEager(v & ARITH_MASK);
    this.tf = (v & TF) !== 0;
    this.df = (v & DF) !== 0;
    this.otherFlags = (v & OTHER_FLAGS_MASK) | 0x2;
  }

  // ---------------------------------------------------------------- Cpu interface
  getPc(): bigint { return fromVAddr(this.rip); }
  setPc(pc: bigint): void { this.rip = this.canonical(pc, 'pc'); }
  getReg(index: number): bigint {
    const r = PT_REGS[index];
    if (r === undefined) throw new RangeError(`x86_64: no register index ${index}`);
    if (r >= 0) return (BigInt(this.hi[r] >>> 0) << 32n) | BigInt(this.lo[r] >>> 0);
    switch (r) {
      case PT_ORIG_AX: return BigInt.asUintN(64, this.origAx);
      case PT_IP: return fromVAddr(this.rip);
      case PT_CS: return this.userMode ? USER_CS : KERNEL_CS;
      case PT_SS: return this.userMode ? USER_SS : KERNEL_SS;
      case PT_FLAGS: return BigInt(this.getRflags());
      case PT_FS_BASE: return fromVAddr(this.fsBase);
      default: return fromVAddr(this.gsBase);
    }
  }
  setReg(index: number, value: bigint): void {
    const r = PT_REGS[index];
    if (r === undefined) throw new RangeError(`x86_64: no register index ${index}`);
    const u = BigInt.asUintN(64, value);
    if (r >= 0) { this.lo[r] = Number(u & 0xffffffffn) | 0; this.hi[r] = Number(u >> 32n) | 0; return; }
    switch (r) {
      case PT_ORIG_AX: this.origAx = BigInt.asIntN(64, u); return;
      case PT_IP: this.setPc(u); return;
      case PT_CS: case PT_SS: return; // derived from the privilege mode
      case PT_FLAGS: this.setRflags(Number(u & 0xffffffffn)); return;
      case PT_FS_BASE: this.fsBase = this.canonical(u, 'fs_base'); return;
      default: this.gsBase = this.canonical(u, 'gs_base');
    }
  }
  private canonical(u: bigint, what: string): VAddr {
    const v = toVAddr(u);
    if (v === null) throw new RangeError(`${what} ${hex(u)} is not canonical`);
    return v;
  }

  saveContext(): X86Context {
    return {
      arch: 'x86_64', lo: this.lo.slice(), hi: this.hi.slice(), rip: this.rip, rflags: this.getRflags(),
      fsBase: this.fsBase, gsBase: this.gsBase, origAx: this.origAx,
    };
  }
  restoreContext(ctx: CpuContext): void {
    if (ctx.arch !== 'x86_64') throw new Error(`x86_64 cpu ${this.id}: cannot restore a ${ctx.arch} context`);
    const c = ctx as X86Context;
    this.lo.set(c.lo); this.hi.set(c.hi); this.rip = c.rip; this.setRflags(c.rflags);
    this.fsBase = c.fsBase; this.gsBase = c.gsBase; this.origAx = c.origAx;
  }

  invalidate(addr: VAddr, len: number): void {
    cacheFor(this.mem, false).invalidate(addr, len);
    cacheFor(this.mem, true).invalidate(addr, len);
  }

  /** Decoded instruction at rip (decoding on a miss). Throws MemoryFault / GuestFault. */
  private selectCache(): DecodeCache {
    const mem = this.mem;
    if (mem.userMode !== this.userMode) { mem.userMode = this.userMode; mem.flushTlb(); }
    if (this.cache === null || this.cacheMem !== mem || this.cacheUser !== this.userMode) {
      this.cache = cacheFor(mem, this.userMode);
      this.cacheMem = mem;
      this.cacheUser = this.userMode;
    }
    return this.cache;
  }

  /**
   * Stop the run after the current instruction (called by its executor,
   * which then returns): a GuestStop (the instruction completed, rip is
   * the next one) or a GuestFault (it did not: rip goes back to it, it is
   * not counted). Takes precedence over a TF single-step trap.
   */
  stop(s: GuestStop | GuestFault): void {
    this.pending = s;
    this.limit = -1;
  }

  /** End the current run after the current instruction, with no trap (the instruction retires). */
  endRun(): void {
    this.limit = -1;
  }

  /**
   * Instructions the innermost run() in progress has retired so far (the
   * current instruction not included; nested runs' instructions excluded).
   */
  retiredInRun(): number {
    return this.instret - this.runStart - (this.innerInsns - this.runInner0);
  }

  run(budget: number): RunResult {
    const cache = this.selectCache();
    // run() may be entered from inside an instruction (nested): the outer loop's limit and pending stop are kept
    const outerLimit = this.limit, outerPending = this.pending;
    const outerStart = this.runStart, outerInner0 = this.runInner0;
    const inner0 = this.innerInsns;
    const start = this.instret;
    this.limit = start + budget;
    this.pending = null;
    this.runStart = start;
    this.runInner0 = inner0;
    let ip = this.rip;
    let insn: Insn | null = null;
    let stepping = false;
    let res: RunResult;
    // inline decode-cache lookup: the page array of the last hit (entries are cleared in place on invalidation)
    let page = cache.lastPage, base = cache.lastBase;
    try {
      // the limit field doubles as the stop flag: stop() sets it to -1
      while (this.instret < this.limit) {
        ip = this.rip;
        const off = ip - base;
        let i: Insn | undefined;
        if (off >= 0 && off < 4096 && (i = page[off]) !== undefined) insn = i;
        else { insn = cache.get(ip); page = cache.lastPage; base = cache.lastBase; }
        stepping = this.tf;
        this.rip = insn.next;
        insn.exec(this, insn);
        this.instret++;
        if (stepping) break;
      }
      const p = this.pending;
      if (p !== null) res = this.finishStop(p, ip, start, inner0);
      else res = { executed: this.instret - start - (this.innerInsns - inner0), trap: stepping ? { kind: 'singleStep', pc: fromVAddr(this.rip) } : null };
    } catch (e) {
      res = this.finishTrap(e, ip, insn, start, inner0);
    } finally {
      // a nested run's instructions are not the outer run's: they extend its budget and are not in its count
      this.limit = outerLimit < 0 ? outerLimit : outerLimit + (this.instret - start);
      this.pending = outerPending;
      this.runStart = outerStart;
      this.runInner0 = outerInner0;
    }
    this.innerInsns += res.executed;
    return res;
  }

  private finishStop(p: GuestStop | GuestFault, ip: VAddr, start: number, inner0: number): RunResult {
    if (p instanceof GuestStop) {
      // the instruction completed (int3, syscall, vmcall, hlt): rip is already the next insn
      return { executed: this.instret - start - (this.innerInsns - inner0), trap: p.toTrap(fromVAddr(this.rip)) };
    }
    this.instret--;
    this.rip = ip;
    return { executed: this.instret - start - (this.innerInsns - inner0), trap: faultTrap(p, fromVAddr(ip)) };
  }

  private finishTrap(e: unknown, ip: VAddr, insn: Insn | null, start: number, inner0: number): RunResult {
    this.rip = ip;
    const pc = fromVAddr(ip);
    const executed = this.instret - start - (this.innerInsns - inner0);
    if (e instanceof GuestFault) return { executed, trap: faultTrap(e, pc) };
    if (e instanceof MemoryFault) {
      return {
        executed,
        trap: { kind: 'pageFault', pc, addr: e.address, access: e.access, present: e.present, user: this.userMode },
      };
    }
    const what = insn && insn.addr === ip ? `${insn.def.mnem} (${Array.from(insn.bytes, b => b.toString(16).padStart(2, '0')).join(' ')})` : 'decode';
    const err = new Error(`x86_64 cpu ${this.id}: internal error executing ${what} at ${hex(pc)}: ${e instanceof Error ? e.message : String(e)}`);
    if (e instanceof Error) err.stack = `${err.message}\n${e.stack ?? ''}`;
    throw err;
  }
}
