/**
 * A probe from a .kprobe file (a compiled ProbeSpec) turned into engine
 * registrations with the kernel's callback signatures:
 *
 *   kprobe    -> struct kprobe per site: pre_handler / post_handler /
 *                fault_handler running the pre / post / fault snippets;
 *   kretprobe -> struct kretprobe: entry_handler / handler running the entry /
 *                return snippets, maxactive and data_size from the attributes;
 *   jprobe    -> struct jprobe whose entry runs the body (returning from it
 *                is jprobe_return()).
 *
 * `disabled` registers the probe with KPROBE_FLAG_DISABLED set (listed as
 * [DISABLED], armed by enable). Every registration gets a fault_handler so
 * that a handler fault takes the engine's fault path, where the context's
 * HandlerFaultPolicy decides (see invoke.ts): the CPU oopses (default) or
 * the fault is reported and the probe goes on. Every handler run's steps
 * are charged to the CPU (ctx.charge), and a probe whose handlers keep
 * exceeding their step budget is disabled (runaway.ts).
 */
import type { CompiledHandler, HandlerFault, HandlerKind, ProbeSpec } from '../handlers';
import type { KernelApi } from '../kernel/types';
import type { Kprobe, KprobeFaultHandler, KprobePostHandler, KprobePreHandler, KprobesEngine, KretprobeInstance, PtRegs } from '../kprobes';
import { EnvInput, ProbeHandlerEnv } from './env';
import { DEFAULT_HANDLER_FAULTS, FaultGate, HandlerFaultPolicy, asInt, oopsForHandlerFault, runInProbe, trapnrForFault } from './invoke';
import { EngineProbeKind, SiteRegistration, newKprobe, newSiteRegistration, setSiteEnabled } from './register';
import { RunawayWatch } from './runaway';
import type { ProbeSite } from './targets';
import { targetText, whereOf } from './targets';
import { addTraceEvent, emitTraceEvent } from '../tracing/events';
import { moduleEventWaiting } from '../tracing/events/moduleEvents';
import type { EventAdd } from '../tracing/events';

export interface FileProbeContext {
  kernel: KernelApi;
  engine: KprobesEngine;
  /** what a handler fault the `fault` snippet does not handle does (default 'oops') */
  handlerFaults?: HandlerFaultPolicy;
  /** charge a handler run's steps to a CPU (virtual clock, instruction limit) */
  charge?: (cpu: number, steps: number) => void;
  /**
   * The unregister / disable / enable requests of a probe's handlers
   * (deferred work): the function for one probe (`owner`: what
   * buildFileProbeSites was given for it; `label`: its label, made when a
   * message needs it), asked for when one of its handlers first runs. The
   * context is the same for every probe of a manager: a probe keeps nothing
   * of it but a reference.
   */
  controlFor?: (owner: unknown, label: () => string) => EnvInput['control'];
}

/** Text that names a probe in messages: "examples/probes/x.kprobe:3:1: kprobe do_fork". */
export function fileProbeLabel(fileName: string, spec: ProbeSpec): string {
  return `${fileName}:${spec.line}:${spec.column}: ${spec.kind} ${targetText(spec.target)}`;
}

/**
 * Build the (not yet registered) engine objects of a probe-file probe, one
 * per site; `owner`: what ctx.controlFor is given for this probe.
 */
export function buildFileProbeSites(ctx: FileProbeContext, spec: ProbeSpec, fileName: string, sites: ProbeSite[], owner?: unknown): SiteRegistration[] {
  const probe = new FileProbeRuntime(ctx, spec, fileName, owner);
  const kh = kprobeHandlers(probe, spec.kind === 'kprobe' ? spec.handlers.pre : undefined, spec.kind === 'kprobe' ? spec.handlers.post : undefined);
  const faultHandler = kh.fault;
  const def = spec.event?.def;
  if (def) return buildEventSites(ctx, spec, def, sites, faultHandler);
  const h = spec.handlers;
  const disabled = spec.attrs.disabled === true;
  const regs: SiteRegistration[] = sites.map(site => {
    const kp = newKprobe(site, disabled);
    kp.fault_handler = faultHandler;
    const kind = spec.kind as EngineProbeKind; // uprobes go through userProbes.ts
    const reg = newSiteRegistration(site, kind, kp);
    switch (spec.kind) {
      case 'kprobe':
        if (kh.pre) kp.pre_handler = kh.pre;
        if (kh.post) kp.post_handler = kh.post;
        break;
      case 'kretprobe': {
        const entry = h.entry, ret = h.return;
        reg.rp = {
          kp,
          maxactive: spec.attrs.maxactive ?? 0,
          data_size: spec.attrs.data_size ?? 0,
          entry_handler: entry ? (ri: KretprobeInstance, regs: PtRegs) => asInt(probe.run(entry, { kp: ri.rp.kp, ri, regs, beforeInsn: true })) : undefined,
          handler: ret ? (ri: KretprobeInstance, regs: PtRegs) => { probe.run(ret, { kp: ri.rp.kp, ri, regs }); return 0; } : undefined,
        };
        break;
      }
      case 'jprobe': {
        const body = h.jprobe;
        reg.jp = { kp, entry: (_args, regs) => { if (body) probe.run(body, { kp, regs, beforeInsn: true }); } };
        break;
      }
    }
    return reg;
  });
  probe.regs = regs;
  return regs;
}

/**
 * A probe's fault_handler and a kprobe's pre/post handlers. Made here, the
 * closures share one small context (the runtime and the two handlers) that
 * is all a probe keeps of them for the whole run, rather than the contexts
 * of buildFileProbeSites and of each site it maps.
 */
function kprobeHandlers(probe: FileProbeRuntime, pre: CompiledHandler | undefined, post: CompiledHandler | undefined): { fault: KprobeFaultHandler; pre?: KprobePreHandler; post?: KprobePostHandler } {
  return {
    fault: (p, regs, trapnr) => probe.fault(p, regs, trapnr),
    pre: pre ? (p, regs) => (asInt(probe.runPre(pre, p, regs)) !== 0 ? 1 : 0) : undefined,
    post: post ? (p, regs, flags) => { probe.run(post, { kp: p, regs, postFlags: BigInt(flags) }); } : undefined,
  };
}

/**
 * The handler runtime of one probe-file probe, shared by its sites: the
 * fault gate between a handler run and the fault_handler, and the runaway
 * streak. Both are made at the probe's first hit: a file of thousands of
 * probes most of which never fire keeps nothing per probe but this.
 */
class FileProbeRuntime {
  regs: readonly SiteRegistration[] = [];
  private gate?: FaultGate;
  private watch?: RunawayWatch;
  private readonly policy: HandlerFaultPolicy;
  /** the control function of the probe's handlers, made at the first handler run (controlMade) */
  private control: EnvInput['control'] = undefined;
  private controlMade = false;

  constructor(private readonly ctx: FileProbeContext, private readonly spec: ProbeSpec, private readonly fileName: string, private readonly owner: unknown) {
    this.policy = ctx.handlerFaults ?? DEFAULT_HANDLER_FAULTS;
  }

  private theControl(): EnvInput['control'] {
    if (this.controlMade) return this.control;
    this.controlMade = true;
    const f = this.ctx.controlFor;
    return (this.control = f === undefined ? undefined : f(this.owner, () => fileProbeLabel(this.fileName, this.spec)));
  }

  private env(input: Omit<EnvInput, 'kernel' | 'engine'>): ProbeHandlerEnv {
    const ctx = this.ctx;
    return new ProbeHandlerEnv({ kernel: ctx.kernel, engine: ctx.engine, charge: ctx.charge, control: this.theControl(), ...input });
  }

  /**
   * A kprobe's pre handler: the env's input made in one object (no spread
   * of a second one), a hit being the most frequent thing a probe does.
   */
  runPre(handler: CompiledHandler, kp: Kprobe, regs: PtRegs): bigint {
    const ctx = this.ctx;
    const env = new ProbeHandlerEnv({ kernel: ctx.kernel, engine: ctx.engine, charge: ctx.charge, control: this.theControl(), regs, kp, beforeInsn: true });
    const v = runInProbe(handler, env, this.theGate());
    this.theWatch().completed();
    return v;
  }

  private theGate(): FaultGate { return (this.gate ??= new FaultGate()); }
  private theWatch(): RunawayWatch { return (this.watch ??= new RunawayWatch()); }

  run(handler: CompiledHandler, input: Omit<EnvInput, 'kernel' | 'engine'>): bigint {
    const v = runInProbe(handler, this.env(input), this.theGate());
    this.theWatch().completed();
    return v;
  }

  /**
   * The fault_handler of a probe-file probe. A parked handler fault: the
   * user's fault snippet runs (trapnr per the fault kind); a budget fault, or
   * any fault under the 'report' policy, is reported and handled (return 1:
   * the probe goes on); under 'oops' the snippet's return value decides, and
   * not handled oopses the CPU naming the handler's file:line:col (return 0:
   * the engine's own oops is then a no-op). A real fault while
   * single-stepping: the user's fault snippet decides, none = not handled.
   */
  fault(p: Kprobe, regs: PtRegs, trapnr: number): number {
    const ctx = this.ctx;
    const pending = this.gate ? this.gate.take() : null;
    if (!pending) return this.runUserFault(p, regs, trapnr);
    const policy = this.policy;
    const watch = this.theWatch();
    const f = pending.fault;
    const userTrapnr = trapnrForFault(ctx.kernel, f.kind);
    if (f.kind === 'budget' || policy === 'report') {
      report(ctx, regs, this.label(), pending.handler, f, p);
      this.runUserFault(p, regs, userTrapnr);
      if (f.kind !== 'budget') watch.completed();
      else if (watch.budgetFault()) disableRunaway(ctx, this.regs, fileProbeLabel(this.fileName, this.spec), watch.limit, regs.cpu.id);
      return 1;
    }
    watch.completed();
    if (this.runUserFault(p, regs, userTrapnr)) return 1;
    oopsForHandlerFault(ctx.kernel, regs.cpu, f, faultText(ctx, this.label(), pending.handler, f, p));
    return 0;
  }

  private runUserFault(p: Kprobe, regs: PtRegs, trapnr: number): number {
    const fault = this.spec.handlers.fault;
    if (!fault) return 0;
    const inner = new FaultGate();
    try {
      return asInt(runInProbe(fault, this.env({ kp: p, regs, trapnr }), inner)) !== 0 ? 1 : 0;
    } catch (e) {
      const f = inner.take();
      if (!f) throw e;
      report(this.ctx, regs, this.label(), 'fault', f.fault, p);
      return 0;
    }
  }

  private label(): FaultLabel { return { fileName: this.fileName, probe: `${this.spec.kind} ${targetText(this.spec.target)}` }; }
}

/**
 * A kprobe_events line: a kprobe whose pre_handler (or a kretprobe whose
 * return handler) writes the event's trace line; listed in the kernel's
 * kprobe_events / kprobe_profile (tracing/events/profile.ts) while registered.
 */
function buildEventSites(ctx: FileProbeContext, spec: ProbeSpec, def: EventAdd, sites: ProbeSite[], faultHandler: KprobeFaultHandler): SiteRegistration[] {
  const { kernel, engine } = ctx;
  const disabled = spec.attrs.disabled === true;
  const engineSymbol = (a: bigint): string | undefined => engine.code.symbolize(a);
  const entry = addTraceEvent(kernel, {
    def, nhit: 0,
    nmissed: () => regs.reduce((n, r) => n + (r.kp.nmissed ?? 0) + (r.rp?.nmissed ?? 0), 0),
    live: () => regs.some(r => r.registered) || moduleEventWaiting(kernel, def),
  });
  const regs: SiteRegistration[] = sites.map(site => {
    const kp = newKprobe(site, disabled);
    kp.fault_handler = faultHandler;
    if (spec.kind === 'kretprobe') {
      const rp = {
        kp, maxactive: spec.attrs.maxactive ?? 0, data_size: 0,
        handler: (ri: KretprobeInstance, regs: PtRegs) => {
          entry.nhit++;
          emitTraceEvent(kernel, def, new ProbeHandlerEnv({ kernel, engine, regs, kp: ri.rp.kp, ri }), { kind: 'kretprobe', addr: ri.rp.kp.addr ?? 0n, retAddr: ri.ret_addr, engineSymbol });
          return 0;
        },
      };
      const reg = newSiteRegistration(site, 'kretprobe', kp);
      reg.rp = rp;
      return reg;
    }
    kp.pre_handler = (p: Kprobe, regs: PtRegs) => {
      entry.nhit++;
      emitTraceEvent(kernel, def, new ProbeHandlerEnv({ kernel, engine, regs, kp: p, beforeInsn: true }), { kind: 'kprobe', addr: p.addr ?? 0n, engineSymbol });
      return 0;
    };
    return newSiteRegistration(site, 'kprobe', kp);
  });
  return regs;
}

/** disable_kprobe on every registered site of a runaway probe, said once on the console */
function disableRunaway(ctx: FileProbeContext, regs: readonly SiteRegistration[], label: string, times: number, cpu: number): void {
  const off = regs.filter(r => r.registered && setSiteEnabled(ctx.engine, r, false) === 0);
  if (!off.length) return;
  const at = off.map(r => whereOf(ctx.kernel.image, r.kp.addr ?? 0n)).join(', ');
  ctx.kernel.printk(cpu, `kprobe at ${at} disabled: its handlers exceeded their step budget on ${times} hits in a row (${label})`, 'emulator');
}

interface FaultLabel { fileName: string; probe: string }

/** "x.kprobe:7:5: pre handler of kprobe do_fork faulted at do_fork+0x0: <what>" */
function faultText(ctx: FileProbeContext, label: FaultLabel, handler: HandlerKind, f: HandlerFault, p: Kprobe): string {
  const at = p.addr !== undefined ? ` at ${whereOf(ctx.kernel.image, p.addr)}` : '';
  const name = handler === 'jprobe' ? 'jprobe body' : `${handler} handler`;
  return `${label.fileName}:${f.line}:${f.column}: ${name} of ${label.probe} faulted${at}: ${f.message}`;
}

/** the fault as a diagnostic line on the console (source 'emulator') */
function report(ctx: FileProbeContext, regs: PtRegs, label: FaultLabel, handler: HandlerKind, f: HandlerFault, p: Kprobe): void {
  ctx.kernel.printk(regs.cpu.id, faultText(ctx, label, handler, f, p), 'emulator');
}
