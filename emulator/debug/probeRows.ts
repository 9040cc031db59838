/**
 * The Kprobes view's rows (`_probeState`): one ProbeInfo per registered
 * probe, as debugfs `kprobes/list` shows it, taken from the engine's list
 * entries (address, kindOf() k/r/j, symbol+offset, flags) plus the
 * ProbeManager's counters and the breakpoint ids the client knows.
 *
 * maxactive is read from the registered struct kretprobe
 * (engine.kretprobes.of(kp), Linux's container_of).
 */
import type { Kprobe } from '../kprobes';
import { KPROBE_FLAG_FTRACE, KPROBE_FLAG_GONE, KPROBE_FLAG_OPTIMIZED, kprobeDisabled } from '../kprobes';
import type { ProbeEntry, ProbeManager } from '../probes';
import type { DebugRegisterHolder, DebugRegisterInfo, HwProbeKind, KprobeKind, ModuleInfo, ProbeInfo, ProbeRowWarning, ProbeStateBody, UprobeInfo } from './rows';
import type { HwBp, HwBreakpoints } from '../hwbp';
import type { KernelModule } from '../kernel/modules/modules';
import { formatAddress } from './addresses';

const KIND_OF_LETTER: Readonly<Record<'k' | 'r' | 'j', KprobeKind>> = { k: 'kprobe', r: 'kretprobe', j: 'jprobe' };

export interface ProbeViewContext {
  mgr: ProbeManager;
  /** DWARF path -> path shown to the client */
  toLocal(file: string): string;
  /** the adapter-wide id of a manager probe (its DAP breakpoint id for a breakpoint) */
  idOf(probeId: number): number;
  /** the hit log's warning about an engine probe (missed hits), if any */
  warningOf?(engineId: number): ProbeRowWarning | undefined;
}

/** The warnings of the hit log keyed by probe id, for warningOf (per probe, the one with the most missed hits). */
export function warningsByProbe(ws: readonly { probeId: number; text: string; missed: number; suggestedMaxactive?: number }[]): Map<number, ProbeRowWarning> {
  const by = new Map<number, ProbeRowWarning>();
  for (const w of ws) {
    const have = by.get(w.probeId);
    if (have && have.missed >= w.missed) continue;
    const row: ProbeRowWarning = { text: w.text, missed: w.missed };
    if (w.suggestedMaxactive !== undefined) row.suggestedMaxactive = w.suggestedMaxactive;
    by.set(w.probeId, row);
  }
  return by;
}

/** The snapshot the views show: every user probe, one row per registered address. */
export function probeState(ctx: ProbeViewContext): ProbeStateBody {
  const entries = ctx.mgr.list();
  const uprobes = uprobeRows(ctx, entries.filter(e => e.user));
  if (!ctx.mgr.hasKprobes) return { kprobes: [], uprobes, enabled: false, optimization: false, unavailable: 'no kprobes engine on this machine' };
  const engine = ctx.mgr.engine;
  const byEngineId = new Map<number, { addr: bigint; probe: Kprobe; aggregate: Kprobe | null }>();
  for (const e of engine.probes.listEntries()) if (e.probe.id !== undefined) byEngineId.set(e.probe.id, e);
  const kprobes: ProbeInfo[] = [];
  for (const e of entries) if (!e.user) kprobes.push(...rowsOf(ctx, e, byEngineId));
  kprobes.push(...kernelCodeRows(ctx, entries));
  return { kprobes, uprobes, enabled: ctx.mgr.kprobesEnabled, optimization: engine.optimization };
}

/**
 * The probes the kernel's or a module's own C code registered
 * (register_kprobe & co., not the debugger's): as debugfs lists them, with
 * the module whose code registered them. Their id is the engine id
 * negated (the views' actions reach the engine's probe with it).
 */
function kernelCodeRows(ctx: ProbeViewContext, entries: readonly ProbeEntry[]): ProbeInfo[] {
  const engine = ctx.mgr.engine;
  const owned = new Set<number>();
  for (const e of entries) for (const s of e.sites) if (s.engineId !== undefined) owned.add(s.engineId);
  const byKp = new Map(engine.cApi.registered().map(c => [c.kp, c.guest] as const));
  const syms = engine.kernel.image.symbols;
  const rows: ProbeInfo[] = [];
  for (const { addr, probe, aggregate } of engine.probes.listEntries()) {
    if (probe.id === undefined || owned.has(probe.id)) continue;
    const kind = KIND_OF_LETTER[engine.probes.kindOf(probe)];
    const rp = kind === 'kretprobe' ? engine.kretprobes.of(probe) : undefined;
    const pfl = (aggregate ?? probe).flags ?? 0;
    const at = syms.resolve(addr);
    const where = at ? `${at.sym.name}+0x${at.offset.toString(16)}` : formatAddress(addr);
    const guest = byKp.get(probe) ?? (rp ? byKp.get(rp.kp) : undefined);
    const row: ProbeInfo = {
      id: -probe.id, engineId: probe.id, kind, registered: true,
      name: kind === 'kretprobe' ? `r:${where}` : kind === 'jprobe' ? `j:${where}` : where,
      address: formatAddress(addr), enabled: !kprobeDisabled(probe), gone: ((probe.flags ?? 0) & KPROBE_FLAG_GONE) !== 0,
      optimized: (pfl & KPROBE_FLAG_OPTIMIZED) !== 0, ftrace: (pfl & KPROBE_FLAG_FTRACE) !== 0,
      nhit: probe.hits ?? 0, nmissed: (probe.nmissed ?? 0) + (rp?.nmissed ?? 0),
      registeredBy: guest !== undefined ? syms.resolve(guest)?.sym.module ?? 'the kernel' : 'the kernel',
    };
    if (at) { row.symbol = at.sym.name; row.offset = safeOffset(at.offset); if (at.sym.module) row.module = at.sym.module; }
    if (rp?.maxactive !== undefined) row.maxactive = rp.maxactive;
    const warning = ctx.warningOf?.(probe.id);
    if (warning) row.warning = warning;
    const line = engine.kernel.image.lines?.lineForAddress(addr);
    if (line) row.source = { path: ctx.toLocal(line.file), line: line.line };
    rows.push(row);
  }
  return rows;
}

/**
 * The Uprobes view's rows: one per (inode, offset) (the uprobe_events
 * table), owned by the first user probe on it; its children are the
 * processes the breakpoint is inserted in, from the uprobes engine.
 */
function uprobeRows(ctx: ProbeViewContext, entries: readonly ProbeEntry[]): UprobeInfo[] {
  const rows = new Map<string, UprobeInfo>();
  const engine = ctx.mgr.uprobes;
  for (const e of entries) {
    const u = e.user as NonNullable<ProbeEntry['user']>;
    const key = `${e.kind}:${u.inode}:${u.offset}`;
    const have = rows.get(key);
    if (have && e.verified) { have.nhit += e.hits; continue; }
    const site = e.sites[0];
    const uprobe = e.verified && engine ? engine.list().find(x => x.inode.ino === u.inode && x.offset === u.offset) : undefined;
    const processes = [];
    for (const byVaddr of uprobe?.insertions.values() ?? []) {
      for (const ins of byVaddr.values()) {
        const copy = engine?.pages.copyAt(ins.mm, ins.vaddr) !== undefined;
        processes.push({ pid: ins.pid, comm: ins.comm, address: formatAddress(ins.vaddr), page: copy ? 'private copy of the file page' : 'file page', nhit: ins.hits });
      }
    }
    processes.sort((a, b) => a.pid - b.pid);
    const where = u.where ? `${u.path}:${u.where}` : `${u.path}:0x${u.offset.toString(16)}`;
    const row: UprobeInfo = {
      id: ctx.idOf(e.id), kind: e.kind === 'uretprobe' ? 'uretprobe' : 'uprobe', registered: e.verified,
      name: `${e.kind === 'uretprobe' ? 'r:' : ''}${u.event ?? where}${!e.verified && e.message ? ` (${e.message})` : ''}`,
      address: formatAddress(u.vaddr ?? 0n), enabled: e.enabled, gone: false, nhit: e.hits, nmissed: e.nmissed,
      inode: safeOffset(u.inode), offset: safeOffset(u.offset), path: u.path, consumers: uprobe?.consumers.length ?? 0, processes,
    };
    if (u.where) row.symbol = u.where;
    if (site?.source) row.source = { path: ctx.toLocal(site.source.file), line: site.source.line };
    rows.set(key, row);
  }
  return [...rows.values()];
}

function rowsOf(ctx: ProbeViewContext, e: ProbeEntry,
  byEngineId: ReadonlyMap<number, { addr: bigint; probe: Kprobe; aggregate: Kprobe | null }>): ProbeInfo[] {
  if (e.watch) return [debugRegisterRow(ctx, e, e.watch)];
  const engine = ctx.mgr.engine;
  const syms = engine.kernel.image.symbols;
  const rows: ProbeInfo[] = [];
  for (const site of e.sites) {
    const entry = site.engineId !== undefined ? byEngineId.get(site.engineId) : undefined;
    if (!site.registered || !entry) continue;
    const { addr, probe, aggregate } = entry;
    const kind = KIND_OF_LETTER[engine.probes.kindOf(probe)];
    const fl = probe.flags ?? 0;
    const pfl = (aggregate ?? probe).flags ?? 0;
    const gone = (fl & KPROBE_FLAG_GONE) !== 0;
    const at = syms.resolve(addr);
    const where = at ? `${at.sym.name}+0x${at.offset.toString(16)}` : formatAddress(addr);
    const row: ProbeInfo = {
      id: ctx.idOf(e.id), engineId: site.engineId, kind, registered: true,
      name: kind === 'kretprobe' ? `r:${where}` : kind === 'jprobe' ? `j:${where}` : where,
      address: formatAddress(addr),
      enabled: !kprobeDisabled(probe),
      gone,
      optimized: (pfl & KPROBE_FLAG_OPTIMIZED) !== 0,
      ftrace: (pfl & KPROBE_FLAG_FTRACE) !== 0,
      nhit: site.hits,
      nmissed: site.nmissed,
    };
    if (at) { row.symbol = at.sym.name; row.offset = safeOffset(at.offset); if (at.sym.module) row.module = at.sym.module; }
    if (kind === 'kretprobe') {
      const rp = engine.kretprobes.of(probe);
      if (rp?.maxactive !== undefined) row.maxactive = rp.maxactive;
    }
    const warning = site.engineId !== undefined ? ctx.warningOf?.(site.engineId) : undefined;
    if (warning) row.warning = warning;
    if (site.source) row.source = { path: ctx.toLocal(site.source.file), line: site.source.line };
    if (e.event) row.event = e.event;
    if (e.inHandler) row.inHandler = e.inHandler;
    rows.push(row);
  }
  if (rows.length) return rows;
  // not registered anywhere: one row saying why
  const site = e.sites[0];
  const kind: KprobeKind = e.kind === 'kretprobe' ? 'kretprobe' : e.kind === 'jprobe' ? 'jprobe' : 'kprobe';
  const where = site?.where ?? e.target;
  const row: ProbeInfo = {
    id: ctx.idOf(e.id), kind, registered: false,
    name: `${kind === 'kretprobe' ? 'r:' : kind === 'jprobe' ? 'j:' : ''}${where}${e.message ? ` (${e.message})` : ''}`,
    address: formatAddress(site?.addr ?? 0n),
    enabled: e.enabled, gone: false, optimized: false, ftrace: false,
    nhit: e.hits, nmissed: e.nmissed,
  };
  if (site?.source) row.source = { path: ctx.toLocal(site.source.file), line: site.source.line };
  if (e.event) row.event = e.event;
  return [row];
}

/** A kwatch, hardware or data breakpoint as a Kprobes row: its own letter, its debug register, no debugfs flags but [DISABLED]. */
function debugRegisterRow(ctx: ProbeViewContext, e: ProbeEntry, w: NonNullable<ProbeEntry['watch']>): ProbeInfo {
  const kind: HwProbeKind = e.kind === 'kwatch' ? 'kwatch' : e.kind === 'hardware' ? 'hardware' : 'watch';
  const at = ctx.mgr.kernel.image.symbols.resolve(w.addr);
  const site = e.sites[0];
  const what = `${w.type} len ${w.len}`;
  const row: ProbeInfo = {
    id: ctx.idOf(e.id), kind, registered: e.verified,
    name: e.verified ? `${w.label ?? (at ? `${at.sym.name}+0x${at.offset.toString(16)}` : formatAddress(w.addr))} (${w.registerName || 'no register'}, ${what}${w.suspended ? ', waiting for its register' : ''})`
      : `${e.target}${e.message ? ` (${e.message})` : ''}`,
    address: formatAddress(w.addr), enabled: e.enabled, gone: false, optimized: false, ftrace: false, nhit: e.hits, nmissed: e.nmissed,
    debugRegister: { name: w.registerName || undefined, addr: formatAddress(w.addr), len: w.len, type: w.type, suspended: w.suspended },
  };
  if (at) { row.symbol = at.sym.name; row.offset = safeOffset(at.offset); }
  if (site?.source) row.source = { path: ctx.toLocal(site.source.file), line: site.source.line };
  return row;
}

/** A symbol offset as a JS number (offsets inside one symbol are small; a huge one is clamped, never rounded silently). */
function safeOffset(off: bigint): number {
  return off <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(off) : Number.MAX_SAFE_INTEGER;
}

/** The Modules view's rows: lsmod plus the kprobes placed in each module's code (`probeAddrs`: every registered probe address). */
export function moduleRows(mods: readonly KernelModule[], probeAddrs: readonly bigint[]): ModuleInfo[] {
  return mods.map(m => {
    const inside = (a: bigint): boolean => (a >= m.core.lo && a < m.core.hi) || (!!m.init && !m.initFreed && a >= m.init.lo && a < m.init.hi);
    const row: ModuleInfo = {
      name: m.name, path: m.path, state: m.state, base: formatAddress(m.core.lo), size: Number(m.core.hi - m.core.lo),
      usedBy: [...m.usedBy].map(x => x.name), probesIn: new Set(probeAddrs.filter(inside)).size,
    };
    if (m.init && !m.initFreed) row.init = { base: formatAddress(m.init.lo), size: Number(m.init.hi - m.init.lo) };
    return row;
  });
}

/** The Debug Registers view's rows: every register of every CPU, its holder and the users waiting for it. */
export function debugRegisterRows(hw: HwBreakpoints, where: (addr: bigint) => string | undefined): DebugRegisterInfo[] {
  const holder = (b: HwBp): DebugRegisterHolder => ({
    owner: b.owner, addr: formatAddress(b.req.addr), where: where(b.req.addr), len: b.req.len, type: b.req.type, hits: b.hits, nmissed: b.nmissed,
  });
  return hw.registers().map(r => {
    const active = r.holders.length ? r.holders[r.holders.length - 1] : undefined;
    return {
      cpu: r.cpu, name: r.name, pool: r.pool, index: r.index,
      holder: active ? holder(active) : undefined,
      waiting: r.holders.slice(0, -1).map(holder),
    };
  });
}
