/**
 * The manager's debug-register probes (emulator/hwbp), as uprobeSite.ts is
 * its uprobes: a probe file's `kwatch` lines (register_kwatch), breakpoints
 * in mode 'hardware' (an execute debug register per site) and data
 * breakpoints (a data debug register). It builds and registers their
 * HwSites (hwProbes.ts), enables / disables them and shows them in the
 * lists; the manager keeps the probes, their ids and their breakpoint
 * runtimes, and delegates here.
 */
import type { ProbeSpec } from '../handlers';
import type { HwBreakpoints, Kwatches } from '../hwbp';
import type { KernelApi } from '../kernel/types';
import type { KprobesEngine } from '../kprobes';
import type { BreakpointRuntime } from './breakpoints';
import { DATA_ACCESS_TYPES, DebuggerHwSite, HwProbeContext, HwSite, KwatchSite, kwatchAddress, noDebugRegisters } from './hwProbes';
import type { HandlerFaultPolicy } from './invoke';
import type { ProbeEntry, ProbeSiteInfo } from './manager';
import { ProbeSite, whereOf } from './targets';

/** What addDataBreakpoint takes (DAP setDataBreakpoints, with the address and size dataTarget() found). */
export interface DataBreakpointRequest {
  addr: bigint;
  /** bytes (x86: 1, 2, 4, 8 aligned to the length; arm64: 1..8 inside an aligned doubleword) */
  len: number;
  /** DAP access type; 'read' only where the CPU can watch reads only (not x86: -EINVAL, use 'readWrite') */
  access: 'read' | 'write' | 'readWrite';
  condition?: string;
  hitCondition?: string;
  logMessage?: string;
  /** what the user watches ("boot_counter"): the list's target and the stop's description */
  label?: string;
  /** default true */
  enabled?: boolean;
}

/** The machine's debug registers, for kwatch lines, hardware and data breakpoints. */
export interface ProbeManagerHw {
  hwbp: HwBreakpoints;
  /** the machine's register_kwatch table (Machine.kwatch) */
  kwatch: () => Kwatches;
}

/** What a debug-register probe's HwSites came to: the sites (none: refused), and why some did not register. */
export interface HwProbeResult {
  hw?: HwSite[];
  message?: string;
}

/** The fields of a manager probe that its list entry shows. */
export type HwProbeHeader = Pick<ProbeEntry, 'id' | 'origin' | 'kind' | 'target' | 'targetKind' | 'file' | 'enabled' | 'message'>
  & { bp?: { hits: number } };

export class HwProbeSet {
  /** the context of the sites, or the reason there is none */
  private readonly ctx: HwProbeContext | string;

  constructor(private readonly kernel: KernelApi, hw: ProbeManagerHw | undefined, engine: KprobesEngine | null,
    opts: { handlerFaults?: HandlerFaultPolicy; charge?: (cpu: number, steps: number) => void }) {
    this.ctx = hw
      ? { kernel, hwbp: hw.hwbp, kwatch: hw.kwatch, engine: engine ?? undefined, handlerFaults: opts.handlerFaults, charge: opts.charge }
      : 'this machine has no debug registers';
  }

  /** whether the machine has debug registers (else every hw probe is refused) */
  get available(): boolean { return typeof this.ctx !== 'string'; }

  /**
   * A probe file's kwatch: register_kwatch(addr, len, type, body) when
   * `enabled`; the message "register_kwatch failed: -EINVAL (...)".
   * `disabled`: the probe is now disabled (a runaway body; its register is given back).
   */
  kwatch(spec: ProbeSpec, fileName: string, label: string, enabled: boolean, disabled: () => void): HwProbeResult {
    const ctx = this.ctx;
    if (typeof ctx === 'string') return { message: `register_kwatch failed: -ENODEV (${ctx})` };
    const addr = kwatchAddress(this.kernel, spec);
    if (typeof addr === 'string') return { message: addr };
    const site = new KwatchSite(ctx, addr, spec.attrs.len ?? 0, spec.attrs.type ?? 'w', spec.handlers.kwatch, label, fileName, () => {
      disabled();
      site.unregister();
    });
    return { hw: [site], message: enabled ? site.register() : undefined };
  }

  /** A breakpoint in mode 'hardware': an execute debug register per resolved site; nothing in memory changes. */
  hardware(bp: BreakpointRuntime, sites: readonly ProbeSite[], enabled: boolean): HwProbeResult {
    const ctx = this.ctx;
    if (typeof ctx === 'string') return { message: ctx };
    const none = noDebugRegisters(ctx.hwbp);
    if (none) return { message: none };
    const unknown = sites.find(s => s.resolved === undefined);
    if (unknown) return { message: `unknown symbol '${unknown.symbol_name ?? '?'}' in the image` };
    if (sites.some(s => s.addr !== undefined && s.symbol_name !== undefined)) return { message: 'a symbol and an address: give one of them' };
    // the execute length: the arch's smallest instruction (x86 1, arm64 4), as the debug registers take it
    const len = this.kernel.arch.minInsnLength;
    const hw = sites.map(s => new DebuggerHwSite(ctx, bp, 'hardware', s.resolved as bigint, len, 'x'));
    return { hw, message: enabled ? registerAll(hw) : undefined };
  }

  /**
   * A data breakpoint: a data debug register on [addr, addr+len), once
   * `compile` (the breakpoint's condition, hit condition and log message
   * into `bp`) has no error text.
   */
  data(req: DataBreakpointRequest, bp: BreakpointRuntime, enabled: boolean, compile: () => string | undefined): HwProbeResult {
    const ctx = this.ctx;
    if (typeof ctx === 'string') return { message: ctx };
    const type = DATA_ACCESS_TYPES[req.access];
    if (!type) return { message: `unknown access type '${String(req.access)}' (read, write or readWrite)` };
    const bad = compile();
    if (bad) return { message: bad };
    const site = new DebuggerHwSite(ctx, bp, 'data', BigInt.asUintN(64, req.addr), req.len, type, req.label);
    return { hw: [site], message: enabled ? site.register() : undefined };
  }

  /** A debug register has no disabled state: disable gives it back, enable takes one again (the error text). */
  setEnabled(hw: readonly HwSite[], on: boolean): string | undefined {
    if (!on) { for (const h of hw) h.unregister(); return undefined; }
    return registerAll(hw);
  }

  /** a debug-register probe as the lists show it: one site per register */
  snapshot(up: HwProbeHeader, hw: readonly HwSite[]): ProbeEntry {
    const image = this.kernel.image;
    const sites: ProbeSiteInfo[] = hw.map(h => {
      const w = h.watch();
      const line = up.kind === 'hardware' ? image.lines?.lineForAddress(w.addr) : undefined;
      return {
        addr: w.addr, where: whereOf(image, w.addr), source: line ? { file: line.file, line: line.line } : undefined,
        engineId: h instanceof DebuggerHwSite ? h.engineId : h.registered ? w.register : undefined,
        registered: h.registered, error: h.error, hits: h.hits, nmissed: h.nmissed,
        flags: !h.registered && !up.enabled ? '[DISABLED]' : w.suspended ? '[SUSPENDED]' : '',
      };
    });
    return {
      id: up.id, origin: up.origin, kind: up.kind, target: up.target, targetKind: up.targetKind, file: up.file,
      verified: hw.some(h => h.registered), enabled: up.enabled, message: up.message, sites,
      hits: sites.reduce((a, s) => a + s.hits, 0), nmissed: sites.reduce((a, s) => a + s.nmissed, 0),
      conditionHits: up.bp?.hits, watch: hw[0]?.watch(),
    };
  }
}

/** register every site; the errors joined, or undefined */
function registerAll(hw: readonly HwSite[]): string | undefined {
  const errs = hw.map(h => h.register()).filter((e): e is string => e !== undefined);
  return errs.length ? errs.join('; ') : undefined;
}
