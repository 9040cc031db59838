/**
 * Kprobes on ftrace call sites (CONFIG_KPROBES_ON_FTRACE; Linux
 * kernel/kprobes.c check_ftrace_location / arm_kprobe_ftrace and the
 * arch's kprobe_ftrace_handler). A probe whose address is an ftrace
 * location (the arch says which: x86_64, a function's `call __fentry__`)
 * gets KPROBE_FLAG_FTRACE ([FTRACE] in the list) and no breakpoint: arming
 * redirects the call site to the engine's ftrace trampoline (textPoke),
 * disarming restores the original call. A probe inside a call site but
 * not at its first byte is -EILSEQ. Such probes are never optimized.
 *
 * On a hit (the trampoline's native entry, or its callback when the
 * template runs as instructions) the handlers run as kprobe_ftrace_handler
 * runs them: another probe being handled on this CPU only counts as
 * missed; else pre_handler with ip = the site + the breakpoint length (as
 * a breakpoint hit shows it); when it returns 0, ip is set as if the
 * call site had been single-stepped (site + call size) for post_handler,
 * then restored, and execution resumes past the call site (the traced
 * function's __fentry__ call is skipped: a no-op). When pre_handler
 * returns non-zero it has changed ip: no post_handler, execution resumes
 * at that ip with the call's return address popped.
 *
 * The function tracer (kernel/trace/trace_functions.c through ftrace_ops)
 * shares the call sites: setFunctionTrace names the sites it traces, each
 * redirected to the same trampoline while traced or while a probe there is
 * armed, and a hit on a traced site is recorded (the function and its
 * caller, from the return address at the function's entry sp) before any
 * probe's handlers run. While a site is redirected, reads of the original
 * text (overlay) still see the `call __fentry__`.
 */
import type { Cpu } from '../arch/types';
import { Errno } from '../kernel/abi';
import { mustVAddr, toVAddr, VAddr } from '../memory/address';
import { textPoke } from '../memory/textPoke';
import type { CallbackFrame, FtraceArchHooks, NativeCallbackFrame, OptprobesArchHooks } from './archHooks';
import { HandlerOops } from './errors';
import { Kprobe, KprobeCtlblk, KprobeStatus, KPROBE_FLAG_FTRACE, kprobeDisabled } from './kprobe';
import type { KprobeHitPath } from './hitPath';
import type { HandlerOnCpuGate } from './onCpuGate';
import type { KprobesShared } from './parts';
import type { ProbeTable } from './probeTable';
import type { PtRegs } from './ptRegs';

/** the ftrace trampoline's symbol (Linux: ftrace_regs_caller's copy, listed as ftrace_trampoline) */
export const FTRACE_TRAMPOLINE_SYMBOL = 'ftrace_trampoline';

/** the function tracer's record of one traced call: the CPU, the traced function's entry (its call site), its caller and the entry sp */
export type FunctionTraceRecord = (cpu: number, ip: bigint, parentIp: bigint, sp: bigint) => void;

export class KprobesFtrace {
  /** the ftrace trampoline (0n: no ftrace support on this arch) */
  readonly trampoline: bigint = 0n;
  /** its native entry / callback breakpoints (0n when none) */
  readonly entry: bigint = 0n;
  readonly callback: bigint = 0n;
  /** entry as a VAddr (NaN when none) */
  readonly entryV: VAddr = NaN;
  readonly size: number = 0;
  private readonly hooks: FtraceArchHooks | undefined;
  private readonly opt: OptprobesArchHooks | undefined;
  /** the function tracer: the call sites it traces and where a hit goes (null: off) */
  private fnTrace: { sites: ReadonlySet<bigint>; record: FunctionTraceRecord } | null = null;
  /** call sites the function tracer redirected, with their original call */
  private readonly traceOriginals = new Map<bigint, Uint8Array>();
  /** call sites with an armed probe */
  private readonly armedSites = new Set<bigint>();

  /** `on`: CONFIG_KPROBES_ON_FTRACE (the engine option kprobesOnFtrace) */
  constructor(
    private readonly shared: Pick<KprobesShared, 'kernel' | 'hooks' | 'ctx' | 'slots' | 'code' | 'stats' | 'percpu'>,
    private readonly probes: Pick<ProbeTable, 'table'>,
    private readonly hits: Pick<KprobeHitPath, 'preHandlerHit' | 'postHandlerHit' | 'resetCurrent' | 'incNmissed'>,
    private readonly gate: HandlerOnCpuGate,
    private on: boolean,
  ) {
    const f = shared.hooks.ftrace;
    const opt = shared.hooks.optprobes;
    this.hooks = f && opt ? f : undefined;
    this.opt = opt;
    if (!this.hooks) return;
    const t = this.hooks.trampoline;
    this.trampoline = shared.slots.allocCode(t.code.length, FTRACE_TRAMPOLINE_SYMBOL);
    shared.slots.write(this.trampoline, t.code);
    this.size = t.code.length;
    this.callback = this.trampoline + BigInt(t.callbackOffset);
    if (t.nativeEntryOffset !== undefined) {
      this.entry = this.trampoline + BigInt(t.nativeEntryOffset);
      this.entryV = mustVAddr(this.entry);
    }
    const isOurs = (addr: bigint): boolean => addr === this.callback || (addr === this.entry && addr !== 0n);
    const callbackV = mustVAddr(this.callback);
    shared.code.attach(this.trampoline, {
      // a hit compares VAddrs (entryV is NaN without a native entry: it equals nothing)
      breakpoint: (cpu, regs, kcb, _addr, _code, at) => (at === callbackV || at === this.entryV) && this.hit(cpu, regs, kcb, at === this.entryV),
      site: addr => (isOurs(addr) ? 'ftraceCallback' : 'none'),
      nativeEntry: this.entry === 0n ? undefined : { addr: this.entry, at: this.entryV, stat: 'inlineFtraceEntries' },
    });
  }

  /** CONFIG_KPROBES_ON_FTRACE (engine option kprobesOnFtrace) and arch support */
  get enabled(): boolean { return this.on && this.hooks !== undefined; }

  /** check_ftrace_location(): the ftrace call site covering addr, or undefined */
  location(addr: bigint): bigint | undefined {
    if (!this.enabled) return undefined;
    return (this.hooks as FtraceArchHooks).ftraceLocation(this.shared.ctx, addr);
  }

  /** arch_prepare_kprobe_ftrace: no slot, the original call saved (p.opcode, what disarm writes back). 0 or -errno. */
  prepare(p: Kprobe): number {
    const f = this.hooks as FtraceArchHooks;
    const site = p.addr as bigint;
    if (!f.redirectCall(site, this.trampoline)) return -Errno.EINVAL; // the trampoline is out of the call's reach
    p.opcode = this.shared.ctx.readOriginal(site, f.callSize);
    p.ainsn = { insn: 0n, length: f.callSize, mode: 'simulate', arch: {}, boostable: -1 };
    return 0;
  }

  /** arm_kprobe_ftrace: the call site calls the trampoline */
  arm(p: Kprobe): void {
    const site = p.addr as bigint;
    this.armedSites.add(site);
    if (this.traceOriginals.has(site)) return; // the function tracer has it redirected already
    const call = (this.hooks as FtraceArchHooks).redirectCall(site, this.trampoline) as Uint8Array;
    textPoke(this.shared.kernel.mem, mustVAddr(site), call);
  }

  /** disarm_kprobe_ftrace: the original call back (unless the function tracer still traces the site) */
  disarm(p: Kprobe): void {
    const site = p.addr as bigint;
    this.armedSites.delete(site);
    if (this.traceOriginals.has(site)) return;
    if (p.opcode) textPoke(this.shared.kernel.mem, mustVAddr(site), p.opcode);
  }

  /**
   * The function tracer traces `sites` (call sites: location() of a
   * function's entry) and gives each hit to `record`; an empty set or a
   * null record stops it. Sites leaving the set get their `call __fentry__`
   * back unless a probe there is armed.
   */
  setFunctionTrace(sites: ReadonlySet<bigint>, record: FunctionTraceRecord | null): void {
    if (!this.enabled) return;
    const f = this.hooks as FtraceArchHooks, mem = this.shared.kernel.mem;
    const next = record && sites.size ? new Set(sites) : new Set<bigint>();
    for (const [site, orig] of [...this.traceOriginals]) {
      if (next.has(site)) continue;
      this.traceOriginals.delete(site);
      if (!this.armedSites.has(site)) textPoke(mem, mustVAddr(site), orig);
    }
    for (const site of next) {
      if (this.traceOriginals.has(site)) continue;
      const call = f.redirectCall(site, this.trampoline);
      if (!call || this.location(site) !== site) { next.delete(site); continue; }
      // the original call (read with armed probes' bytes put back)
      this.traceOriginals.set(site, this.shared.ctx.readOriginal(site, f.callSize));
      if (!this.armedSites.has(site)) textPoke(mem, mustVAddr(site), call);
    }
    this.fnTrace = record && next.size ? { sites: next, record } : null;
  }

  /** The call sites the function tracer has redirected, in `out` (text read from addr) put back to their original calls. */
  overlay(out: Uint8Array, addr: bigint, len: number): void {
    if (!this.traceOriginals.size) return;
    const end = addr + BigInt(len);
    const reach = BigInt((this.hooks as FtraceArchHooks).callSize - 1);
    for (const [site, orig] of this.traceOriginals) {
      if (site + reach < addr || site >= end) continue;
      const off = Number(site - addr);
      for (let i = Math.max(0, -off); i < orig.length && off + i < len; i++) out[off + i] = orig[i];
    }
  }

  /**
   * The trampoline trapped: `native` at its native entry (the arch does the
   * template's save and restore itself; when it cannot, the cpu runs the
   * template, which calls back here non-native), else at its callback.
   */
  hit(cpu: Cpu, regs: PtRegs, kcb: KprobeCtlblk, native: boolean): boolean {
    const f = this.hooks, opt = this.opt;
    if (!f || !opt) return false;
    const site = f.callSiteOf(regs, !native);
    if (site === undefined) return false;
    const e = this.shared, gate = this.gate, hits = this.hits;
    const ip = site + BigInt(e.kernel.arch.breakpointPcOffset);
    let nf: NativeCallbackFrame | null = null;
    let frame: CallbackFrame | null = null;
    if (native) {
      // a C handler the debugger stops in runs from the template's callback (its saved frame is real)
      const np = gate.runHandlerOnCpu !== undefined ? this.probes.table.get(site) : undefined;
      if (np && gate.handlersOnCpu(np)) return true;
      nf = opt.enterNative && opt.leaveNative ? opt.enterNative(e.ctx, regs, mustVAddr(ip), 'ftrace') : null;
      if (!nf) return true; // the template runs as instructions and calls back at its callback
      e.stats.nativeFtraceFrames++;
    } else {
      frame = opt.enterCallback(e.ctx, regs, ip, 'ftrace');
    }
    e.stats.ftraceHits++;
    const traced = this.fnTrace;
    // function_trace_call: the traced function and its caller (the return address at the function's entry sp)
    if (traced && traced.sites.has(site)) traced.record(cpu.id, site, this.parentIp(regs), regs.sp);
    const origIp = site + BigInt(f.callSize);
    let resume = origIp;
    // the template's callback: a C handler the debugger has a breakpoint in runs on the CPU, the callback ends when it returns
    const onCpu = frame !== null && gate.runHandlerOnCpu !== undefined;
    let deferred = false;
    try {
      const p = this.probes.table.get(site);
      if (p && !kprobeDisabled(p) && ((p.flags ?? 0) & KPROBE_FLAG_FTRACE)) {
        if (kcb.current) { if (!gate.debuggerReentry?.(p, regs)) hits.incNmissed(p, cpu.id); }
        else {
          kcb.current = p;
          kcb.status = KprobeStatus.HIT_ACTIVE;
          regs.ip = ip;
          deferred = this.handlersFrom(cpu, regs, kcb, p, ip, origIp, onCpu ? frame : null, r => { resume = r; });
        }
      }
    } catch (err) {
      if (onCpu) gate.drop(cpu);
      hits.resetCurrent(kcb);
      if (!(err instanceof HandlerOops)) throw err;
    } finally {
      if (nf) (opt.leaveNative as NonNullable<typeof opt.leaveNative>)(e.ctx, regs, nf, resume);
      else if (!deferred) opt.leaveCallback(e.ctx, regs, frame as CallbackFrame, resume);
    }
    return true;
  }

  /** the return address at the traced function's entry (regs.sp as its probes see it), 0n when unreadable */
  private parentIp(regs: PtRegs): bigint {
    const v = toVAddr(regs.sp);
    if (v === null || !regs.cpu.mem.isMapped(v, 8)) return 0n;
    return regs.cpu.mem.read64(v);
  }

  /**
   * kprobe_ftrace_handler's handlers: pre_handler, then (its value 0) the
   * post_handler as if the call site had been single-stepped. With `frame`
   * (the template's callback, the debugger present) a C handler that holds
   * a breakpoint runs on the CPU: true, and the rest of the hit and the
   * callback's end come when it returns. `resumeAt` gets where the call
   * site's caller goes on.
   */
  private handlersFrom(cpu: Cpu, regs: PtRegs, kcb: KprobeCtlblk, p: Kprobe, ip: bigint, origIp: bigint,
    frame: CallbackFrame | null, resumeAt: (r: bigint) => void): boolean {
    const e = this.shared, gate = this.gate, hits = this.hits, opt = this.opt as NonNullable<typeof this.opt>;
    const end = (): void => { resumeAt(regs.ip); hits.resetCurrent(kcb); };
    // after the callback returned (the handler ran on the CPU): the template goes on
    const leave = (): void => {
      const r = e.percpu.regsOf(cpu);
      const resume = r.ip;
      hits.resetCurrent(kcb);
      opt.leaveCallback(e.ctx, r, frame as CallbackFrame, resume);
    };
    const post = (): boolean => {
      // as if the call site had been single-stepped (it is a no-op call)
      regs.ip = origIp;
      if (frame) gate.hitCpu = cpu.id;
      try { hits.postHandlerHit(p, regs, kcb); } finally { gate.hitCpu = -1; }
      if (frame && gate.start(cpu, () => { e.percpu.regsOf(cpu).ip = origIp; leave(); }, frame.frame)) return true;
      regs.ip = origIp;
      return false;
    };
    if (frame) gate.hitCpu = cpu.id;
    let ret: number;
    try { ret = hits.preHandlerHit(p, regs); } finally { gate.hitCpu = -1; }
    if (frame && gate.start(cpu, v => {
      // the pre_handlers' value: 0 goes on to the post_handler, else the handler set where to resume
      const r = v || ret;
      if (!r && post()) return;
      if (!r) e.percpu.regsOf(cpu).ip = origIp;
      leave();
    }, frame.frame)) return true;
    if (!ret && post()) return true;
    end();
    return false;
  }
}
