/**
 * pt_regs as probe handlers see it: a live view of the CPU that hit the
 * probe. Reading gives the register now; writing changes the CPU, which is
 * what Linux does when it restores pt_regs on return from the trap.
 * Register names are ArchOps.regs names (x86_64: ip sp flags ax bx ... r15).
 *
 * A field Linux's trap entry makes from the CPU state rather than copying
 * it reads as the trap frame holds it: riscv64 `status` with SPP set for a
 * trap from the kernel and SIE moved into SPIE (so Linux's user_mode(regs)
 * holds); writing it back changes the live state as returning from the
 * trap would. x86_64 cs / ss and arm64 pstate's mode bits come from the
 * CPU's privilege mode (the CPUs' getReg).
 */
import type { ArchOps, Cpu } from '../arch/types';
import { toVAddr, vaddrFromHalves, VAddr } from '../memory/address';
import { statusFromTrapFrame, trapFrameStatus } from '../arch/riscv64/info';

/** a pt_regs field as the trap frame holds it, from and back to the live register */
interface TrapView { read(live: bigint, userMode: boolean): bigint; write(frame: bigint, live: bigint): bigint }

/** the trap-frame fields of each arch, by pt_regs name */
const TRAP_VIEWS: Readonly<Record<string, Readonly<Record<string, TrapView>>>> = {
  riscv64: { status: { read: trapFrameStatus, write: statusFromTrapFrame } },
};

/** a CPU whose pc is a VAddr field (the interpreter CPUs: emulator/cpu/interp.ts); setPc(v) is pc = toVAddr(v) */
interface NumericPcCpu { pc: VAddr }

export class PtRegs {
  private readonly byName = new Map<string, number>();
  /** the CPU keeps its pc as a VAddr (setIpV writes it without a BigInt) */
  private readonly numericPc: boolean;
  /** the stack pointer's slot in the CPU's lo / hi halves (-1: read it through getReg) */
  private readonly spSlot: number;
  /** the CPU's register halves (fixed for its life), when spSlot >= 0 */
  private readonly lo: Int32Array;
  private readonly hi: Int32Array;

  /** register index -> its trap-frame view (riscv64 status) */
  private readonly views = new Map<number, TrapView>();

  constructor(readonly cpu: Cpu, readonly arch: ArchOps) {
    arch.regs.forEach((r, i) => this.byName.set(r.name, i));
    const views = TRAP_VIEWS[arch.name];
    if (views) for (const [name, v] of Object.entries(views)) { const i = this.byName.get(name); if (i !== undefined) this.views.set(i, v); }
    this.numericPc = typeof (cpu as unknown as Partial<NumericPcCpu>).pc === 'number';
    this.spSlot = cpu.lo !== undefined && cpu.hi !== undefined ? cpu.gprSlot?.(arch.abi.spReg) ?? -1 : -1;
    this.lo = this.spSlot >= 0 ? cpu.lo as Int32Array : new Int32Array(0);
    this.hi = this.spSlot >= 0 ? cpu.hi as Int32Array : new Int32Array(0);
  }

  /** the stack pointer as a VAddr (the engine's hot paths: no BigInt); NaN when not canonical */
  spV(): VAddr {
    const s = this.spSlot;
    return (s >= 0 ? vaddrFromHalves(this.lo[s], this.hi[s]) : toVAddr(this.sp)) ?? NaN;
  }

  /** instruction pointer (regs->ip) */
  get ip(): bigint {
    // getPc() is fromVAddr(pc): the same value with one BigInt operation fewer
    return this.numericPc ? BigInt.asUintN(64, BigInt((this.cpu as unknown as NumericPcCpu).pc)) : this.cpu.getPc();
  }
  set ip(v: bigint) { this.cpu.setPc(BigInt.asUintN(64, v)); }

  /** regs->ip = v for a VAddr (the engine's hot paths: no BigInt when the CPU holds its pc as a VAddr) */
  setIpV(v: VAddr): void {
    if (this.numericPc) (this.cpu as unknown as NumericPcCpu).pc = v;
    else this.cpu.setPc(BigInt.asUintN(64, BigInt(v)));
  }

  /** stack pointer (kernel_stack_pointer(regs)) */
  get sp(): bigint { return this.cpu.getReg(this.arch.abi.spReg); }
  set sp(v: bigint) { this.cpu.setReg(this.arch.abi.spReg, BigInt.asUintN(64, v)); }

  /** regs_return_value(regs) */
  get returnValue(): bigint { return this.cpu.getReg(this.arch.abi.retReg); }
  set returnValue(v: bigint) { this.cpu.setReg(this.arch.abi.retReg, BigInt.asUintN(64, v)); }

  /** flags register (x86 eflags, arm64 pstate, riscv status as the trap frame holds it), or 0n when the arch has none */
  get flags(): bigint { return this.arch.abi.flagsReg < 0 ? 0n : this.read(this.arch.abi.flagsReg); }
  set flags(v: bigint) { if (this.arch.abi.flagsReg >= 0) this.write(this.arch.abi.flagsReg, v); }

  /** register i as pt_regs holds it */
  private read(i: number): bigint {
    const v = this.views.size ? this.views.get(i) : undefined;
    const live = this.cpu.getReg(i);
    return v ? v.read(live, this.cpu.userMode) : live;
  }

  private write(i: number, value: bigint): void {
    const v = this.views.size ? this.views.get(i) : undefined;
    const u = BigInt.asUintN(64, value);
    this.cpu.setReg(i, v ? v.write(u, this.cpu.getReg(i)) : u);
  }

  /** regs_get_kernel_argument(regs, n): integer argument n (0-based) at function entry */
  arg(n: number): bigint {
    const regs = this.arch.abi.argRegs;
    if (n < 0 || n >= regs.length) throw new RangeError(`argument ${n} is not passed in a register on ${this.arch.name}`);
    return this.cpu.getReg(regs[n]);
  }

  /** register by pt_regs name; throws a RangeError naming an unknown register */
  get(name: string): bigint {
    if (name === 'ip' || name === 'pc') return this.ip;
    const i = this.byName.get(name);
    if (i === undefined) throw new RangeError(`unknown register '${name}' for ${this.arch.name}`);
    return this.read(i);
  }

  set(name: string, v: bigint): void {
    if (name === 'ip' || name === 'pc') { this.ip = v; return; }
    const i = this.byName.get(name);
    if (i === undefined) throw new RangeError(`unknown register '${name}' for ${this.arch.name}`);
    this.write(i, v);
  }

  /** register names, in ArchOps.regs order */
  names(): string[] { return this.arch.regs.map(r => r.name); }
}
