/**
 * The debugger's gate into the hit paths (kgdb's place beside kprobes):
 * whether a C handler runs as ordinary code on the CPU (it has a
 * breakpoint in it) instead of a nested call, the debugger's breakpoint
 * hit while a handler runs (a stop, not a missed reentry), and the calls
 * that start, chain or drop a handler deferred onto the CPU (the C API's
 * handlerOnCpu.ts, made with the C API on its first use). The trap
 * handlers, ftrace, kretprobes and jprobes use it; the engine exposes its
 * two debugger settings.
 */
import type { Cpu } from '../arch/types';
import type { KprobesCApi } from './cApi';
import type { Kprobe, Kretprobe } from './kprobe';
import type { ProbeTable } from './probeTable';
import type { PtRegs } from './ptRegs';

export class HandlerOnCpuGate {
  /**
   * The debugger: whether a C handler at `fn` runs as ordinary code on the
   * CPU (it has a breakpoint in it) instead of a nested call. Set once, when
   * the debugger's probe manager is made.
   */
  runHandlerOnCpu?: (fn: bigint) => boolean;
  /**
   * The debugger: a probe hit while another probe's handler runs (a kprobes
   * reentry) that is the debugger's breakpoint stops instead of being missed
   * (kgdb's breakpoints are not kprobes); true when it is one.
   */
  debuggerReentry?: (p: Kprobe, regs: PtRegs) => boolean;
  /** the CPU whose hit runs its handlers now (-1: none): a C handler may be run on it as ordinary code */
  hitCpu = -1;

  /** the C API once made (the engine sets it; null before: no C handler exists) */
  capi: Pick<KprobesCApi, 'onCpu' | 'handlersOnCpu' | 'returnHandlerOnCpu' | 'handlerStack'> | null = null;

  constructor(private readonly t: Pick<ProbeTable, 'aggrList'>) {}

  /*
   * start / chain: a C handler is deferred onto the CPU only when the
   * debugger runs it there (cApi.ts asks runHandlerOnCpu first), so
   * without the debugger nothing is pending and no lookup is made (every
   * hit comes here).
   */

  /**
   * Whether start / chain can defer anything (the debugger is attached):
   * the hit paths ask this before they make the closure they would pass
   * (a closure per hit is garbage on every hit otherwise).
   */
  get mayDefer(): boolean { return this.runHandlerOnCpu !== undefined; }

  /** the hit path after the handlers: a deferred C handler starts on the CPU (`then` gets its return value) */
  start(cpu: Cpu, then: (ret: number) => void, below?: bigint): boolean {
    if (this.runHandlerOnCpu === undefined) return false;
    return this.capi?.onCpu.start(cpu, then, below) ?? false;
  }

  /** a handler call was just deferred on the CPU: its caller goes on in `after` (its return value) once it returns */
  chain(cpu: Cpu, after: (ret: number) => number): boolean {
    if (this.runHandlerOnCpu === undefined) return false;
    return this.capi?.onCpu.chain(cpu, after) ?? false;
  }

  /** a hit whose handlers failed: no deferred call */
  drop(cpu: Cpu): void { this.capi?.onCpu.drop(cpu); }

  /**
   * Whether a C handler of p (or of a member of its aggregate) runs on the
   * CPU now: a detour's or ftrace trampoline's native entry then leaves the
   * hit to its template, whose callback can run a handler on the CPU.
   */
  handlersOnCpu(p: Kprobe): boolean {
    const capi = this.capi;
    if (this.runHandlerOnCpu === undefined || !capi) return false;
    return (this.t.aggrList.get(p) ?? [p]).some(kp => capi.handlersOnCpu(kp));
  }

  /** whether a module kretprobe's C return handler runs on the CPU (its instances then return through the breakpoint trampoline) */
  returnHandlerOnCpu(rp: Kretprobe): boolean { return this.capi?.returnHandlerOnCpu(rp) ?? false; }
}
