/**
 * What the probe manager keeps per probe (UserProbe: a probe-file probe or a
 * breakpoint, its sites, its uprobe or debug registers) and the rows the
 * lists show of it (probeEntry: ProbeEntry with its sites, counters and
 * debugfs flags as they are now).
 */
import type { ProbeTarget } from '../handlers';
import type { KernelApi } from '../kernel/types';
import { kprobeListFlags } from '../kprobes';
import type { Kprobe, KprobesEngine } from '../kprobes';
import type { UprobesEngine } from '../uprobes';
import type { BreakpointRuntime } from './breakpoints';
import { handlerCodeAt } from './handlerBreakpoints';
import type { HwSite } from './hwProbes';
import type { HwProbeSet } from './hwProbeSet';
import { SiteRegistration, siteDisabled } from './register';
import type { ProbeSite } from './targets';
import { whereOf } from './targets';
import type { ManagerProbeKind, ProbeEntry, ProbeListRow, ProbeOrigin, ProbeSiteInfo } from './types';
import { KPROBE_FLAG_GONE } from '../kprobes/kprobe';
import type { UprobeSite } from './uprobeSite';

/** One probe of the manager: a probe-file probe or a breakpoint. */
export interface UserProbe {
  id: number;
  origin: ProbeOrigin;
  kind: ManagerProbeKind;
  target: string;
  targetKind?: ProbeTarget['kind'];
  file?: { name: string; line: number; column: number };
  sites: SiteRegistration[];
  enabled: boolean;
  message?: string;
  nextLine?: number;
  bp?: BreakpointRuntime;
  user?: UprobeSite;
  /** kwatch / hardware / watch: one debug register per site */
  hw?: HwSite[];
  /** a kprobe_events definition's event, `GROUP/EVENT` */
  event?: string;
}

/** What building the rows needs: the kernel, the engines, the debug registers' probes. */
export interface EntryContext {
  kernel: KernelApi;
  engine: KprobesEngine | null;
  uprobes: UprobesEngine | null;
  hw: HwProbeSet;
}

/** a uprobe probe as the lists show it: one site, the (inode, offset) of its file */
function userEntry(ctx: EntryContext, up: UserProbe, u: UprobeSite): ProbeEntry {
  const site = u.siteInfo(ctx.uprobes, up.enabled);
  const r = u.res;
  return {
    id: up.id, origin: up.origin, kind: up.kind, target: up.target, targetKind: up.targetKind, file: up.file,
    verified: u.registered, enabled: up.enabled, message: up.message, sites: [site], hits: u.hits, nmissed: site.nmissed,
    conditionHits: up.bp?.hits,
    user: { path: r.path, inode: r.inode.ino, offset: r.offset, vaddr: r.vaddr, where: r.where, event: u.event ? `${u.event.group}/${u.event.name}` : undefined },
  };
}

/** a registered kprobe's debugfs list flags ([GONE][DISABLED][OPTIMIZED][FTRACE]) */
function debugfsFlags(engine: KprobesEngine, kp: Kprobe): string {
  return kprobeListFlags(kp, engine.getKprobe(kp.addr as bigint) ?? kp);
}

/** A probe as the lists show it (ProbeEntry): its sites, counters, flags and state now. */
export function probeEntry(ctx: EntryContext, up: UserProbe): ProbeEntry {
  if (up.user) return userEntry(ctx, up, up.user);
  if (up.hw) return ctx.hw.snapshot(up, up.hw);
  const image = ctx.kernel.image;
  const engine = ctx.engine;
  const sites: ProbeSiteInfo[] = up.sites.map(s => {
    const addr = s.registered ? s.kp.addr : s.site.resolved;
    const line = addr !== undefined ? image.lines?.lineForAddress(addr) : undefined;
    return {
      addr,
      where: addr !== undefined ? whereOf(image, addr) : siteText(s.site),
      source: line ? { file: line.file, line: line.line } : undefined,
      engineId: s.registered ? s.kp.id : undefined,
      registered: s.registered,
      error: s.error,
      hits: s.kp.hits ?? 0,
      nmissed: (s.kp.nmissed ?? 0) + (s.rp?.nmissed ?? 0),
      flags: s.registered && engine ? debugfsFlags(engine, s.kp) : '',
    };
  });
  const registered = up.sites.filter(s => s.registered);
  const first = registered[0]?.kp.addr;
  const inHandler = up.origin === 'breakpoint' && up.kind === 'kprobe' && first !== undefined && ctx.engine ? handlerCodeAt(ctx.kernel, ctx.engine, first) : undefined;
  return {
    id: up.id, origin: up.origin, kind: up.kind, target: up.target, targetKind: up.targetKind, file: up.file,
    verified: registered.length > 0,
    enabled: registered.length ? registered.some(s => !siteDisabled(s)) : up.enabled,
    message: up.message, nextLine: up.nextLine, sites,
    hits: sites.reduce((a, s) => a + s.hits, 0),
    nmissed: sites.reduce((a, s) => a + s.nmissed, 0),
    conditionHits: up.bp?.hits, event: up.event, inHandler,
  };
}

/**
 * A probe's hit-list row: the same counters and state as probeEntry gives
 * (hits and nmissed summed over the sites, verified, enabled, [GONE]),
 * worked out from the engine objects directly for kprobe-engine probes;
 * uprobes and debug-register probes take their probeEntry.
 */
export function probeListRow(ctx: EntryContext, up: UserProbe): ProbeListRow {
  const head = { id: up.id, kind: up.kind, target: up.target, file: up.file };
  if (up.user || up.hw) {
    const e = probeEntry(ctx, up);
    return { ...head, verified: e.verified, enabled: e.enabled, hits: e.hits, nmissed: e.nmissed, watch: e.watch, siteCount: e.sites.length, gone: e.sites.some(s => s.flags.includes('[GONE]')) };
  }
  let hits = 0, nmissed = 0, registered = 0, enabledSites = 0, gone = false;
  for (const s of up.sites) {
    hits += s.kp.hits ?? 0;
    nmissed += (s.kp.nmissed ?? 0) + (s.rp?.nmissed ?? 0);
    if (!s.registered) continue;
    registered++;
    if (!siteDisabled(s)) enabledSites++;
    // the debugfs flag: [GONE] comes from the probe's own flags (kprobeListFlags)
    if (ctx.engine && ((s.kp.flags ?? 0) & KPROBE_FLAG_GONE) !== 0) gone = true;
  }
  return {
    ...head, verified: registered > 0, enabled: registered ? enabledSites > 0 : up.enabled,
    hits, nmissed, siteCount: up.sites.length, gone,
  };
}

function siteText(s: ProbeSite): string {
  if (s.symbol_name !== undefined) return s.offset ? `${s.symbol_name}+0x${s.offset.toString(16)}` : s.symbol_name;
  return s.addr !== undefined ? `0x${s.addr.toString(16)}` : '?';
}
