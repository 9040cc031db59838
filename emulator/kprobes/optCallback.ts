/**
 * optimized_callback() (Linux arch/x86/kernel/kprobes/opt.c): what a
 * detour buffer's callback (or its native entry) does when an optimized
 * probe is hit. The optimizer (optprobes.ts) attaches it to each detour
 * buffer it prepares.
 */
import type { Cpu } from '../arch/types';
import type { VAddr } from '../memory/address';
import type { CallbackFrame, NativeCallbackFrame } from './archHooks';
import { HandlerOops } from './errors';
import { type Kprobe, KprobeCtlblk, KprobeStatus, kprobeDisabled } from './kprobe';
import type { HandlerOnCpuGate } from './onCpuGate';
import type { KprobesShared } from './parts';
import type { KprobeHitPath } from './hitPath';
import type { ProbeTable } from './probeTable';
import type { PtRegs } from './ptRegs';
import type { KprobeRemoval } from './removal';
import type { NativeEntry } from './optprobes';

export class OptimizedCallback {
  /** ArchOps.breakpointPcOffset as a bigint */
  private readonly bpPcOffset: bigint;

  constructor(
    private readonly shared: Pick<KprobesShared, 'kernel' | 'hooks' | 'ctx' | 'stats' | 'percpu'>,
    private readonly t: Pick<ProbeTable, 'table'>,
    private readonly hits: Pick<KprobeHitPath, 'preHandlerHit' | 'resetCurrent' | 'incNmissed'>,
    private readonly gc: Pick<KprobeRemoval, 'collectGarbage'>,
    private readonly gate: HandlerOnCpuGate,
  ) {
    this.bpPcOffset = BigInt(shared.kernel.arch.breakpointPcOffset);
  }

  /**
   * optimized_callback(): the detour buffer of the probe at addr called the
   * engine. The live registers become the probed context (ip = addr + the
   * breakpoint length, as a breakpoint hit shows it), the pre_handlers run
   * (their return value and any change of ip are ignored, as documented),
   * the registers go back into the buffer's saved frame, and the buffer
   * goes on (restore, copied instructions, jump back). A hit while another
   * probe is being handled on this CPU only counts as missed. `native`: the
   * trap is the buffer's native entry — the arch does the template's save
   * and restore itself and resumes at the copied instructions (when it
   * cannot, the cpu runs the template, which calls back here non-native).
   */
  optimizedCallback(cpu: Cpu, regs: PtRegs, kcb: KprobeCtlblk, addr: bigint, native: NativeEntry | null): boolean {
    const { hooks, ctx, stats } = this.shared;
    const opt = hooks.optprobes;
    if (!opt) return false;
    const gate = this.gate, hits = this.hits;
    let nf: NativeCallbackFrame | null = null;
    let frame: CallbackFrame | null = null;
    if (native) {
      // a C handler the debugger stops in runs from the template's callback (its saved frame is real)
      const np = gate.runHandlerOnCpu !== undefined ? this.t.table.byV.get(native.at) : undefined;
      if (np && gate.handlersOnCpu(np)) return true;
      nf = opt.enterNative?.(ctx, regs, native.ip, 'optprobe') ?? null;
      if (!nf) return true; // the template runs as instructions and calls back at its callback
      stats.nativeOptFrames++;
      if (nf.presaved) stats.presavedOptFrames++;
    } else {
      frame = opt.enterCallback(ctx, regs, addr + this.bpPcOffset, 'optprobe');
    }
    stats.optCallbacks++;
    const p = native ? this.t.table.byV.get(native.at) : this.t.table.get(addr);
    // the template's callback: a C pre_handler the debugger has a breakpoint in runs on the CPU, the callback ends when it returns
    const onCpu = frame !== null && gate.runHandlerOnCpu !== undefined;
    let deferred = false;
    try {
      if (!p || kprobeDisabled(p)) return true;
      if (kcb.current) { if (!gate.debuggerReentry?.(p, regs)) hits.incNmissed(p, cpu.id); return true; }
      kcb.current = p;
      kcb.status = KprobeStatus.HIT_ACTIVE;
      if (onCpu) gate.hitCpu = cpu.id;
      try {
        hits.preHandlerHit(p, regs); // the return value is ignored for optimized probes
      } finally {
        if (onCpu) gate.hitCpu = -1;
      }
      if (onCpu) {
        const f = frame as CallbackFrame;
        deferred = gate.start(cpu, () => {
          hits.resetCurrent(kcb);
          opt.leaveCallback(ctx, this.shared.percpu.regsOf(cpu), f);
          this.gc.collectGarbage();
        }, f.frame);
        if (deferred) return true;
      }
      hits.resetCurrent(kcb);
    } catch (e) {
      if (onCpu) gate.drop(cpu);
      hits.resetCurrent(kcb);
      if (e instanceof HandlerOops) return true;
      throw e;
    } finally {
      if (nf) (opt.leaveNative as NonNullable<typeof opt.leaveNative>)(ctx, regs, nf);
      else if (!deferred) opt.leaveCallback(ctx, regs, frame as CallbackFrame);
    }
    this.gc.collectGarbage();
    return true;
  }

  /**
   * optimizedCallback(native) for the common hit of a translated native
   * entry, in one piece (traps.ts asTrap calls it, through its route, inside its trap
   * envelope): no debugger gate (the caller checked it), nobody else being
   * handled on this CPU, the probe there and enabled. Anything else, and a
   * frame the arch cannot save and restore in one piece (ArchHooks
   * nativeHit), answers false: nothing was done, and the caller takes the
   * general path, which then sees the same state. true: handled (also when
   * a handler oopsed the CPU).
   */
  nativeHit(regs: PtRegs, kcb: KprobeCtlblk, native: NativeEntry): boolean {
    const p = this.t.table.byV.get(native.at);
    if (p === undefined || kcb.current !== null || kprobeDisabled(p)) return false;
    const { hooks, stats } = this.shared;
    const nativeHit = hooks.optprobes?.nativeHit;
    if (nativeHit === undefined) return false;
    this.hitP = p; this.hitKcb = kcb; this.hitRegs = regs;
    if (!nativeHit(regs, 'optprobe', native.ip, this)) return false;
    stats.nativeOptFrames++;
    stats.presavedOptFrames++;
    stats.optCallbacks++;
    this.gc.collectGarbage();
    return true;
  }

  /** what nativeHit's hit runs between the save and the restore (the arch's nativeHit calls it once, synchronously) */
  private hitP: Kprobe | null = null;
  private hitKcb: KprobeCtlblk | null = null;
  private hitRegs: PtRegs | null = null;

  /** NativeHitBody: unused by an optprobe's (it resumes at the buffer's copied instructions) */
  returnTo: VAddr | bigint = 0;

  /** the handlers of nativeHit's hit: optimizedCallback's middle (the pre_handlers' return value is ignored); always restored */
  runHandlers(): boolean {
    const p = this.hitP as Kprobe, kcb = this.hitKcb as KprobeCtlblk, regs = this.hitRegs as PtRegs;
    this.hitP = null; this.hitKcb = null; this.hitRegs = null;
    kcb.current = p;
    kcb.status = KprobeStatus.HIT_ACTIVE;
    try {
      this.hits.preHandlerHit(p, regs);
    } catch (e) {
      this.hits.resetCurrent(kcb);
      if (e instanceof HandlerOops) return true;
      throw e;
    }
    this.hits.resetCurrent(kcb);
    return true;
  }
}
