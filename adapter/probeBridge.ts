/**
 * DAP breakpoints and the `_probe*` views <-> the machine's ProbeManager
 * (emulator/probes): source-line, function (`do_fork+0x4`, `r:sys_open`) and
 * instruction breakpoints become kprobes/kretprobes with structured targets
 * (a file and line, a symbol, an address: no text is built to be parsed
 * again); conditions, hit conditions and log messages are compiled by the
 * handler language.
 *
 * DAP breakpoint ids are the adapter's own: they map to the manager's probe
 * ids, so a restart registers every breakpoint again on the new machine
 * under the same DAP id whatever ids the new manager hands out.
 */
import { SYSCTL_KPROBES_OPTIMIZATION } from '../emulator/kprobes';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { Machine } from '../emulator/machine';
import { ProbeManager } from '../emulator/probes';
import type { BreakpointHit, BreakpointMode, ProbeEntry } from '../emulator/probes';
import type { DataBreakpointRequest } from '../emulator/probes/manager';
import { parseBreakpointTarget } from '../emulator/probes';
import type { ProbeTarget } from '../emulator/handlers';
import { ProbeDebugfsBody, ProbeStateBody } from './dapCustom';
import { formatAddress, parseAddress } from './disassemble';
import { DebugMemory } from '../emulator/debug/memory';
import { probePatches, patchNotes } from '../emulator/debug/probePatches';
import { debugRegisterRows, moduleRows, probeState, warningsByProbe } from './probeView';
import { SourceMap } from './sourceMap';
import { ParkedBreakpoints } from './parkedBreakpoints';
import { UserPrograms } from '../emulator/debug/userPrograms';

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
  { mode: 'hardware', label: 'Hardware', description: 'Stop when the instruction is reached, with an execute debug register (nothing in memory is patched)', appliesTo: ['source', 'instruction', 'function'] },
];

/** The breakpoint mode a client's `mode` asks for (kprobe unless it names another). */
function modeOf(mode: string | undefined, fallback: BreakpointMode = 'kprobe'): BreakpointMode {
  return mode === 'kretprobe' || mode === 'hardware' || mode === 'kprobe' ? mode : fallback;
}

/** A data breakpoint's dataId: "0x<address>/<length>" (the watched bytes; valid across stops and sessions). */
export function dataIdOf(addr: bigint, len: number): string { return `${formatAddress(addr)}/${len}`; }

function parseDataId(id: string): { addr: bigint; len: number } | string {
  const m = /^(0x[0-9a-fA-F]+)\/([0-9]+)$/.exec(id);
  return m ? { addr: BigInt(m[1]), len: Number(m[2]) } : `bad dataId '${id}' (expected 0xADDRESS/LENGTH)`;
}

export interface ClientBreakpoint {
  line?: number;
  condition?: string;
  hitCondition?: string;
  logMessage?: string;
  mode?: string;
}

/** Run a step generator to its end (the synchronous form of the *Steps methods). */
export function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** How a breakpoint was asked for (to register it again after a restart). */
export interface BreakpointRecord {
  /** where, as the manager takes it */
  target: ProbeTarget;
  /** a kprobe_events definition as written (the manager parses it: its event, fetch args and mode) */
  definition?: string;
  mode: BreakpointMode;
  bp: ClientBreakpoint;
  group: { kind: 'source'; path: string; line: number } | { kind: 'function' } | { kind: 'instruction' } | { kind: 'data' };
  /** a data breakpoint: what the manager's addDataBreakpoint takes */
  data?: DataBreakpointRequest;
}

/** DAP breakpoint ids: handed out by the adapter, kept across restarts. */
export class BreakpointIds {
  private next = 1;
  private readonly toProbe = new Map<number, number>();
  private readonly toDap = new Map<number, number>();
  /** A new DAP id for a probe. */
  add(probeId: number): number { const id = this.next++; this.bind(id, probeId); return id; }
  /** The adapter id of a probe, handed out on first use (probe-file probes have one too: one id space for the views). */
  idOf(probeId: number): number { return this.toDap.get(probeId) ?? this.add(probeId); }
  /** Bind an existing DAP id to a (new) probe id. */
  bind(dapId: number, probeId: number): void {
    const old = this.toProbe.get(dapId);
    if (old !== undefined) this.toDap.delete(old);
    this.toProbe.set(dapId, probeId);
    this.toDap.set(probeId, dapId);
  }
  forget(dapId: number): void {
    const p = this.toProbe.get(dapId);
    if (p !== undefined) this.toDap.delete(p);
    this.toProbe.delete(dapId);
  }
  probeOf(dapId: number): number | undefined { return this.toProbe.get(dapId); }
  dapOf(probeId: number): number | undefined { return this.toDap.get(probeId); }
  /** Drop the probe side (a new machine): DAP ids are re-bound by restoreBreakpoints. */
  clearProbes(): void { this.toProbe.clear(); this.toDap.clear(); }
}

export class ProbeBridge {
  readonly mgr: ProbeManager;
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
  /** the user programs of the machine's filesystem (a breakpoint in their sources is a uprobe) */
  readonly userPrograms: UserPrograms;
  /** uprobe hits seen at the last takeDirty */
  private uprobeHits = 0;

  constructor(private readonly machine: Machine, private readonly sources: SourceMap, private readonly onChange: () => void,
    /** the session's DAP ids (outlive one machine) */
    readonly ids: BreakpointIds = new BreakpointIds()) {
    this.mgr = machine.probes;
    this.userPrograms = new UserPrograms(machine.kernel);
    this.mgr.onBreakpointHit(h => { this.lastHit.set(h.cpu, h); });
    if (this.mgr.hasKprobes) {
      this.mgr.engine.events.on(e => {
        if (e.type === 'hit' || e.type === 'missed') { this.dirty = true; return; }
        // a module's own kprobe came or went: breakpoints in its handlers change kind (their message says it)
        // (after the register call returned: the C API lists its probe then)
        if (e.type === 'registered' || e.type === 'unregistered') queueMicrotask(() => this.handlerKindsChanged());
        this.onChange();
      });
    }
    // processes mapping probed files come and go: the Uprobes view's children follow
    this.mgr.uprobes?.onChange(() => this.onChange());
    // modules come and go (init done, exit done): the Modules view follows; pending breakpoints may now resolve
    machine.onModulesChange(() => { this.retryPending(); this.onChange(); });
  }

  /** True (once) when hit counters changed since the last call. */
  takeDirty(): boolean {
    const st = this.mgr.uprobes?.stats;
    const uh = st ? st.hits + st.retHits : 0;
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
    const r = this.mgr.addProbeFile(text, path);
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
    const file = this.dwarfFileFor(clientPath);
    const out: DebugProtocol.Breakpoint[] = [];
    const ids: number[] = [];
    for (const bp of bps) {
      yield;
      const line = bp.line ?? 0;
      const back = this.unpark(`${clientPath}:${line}`, bp);
      if (back !== undefined) { ids.push(back); out.push(this.toDap(back, clientPath)); continue; }
      if (!file) {
        const user = this.userLine(clientPath, line, bp.mode === 'kretprobe');
        if (typeof user === 'string') {
          if (this.machine.loadedModules() !== undefined && !/^no code at /.test(user)) {
            // pending: a module loaded later may have this file (verified then, with a `breakpoint` event)
            const rec: BreakpointRecord = { target: { kind: 'line', file: clientPath, line }, mode: 'kprobe', bp, group: { kind: 'source', path: clientPath, line } };
            const id = this.register(rec);
            ids.push(id);
            out.push({ ...this.toDap(id, clientPath), line, message: `pending: no line information for ${clientPath.split(/[\\/]/).pop()} in the kernel, its programs or its loaded modules (verified when a module with it is loaded)` });
            continue;
          }
          out.push({ verified: false, line, message: user, reason: 'failed' });
          continue;
        }
        const mode: BreakpointMode = bp.mode === 'kretprobe' ? 'kretprobe' : 'kprobe';
        if (bp.mode === 'hardware') {
          out.push({ verified: false, line, message: 'hardware breakpoints are kernel breakpoints: a user program line takes a kprobe-mode breakpoint (a uprobe)', reason: 'failed' });
          continue;
        }
        const rec: BreakpointRecord = { target: user.target, mode, bp, group: { kind: 'source', path: clientPath, line: user.line } };
        const id = this.register(rec);
        ids.push(id);
        out.push(this.toDap(id, clientPath));
        continue;
      }
      if (bp.mode === 'kretprobe') {
        const fn = this.functionAtLine(file, line);
        if (!fn) {
          out.push({ verified: false, line, message: `no code at ${clientPath.split(/[\\/]/).pop()}:${line} (or below it) for a kretprobe`, reason: 'failed' });
          continue;
        }
        const rec: BreakpointRecord = { target: { kind: 'symbol', name: fn, offset: 0n }, mode: 'kretprobe', bp, group: { kind: 'source', path: clientPath, line } };
        const id = this.register(rec);
        ids.push(id);
        // the probe sits at the function entry; the breakpoint stays on the line the user chose
        out.push({ ...this.toDap(id, clientPath), line });
        continue;
      }
      const rec: BreakpointRecord = { target: { kind: 'line', file, line }, mode: modeOf(bp.mode), bp, group: { kind: 'source', path: clientPath, line } };
      let e = this.add(rec);
      if (!e.verified && e.nextLine !== undefined) {
        this.mgr.remove(e.id);
        rec.target = { kind: 'line', file, line: e.nextLine };
        rec.group = { kind: 'source', path: clientPath, line: e.nextLine };
        e = this.add(rec);
      }
      const id = this.ids.add(e.id);
      this.records.set(id, rec);
      ids.push(id);
      out.push(this.toDap(id, clientPath));
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
      // user text: "do_fork", "do_fork+0x4", "r:sys_open", "0xffffffff81000010", or a kprobe_events definition
      // ("p:myopen sys_open path=+0(%di):string": traces, never stops), checked against the image's registers and symbols
      const symbols = this.machine.kernel.image.symbols;
      const t = parseBreakpointTarget(bp.name, this.machine.kernel.arch, n => symbols.lookup(n) !== undefined);
      if (typeof t === 'string') {
        out.push({ verified: false, message: t, reason: 'failed' });
        continue;
      }
      // an event's mode is its definition's (p or r)
      const mode: BreakpointMode = t.event ? t.mode ?? 'kprobe' : modeOf(bp.mode, t.mode ?? 'kprobe');
      const id = this.register({ target: t.target, definition: t.event ? bp.name : undefined, mode, bp, group: { kind: 'function' } });
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
      const id = this.register({ target: { kind: 'address', addr }, mode: modeOf(bp.mode), bp, group: { kind: 'instruction' } });
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
    this.mgr.setEnabled(p, true);
    return id;
  }

  private forget(dapId: number): void {
    this.parking.forget(dapId);
    const p = this.ids.probeOf(dapId);
    if (p !== undefined) this.mgr.remove(p);
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

  /**
   * A source line of a user program in the machine's filesystem (its DWARF
   * names the file) as a uprobe target: the program's path and the file
   * offset of the line's (or the next line's) code; why not, otherwise.
   */
  private userLine(clientPath: string, line: number, ret: boolean): { target: ProbeTarget; line: number } | string {
    const name = clientPath.split(/[\\/]/).pop();
    if (!this.mgr.uprobes) return `no line information for ${clientPath} in the kernel image`;
    const found = this.userPrograms.programFor(f => this.sources.same(clientPath, f));
    if (!found) return `no line information for ${clientPath} in the kernel image or in a program of the machine's filesystem`;
    const site = this.userPrograms.lineSite(found.program, found.file, line);
    if (!site) return `no code at ${name}:${line} (or below it) in ${found.program.path}`;
    if (ret) {
      // a uretprobe on the function holding the line (its entry)
      const fn = found.program.image.symbols.resolve(site.vaddr);
      if (!fn || fn.sym.type !== 'func') return `no function holds ${name}:${line} in ${found.program.path} for a return breakpoint`;
      return { target: { kind: 'user', path: found.program.path, symbol: fn.sym.name, symOffset: 0n }, line };
    }
    return { target: { kind: 'user', path: found.program.path, offset: site.offset }, line: site.line };
  }

  /**
   * DAP dataBreakpointInfo: what a data breakpoint on `expression` (a
   * variable's C name, `&sym`, `*(u32 *)0x...`) or on `bytes` at an address
   * would watch, and the access kinds the CPU's debug registers can watch
   * (x86: no read-only watch).
   */
  dataBreakpointInfo(expression: string, asAddress: boolean, bytes?: number): DebugProtocol.DataBreakpointInfoResponse['body'] {
    const hw = this.machine.hwbp;
    if (hw.unavailable) return { dataId: null, description: `data breakpoints need debug registers: ${hw.unavailable}` };
    let t: { addr: bigint; len: number; description: string } | string;
    if (asAddress) {
      let addr: bigint | undefined;
      try { addr = parseAddress(expression.trim(), 'address'); } catch (e) { t = e instanceof Error ? e.message : String(e); }
      t ??= { addr: addr as bigint, len: bytes ?? 1, description: `${bytes ?? 1} byte(s) at ${expression.trim()}` };
    } else {
      t = this.mgr.dataTarget(expression);
      if (typeof t !== 'string' && bytes !== undefined) t = { ...t, len: bytes };
    }
    if (typeof t === 'string') return { dataId: null, description: t };
    const bad = hw.validate({ addr: t.addr, len: t.len, type: 'w' });
    if (bad) return { dataId: null, description: `${t.description}: the debug registers cannot watch it: ${bad.reason}` };
    const accessTypes: DebugProtocol.DataBreakpointAccessType[] = hw.validate({ addr: t.addr, len: t.len, type: 'r' }) ? ['write', 'readWrite'] : ['read', 'write', 'readWrite'];
    return { dataId: dataIdOf(t.addr, t.len), description: t.description, accessTypes, canPersist: true };
  }

  /** DAP setDataBreakpoints: replaces every data breakpoint (each one debug register, on every CPU). */
  setDataBreakpoints(bps: readonly DebugProtocol.DataBreakpoint[]): DebugProtocol.Breakpoint[] {
    for (const id of this.dataIds) this.forget(id);
    this.dataIds = [];
    const out = bps.map(bp => {
      const w = parseDataId(bp.dataId);
      if (typeof w === 'string') return { verified: false, message: w, reason: 'failed' as const };
      const where = this.machine.kernel.image.symbols.resolve(w.addr);
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
    const n = this.mgr.engine.cApi.registered().length;
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
      const file = this.dwarfFileFor(g.path);
      if (!file) continue;
      this.mgr.remove(e.id);
      rec.target = { kind: 'line', file, line: g.line };
      let ne = this.add(rec);
      if (!ne.verified && ne.nextLine !== undefined) {
        this.mgr.remove(ne.id);
        rec.target = { kind: 'line', file, line: ne.nextLine };
        ne = this.add(rec);
      }
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
    const present = new Set(this.mgr.list('breakpoint').map(e => e.id));
    const kept = new Set<number>();
    const again: [number, BreakpointRecord][] = [];
    for (const [dapId, rec] of [...this.records].sort((a, b) => a[0] - b[0])) {
      const p = this.ids.probeOf(dapId);
      if (p !== undefined && present.has(p)) kept.add(p);
      else again.push([dapId, rec]);
    }
    for (const id of present) if (!kept.has(id)) this.mgr.remove(id);
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
      if (this.parking.isDisabled(dapId)) this.mgr.setEnabled(e.id, false);
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
    return p === undefined ? undefined : this.mgr.get(p);
  }

  private add(rec: BreakpointRecord): ProbeEntry {
    if (rec.data) return this.mgr.addDataBreakpoint(rec.data);
    const bp = rec.bp;
    return this.mgr.addBreakpoint({
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
    // the hit log's missed-hit warnings on the kprobes' rows (uprobe and watchpoint ids are other engines')
    const warnings = warningsByProbe(this.machine.hitLog.warnings().filter(w => w.kind !== 'uprobe' && w.kind !== 'uretprobe' && w.kind !== 'watchpoint'));
    const st = probeState({ mgr: this.mgr, toLocal: f => this.sources.toLocal(f), idOf: p => this.ids.idOf(p), warningOf: id => warnings.get(id) });
    const mods = this.machine.loadedModules();
    if (mods) st.modules = moduleRows(mods, this.mgr.hasKprobes ? this.mgr.engine.listEntries().map(e => e.addr) : []);
    const hw = this.machine.hwbp;
    if (hw.unavailable) st.debugRegistersUnavailable = hw.unavailable;
    else {
      st.debugRegisters = debugRegisterRows(hw, a => this.machine.kernel.image.symbols.format(a, false));
      st.debugRegisterValues = hw.values().map(v => ({ cpu: v.cpu, name: v.name, value: formatAddress(v.value) }));
    }
    return st;
  }

  /** /sys/kernel/debug/kprobes/{list,enabled} as the engine prints them. */
  debugfs(): ProbeDebugfsBody {
    return { list: this.mgr.debugfsList(), enabled: this.mgr.kprobesEnabled ? '1\n' : '0\n' };
  }

  /** Memory as the debugger reads it: probed code with its original bytes, writes over probes refused. */
  /** Kernel memory as the client sees it (debug facade): probed code reads as its original bytes. */
  memoryView(): DebugMemory {
    return DebugMemory.of(this.machine);
  }

  /** Notes for `disassemble`: what the probes wrote over an instruction. */
  disassemblyNotes(): (addr: bigint, len: number) => string[] {
    // execute debug registers: nothing in memory shows them, the note does
    const hwExec = this.machine.hwbp.list().filter(b => b.req.type === 'x' && b.active);
    const hwNotes = (addr: bigint, len: number): string[] =>
      hwExec.filter(b => b.req.addr >= addr && b.req.addr < addr + BigInt(len)).map(b => `hardware breakpoint (${b.registerName}, ${b.owner})`);
    if (!this.mgr.hasKprobes) return hwNotes;
    const patches = probePatches(this.mgr.engine, this.machine.arch);
    const arch = this.machine.arch;
    let bp = 'breakpoint';
    try { bp = arch.decodeBytes(arch.breakpointInsn, 0n)?.mnemonic ?? bp; } catch { /* keep the generic word */ }
    return (addr, len) => [...patchNotes(patches, addr, len, bp), ...hwNotes(addr, len)];
  }

  /** The manager's probe id behind an adapter id; a clear error when there is none. */
  private probeIdOf(id: number): number {
    const p = this.ids.probeOf(id);
    if (p === undefined) throw new Error(`no probe with id ${id}`);
    return p;
  }

  setEnabled(id: number, on: boolean): void {
    if (id < 0) { this.setKernelProbeEnabled(-id, on); return; }
    const err = this.mgr.setEnabled(this.probeIdOf(id), on);
    if (err) throw new Error(err);
    // a breakpoint's probe: the extension unticks (ticks) the breakpoint next; an unticked one stays registered, disabled
    if (this.records.has(id)) this.parking.setDisabled(id, !on);
    this.onChange();
  }

  /** enable_kprobe / disable_kprobe on a probe the kernel's or a module's code registered (its row's id: the engine id negated) */
  private setKernelProbeEnabled(engineId: number, on: boolean): void {
    const e = this.mgr.hasKprobes ? this.mgr.engine.listEntries().find(x => x.probe.id === engineId) : undefined;
    if (!e) throw new Error(`no probe with id ${-engineId}`);
    const r = on ? this.mgr.engine.enableKprobe(e.probe) : this.mgr.engine.disableKprobe(e.probe);
    if (r !== 0) throw new Error(`${on ? 'enable' : 'disable'}_kprobe failed: ${r}`);
    this.onChange();
  }

  unregister(id: number): void {
    if (id < 0) throw new Error('this probe was registered by the kernel\'s or a module\'s own code: that code unregisters it (unload the module)');
    if (!this.mgr.remove(this.probeIdOf(id))) throw new Error(`no probe with id ${id}`);
    this.parking.forget(id);
    this.ids.forget(id);
    this.records.delete(id);
    for (const [k, ids] of this.bySource) this.bySource.set(k, ids.filter(x => x !== id));
    this.functionIds = this.functionIds.filter(x => x !== id);
    this.instructionIds = this.instructionIds.filter(x => x !== id);
    this.onChange();
  }

  /** insmod from the Modules view: loaded now (the init runs when the machine runs); a refusal is the error */
  loadModule(file: string, params: readonly string[]): void {
    const abs = resolvePath(file);
    const bytes = new Uint8Array(readFileSync(abs));
    this.machine.modules.load(bytes, abs, params, err => { if (err) this.onModuleError?.(`insmod ${file}: ${err}`); });
    this.onChange();
  }

  /** rmmod from the Modules view: the exit runs when the machine runs; a refusal is the error */
  unloadModule(name: string): void {
    const err = this.machine.modules.unload(name, e => { if (e) this.onModuleError?.(`rmmod ${name}: ${e}`); });
    if (err) throw new Error(err);
    this.onChange();
  }

  /** where a module's later failure (its init returned an error) is reported (the session's console) */
  onModuleError?: (line: string) => void;

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
