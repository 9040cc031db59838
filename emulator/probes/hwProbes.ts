/**
 * Probes on debug registers (emulator/hwbp), as the manager lists them:
 *
 *   kwatch        a .kprobe file's `kwatch SYM len=N type=T { body }`:
 *                 register_kwatch() (lowest priority: a debugger breakpoint
 *                 may take its register; it waits, suspended, and gets it
 *                 back), the body runs as the kwatch_handler_t;
 *   hardware      a debugger breakpoint in mode 'hardware': an execute
 *                 debug register at the resolved address (no byte of the
 *                 code changes), stopping before the instruction;
 *   watch         a debugger data breakpoint: a data debug register,
 *                 stopping after the access with the old and new value.
 *
 * One HwSite per debug register. disable = the register is given back
 * (unregister), enable = registered again (its number may change); hits
 * and nmissed add up across registrations. Handler faults of a kwatch body
 * take the HandlerFaultPolicy path (invoke.ts) through the registration's
 * fault callback; breakpoint conditions and log messages fault as they do
 * for kprobe breakpoints (breakpoints.ts: a console line).
 */
import type { CompiledHandler, HandlerFault, HandlerWatchInfo, KwatchTypeName, ProbeSpec } from '../handlers';
import { HW_BREAKPOINT_R, HW_BREAKPOINT_W, HW_BREAKPOINT_X } from '../handlers';
import type { HwBp, HwBpHit, HwBreakpoints, HwBpType, Kwatches } from '../hwbp';
import { errnoName, Errno } from '../kernel/abi';
import type { KernelApi } from '../kernel/types';
import type { KprobesEngine } from '../kprobes';
import { hex } from '../memory/address';
import { BreakpointHit, BreakpointRuntime, evaluate } from './breakpoints';
import { ProbeHandlerEnv } from './env';
import { DEFAULT_HANDLER_FAULTS, FaultGate, HandlerFaultPolicy, oopsForHandlerFault, runInProbe } from './invoke';
import { RunawayWatch } from './runaway';
import { whereOf } from './targets';

/** What the manager gives the debug-register probes. */
export interface HwProbeContext {
  kernel: KernelApi;
  hwbp: HwBreakpoints;
  /** the machine's register_kwatch table (created on first use) */
  kwatch: () => Kwatches;
  /** the kprobes engine (calls into the image, dump_stack), when the machine has one */
  engine?: KprobesEngine;
  handlerFaults?: HandlerFaultPolicy;
  charge?: (cpu: number, steps: number) => void;
}

/** A debug-register probe's register and what it watches, for the lists. */
export interface WatchInfo {
  /** the debug register number (register_kwatch's return value; -1 while not registered) */
  register: number;
  /** "DR1", "DBGWVR0_EL1" ('' while not registered) */
  registerName: string;
  addr: bigint;
  len: number;
  type: HwBpType;
  /** a higher-priority user (the debugger) holds the register: the kwatch waits for it */
  suspended: boolean;
  /** the watched expression as the user gave it (data breakpoints) */
  label?: string;
}

/** One registration on a debug register, as the manager drives it. */
export interface HwSite {
  readonly registered: boolean;
  /** register (again); the error text, or undefined when registered */
  register(): string | undefined;
  unregister(): void;
  readonly hits: number;
  readonly nmissed: number;
  /** why the last registration failed */
  readonly error?: string;
  watch(): WatchInfo;
}

/** 'read' | 'write' | 'exec' -> HW_BREAKPOINT_R / _W / _X */
export function accessCode(a: HwBpHit['access']): number {
  return a === 'read' ? HW_BREAKPOINT_R : a === 'write' ? HW_BREAKPOINT_W : HW_BREAKPOINT_X;
}

/** little-endian bytes -> unsigned integer */
export function bytesValue(b: Uint8Array | undefined): bigint | undefined {
  if (!b) return undefined;
  let v = 0n;
  for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]);
  return v;
}

function watchInfoOf(hit: HwBpHit, debugreg: number): HandlerWatchInfo {
  return {
    debugreg, addr: hit.addr, access: accessCode(hit.access),
    old: bytesValue(hit.oldValue) ?? 0n, new: bytesValue(hit.newValue) ?? 0n,
  };
}

/** "-EINVAL: reason" (Kwatches.lastError) -> "-EINVAL (reason)" */
function errnoText(errno: number, lastError: string): string {
  const m = /^-\w+: (.*)$/s.exec(lastError);
  return `-${errnoName(-errno)}${m ? ` (${m[1]})` : lastError ? ` (${lastError})` : ''}`;
}

/**
 * What both kinds of HwSite share: the HwBp while registered, hits and
 * nmissed summed across registrations, unregister() and watch(); a
 * subclass registers, and says how its register is given back and numbered.
 */
abstract class HwSiteBase implements HwSite {
  error?: string;
  protected bp?: HwBp;
  private pastHits = 0;
  private pastMissed = 0;

  constructor(protected readonly ctx: HwProbeContext, readonly addr: bigint, readonly len: number, readonly type: HwBpType) {}

  get registered(): boolean { return this.bp !== undefined; }
  get hits(): number { return this.pastHits + (this.bp?.hits ?? 0); }
  get nmissed(): number { return this.pastMissed + (this.bp?.nmissed ?? 0); }

  abstract register(): string | undefined;
  /** give the register back (unregister_kwatch, HwBreakpoints.unregister) */
  protected abstract release(bp: HwBp): void;
  /** the register number the lists show while registered */
  protected abstract registerNumber(bp: HwBp): number;

  unregister(): void {
    if (!this.bp) return;
    this.pastHits += this.bp.hits;
    this.pastMissed += this.bp.nmissed;
    this.release(this.bp);
    this.bp = undefined;
  }

  watch(): WatchInfo {
    return {
      register: this.bp ? this.registerNumber(this.bp) : -1, registerName: this.bp?.registerName ?? '', addr: this.addr, len: this.len,
      type: this.type, suspended: this.bp ? !this.bp.active : false,
    };
  }
}

// ---------------------------------------------------------------- kwatch

/** The address a kwatch target names, or the registration error text. */
export function kwatchAddress(kernel: KernelApi, spec: ProbeSpec): bigint | string {
  const t = spec.target;
  if (t.kind === 'address') return t.addr;
  if (t.kind === 'symbol') {
    const s = kernel.image.symbols.lookup(t.name);
    if (!s) return `register_kwatch failed: -ENOENT (unknown symbol '${t.name}' in the image)`;
    return BigInt.asUintN(64, s.value + t.offset);
  }
  return `register_kwatch failed: -EINVAL (a kwatch watches a symbol or an address, not ${t.kind === 'line' ? 'a source line' : 'a user program'})`;
}

/**
 * A probe file's kwatch: register_kwatch(addr, len, type, handler) with the
 * body as the handler; `label` names it in messages
 * ("x.kprobe:3:1: kwatch boot_counter").
 */
export class KwatchSite extends HwSiteBase {
  debugreg = -1;
  private readonly gate = new FaultGate();
  private readonly runaway = new RunawayWatch();

  constructor(ctx: HwProbeContext, addr: bigint, len: number, type: KwatchTypeName,
    private readonly body: CompiledHandler | undefined, private readonly label: string, private readonly fileName: string,
    /** disable the probe (the manager's setEnabled), for a runaway body */
    private readonly disable: () => void) {
    super(ctx, addr, len, type);
  }

  register(): string | undefined {
    if (this.bp) return undefined;
    const kw = this.ctx.kwatch();
    const r = kw.register_kwatch(this.addr, this.len, this.type, k => this.run(k.hit, k.debugreg), (hit, err) => this.fault(hit, err));
    if (r < 0) {
      this.error = `register_kwatch failed: ${errnoText(r, kw.lastError)}`;
      return this.error;
    }
    this.debugreg = r;
    this.bp = kw.get(r);
    this.error = undefined;
    return undefined;
  }

  protected release(): void { this.ctx.kwatch().unregister_kwatch(this.debugreg); }
  protected registerNumber(): number { return this.debugreg; }

  private run(hit: HwBpHit, debugreg: number): void {
    if (!this.body) return;
    const env = new ProbeHandlerEnv({
      kernel: this.ctx.kernel, engine: this.ctx.engine, regs: hit.regs, charge: this.ctx.charge,
      watch: watchInfoOf(hit, debugreg), beforeInsn: hit.access === 'exec',
    });
    runInProbe(this.body, env, this.gate);
    this.runaway.completed();
  }

  /**
   * The registration's fault callback: a parked handler fault under the
   * policy (budget faults and 'report': a console line, handled; 'oops':
   * the CPU oopses naming the body's file:line:col). True: handled (the
   * hw-breakpoint core then does nothing more).
   */
  private fault(hit: HwBpHit, err: unknown): boolean {
    const pending = this.gate.take();
    if (!pending) return false;
    const f = pending.fault;
    const text = this.faultText(hit, f);
    const policy = this.ctx.handlerFaults ?? DEFAULT_HANDLER_FAULTS;
    if (f.kind === 'budget' || policy === 'report') {
      this.ctx.kernel.printk(hit.cpu.id, text, 'emulator');
      if (f.kind !== 'budget') this.runaway.completed();
      else if (this.runaway.budgetFault()) {
        this.ctx.kernel.printk(hit.cpu.id, `kwatch on ${this.where()} disabled: its handler exceeded its step budget on ${this.runaway.limit} hits in a row (${this.label})`, 'emulator');
        this.disable();
      }
      return true;
    }
    void err;
    this.runaway.completed();
    oopsForHandlerFault(this.ctx.kernel, hit.cpu, f, text);
    return true;
  }

  private where(): string { return whereOf(this.ctx.kernel.image, this.addr); }

  /** "x.kprobe:7:5: kwatch body of kwatch boot_counter faulted at read_boot_counter+0x7 (DR0 write to boot_counter+0x0): <what>" */
  private faultText(hit: HwBpHit, f: HandlerFault): string {
    const pc = whereOf(this.ctx.kernel.image, hit.regs.cpu.getPc());
    return `${this.fileName}:${f.line}:${f.column}: kwatch body of ${this.label.replace(/^.*?: (kwatch .*)$/, '$1')} faulted at ${pc} `
      + `(${hit.registerName} ${hit.access} of ${whereOf(this.ctx.kernel.image, hit.addr)}): ${f.message}`;
  }
}

// ----------------------------------------------------- debugger breakpoints

/** DAP data breakpoint access types -> debug-register watch types */
export const DATA_ACCESS_TYPES: Readonly<Record<'read' | 'write' | 'readWrite', HwBpType>> = { read: 'r', write: 'w', readWrite: 'rw' };

/**
 * A debugger breakpoint on a debug register: 'hardware' (execute, stop
 * before the instruction) or 'data' (stop after the access). The
 * breakpoint's condition, hit condition and log message decide, as for a
 * kprobe breakpoint (breakpoints.ts evaluate()).
 */
export class DebuggerHwSite extends HwSiteBase {
  constructor(ctx: HwProbeContext, private readonly rt: BreakpointRuntime, readonly mode: 'hardware' | 'data',
    addr: bigint, len: number, type: HwBpType, readonly label?: string) {
    super(ctx, addr, len, type);
  }

  /** the HwBp's id while registered (BreakpointHit.probeId) */
  get engineId(): number | undefined { return this.bp?.id; }

  register(): string | undefined {
    if (this.bp) return undefined;
    const r = this.ctx.hwbp.register('debugger', { addr: this.addr, len: this.len, type: this.type }, { handler: hit => this.onHit(hit) });
    if ('errno' in r) {
      this.error = `${this.mode === 'data' ? 'data breakpoint' : 'hardware breakpoint'} refused: -${errnoName(-r.errno)} (${r.reason})`;
      return this.error;
    }
    this.bp = r;
    this.error = undefined;
    return undefined;
  }

  protected release(bp: HwBp): void { this.ctx.hwbp.unregister(bp); }
  protected registerNumber(bp: HwBp): number { return bp.index; }

  override watch(): WatchInfo { return { ...super.watch(), label: this.label }; }

  private onHit(hit: HwBpHit): void {
    const { kernel } = this.ctx;
    const rt = this.rt;
    const cpu = hit.cpu.id;
    const image = kernel.image;
    const env = (): ProbeHandlerEnv => new ProbeHandlerEnv({
      kernel, engine: this.ctx.engine, regs: hit.regs, charge: rt.charge, beforeInsn: hit.access === 'exec', watch: watchInfoOf(hit, hit.register),
    });
    if (!evaluate(rt, env, cpu, () => whereOf(image, hit.addr))) return;
    const probeId = hit.bp.id;
    if (this.mode === 'hardware') {
      const where = whereOf(image, hit.addr);
      rt.onStop({
        breakpointId: rt.id, probeId, mode: 'hardware', cpu, addr: hit.addr, where, reportPc: hit.addr, hitCount: rt.hits,
        registerName: hit.registerName, access: 'exec',
        description: `hardware breakpoint (${hit.registerName}) at ${where}`,
      });
      return;
    }
    const oldValue = bytesValue(hit.oldValue), newValue = bytesValue(hit.newValue);
    const access = hit.access === 'exec' ? 'read' : hit.access;
    const what = this.label ?? whereOf(image, this.addr);
    const pc = hit.regs.cpu.getPc();
    const values = newValue === undefined ? '' : `: ${oldValue === undefined ? '?' : oldValue.toString()} -> ${newValue.toString()}`;
    const stop: BreakpointHit = {
      breakpointId: rt.id, probeId, mode: 'data', cpu, addr: hit.addr, where: whereOf(image, pc), reportPc: pc, hitCount: rt.hits,
      registerName: hit.registerName, access, accessAddr: hit.addr, watchAddr: this.addr, len: this.len, oldValue, newValue,
      description: `watchpoint ${hit.registerName} hit: ${access} ${access === 'write' ? 'to' : 'of'} ${what} (${hex(hit.addr)})${values}`,
    };
    rt.onStop(stop);
  }
}

/** -ENODEV text where the CPU has no debug registers (riscv64), for breakpoints that need them */
export function noDebugRegisters(hwbp: HwBreakpoints): string | undefined {
  const why = hwbp.unavailable;
  return why ? `hardware breakpoints need debug registers: -${errnoName(Errno.ENODEV)} (${why})` : undefined;
}
