/**
 * The kprobe events of a kernel, as tracefs lists them:
 *
 *   kprobe_events    one definition per event, as trace_kprobe_show prints it
 *                    ("p:kprobes/myprobe do_sys_open dfd=%ax", "r10:kprobes/r_f_0 f")
 *   kprobe_profile   "  %-44s %15lu %15lu": event name, hits, misses
 *                    (hits: the event's dispatcher runs, i.e. returns for a
 *                    return probe; misses: the kprobe's nmissed, plus the
 *                    kretprobe's for a return probe)
 *
 * One table per kernel; the probes that define events (probe-file lines,
 * function breakpoints) add their entries, and an entry whose engine
 * probes are all unregistered is no longer listed.
 */
import type { EventAdd } from './types';

export interface TraceEventEntry {
  def: EventAdd;
  /** hits: trace lines written */
  nhit: number;
  /** missed hits of the event's kprobes (reentry; for kretprobes also no free instance) */
  nmissed(): number;
  /** at least one of its probes is registered */
  live(): boolean;
}

export interface ProfileRow { name: string; hits: number; misses: number }

/**
 * The table lives on the kernel object itself (under a symbol), so that it
 * is machine state: time travel's snapshots (emulator/timetravel) capture
 * and put back the entries and their hit counts with the rest.
 */
const TABLE = Symbol('kprobe events');
type WithTable = { [TABLE]?: TraceEventEntry[] };

/** the event table of a kernel (any object standing for it: the KernelApi) */
function tableOf(kernel: object): TraceEventEntry[] {
  const k = kernel as WithTable;
  return k[TABLE] ??= [];
}

/** Add an event to its kernel's table; returns the entry (its nhit is the counter to bump). */
export function addTraceEvent(kernel: object, entry: TraceEventEntry): TraceEventEntry {
  const t = tableOf(kernel);
  for (let i = t.length - 1; i >= 0; i--) if (t[i] !== entry && !t[i].live() && t[i].def === entry.def) t.splice(i, 1);
  t.push(entry);
  return entry;
}

/** The kernel's live kprobe events (registered), in definition order. */
export function kprobeEventEntries(kernel: object): TraceEventEntry[] {
  return ((kernel as WithTable)[TABLE] ?? []).filter(e => e.def.subsystem === 'kprobe' && e.live());
}

/** One kprobe_profile line (with its newline). */
export function formatProfileLine(r: ProfileRow): string {
  return `  ${r.name.padEnd(44)} ${String(r.hits).padStart(15)} ${String(r.misses).padStart(15)}\n`;
}

/** kprobe_profile rows: per live kprobe event, its name, hits and misses. */
export function kprobeProfileRows(kernel: object): ProfileRow[] {
  return kprobeEventEntries(kernel).map(e => ({ name: e.def.event, hits: e.nhit, misses: e.nmissed() }));
}

/** /sys/kernel/debug/tracing/kprobe_profile of a kernel (the adapter's view reads this). */
export function kprobeProfile(kernel: object): string {
  return kprobeProfileRows(kernel).map(formatProfileLine).join('');
}

/** A definition as kprobe_events lists it back. */
export function eventDefinitionLine(d: EventAdd): string {
  const head = `${d.type}${d.type === 'r' && d.maxactive ? d.maxactive : ''}:${d.group}/${d.event}`;
  let where: string;
  const t = d.target;
  switch (t.kind) {
    case 'symbol': where = `${t.module ? `${t.module}:` : ''}${t.name}${t.offset ? `+${t.offset}` : ''}`; break;
    case 'address': where = `0x${t.addr.toString(16).padStart(16, '0')}`; break;
    case 'user': where = `${t.path}:${t.offset !== undefined ? `0x${t.offset.toString(16).padStart(16, '0')}` : `${t.symbol}${t.symOffset ? `+0x${t.symOffset.toString(16)}` : ''}`}`; break;
  }
  return `${head} ${where}${d.args.map(a => ` ${a.name}=${a.text}`).join('')}`;
}

/** /sys/kernel/debug/tracing/kprobe_events of a kernel. */
export function kprobeEvents(kernel: object): string {
  return kprobeEventEntries(kernel).map(e => `${eventDefinitionLine(e.def)}\n`).join('');
}
