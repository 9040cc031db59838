/**
 * The riscv64 CPU (RV64IMAFDC + Zicsr, S-mode kernel / U-mode user): the
 * register file as int32 halves (x[n] = hi[n]:lo[n]; index 32 is a scratch
 * slot that absorbs writes to x0), the supervisor CSRs, the LR/SC
 * reservation and the load/store helpers the executors use. The run loop,
 * decode cache and trap plumbing are the arch-neutral InterpCpu's.
 */
import type { Cpu, CpuContext, RunResult } from '../types';
import { Memory, MemoryFault } from '../../memory/memory';
import { VAddr, fromVAddr, hex } from '../../memory/address';
import { guestRegisterFile } from '../../memory/guestRam';
import { DecodeCaches } from '../../cpu/decodeCache';
import { InterpCpu } from '../../cpu/interp';
import { GuestFault } from '../../cpu/faults';
import type { RvInsn } from './insn';
import { X0_SINK } from './insn';
import { decodeAt } from './decoder';
import { SSTATUS_UXL64 } from './csr';
import { Reservations } from './reservation';

const TWO32 = 4294967296;

export interface RvContext extends CpuContext {
  readonly arch: 'riscv64';
  lo: Int32Array; hi: Int32Array; pc: VAddr; userMode: boolean;
  csrs: RvCsrs; origA0: bigint;
  /** F/D state: the f registers' bits, fflags, frm */
  f: BigUint64Array; fflags: number; frm: number;
}

/** Supervisor CSR state (bigint: rarely touched, exact). */
export interface RvCsrs {
  sstatus: bigint; sie: bigint; stvec: bigint; scounteren: bigint; sscratch: bigint;
  sepc: bigint; scause: bigint; stval: bigint; sip: bigint; satp: bigint;
}

const RV_DECODE_CACHES = new DecodeCaches<RvInsn>(decodeAt, 4);

export class RvCpu extends InterpCpu<RvCpu, RvInsn> implements Cpu {
  private readonly regFile = guestRegisterFile(33);
  /** general registers' low and high halves (in the arena: translated code reads them, emulator/jit) */
  readonly lo: Int32Array = this.regFile.lo;
  readonly hi: Int32Array = this.regFile.hi;
  csrs: RvCsrs = { sstatus: SSTATUS_UXL64, sie: 0n, stvec: 0n, scounteren: 0n, sscratch: 0n, sepc: 0n, scause: 0n, stval: 0n, sip: 0n, satp: 0n };
  origA0 = 0n;
  /** f0..f31 as raw bits (F/D; single-precision values NaN-boxed) */
  readonly f = new BigUint64Array(32);
  /** fcsr.fflags (NV DZ OF UF NX) */
  fflags = 0;
  /** fcsr.frm (dynamic rounding mode) */
  frm = 0;
  /** the `time` CSR; defaults to the retired-instruction count */
  timeSource: (() => bigint) | null = null;
  /** LR reservation: address (VAddr) or NaN when none */
  resAddr = NaN;
  constructor(id: number, mem: Memory, readonly reservations: Reservations = Reservations.shared) {
    super(id, mem, RV_DECODE_CACHES, 'riscv64');
  }

  // ---------------------------------------------------------------- registers
  /** x[r] as an exact bigint (unsigned) */
  x(r: number): bigint { return (BigInt(this.hi[r] >>> 0) << 32n) | BigInt(this.lo[r] >>> 0); }
  setX(r: number, v: bigint): void {
    if (r === 0) return;
    const u = BigInt.asUintN(64, v);
    this.lo[r] = Number(u & 0xffffffffn) | 0;
    this.hi[r] = Number(u >> 32n) | 0;
  }
  /** x[r] + imm as a VAddr; a non-canonical result is an access fault */
  ea(r: number, imm: number, access: 'read' | 'write'): VAddr {
    const h = this.hi[r];
    if (h > 0x7fff || h < -0x8000) return this.eaExact(r, imm, access);
    const a = h * TWO32 + (this.lo[r] >>> 0) + imm;
    if (a >= 140737488355328 || a < -140737488355328) return this.eaExact(r, imm, access);
    return a;
  }
  private eaExact(r: number, imm: number, access: 'read' | 'write'): VAddr {
    const s = BigInt.asIntN(64, this.x(r) + BigInt(imm));
    if (s >= 140737488355328n || s < -140737488355328n) {
      throw new GuestFault('generalProtection', `non-canonical ${access} address ${hex(s)}`);
    }
    return Number(s);
  }
  /** Register as a jump target (VAddr); non-canonical is a fetch fault */
  target(r: number, imm: number): VAddr {
    const h = this.hi[r];
    const a = h * TWO32 + (this.lo[r] >>> 0) + imm;
    if (h > 0x7fff || h < -0x8000 || a >= 140737488355328 || a < -140737488355328) {
      throw new GuestFault('generalProtection', `non-canonical jump target ${hex(BigInt.asIntN(64, this.x(r) + BigInt(imm)))}`);
    }
    return a - (((a % 2) + 2) % 2); // clear bit 0 of the two's complement value
  }
  /** Write a VAddr into x[r] (link register, auipc) */
  setAddr(r: number, a: VAddr): void {
    const h = Math.floor(a / TWO32);
    this.hi[r] = h; this.lo[r] = (a - h * TWO32) | 0;
  }

  // ---------------------------------------------------------------- memory
  /** A-extension accesses must be naturally aligned: a misaligned one faults (reported as a page fault at the address) */
  aligned(a: VAddr, size: number, access: 'read' | 'write'): void {
    if ((a & (size - 1)) !== 0) throw new MemoryFault(a, access, true, this.userMode);
  }
  /** A store by this hart: other harts' reservations on these bytes are lost. */
  stored(a: VAddr, size: number): void {
    if (this.reservations.active !== 0) this.reservations.storeBy(this, a, size);
  }

  // ---------------------------------------------------------------- Cpu interface
  /** A trap (any kind: fault, ecall, ebreak...) drops this hart's LR reservation, as trap entry does on hardware. */
  override run(budget: number): RunResult {
    const r = super.run(budget);
    if (r.trap !== null && this.resAddr === this.resAddr) this.reservations.clear(this);
    return r;
  }

  gprSlot(index: number): number {
    return index >= 1 && index <= 31 ? index : -1;
  }

  getReg(index: number): bigint {
    if (index === 0) return fromVAddr(this.pc);
    if (index >= 1 && index <= 31) return this.x(index);
    switch (index) {
      case 32: return this.csrs.sstatus;
      case 33: return this.csrs.stval;
      case 34: return this.csrs.scause;
      case 35: return this.origA0;
    }
    throw new RangeError(`riscv64: no register index ${index}`);
  }
  setReg(index: number, value: bigint): void {
    const u = BigInt.asUintN(64, value);
    if (index === 0) { this.setPc(u); return; }
    if (index >= 1 && index <= 31) { this.setX(index, u); return; }
    switch (index) {
      case 32: this.csrs.sstatus = u; return;
      case 33: this.csrs.stval = u; return;
      case 34: this.csrs.scause = u; return;
      case 35: this.origA0 = u; return;
    }
    throw new RangeError(`riscv64: no register index ${index}`);
  }

  saveContext(): RvContext {
    // the x0 sink is no state: saved as 0, as restoreContext leaves it (translated code does not write it)
    const lo = this.lo.slice(), hi = this.hi.slice();
    lo[X0_SINK] = 0; hi[X0_SINK] = 0;
    return {
      arch: 'riscv64', lo, hi, pc: this.pc, userMode: this.userMode, csrs: { ...this.csrs }, origA0: this.origA0,
      f: this.f.slice(), fflags: this.fflags, frm: this.frm,
    };
  }
  restoreContext(ctx: CpuContext): void {
    if (ctx.arch !== 'riscv64') throw new Error(`riscv64 cpu ${this.id}: cannot restore a ${ctx.arch} context`);
    const c = ctx as RvContext;
    this.lo.set(c.lo); this.hi.set(c.hi); this.lo[X0_SINK] = 0; this.hi[X0_SINK] = 0;
    this.pc = c.pc; this.userMode = c.userMode; this.csrs = { ...c.csrs }; this.origA0 = c.origA0;
    if (c.f) { this.f.set(c.f); this.fflags = c.fflags; this.frm = c.frm; } else { this.f.fill(0n); this.fflags = 0; this.frm = 0; }
    this.reservations.clear(this);
  }

  protected describe(insn: RvInsn): string {
    return `${insn.row.name} (${insn.raw.toString(16).padStart(insn.len * 2, '0')})`;
  }
}
