/**
 * DAP breakpoints and the `_probe*` views <-> the machine's ProbeManager
 * (emulator/probes): source-line, function (`do_fork+0x4`, `r:sys_open`) and
 * instruction breakpoints become kprobes/kretprobes; conditions, hit
 * conditions and log messages are compiled by the handler language.
 */
import { SYSCTL_KPROBES_OPTIMIZATION } from '../emulator/kprobes';
import { readFileSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { Machine } from '../emulator/machine';
import { ProbeManager } from '../emulator/probes';
import type { BreakpointHit, BreakpointMode, ProbeEntry } from '../emulator/probes';
import { ProbeDebugfsBody, ProbeStateBody } from './dapCustom';
import { formatAddress, parseAddress } from './disassemble';
import type { MemoryView } from './memoryAccess';
import { probePatches, patchNotes } from './probePatches';
import { probeState } from './probeView';
import { SourceMap } from './sourceMap';

/**
 * DAP breakpoint modes offered to the client (Breakpoint.mode). `function`
 * is not one of DAP's named applicabilities (source, exception, data,
 * instruction) but the protocol allows any string; it documents that
 * function breakpoints take the same modes (also written `r:name`).
 * A kretprobe on a source line probes the function containing the line.
 */
export const BREAKPOINT_MODES: DebugProtocol.BreakpointMode[] = [
  { mode: 'kprobe', label: 'Kprobe', description: 'Stop when the instruction is reached (kprobe)', appliesTo: ['source', 'instruction', 'function'] },
  { mode: 'kretprobe', label: 'Kretprobe', description: 'Stop when the function returns (kretprobe on the function containing the line)', appliesTo: ['source', 'instruction', 'function'] },
];

export interface ClientBreakpoint {
  line?: number;
  condition?: string;
  hitCondition?: string;
  logMessage?: string;
  mode?: string;
}

/** How a breakpoint was asked for (to register it again after a restart). */
export interface BreakpointRecord {
  target: string;
  bp: ClientBreakpoint;
  group: { kind: 'source'; path: string; line: number } | { kind: 'function' } | { kind: 'instruction' };
}

export class ProbeBridge {
  readonly mgr: ProbeManager;
  /** breakpoint requests by ProbeManager id */
  private readonly records = new Map<number, BreakpointRecord>();
  /** breakpoint ids per DAP source path / function / instruction set */
  private readonly bySource = new Map<string, number[]>();
  private functionIds: number[] = [];
  private instructionIds: number[] = [];
  /** last breakpoint hit per CPU (stopped event hitBreakpointIds) */
  private readonly lastHit = new Map<number, BreakpointHit>();
  private dirty = false;

  constructor(private readonly machine: Machine, private readonly sources: SourceMap, private readonly onChange: () => void) {
    this.mgr = machine.probes;
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
    for (const id of this.bySource.get(clientPath) ?? []) this.forget(id);
    const file = this.dwarfFileFor(clientPath);
    const out: DebugProtocol.Breakpoint[] = [];
    const ids: number[] = [];
    for (const bp of bps) {
      const line = bp.line ?? 0;
      if (!file) {
        out.push({ verified: false, line, message: `no line information for ${clientPath} in the kernel image`, reason: 'failed' });
        continue;
      }
      if (bp.mode === 'kretprobe') {
        const fn = this.functionAtLine(file, line);
        const e = fn ? this.add(`r:${fn}`, bp) : undefined;
        if (!e) {
          out.push({ verified: false, line, message: `no code at ${clientPath.split(/[\\/]/).pop()}:${line} (or below it) for a kretprobe`, reason: 'failed' });
          continue;
        }
        this.records.set(e.id, { target: `r:${fn}`, bp, group: { kind: 'source', path: clientPath, line } });
        ids.push(e.id);
        // the probe sits at the function entry; the breakpoint stays on the line the user chose
        out.push({ ...this.toDap(e, clientPath), line });
        continue;
      }
      let target = `${file}:${line}`;
      let e = this.add(target, bp);
      if (!e.verified && e.nextLine !== undefined) {
        this.mgr.remove(e.id);
        target = `${file}:${e.nextLine}`;
        e = this.add(target, bp);
      }
      this.records.set(e.id, { target, bp, group: { kind: 'source', path: clientPath, line: e.nextLine ?? line } });
      ids.push(e.id);
      out.push(this.toDap(e, clientPath));
    }
    this.bySource.set(clientPath, ids);
    this.onChange();
    return out;
  }

  setFunctionBreakpoints(bps: readonly (ClientBreakpoint & { name: string })[]): DebugProtocol.Breakpoint[] {
    for (const id of this.functionIds) this.forget(id);
    const entries = bps.map(bp => {
      const e = this.add(bp.name.trim(), bp);
      this.records.set(e.id, { target: bp.name.trim(), bp, group: { kind: 'function' } });
      return e;
    });
    this.functionIds = entries.map(e => e.id);
    this.onChange();
    return entries.map(e => this.toDap(e));
  }

  setInstructionBreakpoints(bps: readonly (ClientBreakpoint & { instructionReference: string; offset?: number })[]): DebugProtocol.Breakpoint[] {
    for (const id of this.instructionIds) this.forget(id);
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
      this.records.set(e.id, { target: formatAddress(addr), bp, group: { kind: 'instruction' } });
      this.instructionIds.push(e.id);
      out.push(this.toDap(e));
    }
    this.onChange();
    return out;
  }

  private forget(id: number): void {
    this.mgr.remove(id);
    this.records.delete(id);
  }

  /** The function symbol whose code holds a source line (or the next line with code). */
  private functionAtLine(file: string, line: number): string | undefined {
    const lines = this.machine.image.lines;
    if (!lines) return undefined;
    let addrs = lines.addressesForLine(file, line);
    if (!addrs.length) {
      const next = lines.nextLineWithCode(file, line);
      if (next !== undefined) addrs = lines.addressesForLine(file, next);
    }
    const at = addrs.length ? this.machine.image.symbols.resolve(addrs[0]) : undefined;
    return at?.sym.name;
  }

  /** The breakpoint requests behind the live breakpoints, by id (ascending). */
  breakpointRecords(): [number, BreakpointRecord][] {
    return [...this.records].filter(([id]) => this.mgr.get(id) !== undefined).sort((a, b) => a[0] - b[0]);
  }

  /**
   * Register the breakpoints of a previous machine's bridge again (restart),
   * under the same ids when the manager's id sequence allows it (ids are
   * handed out in order: the gaps left by removed probes are skipped by
   * registering and removing a placeholder). Returns the DAP breakpoints
   * (for `breakpoint` changed events) and the ids that could not be kept.
   */
  restoreBreakpoints(records: readonly [number, BreakpointRecord][]): { breakpoints: DebugProtocol.Breakpoint[]; moved: number[] } {
    const breakpoints: DebugProtocol.Breakpoint[] = [];
    const moved: number[] = [];
    for (const [oldId, rec] of records) {
      let e = this.add(rec.target, rec.bp);
      if (e.id < oldId) {
        this.mgr.remove(e.id);
        // placeholders (an empty target is refused before anything is registered) use up the ids in between
        for (let next = e.id + 1; next < oldId;) {
          const d = this.mgr.addBreakpoint({ target: '' });
          this.mgr.remove(d.id);
          next = d.id + 1;
        }
        e = this.add(rec.target, rec.bp);
      }
      if (e.id !== oldId) moved.push(oldId);
      this.records.set(e.id, rec);
      const g = rec.group;
      if (g.kind === 'source') {
        this.bySource.set(g.path, [...(this.bySource.get(g.path) ?? []), e.id]);
        breakpoints.push({ ...this.toDap(e, g.path), line: rec.bp.mode === 'kretprobe' ? g.line : this.toDap(e, g.path).line });
      } else {
        if (g.kind === 'function') this.functionIds.push(e.id); else this.instructionIds.push(e.id);
        breakpoints.push(this.toDap(e));
      }
    }
    this.onChange();
    return { breakpoints, moved };
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
    return probeState({ mgr: this.mgr, toLocal: f => this.sources.toLocal(f) });
  }

  /** /sys/kernel/debug/kprobes/{list,enabled} as the engine prints them. */
  debugfs(): ProbeDebugfsBody {
    return { list: this.mgr.debugfsList(), enabled: this.mgr.kprobesEnabled ? '1\n' : '0\n' };
  }

  /** Memory as the debugger reads it: probed code with its original bytes, writes over probes refused. */
  memoryView(): MemoryView {
    const engine = this.mgr.engine;
    const mem = this.machine.kernel.mem;
    return {
      mem,
      readOriginal: (a, n) => engine.readTextWithoutProbes(mem, a, n),
      patches: () => probePatches(engine, this.machine.arch),
    };
  }

  /** Notes for `disassemble`: what the probes wrote over an instruction. */
  disassemblyNotes(): (addr: bigint, len: number) => string[] {
    const patches = probePatches(this.mgr.engine, this.machine.arch);
    const arch = this.machine.arch;
    let bp = 'breakpoint';
    try { bp = arch.decodeBytes(arch.breakpointInsn, 0n)?.mnemonic ?? bp; } catch { /* keep the generic word */ }
    return (addr, len) => patchNotes(patches, addr, len, bp);
  }

  setEnabled(id: number, on: boolean): void {
    const err = this.mgr.setEnabled(id, on);
    if (err) throw new Error(err);
    this.onChange();
  }

  unregister(id: number): void {
    if (!this.mgr.remove(id)) throw new Error(`no probe with id ${id}`);
    this.records.delete(id);
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

  /** sysctl -w debug.kprobes_optimization=0|1, through the kernel's sysctl table */
  setOptimization(on: boolean): void {
    const r = this.machine.writeSysctl(SYSCTL_KPROBES_OPTIMIZATION, on ? '1' : '0');
    if (r.errno !== 0) throw new Error(`sysctl ${SYSCTL_KPROBES_OPTIMIZATION} failed: ${r.reason}`);
    this.onChange();
  }
}
