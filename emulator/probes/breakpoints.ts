/**
 * Debugger breakpoints as probes (DAP setBreakpoints / setFunctionBreakpoints
 * / setInstructionBreakpoints): a kprobe per site that stops the machine
 * before the instruction, or a kretprobe that stops when the function
 * returns. Optional condition (handler language, kind 'condition'), hit
 * condition (DAP syntax: `N`, `>=N`, `>N`, `<N`, `<=N`, `==N`/`=N`, `%N`; a
 * bare N means >= N, i.e. stop from the N-th hit on), and log message
 * (compileLogMessage: `{expr}` interpolation or a `{ ...; }` snippet): a
 * breakpoint with a log message prints and never stops (a logpoint).
 *
 * A breakpoint written as a kprobe_events definition (targets.ts
 * parseBreakpointTarget: `p:myprobe do_sys_open dfd=%di`) is an event
 * breakpoint: a hit whose condition and hit condition hold writes the
 * event's trace line (emulator/tracing/events) where handler output goes
 * and the machine goes on; the event is listed in kprobe_events /
 * kprobe_profile while registered.
 *
 * The hit count counts hits whose condition held. A condition or log message
 * that faults prints the fault on the console; a faulting condition stops
 * (so the user sees it), like gdb.
 */
import type { CompiledHandler, CompileOptions, Diagnostic, HandlerFault } from '../handlers';
import { compileHandler, compileLogMessage } from '../handlers';
import type { KernelApi, StopRequest } from '../kernel/types';
import type { KprobesEngine, KretprobeInstance, PtRegs, Kprobe } from '../kprobes';
import { hex } from '../memory/address';
import { ProbeHandlerEnv } from './env';
import { runCaught } from './invoke';
import { SiteRegistration, newKprobe } from './register';
import type { ProbeSite } from './targets';
import { whereOf } from './targets';
import { addTraceEvent, emitTraceEvent } from '../tracing/events';
import type { BreakpointRequest } from './types';
import type { EventHit, TraceEventEntry } from '../tracing/events';

/**
 * How a breakpoint is placed: a kprobe (breakpoint instruction written), a
 * kretprobe (stop at return), or 'hardware': an execute debug register
 * (nothing in memory changes; emulator/hwbp).
 */
export type BreakpointMode = 'kprobe' | 'kretprobe' | 'hardware';

/** A stopping breakpoint was hit (sent before the machine stops). */
export interface BreakpointHit {
  /** ProbeManager id of the breakpoint */
  breakpointId: number;
  /** engine id of the kprobe that hit (StopRequest.probeId); hardware / data: the HwBp's id */
  probeId: number;
  /** 'data': a data breakpoint (ProbeManager.addDataBreakpoint) */
  mode: BreakpointMode | 'data';
  cpu: number;
  /** probe address */
  addr: bigint;
  /** "symbol+0xoff" of the probe address */
  where: string;
  /** pc to show: the probe address (kprobe; the CPU's pc is then in the instruction slot with a
   *  single-step pending) or the return address (kretprobe; the CPU's pc is there already) */
  reportPc: bigint;
  /** kretprobe mode: the function's return value */
  returnValue?: bigint;
  /** kretprobe mode: the kretprobe's maxactive as registered (the default filled in) */
  maxactive?: number;
  /** hit count of the breakpoint, this hit included */
  hitCount: number;
  /** text for the stop (StopRequest.description) */
  description: string;
  /** hardware / data: the debug register that fired ("DR1") */
  registerName?: string;
  /** hardware: 'exec'; data: the access (x86 reports a read/write watch's first access of the instruction) */
  access?: 'read' | 'write' | 'exec';
  /** data: the address the access used, the watched address and length, the watched value before and after (little-endian, len bytes) */
  accessAddr?: bigint;
  watchAddr?: bigint;
  len?: number;
  oldValue?: bigint;
  newValue?: bigint;
}

export type HitPredicate = (hits: number) => boolean;

/** DAP hit condition -> predicate over the hit count; a string error for bad syntax. */
export function parseHitCondition(text: string): HitPredicate | string {
  const m = /^\s*(>=|<=|==|=|>|<|%)?\s*([0-9]+)\s*$/.exec(text);
  if (!m) return `invalid hit condition '${text}' (expected N, >=N, >N, <N, <=N, ==N or %N)`;
  const n = Number(m[2]);
  switch (m[1] ?? '>=') {
    case '>=': return h => h >= n;
    case '>': return h => h > n;
    case '<': return h => h < n;
    case '<=': return h => h <= n;
    case '==': case '=': return h => h === n;
    case '%': return n === 0 ? `invalid hit condition '${text}' (%0)` : h => h % n === 0;
  }
  return `invalid hit condition '${text}'`;
}

export interface BreakpointRuntime {
  kernel: KernelApi;
  /** the kprobes engine (absent for a breakpoint in a user program: a uprobe) */
  engine?: KprobesEngine;
  id: number;
  mode: BreakpointMode | 'data';
  condition?: CompiledHandler;
  logMessage?: CompiledHandler;
  hit?: HitPredicate;
  /** counts hits whose condition held */
  hits: number;
  /** charge a condition's / log message's steps to a CPU (virtual clock, instruction limit) */
  charge?: (cpu: number, steps: number) => void;
  /** called for a stopping hit (the manager notifies listeners and requests the stop) */
  onStop(hit: BreakpointHit): void;
  /** a kprobe_events definition (parseBreakpointTarget): hits write its trace line and never stop */
  event?: TraceEventEntry;
}

function faultLine(kernel: KernelApi, cpu: number, what: string, where: () => string, f: HandlerFault): void {
  kernel.printk(cpu, `breakpoint ${what} at ${where()} faulted: ${f.message} (at ${f.line}:${f.column})`, 'emulator');
}

/** Condition, hit count and log message; true when the machine should stop. `where` is formatted only for a fault line. */
export function evaluate(bp: BreakpointRuntime, env: () => ProbeHandlerEnv, cpu: number, where: () => string): boolean {
  if (bp.condition) {
    const r = runCaught(bp.condition, env());
    if ('fault' in r) {
      faultLine(bp.kernel, cpu, 'condition', where, r.fault);
      bp.hits++;
      return true;
    }
    if (r.value === 0n) return false;
  }
  bp.hits++;
  if (bp.hit && !bp.hit(bp.hits)) return false;
  if (bp.event) {
    traceHit(bp, bp.event, env());
    return false;
  }
  if (bp.logMessage) {
    const r = runCaught(bp.logMessage, env());
    if ('fault' in r) faultLine(bp.kernel, cpu, 'log message', where, r.fault);
    return false;
  }
  return true;
}

/** An event breakpoint's hit: its trace line (a kprobe / kretprobe, or a uprobe / uretprobe: no engine). */
function traceHit(bp: BreakpointRuntime, ev: TraceEventEntry, env: ProbeHandlerEnv): void {
  ev.nhit++;
  const ret = bp.mode === 'kretprobe';
  const addr = env.probe?.addr ?? 0n;
  const t = ev.def.target;
  let hit: EventHit;
  const engine = bp.engine;
  if (engine) {
    const engineSymbol = (a: bigint): string | undefined => engine.code.symbolize(a);
    hit = ret ? { kind: 'kretprobe', addr, retAddr: env.ri?.ret_addr, engineSymbol } : { kind: 'kprobe', addr, engineSymbol };
  }
  else {
    const fileOffset = t.kind === 'user' ? t.offset : undefined;
    hit = ret ? { kind: 'uretprobe', addr, retAddr: env.getReg('ip'), fileOffset } : { kind: 'uprobe', addr, fileOffset };
  }
  emitTraceEvent(bp.kernel, ev.def, env, hit);
}

/** The engine objects of a breakpoint, one per site. */
export function buildBreakpointSites(bp: BreakpointRuntime, sites: ProbeSite[], disabled: boolean): SiteRegistration[] {
  const { kernel, engine } = bp;
  const ev = bp.event;
  const regs = sites.map(site => {
    const kp = newKprobe(site, disabled);
    const reg: SiteRegistration = { site, kind: bp.mode === 'kretprobe' ? 'kretprobe' : 'kprobe', kp, registered: false, errno: 0 };
    if (bp.mode === 'kprobe') {
      kp.pre_handler = (p: Kprobe, regs: PtRegs) => {
        const addr = p.addr ?? 0n;
        const cpu = regs.cpu.id;
        if (!evaluate(bp, () => new ProbeHandlerEnv({ kernel, engine, regs, kp: p, beforeInsn: true, charge: bp.charge }), cpu, () => whereOf(kernel.image, addr))) return 0;
        const where = whereOf(kernel.image, addr);
        bp.onStop({
          breakpointId: bp.id, probeId: p.id ?? 0, mode: 'kprobe', cpu, addr, where, reportPc: addr, hitCount: bp.hits,
          description: `breakpoint at ${where}`,
        });
        return 0;
      };
    } else {
      reg.rp = {
        kp,
        handler: (ri: KretprobeInstance, regs: PtRegs) => {
          const addr = ri.rp.kp.addr ?? 0n;
          const cpu = regs.cpu.id;
          if (!evaluate(bp, () => new ProbeHandlerEnv({ kernel, engine, regs, kp: ri.rp.kp, ri, charge: bp.charge }), cpu, () => whereOf(kernel.image, addr))) return 0;
          const where = whereOf(kernel.image, addr);
          const rv = regs.returnValue;
          const fn = kernel.image.symbols.resolve(addr)?.sym.name ?? hex(addr);
          bp.onStop({
            breakpointId: bp.id, probeId: ri.rp.kp.id ?? 0, mode: 'kretprobe', cpu, addr, where, reportPc: ri.ret_addr,
            returnValue: rv, maxactive: ri.rp.maxactive, hitCount: bp.hits,
            description: `return from ${fn} = ${hex(rv)} to ${whereOf(kernel.image, ri.ret_addr)}`,
          });
          return 0;
        },
      };
      if (ev?.def.maxactive) reg.rp.maxactive = ev.def.maxactive;
    }
    return reg;
  });
  if (ev) {
    ev.nmissed = () => regs.reduce((n, r) => n + (r.kp.nmissed ?? 0) + (r.rp?.nmissed ?? 0), 0);
    ev.live = () => regs.some(r => r.registered);
    addTraceEvent(kernel, ev);
  }
  return regs;
}

/** The StopRequest for a hit. */
export function stopRequestFor(hit: BreakpointHit): StopRequest {
  return { reason: hit.mode === 'data' ? 'data breakpoint' : 'breakpoint', description: hit.description, reportPc: hit.reportPc, probeId: hit.probeId };
}

/** A breakpoint's condition, log message and hit condition compiled into its runtime; the error text of the first bad one. */
export function compileBreakpointParts(bp: BreakpointRuntime, req: Pick<BreakpointRequest, 'condition' | 'hitCondition' | 'logMessage'>, copts: CompileOptions): string | undefined {
  if (req.condition !== undefined && req.condition.trim() !== '') {
    const c = compileHandler(req.condition, 'condition', copts);
    if (!c.handler) return `condition: ${firstError(c.diagnostics)}`;
    bp.condition = c.handler;
  }
  if (req.logMessage !== undefined && req.logMessage !== '') {
    const c = compileLogMessage(req.logMessage, copts);
    if (!c.handler) return `log message: ${firstError(c.diagnostics)}`;
    bp.logMessage = c.handler;
  }
  if (req.hitCondition !== undefined && req.hitCondition.trim() !== '') {
    const h = parseHitCondition(req.hitCondition);
    if (typeof h === 'string') return h;
    bp.hit = h;
  }
  return undefined;
}

function firstError(d: readonly Diagnostic[]): string {
  const e = d.find(x => x.severity === 'error') ?? d[0];
  return e ? `${e.line}:${e.column}: ${e.message}` : 'does not compile';
}
