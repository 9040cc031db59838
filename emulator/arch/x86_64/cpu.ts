/**
 * The x86_64 CPU: register file (lo/hi int32 halves), lazy flags and the
 * operand access helpers used by the executors. The run loop, the decode
 * cache and the trap plumbing are the arch-neutral InterpCpu's
 * (emulator/cpu/interp.ts); TF is its `stepTrap`, rip its `pc`.
 *
 * Representation: GPR n is (lo[n], hi[n]); rip is a VAddr (signed number,
 * see memory/address.ts); fs/gs bases are VAddr. Values of 8/16-bit operands
 * are returned masked and non-negative, 32-bit values as int32, 64-bit
 * values as (lo int32, this.th int32) — `th` is the "high half" return slot
 * of every helper that returns a 64-bit value.
 *
 * Debug registers DR0-DR3, DR6, DR7 (SDM vol. 3 ch. 17) are per CPU and
 * decoded into the interpreter's match unit (`hw`, cpu/hwDebug.ts) on
 * every write; rflags.RF is the interpreter's `resumeFlag`.
 */
import { Cpu, CpuContext, Trap } from '../types';
import { Memory } from '../../memory/memory';
import { VAddr, fromVAddr, hex, toVAddr } from '../../memory/address';
import { guestRegisterFile } from '../../memory/guestRam';
import { DecodeCaches } from '../../cpu/decodeCache';
import { LazyFlags, ARITH_MASK, TF, DF } from './flags';
import { Insn } from './insn';
import { X87State, newX87 } from './exec/x87';
import { decodeInsn, MAX_INSN_LEN } from './decoder';
import { GuestFault } from '../../cpu/faults';
import type { SystemState } from './sysmode/state';
import { PT_REGS, PT_ORIG_AX, PT_IP, PT_CS, PT_FLAGS, PT_SS, PT_FS_BASE, PT_GS_BASE } from './regs';

const TWO32 = 4294967296;
const CANON = 140737488355328; // 2^47
/** rflags bits other than the arithmetic ones, TF and DF that software may set */
const OTHER_FLAGS_MASK = 0x200 | 0x40000 | 0x200000 | 0x3000 | 0x4000;

export const KERNEL_CS = 0x10n, KERNEL_SS = 0x18n, USER_CS = 0x33n, USER_SS = 0x2bn;

/** rflags.RF (bit 16): the interpreter's resumeFlag */
export const RF = 0x10000;

// ---- debug registers (Intel SDM vol. 3 ch. 17 "Debug Registers")
/** DR6 bits that always read as 1 (reserved; no RTM, no bus-lock detection): DR6 at reset */
export const DR6_FIXED = 0xffff0ff0;
/** DR6 B0-B3: the breakpoint conditions met */
export const DR6_TRAP_BITS = 0xf;
/** DR6 BS: single-step */
export const DR6_BS = 0x4000;
/** DR6 bits software writes: B0-B3, BD, BS, BT (the rest read as their fixed values) */
const DR6_WRITABLE = 0xe00f;
/** DR7 bit 10 always reads as 1 (bits 11 RTM, 12, 14, 15 as 0): DR7 at reset */
export const DR7_FIXED = 0x400;
/** DR7 bits software writes: L0-G3, LE, GE, GD, R/W0-LEN3 */
const DR7_WRITABLE = 0xffff23ff;
/** DR7 GE (exact global breakpoints; accepted, no effect on matching) */
export const DR7_GE = 0x200;
/** LENn encodings 00 01 10 11 -> bytes (10: 8 bytes, the 64-bit processors' meaning) */
const DR_LEN_BYTES = [1, 2, 8, 4];

export interface X86Context extends CpuContext {
  readonly arch: 'x86_64';
  lo: Int32Array; hi: Int32Array; rip: number; rflags: number;
  fsBase: number; gsBase: number; origAx: bigint;
  /** xmm0..15 (4 dwords each) and MXCSR; the x87 control word */
  xmm: Int32Array; mxcsr: number; fpuCw?: number; fpuSw?: number; x87?: X87State;
}

/** MXCSR at reset: all exceptions masked, round to nearest */
export const MXCSR_DEFAULT = 0x1f80;

/** The decode caches of every x86_64 address space (kernel and user mode each). */
const X86_DECODE_CACHES = new DecodeCaches<Insn>((mem, ip) => decodeInsn(k => mem.fetch8(ip + k), ip), MAX_INSN_LEN);

/**
 * The register save of a native entry (a host-owned int3 whose owner does
 * a template's save / handlers / restore itself: InterpCpu.nativeEntryAt),
 * as the block translator writes it before the int3 (X86Cpu.frameSaved):
 * a frame of 8-byte slots below sp, the general registers in slots 0..14,
 * then the slots at the byte offsets below. By the route's kind: an
 * 'optprobe' entry's frame has an ss slot (its sp slot holds sp - 8: the
 * template pushed ss first) and its handlers go on `optResume` bytes after
 * the int3; a 'kretprobe' entry's frame has no ss slot (sp slot = sp) and
 * its handlers go on at a return address the run loop follows.
 */
export interface NativeEntrySave {
  /** bytes of the frame below sp */
  readonly frameBytes: Readonly<Record<'optprobe' | 'kretprobe', number>>;
  /** hardware GPR number of slots 0..14 (slot s at byte 8s) */
  readonly gprs: readonly number[];
  /** byte offsets in the frame of the slots written with other values */
  readonly origAx: number;
  readonly ip: number;
  readonly cs: number;
  readonly flags: number;
  readonly sp: number;
  readonly ss: number;
  /** the values of the cs and ss slots */
  readonly kernelCs: number;
  readonly kernelDs: number;
  /** 'optprobe': bytes from the int3 to where its handlers' return goes on */
  readonly optResume: number;
}

export class X86Cpu extends LazyFlags implements Cpu {
  private readonly regFile = guestRegisterFile(16);
  /** general registers' low and high halves (in the arena: translated code reads them, emulator/jit) */
  readonly lo: Int32Array = this.regFile.lo;
  readonly hi: Int32Array = this.regFile.hi;
  /** high-half return slot */
  th = 0;
  df = false;
  /** IF, IOPL, NT, AC, ID bits and bit 1 */
  otherFlags = 0x2;
  fsBase: VAddr = 0;
  gsBase: VAddr = 0;
  origAx = -1n;
  /** the SSE registers xmm0..15 (16 bytes each, little-endian), seen as bytes, words, dwords, floats and doubles */
  readonly xbuf = new ArrayBuffer(16 * 16 + 32);
  readonly xb = new Uint8Array(this.xbuf);
  readonly xw = new Uint16Array(this.xbuf);
  readonly xd = new Int32Array(this.xbuf);
  readonly xf = new Float32Array(this.xbuf);
  readonly xq = new Float64Array(this.xbuf);
  /** SSE control and status (rounding, exception masks and sticky flags) */
  mxcsr = MXCSR_DEFAULT;
  /** x87 control and status words (the register stack is not modelled) */
  fpuCw = 0x37f;
  fpuSw = 0;
  /** the x87 register stack (exec/x87.ts) */
  x87: X87State = newX87();
  /**
   * DR0-DR3 as written (64-bit linear addresses; bigint, never a rounding
   * number), DR6 and DR7 (bits 63:32 are zero). Per CPU, not per task: not
   * in the context (Linux's kernel breakpoints live in per-CPU registers;
   * a task switch does not swap them).
   */
  private readonly drAddr: bigint[] = [0n, 0n, 0n, 0n];
  private dr6 = DR6_FIXED;
  private dr7 = DR7_FIXED;
  /**
   * Set while translated code's int3 at a native entry runs (an optprobe
   * detour buffer's, the kretprobe booster trampoline's: the translator's
   * front end wrote the template's save into the stack first, all but the
   * flags slot, and kprobes/nativeFrame.ts nativeEnter then writes only
   * that slot). Not part of the context: it lives inside one instruction.
   */
  frameSaved = false;
  /**
   * What the inline breakpoint owner's native entries save (the frame the
   * translator writes before their int3 when InterpCpu.nativeEntryAt
   * answers a route), handed in by that owner with its inline breakpoint;
   * null: no native entry is translated.
   */
  nativeSave: NativeEntrySave | null = null;
  /** kprobes/nativeFrame.ts's state for this CPU (its native-entry frames, the stack region it last wrote); opaque here */
  nativeFrames: object | null = null;
  /**
   * The system half (sysmode/): set only on a full-system machine's CPU,
   * whose memory is then a PagedMemory. null: the emulated-kernel
   * machine's CPU, whose system instructions keep their old meaning.
   */
  sys: SystemState | null = null;
  constructor(id: number, mem: Memory) { super(id, mem, X86_DECODE_CACHES, 'x86_64'); }

  /** rip is the interpreter's pc */
  get rip(): VAddr { return this.pc; }
  set rip(v: VAddr) { this.pc = v; }
  /** TF is the interpreter's single-step flag */
  get tf(): boolean { return this.stepTrap; }
  set tf(v: boolean) { this.stepTrap = v; }

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
        // one 8-byte access (high half first where it crosses regions: a fault at a region's end leaves memory unchanged)
        this.mem.write64Halves(a, v, h);
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
    this.mem.write64Halves(sp, l, h);
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
    return this.arithFlags() | (this.tf ? TF : 0) | (this.df ? DF : 0) | (this.resumeFlag ? RF : 0) | this.otherFlags | 0x2;
  }
  setRflags(v: number): void {
    this.setEager(v & ARITH_MASK);
    this.tf = (v & TF) !== 0;
    this.df = (v & DF) !== 0;
    this.resumeFlag = (v & RF) !== 0;
    this.otherFlags = (v & OTHER_FLAGS_MASK) | 0x2;
  }

  // ---------------------------------------------------------------- debug registers
  /** DRn (0-7; DR4/DR5 alias DR6/DR7, as with CR4.DE = 0) */
  readDr(n: number): bigint {
    if (n < 4) return this.drAddr[n];
    if (n === 4 || n === 6) return BigInt(this.dr6 >>> 0);
    if (n === 5 || n === 7) return BigInt(this.dr7 >>> 0);
    throw new RangeError(`x86_64: no debug register DR${n}`);
  }
  /**
   * Write DRn (0-7; DR4/DR5 alias DR6/DR7) as MOV to DRn does: #GP for a 1
   * in bits 63:32 of DR6/DR7, reserved bits keep their fixed values.
   * Writing DR0-DR3 or DR7 re-decodes the breakpoints into the match unit.
   */
  writeDr(n: number, value: bigint): void {
    const v = BigInt.asUintN(64, value);
    if (n < 4) { this.drAddr[n] = v; this.decodeDr(n); return; }
    if (n > 7) throw new RangeError(`x86_64: no debug register DR${n}`);
    if (v >> 32n !== 0n) throw new GuestFault('generalProtection', `mov to DR${n}: bits 63:32 must be zero`);
    const w = Number(v);
    if (n === 4 || n === 6) { this.dr6 = ((w & DR6_WRITABLE) | DR6_FIXED) >>> 0; return; }
    this.dr7 = ((w & DR7_WRITABLE) | DR7_FIXED) >>> 0;
    for (let k = 0; k < 4; k++) this.decodeDr(k);
  }
  /**
   * Breakpoint k as DR7 and DRk define it, into the match unit's slot k.
   * Enabled by Lk or Gk (no task switches: local and global act alike).
   * R/W 00 execute, 01 write, 11 read or write; 10 (I/O, CR4.DE = 1 only;
   * undefined with DE = 0): disabled. Data: LEN 00/01/11/10 = 1/2/4/8
   * bytes, the address's low bits below the length ignored as hardware
   * does. Execute: the SDM requires LEN 00 and leaves other lengths
   * undefined; here LEN is ignored: an execute breakpoint matches the
   * instruction whose first byte is at DRk, as written. An address that is
   * not canonical matches nothing (every access is canonical): disabled.
   */
  private decodeDr(k: number): void {
    const dr7 = this.dr7;
    const rw = (dr7 >>> (16 + 4 * k)) & 3;
    if (((dr7 >>> (2 * k)) & 3) === 0 || rw === 2) { this.hw.setSlot(k, null); return; }
    const len = rw === 0 ? 1 : DR_LEN_BYTES[(dr7 >>> (18 + 4 * k)) & 3];
    const lo = toVAddr(this.drAddr[k] & ~BigInt(len - 1));
    if (lo === null) { this.hw.setSlot(k, null); return; }
    this.hw.setSlot(k, { lo, len, exec: rw === 0, read: rw === 3, write: rw !== 0 });
  }
  /** A trap reported: DR6 records B0-B3 of the breakpoints that hit and BS for a single-step (sticky until software clears them). */
  protected override onInlineSingleStep(): void { this.dr6 = (this.dr6 | DR6_BS) >>> 0; }
  protected override onTrapReported(trap: Trap): void {
    if (trap.kind === 'hwBreakpoint') this.dr6 = (this.dr6 | (trap.hits & DR6_TRAP_BITS) | (trap.step ? DR6_BS : 0)) >>> 0;
    else if (trap.kind === 'singleStep') this.dr6 = (this.dr6 | DR6_BS) >>> 0;
  }

  // ---------------------------------------------------------------- Cpu interface
  gprSlot(index: number): number {
    const r = PT_REGS[index];
    return r !== undefined && r >= 0 ? r : -1;
  }

  getReg(index: number): bigint {
    const r = PT_REGS[index];
    if (r === undefined) throw new RangeError(`x86_64: no register index ${index}`);
    if (r >= 0) return (BigInt(this.hi[r] >>> 0) << 32n) | BigInt(this.lo[r] >>> 0);
    switch (r) {
      case PT_ORIG_AX: return BigInt.asUintN(64, this.origAx);
      case PT_IP: return fromVAddr(this.pc);
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

  saveContext(): X86Context {
    return {
      arch: 'x86_64', lo: this.lo.slice(), hi: this.hi.slice(), rip: this.pc, rflags: this.getRflags(),
      fsBase: this.fsBase, gsBase: this.gsBase, origAx: this.origAx,
      xmm: this.xd.slice(0, 64), mxcsr: this.mxcsr, fpuCw: this.fpuCw, fpuSw: this.fpuSw,
      x87: { st: this.x87.st.slice(), top: this.x87.top, empty: this.x87.empty },
    };
  }
  restoreContext(ctx: CpuContext): void {
    if (ctx.arch !== 'x86_64') throw new Error(`x86_64 cpu ${this.id}: cannot restore a ${ctx.arch} context`);
    const c = ctx as X86Context;
    this.lo.set(c.lo); this.hi.set(c.hi); this.pc = c.rip; this.setRflags(c.rflags);
    this.fsBase = c.fsBase; this.gsBase = c.gsBase; this.origAx = c.origAx;
    if (c.xmm) this.xd.set(c.xmm); else this.xd.fill(0, 0, 64);
    this.mxcsr = c.mxcsr ?? MXCSR_DEFAULT;
    this.fpuCw = c.fpuCw ?? 0x37f;
    this.fpuSw = c.fpuSw ?? 0;
    this.x87 = c.x87 ? { st: c.x87.st.slice(), top: c.x87.top, empty: c.x87.empty } : newX87();
  }

  protected describe(insn: Insn): string {
    return `${insn.def.mnem} (${Array.from(insn.bytes, b => b.toString(16).padStart(2, '0')).join(' ')})`;
  }
}
