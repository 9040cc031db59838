/**
 * Run a kernel function from inside a probe handler, on the CPU that hit
 * the probe (a handler calling printk() or any kernel function, as Linux
 * handlers do). The CPU's registers are saved, the call is set up per the
 * arch ABI with its return address at an engine-owned breakpoint, and the
 * CPU runs until it returns there; traps on the way are dispatched through
 * KernelApi.handleTrap (so a probe hit inside is a kprobes reentry). The
 * called code must not sleep (yield/join), as in a real handler.
 */
import type { Cpu } from '../arch/types';
import { mustVAddr } from '../memory/address';
import type { KprobesShared } from './parts';

export class NestedCallError extends Error {}

export class NestedCaller {
  private sentinel = 0n;
  /** nested calls in progress (all CPUs) */
  depth = 0;

  /** `where`: "symbol+0xoff" of an address (describe.ts), for the errors */
  constructor(private readonly shared: Pick<KprobesShared, 'kernel' | 'slots'>, private readonly where: (addr: bigint) => string) {}

  /** the return breakpoint's stub if allocated (0n before the first nested call) */
  stub(): bigint { return this.sentinel; }

  /** address of the engine-owned return breakpoint */
  returnAddress(): bigint {
    if (this.sentinel === 0n) {
      const bp = this.shared.kernel.arch.breakpointInsn;
      this.sentinel = this.shared.slots.allocCode(Math.max(16, bp.length), 'kprobe_nested_call_return', {
        site: (addr, code) => (addr === code.start ? 'nestedReturn' : 'none'),
      });
      const code = new Uint8Array(16);
      for (let i = 0; i + bp.length <= code.length; i += bp.length) code.set(bp, i);
      this.shared.slots.write(this.sentinel, code);
    }
    return this.sentinel;
  }

  /** Call fn(args...) on cpu; returns the ABI return register. Throws NestedCallError when it cannot finish. */
  call(cpu: Cpu, fn: bigint, args: readonly bigint[], maxInstructions = 10_000_000): bigint {
    const k = this.shared.kernel;
    const abi = k.arch.abi;
    if (!k.handleTrap) throw new NestedCallError('the kernel offers no handleTrap(): nested calls are unavailable');
    if (args.length > abi.argRegs.length) throw new NestedCallError(`at most ${abi.argRegs.length} register arguments`);
    const ret = this.returnAddress();
    const saved = cpu.saveContext();
    this.depth++;
    try {
      // leave room below the interrupted frame (red zone and more), keep ABI alignment
      let sp = ((cpu.getReg(abi.spReg) - 512n) & ~15n);
      if (abi.returnAddress.kind === 'stack') {
        sp -= BigInt(abi.pointerSize);
        cpu.mem.write64(mustVAddr(sp), ret);
      } else cpu.setReg(abi.returnAddress.reg, ret);
      cpu.setReg(abi.spReg, sp);
      args.forEach((a, i) => cpu.setReg(abi.argRegs[i], BigInt.asUintN(64, a)));
      cpu.setPc(fn);
      let left = maxInstructions;
      while (left > 0) {
        const r = cpu.run(Math.min(left, 100_000));
        left -= Math.max(r.executed, 1);
        if (!r.trap) continue;
        const t = r.trap;
        if (t.kind === 'breakpoint' && t.pc - BigInt(k.arch.breakpointPcOffset) === ret) {
          return cpu.getReg(abi.retReg);
        }
        const before = cpu.getPc();
        k.handleTrap(cpu, t);
        if (t.kind !== 'hypercall' && t.kind !== 'singleStep' && t.kind !== 'breakpoint' && cpu.getPc() === before) {
          throw new NestedCallError(`nested call to ${this.where(fn)} stopped: ${t.kind} at ${this.where(t.pc)}`);
        }
      }
      throw new NestedCallError(`nested call to ${this.where(fn)} did not return within ${maxInstructions} instructions`);
    } finally {
      this.depth--;
      cpu.restoreContext(saved);
    }
  }
}
