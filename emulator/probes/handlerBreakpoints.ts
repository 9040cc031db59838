/**
 * Breakpoints in code that runs inside a kprobe handler (a module's C
 * pre / post handler, a kretprobe's entry or return handler, a jprobe's
 * entry, and what they call): debugger breakpoints there, not kprobes.
 *
 * A breakpoint is a kprobe, and a kprobe hit while another probe is being
 * handled is a reentry that Linux only counts (nmissed): a breakpoint in
 * handler_pre would never stop. kgdb's breakpoints are not kprobes and stop
 * there, so the debugger's do too, in two parts (the engine's hooks,
 * kprobes/core.ts):
 *
 *   runHandlerOnCpu   a C handler whose function (or any function of its
 *                     module) holds an enabled stopping breakpoint runs as
 *                     ordinary code on the CPU rather than as a nested call
 *                     (kprobes/handlerOnCpu.ts), so that the machine can
 *                     stop in the middle of it (the answer per handler is
 *                     cached until the breakpoints or the symbol table
 *                     change: HandlerOnCpuCache);
 *   debuggerReentry   a reentry at one of our breakpoints, outside a nested
 *                     call, is a debugger hit: condition, hit count, log
 *                     message as for any breakpoint, a stop that names the
 *                     probe being handled, and no nmissed. The probed
 *                     instruction is then single-stepped as a reentry
 *                     (KPROBE_REENTER), so the outer hit goes on unchanged.
 *
 * Everywhere else a breakpoint stays a kprobe.
 */
import { derivedState } from '../base/marks';
import type { KernelApi } from '../kernel/types';
import type { Kprobe, KprobesEngine, PtRegs } from '../kprobes';
import type { BreakpointRuntime } from './breakpoints';
import { evaluate } from './breakpoints';
import { ProbeHandlerEnv } from './env';
import type { SiteRegistration } from './register';
import { siteDisabled } from './register';
import { whereOf } from './targets';

/** One stopping breakpoint of the manager: its runtime and engine sites. */
export interface HandlerBreakpointSource { bp: BreakpointRuntime; sites: readonly SiteRegistration[] }

/** The site of a kprobe-mode breakpoint at `addr` (registered, enabled), if any. */
function siteAt(bps: Iterable<HandlerBreakpointSource>, addr: bigint): { bp: BreakpointRuntime; site: SiteRegistration } | undefined {
  for (const b of bps) {
    if (b.bp.mode !== 'kprobe') continue;
    for (const s of b.sites) if (s.registered && s.kp.addr === addr && !siteDisabled(s)) return { bp: b.bp, site: s };
  }
  return undefined;
}

function sameSymbol(a: { name: string; value: bigint }, b: { name: string; value: bigint }): boolean {
  return a.name === b.name && a.value === b.value;
}

/**
 * Whether code at `addr` runs inside a kprobe handler: the function is a
 * handler of a probe C code registered, or of the module of one. The text
 * says which (`handler_pre, the pre/post/fault handler of the kprobe at
 * do_fork+0x0`); undefined: ordinary code.
 */
export function handlerCodeAt(kernel: KernelApi, engine: KprobesEngine, addr: bigint): string | undefined {
  const syms = kernel.image.symbols;
  const at = syms.resolve(addr);
  if (!at) return undefined;
  let sameModule: string | undefined;
  for (const c of engine.cApi.registered()) {
    const probed = c.kp.addr !== undefined ? engine.describer.where(c.kp.addr) : '?';
    for (const h of c.handlers) {
      const hs = syms.resolve(h);
      if (!hs) continue;
      if (sameSymbol(hs.sym, at.sym)) return `${at.sym.name} is a handler of the kprobe at ${probed}`;
      if (at.sym.module !== undefined && hs.sym.module === at.sym.module) sameModule ??= `${at.sym.name} is in module ${at.sym.module}, whose handlers of the kprobe at ${probed} may call it`;
    }
  }
  return sameModule;
}

/**
 * runHandlerOnCpu's answers per handler address, asked at every hit of a
 * probe with a C handler while a debugger is present: valid while the
 * breakpoints' generation (bumped by the manager on every change of a
 * breakpoint's sites: added, registered, enabled, disabled, removed) and
 * the symbol table (a module load replaces it) are those they were found
 * with. A cache of machine state: not captured by time travel, emptied
 * after a restore.
 */
export class HandlerOnCpuCache {
  private readonly byFn = new Map<bigint, boolean>();
  private gen = -1;
  private syms: unknown = null;

  constructor() { derivedState(this, () => this.clear()); }

  /** the answer for fn in this generation and table, computed by `find` when not known */
  get(fn: bigint, generation: number, syms: unknown, find: (fn: bigint) => boolean): boolean {
    if (generation !== this.gen || syms !== this.syms) {
      this.byFn.clear();
      this.gen = generation;
      this.syms = syms;
    }
    let v = this.byFn.get(fn);
    if (v === undefined) { v = find(fn); this.byFn.set(fn, v); }
    return v;
  }

  private clear(): void { this.byFn.clear(); this.gen = -1; this.syms = null; }
}

/**
 * Install the engine's hooks; `breakpoints` lists the manager's
 * breakpoints now, `generation` tells their state's generation (cache:
 * where the answers are kept between changes).
 */
export function installHandlerBreakpoints(kernel: KernelApi, engine: KprobesEngine, breakpoints: () => Iterable<HandlerBreakpointSource>,
  generation: () => number, cache: HandlerOnCpuCache): void {
  const find = (fn: bigint): boolean => {
    // the table of now (loading a module replaces it with one that has the modules' symbols)
    const syms = kernel.image.symbols;
    const h = syms.resolve(fn);
    if (!h) return false;
    for (const b of breakpoints()) {
      if (b.bp.mode !== 'kprobe') continue;
      for (const s of b.sites) {
        if (!s.registered || siteDisabled(s) || s.kp.addr === undefined) continue;
        const at = syms.resolve(s.kp.addr);
        if (at && (sameSymbol(at.sym, h.sym) || (h.sym.module !== undefined && at.sym.module === h.sym.module))) return true;
      }
    }
    return false;
  };
  engine.onCpu.runHandlerOnCpu = (fn: bigint): boolean => cache.get(fn, generation(), kernel.image.symbols, find);
  engine.onCpu.debuggerReentry = (p: Kprobe, regs: PtRegs): boolean => {
    // inside a nested call nothing can stop: the hit stays a reentry
    if (p.addr === undefined || engine.nested.depth > 0) return false;
    const found = siteAt(breakpoints(), p.addr);
    if (!found) return false;
    const { bp, site } = found;
    const addr = p.addr;
    const cpu = regs.cpu.id;
    site.kp.hits = (site.kp.hits ?? 0) + 1;
    const env = (): ProbeHandlerEnv => new ProbeHandlerEnv({ kernel, engine, regs, kp: site.kp, beforeInsn: true, charge: bp.charge });
    if (evaluate(bp, env, cpu, () => whereOf(kernel.image, addr))) {
      const where = whereOf(kernel.image, addr);
      const outer = engine.percpu.ctlblk(cpu).current;
      const handled = outer?.addr !== undefined ? engine.describer.where(outer.addr) : 'a probe';
      bp.onStop({
        breakpointId: bp.id, probeId: site.kp.id ?? 0, mode: 'kprobe', cpu, addr, where, reportPc: addr, hitCount: bp.hits,
        description: `breakpoint at ${where}, in a kprobe handler (the kprobe at ${handled} is being handled)`,
      });
    }
    return true;
  };
}
