/**
 * The handler language's HandlerEnv over a STOPPED CPU (DAP evaluate and the
 * Probe scope): emulator/probes' ProbeHandlerEnv on the CPU's pt_regs view,
 * plus what the debugger knows about the stop:
 *   - at a kprobe breakpoint stop `p` is the probe that hit and `regs->ip`
 *     (the pc register) reads as the probe address, not the instruction slot
 *     the CPU really sits in (the same pc the stack trace shows);
 *   - at a kretprobe breakpoint stop `p` is the return probe's kprobe and
 *     `ri` shows the instance the return handler ran with: ret_addr (where
 *     the function returned to), task (current); its data area is gone with
 *     the instance (recycled when the handler returned), so `ri->data` is an
 *     error naming that.
 * printk() / dump_stack() from the Debug Console go to the kernel log.
 */
import type { Cpu } from '../arch/types';
import type { HandlerEnv, HandlerProbeInfo, HandlerRetInstanceInfo, SymbolizedAddress } from '../handlers';
import type { KernelApi } from '../kernel/types';
import type { Kprobe, KprobesEngine } from '../kprobes';
import { ProbeHandlerEnv } from '../probes';
import { taskAddress } from '../kernel/task';

/** What the debugger remembers of a breakpoint stop on one CPU. */
export interface ProbeStop {
  mode: 'kprobe' | 'kretprobe';
  /** the engine's kprobe (rp.kp for a kretprobe) */
  kp: Kprobe;
  /** probe address */
  addr: bigint;
  /** pc shown for the stop (probe address / return address) */
  reportPc: bigint;
  /** kretprobe: the function's return value */
  returnValue?: bigint;
  /** kretprobe: maxactive as the engine registered it */
  maxactive?: number;
  /** ProbeManager id of the breakpoint */
  breakpointId: number;
}

export const RI_DATA_GONE = "ri->data is not available after a kretprobe breakpoint stop: the instance was recycled when the return handler finished";

export class StoppedCpuEnv implements HandlerEnv {
  readonly probe?: HandlerProbeInfo;
  readonly ri?: HandlerRetInstanceInfo;
  readonly current: { pid: number; comm: string; mm: bigint };
  private readonly inner: ProbeHandlerEnv;
  private readonly pcName: string;

  /**
   * callerRegs: evaluating in a caller frame, its registers as the call frame
   * information recovers them (by pt_regs name); the others are unknown there
   */
  constructor(
    private readonly kernel: KernelApi, engine: KprobesEngine, private readonly cpu: Cpu, private readonly stop?: ProbeStop,
    private readonly callerRegs?: ReadonlyMap<string, bigint>,
  ) {
    this.inner = new ProbeHandlerEnv({ kernel, engine, regs: engine.percpu.regsOf(cpu), kp: stop?.kp, beforeInsn: stop?.mode === 'kprobe' });
    this.probe = this.inner.probe;
    this.current = this.inner.current;
    this.pcName = kernel.arch.regs[kernel.arch.abi.pcReg]?.name ?? 'ip';
    if (stop?.mode === 'kretprobe') {
      const task = taskAddress(kernel.current(cpu.id));
      this.ri = {
        ret_addr: stop.reportPc,
        task,
        get data(): bigint { throw new Error(RI_DATA_GONE); },
      };
    }
  }

  readMem(addr: bigint, size: 1 | 2 | 4 | 8): bigint { return this.inner.readMem(addr, size); }
  writeMem(addr: bigint, size: 1 | 2 | 4 | 8, value: bigint): void { this.inner.writeMem(addr, size, value); }
  readCString(addr: bigint, max: number): string { return this.inner.readCString(addr, max); }

  getReg(name: string): bigint {
    if (this.callerRegs) {
      const v = this.callerRegs.get(name);
      if (v === undefined) throw new Error(`${name} is not known in this caller frame (not saved by the callee: the call frame information does not recover it)`);
      return v;
    }
    if (name === this.pcName && this.stop?.mode === 'kprobe') return this.stop.reportPc;
    return this.inner.getReg(name);
  }

  setReg(name: string, value: bigint): void {
    if (this.callerRegs) throw new Error(`${name} of a caller frame cannot be changed (only the innermost frame's registers)`);
    if (name === this.pcName && this.stop?.mode === 'kprobe') {
      throw new Error(`${name} cannot be changed at a kprobe stop (the CPU is single-stepping the probed instruction); step once first`);
    }
    this.inner.setReg(name, value);
  }

  printk(text: string): void { this.inner.printk(text); }
  dumpStack(): number | void { return this.inner.dumpStack(); }
  ktimeGet(): bigint { return this.inner.ktimeGet(); }
  smpProcessorId(): number { return this.cpu.id; }
  jiffies(): bigint { return this.inner.jiffies(); }
  symbol(name: string): bigint | undefined { return this.inner.symbol(name); }
  regsReturnValue(): bigint { return this.stop?.returnValue ?? this.inner.regsReturnValue(); }
  addrToSymbol(addr: bigint): SymbolizedAddress | undefined { return this.inner.addrToSymbol(addr); }

  /** Write what printk()/dump_stack() produced to the kernel log. */
  flush(): void { this.inner.flush(); }
}
