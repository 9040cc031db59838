/**
 * DAP breakpoints <-> the debug target's probes: source-line, function
 * (`do_fork+0x4`, `r:sys_open`, a kprobe_events definition), instruction and
 * data breakpoints become probes through the target's one breakpoint
 * resolver (emulator/debug/resolver.ts: where, in which mode, or why not);
 * conditions, hit conditions and log messages are compiled by the handler
 * language. The bridge keeps the mapping between DAP breakpoint ids and
 * probe ids (adapter/breakpointIds.ts) and encodes probes as DAP
 * breakpoints.
 *
 * DAP breakpoint ids are the adapter's own: they map to the manager's probe
 * ids, so a restart registers every breakpoint again on the new machine
 * under the same DAP id whatever ids the new manager hands out.
 */
import { readFileSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { formatAddress, parseAddress } from '../emulator/debug/index';
import type { BreakpointHit, DataBreakpointRequest, DebugProbes, DebugTarget, ProbeEntry } from '../emulator/debug/index';
import { BreakpointIds, drain, parseDataId } from './breakpointIds';
import type { BreakpointRecord, ClientBreakpoint } from './breakpointIds';
import { ParkedBreakpoints } from './parkedBreakpoints';

export class ProbeBridge {
  readonly probes: DebugProbes;
  /** breakpoint requests by DAP id */
  private readonly records = new Map<number, BreakpointRecord>();
  /** DAP breakpoint ids per DAP source path / function / instruction set */
  private readonly bySource = new Map<string, number[]>();
  private functionIds: number[] = [];
  private instructionIds: number[] = [];
  /** DAP ids of the data breakpoints (setDataBreakpoints replaces them all) */
  private dataIds: number[] = [];
  /** last breakpoint hit per CPU (stopped event hitBreakpointIds) */
  private readonly lastHit = new Map<number, BreakpointHit>();
  private dirty = false;
  /** uprobe hits seen at the last takeDirty */
  private uprobeHits = 0;

  constructor(private readonly target: DebugTarget, private readonly onChange: () => void,
    /** the session's DAP ids (outlive one machine) */
    readonly ids: BreakpointIds = new BreakpointIds()) {
    this.probes = target.probes;
    this.probes.onBreakpointHit(h => { this.lastHit.set(h.cpu, h); });
    target.onProbeChange(what => {
      if (what === 'counters') { this.dirty = true; return; }
      // a module's own kprobe came or went: breakpoints in its handlers change kind (their message says it)
      if (what === 'kernelProbes') { this.handlerKindsChanged(); return; }
      this.onChange();
    });
    // modules come and go (init done, exit done): the Modules view follows; pending breakpoints may now resolve
    target.onModulesChange(() => { this.retryPending(); this.onChange(); });
  }

  /** True (once) when hit counters changed since the last call. */
  takeDirty(): boolean {
    const uh = this.target.uprobeHits();
    const d = this.dirty || uh !== this.uprobeHits;
    this.uprobeHits = uh;
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
    const r = this.probes.addProbeFile(text, path);
    for (const e of r.probes) this.ids.idOf(e.id);
    return [
      ...r.diagnostics.map(d => `${path}:${d.line}:${d.column}: ${d.severity}: ${d.message}`),
      ...r.errors,
      `${path}: ${r.probes.filter(p => p.verified).length} of ${r.probes.length} probe(s) registered`,
    ];
  }

  setSourceBreakpoints(clientPath: string, bps: readonly ClientBreakpoint[]): DebugProtocol.Breakpoint[] {
    return drain(this.setSourceBreakpointsSteps(clientPath, bps));
  }

  /** setSourceBreakpoints one breakpoint at a time: yields after each removal and each registration */
  *setSourceBreakpointsSteps(clientPath: string, bps: readonly ClientBreakpoint[]): Generator<void, DebugProtocol.Breakpoint[]> {
    const parked = this.parking.park(this.bySource.get(clientPath) ?? [], id => {
      const g = this.records.get(id)?.group;
      return g?.kind === 'source' ? `${clientPath}:${g.line}` : undefined;
    }, bps.map(b => `${clientPath}:${b.line ?? 0}`));
    for (const id of this.bySource.get(clientPath) ?? []) { if (!parked.has(id)) this.forget(id); yield; }
    this.bySource.delete(clientPath);
    const out: DebugProtocol.Breakpoint[] = [];
    const ids: number[] = [];
    for (const bp of bps) {
      yield;
      const line = bp.line ?? 0;
      const back = this.unpark(`${clientPath}:${line}`, bp);
      if (back !== undefined) { ids.push(back); out.push(this.toDap(back, clientPath)); continue; }
      const r = this.target.placeBreakpoint({ kind: 'source', path: clientPath, line, mode: bp.mode }, bp);
      if (!r.ok) {
        if (!r.pending) { out.push({ verified: false, line, message: r.message, reason: 'failed' }); continue; }
        // pending: a module loaded later may have this file (verified then, with a `breakpoint` event)
        const id = this.placed(r.pending.entry, { target: r.pending.target, mode: 'kprobe', bp, group: { kind: 'source', path: clientPath, line } });
        ids.push(id);
        out.push({ ...this.toDap(id, clientPath), line, message: r.message });
        continue;
      }
      const id = this.placed(r.entry, { target: r.target, mode: r.mode, bp, group: { kind: 'source', path: clientPath, line: r.line ?? line } });
      ids.push(id);
      // a kretprobe sits at the function entry; the breakpoint stays on the line the user chose
      out.push(r.keepsLine ? { ...this.toDap(id, clientPath), line } : this.toDap(id, clientPath));
    }
    this.bySource.set(clientPath, ids);
    this.onChange();
    return out;
  }

  setFunctionBreakpoints(bps: readonly (ClientBreakpoint & { name: string })[]): DebugProtocol.Breakpoint[] {
    return drain(this.setFunctionBreakpointsSteps(bps));
  }

  /** setFunctionBreakpoints one breakpoint at a time: yields after each removal and each registration */
  *setFunctionBreakpointsSteps(bps: readonly (ClientBreakpoint & { name: string })[]): Generator<void, DebugProtocol.Breakpoint[]> {
    const old = this.functionIds;
    this.functionIds = [];
    const parked = this.parking.park(old, id => this.parking.functionKeyOf(id), bps.map(b => ParkedBreakpoints.functionKey(b.name)));
    for (const id of old) { if (!parked.has(id)) this.forget(id); yield; }
    const out: DebugProtocol.Breakpoint[] = [];
    for (const bp of bps) {
      yield;
      const back = this.unpark(ParkedBreakpoints.functionKey(bp.name), bp);
      if (back !== undefined) { this.functionIds.push(back); out.push(this.toDap(back)); continue; }
      const r = this.target.placeBreakpoint({ kind: 'function', text: bp.name, mode: bp.mode }, bp);
      if (!r.ok) {
        out.push({ verified: false, message: r.message, reason: 'failed' });
        continue;
      }
      const id = this.placed(r.entry, { target: r.target, definition: r.definition, mode: r.mode, bp, group: { kind: 'function' } });
      this.functionIds.push(id);
      this.parking.setFunctionKey(id, bp.name);
      out.push(this.toDap(id));
    }
    this.onChange();
    return out;
  }

  setInstructionBreakpoints(bps: readonly (ClientBreakpoint & { instructionReference: string; offset?: number })[]): DebugProtocol.Breakpoint[] {
    return drain(this.setInstructionBreakpointsSteps(bps));
  }

  /** setInstructionBreakpoints one breakpoint at a time: yields after each removal and each registration */
  *setInstructionBreakpointsSteps(bps: readonly (ClientBreakpoint & { instructionReference: string; offset?: number })[]): Generator<void, DebugProtocol.Breakpoint[]> {
    const old = this.instructionIds;
    this.instructionIds = [];
    for (const id of old) { this.forget(id); yield; }
    const out: DebugProtocol.Breakpoint[] = [];
    for (const bp of bps) {
      yield;
      let addr: bigint;
      try {
        addr = parseAddress(bp.instructionReference, 'instructionReference') + BigInt(bp.offset ?? 0);
      } catch (e) {
        out.push({ verified: false, message: e instanceof Error ? e.message : String(e), reason: 'failed' });
        continue;
      }
      const r = this.target.placeBreakpoint({ kind: 'instruction', addr, mode: bp.mode }, bp);
      if (!r.ok) { out.push({ verified: false, message: r.message, reason: 'failed' }); continue; }
      const id = this.placed(r.entry, { target: r.target, mode: r.mode, bp, group: { kind: 'instruction' } });
      this.instructionIds.push(id);
      out.push(this.toDap(id));
    }
    this.onChange();
    return out;
  }

  /** breakpoints the Kprobes view disabled and the client dropped (parkedBreakpoints.ts) */
  private readonly parking = new ParkedBreakpoints();

  /** A breakpoint the client sends again where a parked one is (ticked again): that one, enabled; undefined if none (or it changed). */
  private unpark(key: string, bp: ClientBreakpoint): number | undefined {
    const id = this.parking.take(key);
    if (id === undefined) return undefined;
    const rec = this.records.get(id);
    const p = this.ids.probeOf(id);
    const same = rec && rec.bp.condition === bp.condition && rec.bp.hitCondition === bp.hitCondition && rec.bp.logMessage === bp.logMessage
      && (bp.mode === undefined || bp.mode === rec.mode);
    if (!same || p === undefined) { this.forget(id); return undefined; }
    this.parking.setDisabled(id, false);
    this.probes.setEnabled(p, true);
    return id;
  }

  private forget(dapId: number): void {
    this.parking.forget(dapId);
    const p = this.ids.probeOf(dapId);
    if (p !== undefined) this.probes.remove(p);
    this.ids.forget(dapId);
    this.records.delete(dapId);
  }

  /** Register a breakpoint under a new DAP id. */
  private register(rec: BreakpointRecord): number {
    const e = this.add(rec);
    const id = this.ids.add(e.id);
    this.records.set(id, rec);
    return id;
  }

  /** A breakpoint the target placed: a new DAP id for its probe, and how it was asked for (to register it again). */
  private placed(entry: ProbeEntry, rec: BreakpointRecord): number {
    const id = this.ids.add(entry.id);
    this.records.set(id, rec);
    return id;
  }

  /** DAP setDataBreakpoints: replaces every data breakpoint (each one debug register, on every CPU). */
  setDataBreakpoints(bps: readonly DebugProtocol.DataBreakpoint[]): DebugProtocol.Breakpoint[] {
    for (const id of this.dataIds) this.forget(id);
    this.dataIds = [];
    const out = bps.map(bp => {
      const w = parseDataId(bp.dataId);
      if (typeof w === 'string') return { verified: false, message: w, reason: 'failed' as const };
      const where = this.target.image.symbols.resolve(w.addr);
      const data: DataBreakpointRequest = {
        addr: w.addr, len: w.len, access: bp.accessType ?? 'write', condition: bp.condition, hitCondition: bp.hitCondition,
        label: where ? `${where.sym.name}${where.offset ? `+0x${where.offset.toString(16)}` : ''}` : formatAddress(w.addr),
      };
      const id = this.register({ target: { kind: 'address', addr: w.addr }, mode: 'kprobe', bp: {}, group: { kind: 'data' }, data });
      this.dataIds.push(id);
      return this.toDap(id);
    });
    this.onChange();
    return out;
  }

  /** C-registered probes seen at the last handlerKindsChanged */
  private cProbes = 0;

  /** The probes C code registered changed in number: `breakpoint` events for the breakpoints whose kind message changed. */
  private handlerKindsChanged(): void {
    const n = this.target.kernelProbeCount();
    if (n === this.cProbes) return;
    this.cProbes = n;
    const changed: DebugProtocol.Breakpoint[] = [];
    for (const [dapId, rec] of this.records) {
      const e = this.entryOf(dapId);
      if (!e?.verified || rec.mode !== 'kprobe' || rec.data) continue;
      const was = this.kindMessages.get(dapId);
      const now = e.inHandler;
      if (was === now) continue;
      if (now === undefined) this.kindMessages.delete(dapId); else this.kindMessages.set(dapId, now);
      const g = rec.group;
      changed.push(this.toDap(dapId, g.kind === 'source' ? g.path : undefined));
    }
    if (changed.length) this.onBreakpointsChanged?.(changed);
  }

  /** the handler-code message last sent per DAP id */
  private readonly kindMessages = new Map<number, string>();

  /** breakpoints whose verification changed (a module loaded or unloaded): the session sends `breakpoint` events */
  onBreakpointsChanged?: (bps: DebugProtocol.Breakpoint[]) => void;

  /**
   * A module was loaded or unloaded: source breakpoints not verified yet are
   * registered again where a loaded module's line table now has their file
   * (Linux's deferred probes: the DAP `breakpoint` event reports them
   * verified); breakpoints whose probe became [GONE] are reported unverified.
   */
  private retryPending(): void {
    const changed: DebugProtocol.Breakpoint[] = [];
    for (const [dapId, rec] of this.records) {
      const e = this.entryOf(dapId);
      const g = rec.group;
      if (!e) continue;
      if (e.verified && e.sites.some(x => x.flags.includes('[GONE]'))) {
        changed.push({ ...this.toDap(dapId, g.kind === 'source' ? g.path : undefined), verified: false, reason: 'failed',
          message: 'the module holding this code was unloaded: the probe is [GONE]' });
        continue;
      }
      if (e.verified || g.kind !== 'source' || rec.target.kind !== 'line') continue;
      const r = this.target.resolveBreakpoint({ kind: 'source', path: g.path, line: g.line, mode: rec.mode });
      if (!r.ok || r.target.kind !== 'line') continue;
      this.probes.remove(e.id);
      rec.target = r.target;
      const ne = this.add(rec);
      this.ids.bind(dapId, ne.id);
      changed.push(this.toDap(dapId, g.path));
    }
    if (changed.length) this.onBreakpointsChanged?.(changed);
  }

  /**
   * Time travel discarded the recorded future from a point in the past: the
   * machine has the probes of that moment. Make them the breakpoints the
   * client has now by the difference alone, as a run that made these changes
   * at this point would: a breakpoint whose probe the machine has at this
   * point keeps it (its hit counts, its slot, its boost), a probe no
   * breakpoint has any more is removed, a breakpoint added since is
   * registered again under its DAP id (a `breakpoint` changed event).
   * Bindings name probes of the recorded run only (every binding made in a
   * discarded future is made again here), so a probe id the machine has is
   * the probe the breakpoint was bound to.
   */
  resyncAfterTimeTravel(): void {
    const present = new Set(this.probes.list('breakpoint').map(e => e.id));
    const kept = new Set<number>();
    const again: [number, BreakpointRecord][] = [];
    for (const [dapId, rec] of [...this.records].sort((a, b) => a[0] - b[0])) {
      const p = this.ids.probeOf(dapId);
      if (p !== undefined && present.has(p)) kept.add(p);
      else again.push([dapId, rec]);
    }
    for (const id of present) if (!kept.has(id)) this.probes.remove(id);
    // stale bindings first: a probe registered below may get the id one of them names
    for (const [dapId] of again) this.ids.forget(dapId);
    const changed: DebugProtocol.Breakpoint[] = [];
    for (const [dapId, rec] of again) {
      this.ids.bind(dapId, this.add(rec).id);
      const g = rec.group;
      const b = this.toDap(dapId, g.kind === 'source' ? g.path : undefined);
      changed.push(g.kind === 'source' && rec.mode === 'kretprobe' ? { ...b, line: g.line } : b);
    }
    if (changed.length) this.onBreakpointsChanged?.(changed);
  }

  /** The breakpoint requests behind the live breakpoints, by DAP id (ascending). */
  breakpointRecords(): [number, BreakpointRecord][] {
    return [...this.records].filter(([id]) => this.entryOf(id) !== undefined).sort((a, b) => a[0] - b[0]);
  }

  /**
   * Register the breakpoints of a previous machine's bridge again (restart)
   * under their DAP ids. Returns the DAP breakpoints (for `breakpoint`
   * changed events).
   */
  restoreBreakpoints(records: readonly [number, BreakpointRecord][]): DebugProtocol.Breakpoint[] {
    const breakpoints: DebugProtocol.Breakpoint[] = [];
    for (const [dapId, rec] of records) {
      const e = this.add(rec);
      this.ids.bind(dapId, e.id);
      if (this.parking.isDisabled(dapId)) this.probes.setEnabled(e.id, false);
      this.records.set(dapId, rec);
      const g = rec.group;
      if (g.kind === 'source') {
        this.bySource.set(g.path, [...(this.bySource.get(g.path) ?? []), dapId]);
        const b = this.toDap(dapId, g.path);
        breakpoints.push({ ...b, line: rec.mode === 'kretprobe' ? g.line : b.line });
      } else {
        if (g.kind === 'function') this.functionIds.push(dapId);
        else if (g.kind === 'data') this.dataIds.push(dapId);
        else this.instructionIds.push(dapId);
        breakpoints.push(this.toDap(dapId));
      }
    }
    this.onChange();
    return breakpoints;
  }

  /** The manager's entry behind a DAP breakpoint id. */
  entryOf(dapId: number): ProbeEntry | undefined {
    const p = this.ids.probeOf(dapId);
    return p === undefined ? undefined : this.probes.get(p);
  }

  private add(rec: BreakpointRecord): ProbeEntry {
    if (rec.data) return this.probes.addDataBreakpoint(rec.data);
    const bp = rec.bp;
    return this.probes.addBreakpoint({
      target: rec.definition ?? rec.target, mode: rec.mode,
      condition: bp.condition, hitCondition: bp.hitCondition, logMessage: bp.logMessage,
    });
  }

  private toDap(dapId: number, clientPath?: string): DebugProtocol.Breakpoint {
    const e = this.entryOf(dapId);
    if (!e) return { id: dapId, verified: false, message: 'the breakpoint was removed', reason: 'failed' };
    const site = e.sites.find(s => s.registered) ?? e.sites[0];
    const b: DebugProtocol.Breakpoint = { id: dapId, verified: e.verified };
    if (e.message) b.message = e.message;
    else if (e.event && e.verified) b.message = `trace event ${e.event}: each hit prints its trace line to the Debug Console; it never stops`;
    else if (e.inHandler && e.verified) {
      b.message = `debugger breakpoint in kprobe handler code (${e.inHandler}): it stops inside the handler, as kgdb's breakpoints do, instead of being a reentered kprobe; elsewhere it is a kprobe`;
    }
    if (!e.verified) b.reason = 'failed';
    if (site?.addr !== undefined) b.instructionReference = formatAddress(site.addr);
    if (site?.source) {
      b.line = site.source.line;
      const local = clientPath ?? this.target.sources.toLocal(site.source.file);
      b.source = { path: local, name: local.split(/[\\/]/).pop() };
    }
    return b;
  }

  /** A snapshot of the views' rows with the adapter's ids and the client's paths. */
  rows(): ReturnType<DebugTarget['probeRows']> {
    return this.target.probeRows({ toLocal: f => this.target.sources.toLocal(f), idOf: p => this.ids.idOf(p) });
  }

  /** The manager's probe id behind an adapter id; a clear error when there is none. */
  private probeIdOf(id: number): number {
    const p = this.ids.probeOf(id);
    if (p === undefined) throw new Error(`no probe with id ${id}`);
    return p;
  }

  setEnabled(id: number, on: boolean): void {
    // a probe the kernel's or a module's code registered: its row's id is the engine id negated
    if (id < 0) { this.target.setKernelProbeEnabled(-id, on); this.onChange(); return; }
    const err = this.probes.setEnabled(this.probeIdOf(id), on);
    if (err) throw new Error(err);
    // a breakpoint's probe: the extension unticks (ticks) the breakpoint next; an unticked one stays registered, disabled
    if (this.records.has(id)) this.parking.setDisabled(id, !on);
    this.onChange();
  }

  unregister(id: number): void {
    if (id < 0) throw new Error('this probe was registered by the kernel\'s or a module\'s own code: that code unregisters it (unload the module)');
    if (!this.probes.remove(this.probeIdOf(id))) throw new Error(`no probe with id ${id}`);
    this.parking.forget(id);
    this.ids.forget(id);
    this.records.delete(id);
    for (const [k, ids] of this.bySource) this.bySource.set(k, ids.filter(x => x !== id));
    this.functionIds = this.functionIds.filter(x => x !== id);
    this.instructionIds = this.instructionIds.filter(x => x !== id);
    this.onChange();
  }
}
