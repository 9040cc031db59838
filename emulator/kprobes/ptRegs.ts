/**
 * pt_regs as probe handlers see it: a live view of the CPU that hit the
 * probe. Reading gives the register now; writing changes the CPU, which is
 * what Linux does when it restores pt_regs on return from the trap.
 * Register names are ArchOps.regs names (x86_64: ip sp flags ax bx ... r15).
 */
import type { ArchOps, Cpu } from '../arch/types';
import { toVAddr, vaddrFromHalves, VAddr } from '../memory/address';

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

  constructor(readonly cpu: Cpu, readonly arch: ArchOps) {
    arch.regs.forEach((r, i) => this.byName.set(r.name, i));
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

  /** flags register (x86 eflags), or 0n when the arch has none */
  get flags(): bigint { return this.arch.abi.flagsReg < 0 ? 0n : this.cpu.getReg(this.arch.abi.flagsReg); }
  set flags(v: bigint) { if (this.arch.abi.flagsReg >= 0) this.cpu.setReg(this.arch.abi.flagsReg, v); }

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
    return this.cpu.getReg(i);
  }

  set(name: string, v: bigint): void {
    if (name === 'ip' || name === 'pc') { this.ip = v; return; }
    const i = this.byName.get(name);
    if (i === undefined) throw new RangeError(`unknown register '${name}' for ${this.arch.name}`);
    this.cpu.setReg(i, BigInt.asUintN(64, v));
  }

  /** register names, in ArchOps.regs order */
  names(): string[] { return this.arch.regs.map(r => r.name); }
}
