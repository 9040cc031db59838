/**
 * The Kprobes, Uprobes and Modules views' rows on the full-system PC: the
 * guest kernel's own state (emulator/system/guest/, read out of guest
 * memory through the vmlinux's DWARF types) in the row shapes the
 * emulated-kernel machine's views take (rows.ts), so the extension shows
 * both the same way.
 *
 *   kprobes  one row per probe the guest's debugfs kprobes/list prints, in
 *            its order: address, symbol+offset, module, [GONE] [DISABLED]
 *            [OPTIMIZED] [FTRACE], nmissed (a kretprobe's own nmissed
 *            added), maxactive; a kprobe_events probe names its event and
 *            counts its hits (the event's per-CPU nhit); the debugger's own
 *            probes (registered by the agent) count the hits it saw
 *   uprobes  one row per struct uprobe (uprobes_tree order)
 *   modules  the guest's module list (state, core/init areas, users)
 *   enabled / optimization  kprobes_all_disarmed / kprobes_allow_optimization (what the
 *            sysctl debug.kprobes-optimization reads back)
 */
import type { GuestKernel, GuestSnapshot } from '../system/guest/guestKernel';
import type { GuestKprobe } from '../system/guest/kprobes';
import { formatAddress } from './addresses';
import type { ModuleInfo, ProbeInfo, ProbeStateBody, UprobeInfo } from './rows';

/** what the rows add of the debugger's own probes (those the agent registered) */
export interface DebuggerProbe {
  /** the DAP breakpoint id */
  readonly id: number;
  /** the guest's struct kprobe (the agent's reply) */
  readonly kprobe: bigint;
  readonly hits: number;
  /** the breakpoint's source line */
  readonly source?: { path: string; line: number };
}

export function linuxProbeState(g: GuestKernel, s: GuestSnapshot, mine: readonly DebuggerProbe[] = []): ProbeStateBody {
  const byKp = new Map(mine.map(p => [p.kprobe, p] as const));
  const events = new Map<bigint, { name: string; hits: bigint }>();
  for (const e of s.events) if (e.kind === 'kprobe') events.set(e.kprobe, { name: `${e.group}/${e.event}`, hits: e.hits });
  const kprobes = s.kprobes.map((k, i) => kprobeRow(k, i, byKp, events));
  const count = new Map<string, number>();
  for (const k of s.kprobes) if (k.module !== null) count.set(k.module, (count.get(k.module) ?? 0) + 1);
  const modules: ModuleInfo[] = s.modules.filter(m => m.state !== 'unformed').map(m => {
    const row: ModuleInfo = { name: m.name, path: '', state: m.state, base: formatAddress(m.core.base), size: m.core.size, usedBy: [...m.usedBy], probesIn: count.get(m.name) ?? 0 };
    if (m.init.base !== 0n && m.init.size > 0) row.init = { base: formatAddress(m.init.base), size: m.init.size };
    return row;
  });
  const uprobeHits = new Map<bigint, bigint>();
  for (const e of s.events) if (e.kind === 'uprobe') uprobeHits.set(e.consumer, e.hits);
  const uprobes: UprobeInfo[] = s.uprobes.map((u, i) => {
    const path = u.path ?? `inode ${u.ino}`;
    const ret = u.consumers.length > 0 && u.consumers.every(c => c.handler === null && c.retHandler !== null);
    return {
      id: -(i + 1), kind: ret ? 'uretprobe' : 'uprobe', name: `${path}:0x${u.offset.toString(16)}`,
      address: formatAddress(u.offset), enabled: true, gone: false, registered: true,
      nhit: Number(u.consumers.reduce((n, c) => n + (uprobeHits.get(c.addr) ?? 0n), 0n)), nmissed: 0,
      inode: Number(u.ino), offset: Number(u.offset), path, consumers: u.consumers.length,
      // the process's own address of the probed instruction is not read (its VMAs are not walked)
      processes: u.processes.map(p => ({ pid: p.pid, comm: p.comm, address: formatAddress(u.offset), page: 'file offset', nhit: 0 })),
    };
  });
  const mem = g.memory();
  const flag = (name: string, dflt: boolean): boolean => {
    const a = g.symbols.addressOf(name);
    return a === undefined ? dflt : mem.u8(a) !== 0;
  };
  return { kprobes, uprobes, modules, enabled: !flag('kprobes_all_disarmed', false), optimization: flag('kprobes_allow_optimization', true) };
}

function kprobeRow(k: GuestKprobe, i: number, byKp: ReadonlyMap<bigint, DebuggerProbe>, events: ReadonlyMap<bigint, { name: string; hits: bigint }>): ProbeInfo {
  const kind = k.type === 'r' ? 'kretprobe' : 'kprobe';
  // the debugger's kretprobe is a struct kretprobe whose kp the agent reports
  const own = byKp.get(k.kp);
  const ev = events.get(k.kp);
  const where = k.symbol !== null ? `${k.symbol}+0x${k.offset.toString(16)}` : formatAddress(k.addr);
  const row: ProbeInfo = {
    id: own?.id ?? -(i + 1), kind, registered: true,
    name: kind === 'kretprobe' ? `r:${where}` : where,
    address: formatAddress(k.addr), enabled: !k.disabled && !k.gone, gone: k.gone,
    optimized: k.optimized, ftrace: k.ftrace,
    nhit: own ? own.hits : ev ? Number(ev.hits) : 0,
    nmissed: Number(k.nmissed) + (k.kretprobe?.nmissed ?? 0),
    registeredBy: own ? 'the debugger (kprobe_agent)' : k.owner ?? 'the kernel',
  };
  if (k.symbol !== null) { row.symbol = k.symbol; row.offset = Number(k.offset); }
  if (k.module !== null) row.module = k.module;
  if (k.kretprobe) row.maxactive = k.kretprobe.maxactive;
  if (ev) row.event = ev.name;
  if (own?.source) row.source = own.source;
  return row;
}
