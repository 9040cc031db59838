/**
 * DAP breakpoints and the `_probe*` views <-> the machine's ProbeManager
 * (emulator/probes): source-line, function (`do_fork+0x4`, `r:sys_open`) and
 * instruction breakpoints become kprobes/kretprobes; conditions, hit
 * conditions and log messages are compiled by the handler language.
 */
import { readFileSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { Machine } from '../emulator/machine';
import { ProbeManager } from '../emulator/probes';
import type { BreakpointHit, BreakpointMode, ProbeEntry } from '../emulator/probes';
import { ProbeInfo, ProbeStateBody } from './dapCustom';
import { formatAddress, parseAddress } from './disassemble';
import { SourceMap } from './sourceMap';

/** DAP breakpoint modes offered to the client (Breakpoint.mode). */
export const BREAKPOINT_MODES: DebugProtocol.BreakpointMode[] = [
  { mode: 'kprobe', label: 'Kprobe', description: 'Stop when the instruction is reached (kprobe)', appliesTo: ['source', 'instruction'] },
  { mode: 'kretprobe', label: 'Kretprobe', description: 'Stop when the function returns (kretprobe)', appliesTo: ['instruction'] },
];

export interface ClientBreakpoint {
  line?: number;
  condition?: string;
  hitCondition?: string;
  logMessage?: string;
  mode?: string;
}

export class ProbeBridge {
  readonly mgr: ProbeManager;
  /** breakpoint ids per DAP source path / function / instruction set */
  private readonly bySource = new Map<string, number[]>();
  private functionIds: number[] = [];
  private instructionIds: number[] = [];
  /** last breakpoint hit per CPU (stopped event hitBreakpointIds) */
  private readonly lastHit = new Map<number, BreakpointHit>();
  private dirty = false;

  constructor(private readonly machine: Machine, private readonly sources: SourceMap, private readonly onChange: () => void) {
    this.mgr = ProbeManager.for(machine);
    this.mgr.onBreakpointHit(h => { this.lastHit.set(h.cpu, h); });
    this.mgr.engine.events.on(e => {
      if (e.type === 'hit' || e.type === 'missed') { this.dirty = true; return; }
      this.onChange();
    });
  }

  /** True (once) when hit counters changed since the last call. */
  takeDirty(): boolean {
    const d = this.dirty;
    this.dirty = false;
    return d;
  }

  hitFor(cpu: number): BreakpointHit | undefined { return this.lastHit.get(cpu); }
  clearHits(): void { this.lastHit.clear(); }

  /** Registers the probes of a .kprobe file; returns the lines to print (diagnostics, errors). */
  addProbeFile(path: string): string[] {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      return [`${path}: cannot read probe file: ${e instanceof Error ? e.message : String(e)}`];
    }
    const r = this.mgr.addProbeFile(text, path);
    return [
      ...r.diagnostics.map(d => `${path}:${d.line}:${d.column}: ${d.severity}: ${d.message}`),
      ...r.errors,
      `${path}: ${r.probes.filter(p => p.verified).length} of ${r.probes.length} probe(s) registered`,
    ];
  }

  setSourceBreakpoints(clientPath: string, bps: readonly ClientBreakpoint[]): DebugProtocol.Breakpoint[] {
    for (const id of this.bySource.get(clientPath) ?? []) this.mgr.remove(id);
    const file = this.dwarfFileFor(clientPath);
    const out: DebugProtocol.Breakpoint[] = [];
    const ids: number[] = [];
    for (const bp of bps) {
      const line = bp.line ?? 0;
      if (!file) {
        out.push({ verified: false, line, message: `no line information for ${clientPath} in the kernel image`, reason: 'failed' });
        continue;
      }
      let e = this.add(`${file}:${line}`, bp);
      if (!e.verified && e.nextLine !== undefined) {
        this.mgr.remove(e.id);
        e = this.add(`${file}:${e.nextLine}`, bp);
      }
      ids.push(e.id);
      out.push(this.toDap(e, clientPath));
    }
    this.bySource.set(clientPath, ids);
    this.onChange();
    return out;
  }

  setFunctionBreakpoints(bps: readonly (ClientBreakpoint & { name: string })[]): DebugProtocol.Breakpoint[] {
    for (const id of this.functionIds) this.mgr.remove(id);
    const entries = bps.map(bp => this.add(bp.name.trim(), bp));
    this.functionIds = entries.map(e => e.id);
    this.onChange();
    return entries.map(e => this.toDap(e));
  }

  setInstructionBreakpoints(bps: readonly (ClientBreakpoint & { instructionReference: string; offset?: number })[]): DebugProtocol.Breakpoint[] {
    for (const id of this.instructionIds) this.mgr.remove(id);
    const out: DebugProtocol.Breakpoint[] = [];
    this.instructionIds = [];
    for (const bp of bps) {
      let addr: bigint;
      try {
        addr = parseAddress(bp.instructionReference, 'instructionReference') + BigInt(bp.offset ?? 0);
      } catch (e) {
        out.push({ verified: false, message: e instanceof Error ? e.message : String(e), reason: 'failed' });
        continue;
      }
      const e = this.add(formatAddress(addr), bp);
      this.instructionIds.push(e.id);
      out.push(this.toDap(e));
    }
    this.onChange();
    return out;
  }

  private add(target: string, bp: ClientBreakpoint): ProbeEntry {
    const mode: BreakpointMode | undefined = bp.mode === 'kretprobe' ? 'kretprobe' : bp.mode === 'kprobe' ? 'kprobe' : undefined;
    return this.mgr.addBreakpoint({
      target, mode,
      condition: bp.condition, hitCondition: bp.hitCondition, logMessage: bp.logMessage,
    });
  }

  private toDap(e: ProbeEntry, clientPath?: string): DebugProtocol.Breakpoint {
    const site = e.sites.find(s => s.registered) ?? e.sites[0];
    const b: DebugProtocol.Breakpoint = { id: e.id, verified: e.verified };
    if (e.message) b.message = e.message;
    if (!e.verified) b.reason = 'failed';
    if (site?.addr !== undefined) b.instructionReference = formatAddress(site.addr);
    if (site?.source) {
      b.line = site.source.line;
      const local = clientPath ?? this.sources.toLocal(site.source.file);
      b.source = { path: local, name: local.split(/[\\/]/).pop() };
    }
    return b;
  }

  /** The DWARF file name that maps to a client path, if the image has line info for it. */
  private dwarfFileFor(clientPath: string): string | undefined {
    const files = this.machine.image.lines?.files() ?? [];
    return files.find(f => this.sources.same(clientPath, f));
  }

  // ---- views -----------------------------------------------------------------------

  state(): ProbeStateBody {
    const kprobes: ProbeInfo[] = this.mgr.list().map(e => this.info(e));
    return { kprobes, uprobes: [], enabled: this.mgr.kprobesEnabled, optimization: this.mgr.engine.optimization };
  }

  private info(e: ProbeEntry): ProbeInfo {
    const site = e.sites.find(s => s.registered) ?? e.sites[0];
    const flags = e.sites.map(s => s.flags).join('');
    const kind = e.kind === 'kretprobe' ? 'kretprobe' : 'kprobe';
    const where = site?.where ?? e.target;
    const p: ProbeInfo = {
      id: e.id,
      kind,
      name: kind === 'kretprobe' ? `r:${where}` : where,
      address: formatAddress(site?.addr ?? 0n),
      enabled: e.enabled,
      optimized: flags.includes('[OPTIMIZED]'),
      gone: flags.includes('[GONE]'),
      nhit: e.hits,
      nmissed: e.nmissed,
    };
    const sym = site?.addr !== undefined ? this.machine.image.symbols.resolve(site.addr) : undefined;
    if (sym) { p.symbol = sym.sym.name; p.offset = Number(sym.offset); }
    if (site?.source) p.source = { path: this.sources.toLocal(site.source.file), line: site.source.line };
    if (!e.verified && e.message) p.name += ` (${e.message})`;
    return p;
  }

  setEnabled(id: number, on: boolean): void {
    const err = this.mgr.setEnabled(id, on);
    if (err) throw new Error(err);
    this.onChange();
  }

  unregister(id: number): void {
    if (!this.mgr.remove(id)) throw new Error(`no probe with id ${id}`);
    for (const [k, ids] of this.bySource) this.bySource.set(k, ids.filter(x => x !== id));
    this.functionIds = this.functionIds.filter(x => x !== id);
    this.instructionIds = this.instructionIds.filter(x => x !== id);
    this.onChange();
  }

  setGlobalEnabled(on: boolean): void {
    const r = this.mgr.writeKprobesEnabled(on ? '1' : '0');
    if (r !== 0) throw new Error(`writing kprobes/enabled failed: ${r}`);
    this.onChange();
  }

  setOptimization(on: boolean): void {
    this.mgr.engine.setOptimization(on);
    this.onChange();
  }
}
