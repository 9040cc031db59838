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

const NO_AGENT = 'the Kprobes view acts on the guest through kprobe-debug\'s agent: launch with "agent", then >insmod /root/kprobe_agent.ko';

/** what the views' rows and actions need of the guest's agent (linuxAgentProbes.ts) */
export interface ProbeViewAgent {
  debuggerProbes(): readonly DebuggerProbe[];
  probeOp(op: 'enable' | 'disable' | 'unregister', kp: bigint, kretprobe: bigint | undefined, done: (result: number) => void): void;
  knob(which: 'enabled' | 'optimization', value: boolean, done: (result: number) => void): void;
}

/** The Linux machine's Kprobes, Uprobes and Modules views: the last rows read, and the actions on them through the agent. */
export class LinuxProbeView {
  private last: ProbeStateBody | undefined;
  /** per row id of the last Kprobes rows, the guest's probe (the view's actions name rows by id) */
  private byRow = new Map<number, GuestKprobe & { event?: string }>();

  /**
   * The rows read from guest memory now. A read that fails (the kernel not
   * up yet, or a list caught in the middle of a change while it runs) keeps
   * the previous rows.
   */
  rows(g: GuestKernel | undefined, agent: ProbeViewAgent | undefined): ProbeStateBody {
    const mine = agent?.debuggerProbes() ?? [];
    if (!g) return { kprobes: [], uprobes: [], enabled: false, optimization: false, unavailable: 'the guest\'s kprobes are read through the vmlinux\'s DWARF: set "vmlinux" in launch.json' };
    try {
      const snap = g.snapshot();
      this.last = linuxProbeState(g, snap, mine);
      this.byRow = new Map(this.last.kprobes.map((r, i) => [r.id, { ...snap.kprobes[i], event: r.event }] as const));
    } catch (e) {
      if (!this.last) return { kprobes: [], uprobes: [], enabled: false, optimization: false, unavailable: `the guest kernel's lists cannot be read yet: ${(e as Error).message}` };
    }
    return this.last;
  }

  /**
   * The Kprobes view's action on a row through the guest's agent: Linux's
   * enable_kprobe / disable_kprobe / unregister_k(ret)probe on the probe the
   * row was read from; done gets 0 or the guest's -errno. Returns why not
   * when it cannot be asked.
   */
  action(agent: ProbeViewAgent | undefined, id: number, op: 'enable' | 'disable' | 'unregister', done: (result: number) => void): string | undefined {
    if (!agent) return NO_AGENT;
    const k = this.byRow.get(id);
    if (!k) return `no probe ${id} in the Kprobes view's last rows`;
    if (op === 'unregister' && k.event) return `${k.event} is a kprobe_events probe: the tracing files own it (echo -:${k.event} >> /sys/kernel/tracing/kprobe_events)`;
    agent.probeOp(op, k.kp, k.kretprobe?.addr, done);
    return undefined;
  }

  /** /sys/kernel/debug/kprobes/enabled or the sysctl debug.kprobes-optimization written by the guest's agent */
  knob(agent: ProbeViewAgent | undefined, which: 'enabled' | 'optimization', value: boolean, done: (result: number) => void): string | undefined {
    if (!agent) return NO_AGENT;
    agent.knob(which, value, done);
    return undefined;
  }
}
