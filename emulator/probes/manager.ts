/**
 * ProbeManager: the one bridge from user-written probes to the kprobes
 * engine, shared by the CLI (`--probes`) and the DAP adapter (breakpoints).
 * One per machine, composed over it and attached to it: `probesOf(machine)`
 * (attach.ts; on top of the engine the machine started at boot,
 * `machine.kprobes`).
 *
 * Two sources of probes, one id space, one list:
 *   - probe files: addProbeFile(text, fileName) compiles a .kprobe file and
 *     registers each probe (a failure is reported per probe, the others go on);
 *   - breakpoints: addBreakpoint({ target, mode, condition, hitCondition,
 *     logMessage }) -> a kprobe/kretprobe that stops the machine
 *     (kernel.requestStop with reason 'breakpoint') and tells onBreakpointHit
 *     listeners.
 * Debug registers (emulator/hwbp): a probe file's `kwatch` lines
 * (register_kwatch), breakpoints in mode 'hardware' (an execute debug
 * register) and data breakpoints (addDataBreakpoint; dataTarget() finds
 * an expression's address and size); see hwProbeSet.ts (delegated to) and
 * hwProbes.ts.
 * remove / setEnabled / get / list work on all. list() carries hits,
 * nmissed and the debugfs flags text per site (the rows: entries.ts);
 * debugfsList() is /sys/kernel/debug/kprobes/list.
 */
import type { CheckOptions, CompileOptions, Diagnostic, ProbeControlOp, ProbeSpec, ProbeTarget } from '../handlers';
import { compileProbeFile } from '../handlers';
import type { KernelApi } from '../kernel/types';
import { KprobesEngine, formatKprobeList, readKprobesEnabled, writeKprobesEnabled } from '../kprobes';
import { BreakpointHit, BreakpointMode, BreakpointRuntime, buildBreakpointSites, compileBreakpointParts, stopRequestFor } from './breakpoints';
import { probeEntry, probeListRow, UserProbe } from './entries';
import { buildFileProbeSites, fileProbeLabel } from './fileProbes';
import type { FileProbeContext } from './fileProbes';
import { HandlerOnCpuCache, installHandlerBreakpoints } from './handlerBreakpoints';
import type { HandlerBreakpointSource } from './handlerBreakpoints';
import { programGlobals, programNamesAt, programNamesAtTarget, programTypes, scopeForTarget } from './programNames';
import { registerSite, setSiteEnabled, unregisterSite } from './register';
import { watchModuleEvent } from '../tracing/events/moduleEvents';
import { KPROBE_FLAG_DISABLED, KPROBE_FLAG_GONE } from '../kprobes/kprobe';
import { ProbeSite, parseBreakpointTarget, resolveTarget, targetText, whereOf } from './targets';
import type { Kernel } from '../kernel/kernel';
import type { UprobesEngine } from '../uprobes';
import { USER_PROBE_KINDS } from '../handlers/probeFile';
import { buildBreakpointConsumer, buildFileUprobeConsumer, resolveUserTarget, userProgramNames } from './userProbes';
import { UprobeSite, uprobeWhere } from './uprobeSite';
import { HwProbeSet } from './hwProbeSet';
import type { DataBreakpointRequest, ProbeManagerHw } from './hwProbeSet';
import { resolveDataTarget } from './dataTarget';
import type { DataTarget } from './dataTarget';
import type { HandlerEnv } from '../handlers';

export * from './types';
import type { BreakpointRequest, ProbeEntry, ProbeFileResult, ProbeListRow, ProbeManagerOptions, ProbeOrigin } from './types';

export type BreakpointHitListener = (hit: BreakpointHit) => void;

export class ProbeManager {
  /** when true (default) a stopping breakpoint calls kernel.requestStop({ reason: 'breakpoint', ... }) */
  requestStops = true;
  private readonly probes = new Map<number, UserProbe>();
  private nextId = 1;
  private readonly listeners: BreakpointHitListener[] = [];
  private readonly stepBudget?: number;
  private readonly opts: ProbeManagerOptions;

  /** handler requests (unregister_kprobe(p), disable_kprobe(p)...) waiting for the end of the scheduling round */
  private readonly deferred: (() => void)[] = [];

  private readonly kengine: KprobesEngine | null;
  /** kwatch lines, hardware and data breakpoints: their debug registers */
  private readonly hwProbes: HwProbeSet;

  /**
   * `engine`: the kprobes engine (null on a machine without one: a user
   * program machine); `uprobes`: the uprobes engine (null: no uprobes).
   */
  constructor(readonly kernel: KernelApi, engine: KprobesEngine | null, opts: ProbeManagerOptions = {}, readonly uprobes: UprobesEngine | null = null,
    /** the machine's debug registers (absent: kwatch / hardware / data breakpoints are refused, saying so) */
    hw?: ProbeManagerHw) {
    if (engine && engine.kernel !== kernel) throw new Error('ProbeManager: the engine belongs to another kernel');
    this.kengine = engine;
    this.hwProbes = new HwProbeSet(kernel, hw, engine, { handlerFaults: opts.handlerFaults, charge: opts.chargeSteps });
    this.stepBudget = opts.stepBudget;
    this.opts = opts;
    // the deferred work of handlers runs at the end of the scheduling round, as a work item a handler schedules would
    kernel.addRoundHook(() => this.runDeferred());
    // breakpoints in code that runs inside kprobe handlers stop there (debugger breakpoints, not reentries)
    if (engine) installHandlerBreakpoints(kernel, engine, () => this.stoppingBreakpoints(), () => this.siteGeneration, this.onCpuCache);
  }

  /** bumped on every change of a probe's sites (registered, enabled or disabled, removed): handlerBreakpoints.ts caches by it */
  private siteGeneration = 0;
  /** which C handlers run on the CPU (they hold a breakpoint), per siteGeneration */
  private readonly onCpuCache = new HandlerOnCpuCache();

  /** the breakpoints with a kprobes runtime (handlerBreakpoints.ts) */
  private *stoppingBreakpoints(): Generator<HandlerBreakpointSource> {
    for (const up of this.probes.values()) if (up.origin === 'breakpoint' && up.bp && up.sites.length) yield { bp: up.bp, sites: up.sites };
  }

  /** The kprobes engine; a clear error on a machine without one. */
  get engine(): KprobesEngine {
    if (!this.kengine) throw new Error('kprobes: this machine has no kprobes engine (a user-program machine): only uprobes can be placed');
    return this.kengine;
  }

  /** whether kprobes can be registered here */
  get hasKprobes(): boolean { return this.kengine !== null; }

  private runDeferred(): void {
    if (this.deferred.length === 0) return;
    for (const work of this.deferred.splice(0)) work();
  }

  /**
   * A file probe's handler asked to unregister / disable / enable its probe:
   * queued for the end of the scheduling round (Linux would sleep in these calls, which a
   * handler must not), then done through the manager so the views follow;
   * one 'emulator' line in the kernel log says it happened. A request for
   * the other kind (unregister_kretprobe from a kprobe) is -EINVAL.
   */
  private controlFor(up: UserProbe, label: () => string): (op: ProbeControlOp, kind: 'kprobe' | 'kretprobe') => number {
    return (op, kind) => {
      if ((kind === 'kretprobe') !== (up.kind === 'kretprobe')) return -22; // -EINVAL
      this.deferred.push(() => {
        if (!this.probes.has(up.id)) return; // already unregistered
        const fn = `${op}_${kind}`;
        if (op === 'unregister') {
          this.remove(up.id);
          this.kernel.printk(-1, `${label()}: unregistered by its handler (${fn})`, 'emulator');
          return;
        }
        const err = this.setEnabled(up.id, op === 'enable');
        this.kernel.printk(-1, `${label()}: ${err ? `${fn} from its handler failed: ${err}` : `${op}d by its handler (${fn})`}`, 'emulator');
      });
      return 0;
    };
  }

  /** what every probe-file probe's handlers run with (one for the manager: its options do not change) */
  private fileCtx: FileProbeContext | undefined;

  private fileProbeContext(): FileProbeContext {
    return (this.fileCtx ??= {
      kernel: this.kernel, engine: this.engine, handlerFaults: this.opts.handlerFaults, charge: this.opts.chargeSteps,
      controlFor: (owner, label) => this.controlFor(owner as UserProbe, label),
    });
  }

  // ------------------------------------------------------------ compile options

  /** Options for compileProbeFile / checkProbeFile against this machine's image. */
  checkOptions(): CheckOptions {
    const syms = this.kernel.image.symbols;
    return {
      regNames: this.kernel.arch.regs.map(r => r.name),
      symbolExists: n => syms.lookup(n) !== undefined,
      functionExists: n => syms.lookup(n)?.type === 'func',
      programNamesFor: t => programNamesAtTarget(this.kernel.image, this.kernel.arch, t)?.lookup,
      programGlobals: programGlobals(this.kernel.image),
      programType: programTypes(this.kernel.image),
      imageArch: this.kernel.arch.name,
      stepBudget: this.stepBudget,
    };
  }

  /** Options for compileHandler / compileLogMessage (breakpoint conditions and log messages). */
  compileOptions(): CompileOptions {
    const c = this.checkOptions();
    return {
      regNames: c.regNames, symbolExists: c.symbolExists, functionExists: c.functionExists, stepBudget: this.stepBudget,
      charSigned: this.kernel.arch.abi.charSigned, arch: this.kernel.arch.name,
      programName: c.programGlobals, programType: c.programType,
    };
  }

  // -------------------------------------------------------------- probe files

  /** Compile a .kprobe file without registering anything. */
  compileProbeFile(text: string, fileName: string): { specs: ProbeSpec[]; diagnostics: Diagnostic[]; image?: string } {
    const r = compileProbeFile(text, fileName, this.checkOptions());
    return { specs: r.probes, diagnostics: r.diagnostics, image: r.image };
  }

  /** Compile and register a .kprobe file (probes with compile errors are left out; see diagnostics). */
  addProbeFile(text: string, fileName: string): ProbeFileResult {
    const c = this.compileProbeFile(text, fileName);
    const r = this.addProbeSpecs(c.specs, fileName);
    return { diagnostics: c.diagnostics, probes: r.probes, errors: r.errors, image: c.image };
  }

  /**
   * Register compiled probe-file probes; each failure is an error line, the
   * others still register. The probes of a `batch { }` block register as one
   * register_kprobes() call: on the first failure the batch's probes already
   * registered are unregistered again (Linux's rollback) and stay listed,
   * not registered, with the reason; a batch with a probe that did not
   * compile is not registered at all. `entries: false`: the probes are not
   * returned (only the errors).
   */
  addProbeSpecs(specs: readonly ProbeSpec[], fileName: string, opts: { entries?: boolean } = {}): { probes: ProbeEntry[]; errors: string[] } {
    const probes: ProbeEntry[] = [];
    // the entries as the lists show them (a caller that only wants the errors, as the CLI, leaves them out: list() has them)
    const entries = opts.entries !== false;
    const errors: string[] = [];
    for (let i = 0; i < specs.length;) {
      const b = specs[i].batch;
      if (!b) {
        const { up, errs } = this.addFileProbe(specs[i], fileName);
        for (const e of errs) errors.push(e);
        if (entries) probes.push(this.snapshot(up));
        i++;
        continue;
      }
      let j = i;
      while (j < specs.length && specs[j].batch?.index === b.index) j++;
      const members = specs.slice(i, j);
      i = j;
      const where = `${fileName}:${b.line}:${b.column}: batch`;
      // Linux's batch calls are per kind: register_kprobes(), register_kretprobes(), register_jprobes()
      const call = (kinds: readonly ProbeSpec[]): string => [...new Set(kinds.map(m => `register_${m.kind}s`))].join(' / ');
      if (members.length < b.size) {
        errors.push(`${where}: not registered: ${b.size - members.length} of its ${b.size} probes did not compile (${call(members)}() registers all or none)`);
        continue;
      }
      const done: UserProbe[] = [];
      let failure: { spec: ProbeSpec; text: string } | undefined;
      for (const spec of members) {
        const { up, errs } = this.addFileProbe(spec, fileName);
        done.push(up);
        if (errs.length) { failure = { spec, text: errs.join('; ') }; break; }
      }
      if (failure !== undefined) {
        const rolled = done.filter(u => u.sites.some(s => s.registered) || u.user?.registered);
        this.siteGeneration++;
        for (const u of done) {
          for (const s of u.sites) unregisterSite(this.engine, s);
          this.unregisterUser(u);
          u.message = u === done[done.length - 1] ? u.message : `not registered: the batch at ${fileName}:${b.line}:${b.column} was rolled back`;
        }
        // the call of the failing probe's kind (a batch may mix kinds; Linux would make one call per kind)
        errors.push(`${where}: ${call([failure.spec])} failed at probe ${done.length} of ${members.length} (${failure.text}); `
          + `${rolled.length} registered probe${rolled.length === 1 ? '' : 's'} of the batch unregistered again`);
        // the members after the failing one are never registered (Linux stops at the first failure)
      }
      if (entries) probes.push(...done.map(u => this.snapshot(u)));
    }
    return { probes, errors };
  }

  /** One probe-file probe: listed, resolved, built, registered; the error lines of its failures. */
  private addFileProbe(spec: ProbeSpec, fileName: string): { up: UserProbe; errs: string[] } {
    // made when a message needs it (most probes of a big file need none)
    const label = (): string => fileProbeLabel(fileName, spec);
    const up: UserProbe = {
      id: this.nextId++, origin: 'file', kind: spec.kind, target: targetText(spec.target), targetKind: spec.target.kind,
      file: { name: fileName, line: spec.line, column: spec.column }, sites: [], enabled: spec.attrs.disabled !== true,
      event: eventName(spec.event?.def),
    };
    this.probes.set(up.id, up);
    if (USER_PROBE_KINDS.includes(spec.kind)) return this.addUserFileProbe(up, spec, label());
    if (spec.kind === 'kwatch') return this.addKwatch(up, spec, fileName, label());
    if (!this.kengine) {
      up.message = 'this machine has no kprobes engine (a user-program machine): only uprobes can be placed';
      return { up, errs: [`${label()}: ${up.message}`] };
    }
    const res = resolveTarget(this.kernel.image, spec.target);
    if (!res.ok) {
      up.message = res.message;
      up.nextLine = res.nextLine;
      return { up, errs: [`${label()}: ${res.message}`] };
    }
    up.sites = buildFileProbeSites(this.fileProbeContext(), spec, fileName, res.sites, up);
    const failed = this.registerAll(up);
    const errs = failed.length ? failed.map(e => `${label()}${e}`) : failed;
    // an event on MOD:SYM follows MOD's loads, and waits for MOD while it is not loaded (tracing/events/moduleEvents.ts)
    const ev = spec.event?.def;
    if (ev && spec.target.kind === 'symbol' && watchModuleEvent(this.kernel, spec.target.name, ev, {
      event: ev.event, defined: () => this.probes.has(up.id), registered: () => up.sites.some(s => s.registered), reregister: () => this.reregister(up),
    }, up.sites[0]?.errno ?? 0)) { errs.length = 0; up.message = `waiting for module ${spec.target.name.split(':')[0]}`; }
    this.warn(up, label);
    return { up, errs };
  }

  // ---------------------------------------------------------------- uprobes

  /** the uprobes engine with its concrete kernel, or the reason there is none */
  private userCtx(): { kernel: Kernel; uprobes: UprobesEngine } | string {
    if (!this.uprobes) return `uprobes are not ported to ${this.kernel.arch.name}`;
    return { kernel: this.uprobes.kernel, uprobes: this.uprobes };
  }

  /** A probe-file uprobe / uretprobe / uprobe_events line: resolved in the filesystem, its consumer registered. */
  private addUserFileProbe(up: UserProbe, spec: ProbeSpec, label: string): { up: UserProbe; errs: string[] } {
    const c = this.userCtx();
    if (typeof c === 'string') { up.message = c; return { up, errs: [`${label}: ${c}`] }; }
    const t = spec.target;
    if (t.kind !== 'user') { up.message = 'not a user target'; return { up, errs: [`${label}: ${up.message}`] }; }
    const res = resolveUserTarget(c.kernel, t);
    if (typeof res === 'string') { up.message = res; return { up, errs: [`${label}: ${res}`] }; }
    // trace_uprobe's validate_ref_ctr_offset: the events on one (inode, offset) share one reference counter
    if (spec.event && [...this.probes.values()].some(o => o !== up && o.user?.event && o.user.res.inode === res.inode && o.user.res.offset === res.offset
      && (o.user.res.refCtr ?? 0n) !== (res.refCtr ?? 0n))) {
      this.kernel.printk(-1, 'trace_uprobe: Reference counter offset mismatch.', 'kernel');
      up.message = 'Reference counter offset mismatch: another event on this file offset has another reference counter (-EINVAL)';
      return { up, errs: [`${label}: ${up.message}`] };
    }
    const uc = buildFileUprobeConsumer({ ...c, handlerFaults: this.opts.handlerFaults, charge: this.opts.chargeSteps }, spec, res, label);
    up.user = new UprobeSite(res, spec.kind === 'uretprobe' ? 'uretprobe' : 'uprobe', uc, spec.event);
    const err = up.enabled ? this.registerUser(up) : undefined;
    return { up, errs: err ? [`${label}: ${err}`] : [] };
  }

  /** uprobe_register of the probe's consumer; the error text, or undefined */
  private registerUser(up: UserProbe): string | undefined {
    if (!up.user || !this.uprobes) return undefined;
    const err = up.user.register(this.uprobes);
    up.message = err;
    return err;
  }

  private unregisterUser(up: UserProbe): void {
    if (up.user && this.uprobes) up.user.unregister(this.uprobes);
  }

  /**
   * A breakpoint in a user program (a source line or instruction of a
   * program in the machine's filesystem): a uprobe whose consumer evaluates
   * the condition / hit condition / log message and stops the machine.
   */
  private addUserBreakpoint(up: UserProbe, req: BreakpointRequest, target: Extract<ProbeTarget, { kind: 'user' }>, event?: BreakpointRuntime['event']): ProbeEntry {
    const fail = (message: string): ProbeEntry => { up.message = message; return this.snapshot(up); };
    const c = this.userCtx();
    if (typeof c === 'string') return fail(c);
    const res = resolveUserTarget(c.kernel, target);
    if (typeof res === 'string') return fail(res);
    const copts = this.compileOptions();
    userProgramNames(copts, res, this.kernel.arch);
    const kind = up.kind === 'uretprobe' ? 'uretprobe' : 'uprobe';
    const bp: BreakpointRuntime = {
      kernel: this.kernel, id: up.id, mode: kind === 'uretprobe' ? 'kretprobe' : 'kprobe', hits: 0, charge: this.opts.chargeSteps,
      onStop: hit => this.onStop(hit), event,
    };
    const bad = compileBreakpointParts(bp, req, copts);
    if (bad) return fail(bad);
    up.bp = bp;
    up.user = new UprobeSite(res, kind, buildBreakpointConsumer(this.kernel, bp, uprobeWhere(res), kind));
    if (up.enabled) this.registerUser(up);
    return this.snapshot(up);
  }

  /**
   * /sys/kernel/debug/tracing/uprobe_events: one line per uprobe / uretprobe
   * of this manager that is defined ("p:uprobes/p_app_0x1136 /bin/app:0x0000000000001136"):
   * registered, or disabled (as Linux lists a disabled event; it registers
   * the uprobe when the event is enabled). One whose registration failed is
   * not listed.
   */
  uprobeEvents(): string {
    return this.definedUprobes().map(u => `${u.eventLine()}\n`).join('');
  }

  /** /sys/kernel/debug/tracing/uprobe_profile: per defined uprobe, its file, event name and hits. */
  uprobeProfile(): string {
    return this.definedUprobes().map(u => `${u.profileLine()}\n`).join('');
  }

  private definedUprobes(): UprobeSite[] {
    return [...this.probes.values()].flatMap(up => (up.user && (up.user.registered || (!up.enabled && !up.user.error)) ? [up.user] : []));
  }

  // -------------------------------------------------------------- breakpoints

  /**
   * A breakpoint as a probe. Never throws for bad input: the entry comes back
   * with verified = false and a message (bad target, line without code
   * (nextLine set), condition/log compile error, registration failure).
   */
  addBreakpoint(req: BreakpointRequest): ProbeEntry {
    let mode: BreakpointMode = req.mode ?? 'kprobe';
    let target: ProbeTarget | string = req.target;
    let event: BreakpointRuntime['event'];
    if (typeof target === 'string') {
      // a kprobe_events definition (tracing/events) is an event breakpoint of its own mode
      const t = parseBreakpointTarget(target, this.kernel.arch, n => this.kernel.image.symbols.lookup(n) !== undefined);
      if (typeof t === 'string') target = t;
      else { target = t.target; mode = (t.event ? t.mode : req.mode) ?? t.mode ?? mode; event = t.event; }
    }
    const up: UserProbe = {
      id: this.nextId++, origin: 'breakpoint', kind: mode,
      target: typeof target === 'string' ? String(req.target) : targetText(target), sites: [], enabled: req.enabled !== false,
      event: eventName(event?.def),
    };
    this.probes.set(up.id, up);
    const fail = (message: string): ProbeEntry => { up.message = message; return this.snapshot(up); };
    if (typeof target === 'string') return fail(target);
    up.targetKind = target.kind;
    if (target.kind === 'user') { up.kind = mode === 'kretprobe' ? 'uretprobe' : 'uprobe'; return this.addUserBreakpoint(up, req, target, event); }
    if (!this.kengine) return fail('this machine has no kprobes engine (a user-program machine): breakpoints go in user programs');
    if (mode === 'kretprobe' && target.kind === 'line') return fail('a return breakpoint (kretprobe) must be on a function (symbol or address), not a source line');
    if (mode === 'hardware' && !this.hwProbes.available) return fail('hardware breakpoints: this machine has no debug registers');
    const bp: BreakpointRuntime = {
      kernel: this.kernel, engine: this.engine, id: up.id, mode, hits: 0, charge: this.opts.chargeSteps,
      onStop: hit => this.onStop(hit), event,
    };
    // sites the caller resolved already (the debugger's resolver) are used as they are
    const res = req.sites !== undefined && typeof req.target !== 'string' ? { ok: true as const, sites: [...req.sites] } : resolveTarget(this.kernel.image, target);
    // a kprobe's condition and log message name the program's variables in scope at its (first) site, and its globals
    const copts = this.compileOptions();
    const site = res.ok && (mode === 'kprobe' || mode === 'hardware') ? res.sites[0]?.resolved : undefined;
    const atSite = site !== undefined ? programNamesAt(this.kernel.image, this.kernel.arch, site, scopeForTarget(target)) : undefined;
    if (atSite) copts.programName = atSite;
    const bad = compileBreakpointParts(bp, req, copts);
    if (bad) return fail(bad);
    up.bp = bp;
    if (!res.ok) { up.nextLine = res.nextLine; return fail(res.message); }
    if (mode === 'hardware') return this.addHardwareBreakpoint(up, bp, res.sites);
    up.sites = buildBreakpointSites(bp, res.sites, !up.enabled);
    const errs = this.registerAll(up);
    if (errs.length) up.message = errs.map(e => e.replace(/^: /, '')).join('; ');
    this.warn(up, `breakpoint ${up.id} ${up.target}`);
    return this.snapshot(up);
  }

  /** Listen to stopping breakpoint hits; returns the unsubscribe function. */
  onBreakpointHit(l: BreakpointHitListener): () => void {
    this.listeners.push(l);
    return () => { const i = this.listeners.indexOf(l); if (i >= 0) this.listeners.splice(i, 1); };
  }

  private onStop(hit: BreakpointHit): void {
    for (const l of this.listeners.slice()) {
      try { l(hit); } catch { /* a broken listener must not break the probed kernel */ }
    }
    if (this.requestStops) this.kernel.requestStop(hit.cpu, stopRequestFor(hit));
  }

  // ------------------------------------------------------- debug registers

  /** A probe file's kwatch: register_kwatch(addr, len, type, body); "label: register_kwatch failed: -EINVAL (...)" */
  private addKwatch(up: UserProbe, spec: ProbeSpec, fileName: string, label: string): { up: UserProbe; errs: string[] } {
    const r = this.hwProbes.kwatch(spec, fileName, label, up.enabled, () => { up.enabled = false; });
    up.hw = r.hw;
    if (r.message) up.message = r.message;
    return { up, errs: r.message ? [`${label}: ${r.message}`] : [] };
  }

  /** A breakpoint in mode 'hardware': an execute debug register per resolved site; nothing in memory changes. */
  private addHardwareBreakpoint(up: UserProbe, bp: BreakpointRuntime, sites: readonly ProbeSite[]): ProbeEntry {
    const r = this.hwProbes.hardware(bp, sites, up.enabled);
    up.hw = r.hw;
    if (r.message) up.message = r.message;
    return this.snapshot(up);
  }

  /**
   * A data breakpoint (watchpoint) on a debug register: stops after an
   * access of [addr, addr+len) with a BreakpointHit of mode 'data' (the
   * register, the accessed address, old and new value). Never throws: a
   * refusal (no free register: -ENOSPC; a length / alignment / type the
   * registers cannot hold: -EINVAL; no debug registers: -ENODEV) comes back
   * as verified = false with the reason.
   */
  addDataBreakpoint(req: DataBreakpointRequest): ProbeEntry {
    const label = req.label;
    const up: UserProbe = {
      id: this.nextId++, origin: 'breakpoint', kind: 'watch', target: label ?? whereOf(this.kernel.image, req.addr), sites: [], enabled: req.enabled !== false,
    };
    this.probes.set(up.id, up);
    const bp: BreakpointRuntime = { kernel: this.kernel, engine: this.kengine ?? undefined, id: up.id, mode: 'data', hits: 0, charge: this.opts.chargeSteps, onStop: hit => this.onStop(hit) };
    const r = this.hwProbes.data(req, bp, up.enabled, () => compileBreakpointParts(bp, req, this.compileOptions()));
    if (r.hw) { up.bp = bp; up.hw = r.hw; }
    if (r.message) up.message = r.message;
    return this.snapshot(up);
  }

  /**
   * What a data breakpoint on `expression` watches (DAP dataBreakpointInfo):
   * its address and size, or why it has none: a global by name
   * (`boot_counter`), a member (`workers[1].count`), memory through a cast
   * pointer (`*(u32 *)0xffff...`), a pointer's target (`&sym`: sizeof the
   * pointed-to type, 8 for void *). `env`: the stopped CPU's handler
   * environment (registers, for expressions that need them); without it,
   * memory only.
   */
  dataTarget(expression: string, env?: HandlerEnv): DataTarget | string {
    return resolveDataTarget(this.kernel, this.compileOptions(), expression, env);
  }

  // ----------------------------------------------------------- both kinds

  /** Unregister and forget a probe or breakpoint; false when the id is unknown. */
  remove(id: number): boolean {
    const up = this.probes.get(id);
    if (!up) return false;
    this.siteGeneration++;
    for (const s of up.sites) unregisterSite(this.engine, s);
    this.unregisterUser(up);
    for (const h of up.hw ?? []) h.unregister();
    this.probes.delete(id);
    return true;
  }

  /** Remove every probe and breakpoint of an origin (or all). */
  removeAll(origin?: ProbeOrigin): void {
    for (const up of [...this.probes.values()]) if (!origin || up.origin === origin) this.remove(up.id);
  }

  /** enable_kprobe / disable_kprobe on every site; the error text, or undefined when done. */
  setEnabled(id: number, on: boolean): string | undefined {
    const up = this.probes.get(id);
    if (!up) return `no probe with id ${id}`;
    up.enabled = on;
    this.siteGeneration++;
    if (up.hw) {
      const err = this.hwProbes.setEnabled(up.hw, on);
      if (on) up.message = err;
      return err;
    }
    if (up.user) {
      // uprobe_events' enable: the consumer is registered / unregistered (breakpoints inserted / removed)
      if (on) return this.registerUser(up);
      this.unregisterUser(up);
      return undefined;
    }
    const errs: string[] = [];
    for (const s of up.sites) {
      if (!s.registered) continue;
      const r = setSiteEnabled(this.engine, s, on);
      if (r) errs.push(`${on ? 'enable' : 'disable'}_kprobe at ${whereOf(this.kernel.image, s.kp.addr ?? 0n)} failed: ${r}`);
    }
    return errs.length ? errs.join('; ') : undefined;
  }

  get(id: number): ProbeEntry | undefined {
    const up = this.probes.get(id);
    return up ? this.snapshot(up) : undefined;
  }

  /** Every probe and breakpoint, by id (creation order). */
  list(origin?: ProbeOrigin): ProbeEntry[] {
    return [...this.probes.values()].filter(u => !origin || u.origin === origin).map(u => this.snapshot(u));
  }

  /** Every probe's hit-list row (list() without the per-site rows), in list() order. */
  listRows(): ProbeListRow[] {
    const ctx = { kernel: this.kernel, engine: this.kengine, uprobes: this.uprobes, hw: this.hwProbes };
    return [...this.probes.values()].map(u => probeListRow(ctx, u));
  }

  /** /sys/kernel/debug/kprobes/list */
  debugfsList(): string { return this.kengine ? formatKprobeList(this.kengine) : ''; }

  /** /sys/kernel/debug/kprobes/enabled */
  get kprobesEnabled(): boolean { return this.kengine ? readKprobesEnabled(this.kengine) === '1\n' : false; }
  /** write /sys/kernel/debug/kprobes/enabled ("1"/"0"/"y"/"n"); 0 or -EINVAL */
  writeKprobesEnabled(text: string): number { return writeKprobesEnabled(this.engine, text); }

  // ------------------------------------------------------------- internals

  /** A MOD:SYM event's kprobes again as new (MOD came): unregistered, then registered, armed as the probe is; 0 or -errno. */
  private reregister(up: UserProbe): number {
    for (const s of up.sites) {
      unregisterSite(this.engine, s);
      if (s.kp.symbol_name !== undefined) s.kp.addr = undefined;
      s.kp.flags = ((s.kp.flags ?? 0) & ~(KPROBE_FLAG_GONE | KPROBE_FLAG_DISABLED)) | (up.enabled ? 0 : KPROBE_FLAG_DISABLED);
    }
    up.message = undefined;
    this.registerAll(up);
    return up.sites.find(s => s.errno)?.errno ?? 0;
  }

  /** Register every site; returns ": <site> <error>" suffixes for the failures. */
  private registerAll(up: UserProbe): string[] {
    const errs: string[] = [];
    const many = up.sites.length > 1;
    this.siteGeneration++;
    for (const s of up.sites) {
      s.insnBoundary = this.opts.insnBoundary;
      if (registerSite(this.engine, s) === 0) continue;
      const at = many && s.site.resolved !== undefined ? ` (at ${whereOf(this.kernel.image, s.site.resolved)})` : '';
      errs.push(`${at}: ${s.error}`);
    }
    if (errs.length && !up.message) up.message = errs.map(e => e.replace(/^: /, '')).join('; ');
    return errs;
  }

  /** Registration warnings (a probe inside an instruction): the probe's message, and one 'emulator' line each in the kernel log. */
  /** the probe as the lists show it (entries.ts) */
  private snapshot(up: UserProbe): ProbeEntry {
    return probeEntry({ kernel: this.kernel, engine: this.kengine, uprobes: this.uprobes, hw: this.hwProbes }, up);
  }

  private warn(up: UserProbe, label: string | (() => string)): void {
    if (!up.sites.some(s => s.registered && s.warning)) return;
    const warnings = up.sites.filter(s => s.registered && s.warning).map(s => `warning: ${s.warning}`);
    up.message ??= warnings.join('; ');
    const text = typeof label === 'string' ? label : label();
    for (const w of warnings) this.kernel.printk(-1, `${text}: ${w}`, 'emulator');
  }

}

/** A kprobe_events definition's `GROUP/EVENT` (absent: no definition). */
function eventName(def: { group: string; event: string } | undefined): string | undefined {
  return def ? `${def.group}/${def.event}` : undefined;
}

