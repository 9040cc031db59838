/**
 * The guest's dynamic trace events (`dyn_event_list`, oldest first): the
 * kprobe events (struct trace_kprobe, ops == &trace_kprobe_ops) and the
 * uprobe events (struct trace_uprobe, ops == &trace_uprobe_ops) with their
 * definitions and hit counts, as kernel/trace/trace_kprobe.c and
 * trace_uprobe.c print them: render*Events() equal the tracefs files
 * kprobe_events / uprobe_events, render*Profile() kprobe_profile /
 * uprobe_profile. A kprobe event's hits are per CPU (`nhit` is a per-CPU
 * counter: summed over __per_cpu_offset[0 .. nr_cpu_ids)).
 */
import type { GuestMemory, KernelSymbols } from './guestMemory';
import type { KernelLayout } from './kernelLayout';
import { listEntries } from './modules';

export interface ProbeArg { readonly name: string; readonly comm: string }

export interface KprobeEvent {
  readonly kind: 'kprobe';
  /** the struct trace_kprobe's guest address */
  readonly addr: bigint;
  readonly group: string;
  readonly event: string;
  readonly isReturn: boolean;
  readonly maxactive: number;
  /** the symbol given at definition (null: an address was given) */
  readonly symbol: string | null;
  readonly offset: number;
  /** the probed address (its struct kprobe's addr) */
  readonly probeAddr: bigint;
  readonly args: readonly ProbeArg[];
  readonly hits: bigint;
  /** kp.nmissed, plus the kretprobe's nmissed for a return probe */
  readonly nmissed: bigint;
  /** the struct kprobe the event registered (its row in the kprobes list) */
  readonly kprobe: bigint;
}

export interface UprobeEvent {
  readonly kind: 'uprobe';
  readonly addr: bigint;
  readonly group: string;
  readonly event: string;
  readonly isReturn: boolean;
  readonly filename: string;
  readonly offset: bigint;
  readonly refCtrOffset: bigint;
  readonly args: readonly ProbeArg[];
  readonly hits: bigint;
  /** its uprobe_consumer (linked into a struct uprobe's consumers) */
  readonly consumer: bigint;
}

export type DynEvent = KprobeEvent | UprobeEvent | { readonly kind: 'other'; readonly addr: bigint };

export function readDynEvents(mem: GuestMemory, L: KernelLayout, syms: KernelSymbols): DynEvent[] {
  const head = syms.addressOf('dyn_event_list');
  if (head === undefined) throw new Error('the vmlinux has no dyn_event_list (a kernel without dynamic events)');
  const kOps = syms.addressOf('trace_kprobe_ops'), uOps = syms.addressOf('trace_uprobe_ops');
  const perCpu = percpuOffsets(mem, syms);
  return listEntries(mem, head, L.off('dyn_event', 'list')).map((ev): DynEvent => {
    const ops = mem.u64(ev + L.off('dyn_event', 'ops'));
    if (kOps !== undefined && ops === kOps) {
      const tk = ev - L.off('trace_kprobe', 'devent');
      const f = (path: string): bigint => tk + L.off('trace_kprobe', path);
      const sym = mem.u64(f('symbol'));
      const nhit = mem.u64(f('nhit'));
      const isReturn = mem.u64(f('rp.handler')) !== 0n;
      const kpMissed = mem.u64(f('rp.kp.nmissed'));
      return {
        kind: 'kprobe', addr: tk, ...names(mem, L, f('tp')), isReturn,
        maxactive: mem.i32(f('rp.maxactive')), symbol: sym === 0n ? null : mem.cstring(sym, 512),
        offset: mem.u32(f('rp.kp.offset')), probeAddr: mem.u64(f('rp.kp.addr')), args: args(mem, L, f('tp')),
        hits: perCpu.reduce((s, o) => s + mem.u64(BigInt.asUintN(64, nhit + o)), 0n),
        nmissed: kpMissed + (isReturn ? BigInt(mem.i32(f('rp.nmissed'))) : 0n), kprobe: f('rp.kp'),
      };
    }
    if (uOps !== undefined && ops === uOps) {
      const tu = ev - L.off('trace_uprobe', 'devent');
      const f = (path: string): bigint => tu + L.off('trace_uprobe', path);
      return {
        kind: 'uprobe', addr: tu, ...names(mem, L, f('tp')), isReturn: mem.u64(f('consumer.ret_handler')) !== 0n,
        filename: mem.cstring(mem.u64(f('filename')), 4096), offset: mem.u64(f('offset')), refCtrOffset: mem.u64(f('ref_ctr_offset')),
        args: args(mem, L, f('tp')), hits: mem.u64(f('nhit')), consumer: f('consumer'),
      };
    }
    return { kind: 'other', addr: ev };
  });
}

/** __per_cpu_offset[cpu] for every possible CPU (0 .. nr_cpu_ids) */
function percpuOffsets(mem: GuestMemory, syms: KernelSymbols): bigint[] {
  const base = syms.addressOf('__per_cpu_offset'), n = syms.addressOf('nr_cpu_ids');
  if (base === undefined || n === undefined) return [0n];
  const count = Math.min(mem.u32(n), 8192);
  return Array.from({ length: count }, (_, i) => mem.u64(base + BigInt(i) * 8n));
}

function names(mem: GuestMemory, L: KernelLayout, tp: bigint): { group: string; event: string } {
  const pe = mem.u64(tp + L.off('trace_probe', 'event'));
  return {
    group: mem.cstring(mem.u64(pe + L.off('trace_probe_event', 'class.system')), 256),
    event: mem.cstring(mem.u64(pe + L.off('trace_probe_event', 'call.name')), 256),
  };
}

function args(mem: GuestMemory, L: KernelLayout, tp: bigint): ProbeArg[] {
  const n = Math.min(mem.u32(tp + L.off('trace_probe', 'nr_args')), 128);
  const each = BigInt(L.size('probe_arg'));
  const first = tp + L.off('trace_probe', 'args');
  return Array.from({ length: n }, (_, i) => {
    const a = first + BigInt(i) * each;
    return { name: mem.cstring(mem.u64(a + L.off('probe_arg', 'name')), 256), comm: mem.cstring(mem.u64(a + L.off('probe_arg', 'comm')), 4096) };
  });
}

const argText = (a: readonly ProbeArg[]): string => a.map(x => ` ${x.name}=${x.comm}`).join('');

/** tracefs kprobe_events */
export function renderKprobeEvents(evs: readonly DynEvent[]): string {
  return evs.filter((e): e is KprobeEvent => e.kind === 'kprobe').map(e => {
    let s = e.isReturn ? 'r' : 'p';
    if (e.isReturn && e.maxactive) s += `${e.maxactive}`;
    s += `:${e.group}/${e.event}`;
    s += e.symbol === null ? ` 0x${e.probeAddr.toString(16).padStart(16, '0')}` : e.offset ? ` ${e.symbol}+${e.offset}` : ` ${e.symbol}`;
    return `${s}${argText(e.args)}\n`;
  }).join('');
}

/** tracefs kprobe_profile: event name, hits, misses */
export function renderKprobeProfile(evs: readonly DynEvent[]): string {
  return evs.filter((e): e is KprobeEvent => e.kind === 'kprobe')
    .map(e => `  ${e.event.padEnd(44)} ${e.hits.toString().padStart(15)} ${e.nmissed.toString().padStart(15)}\n`).join('');
}

/** tracefs uprobe_events */
export function renderUprobeEvents(evs: readonly DynEvent[]): string {
  return evs.filter((e): e is UprobeEvent => e.kind === 'uprobe').map(e =>
    `${e.isReturn ? 'r' : 'p'}:${e.group}/${e.event} ${e.filename}:0x${e.offset.toString(16).padStart(16, '0')}`
    + `${e.refCtrOffset ? `(0x${e.refCtrOffset.toString(16)})` : ''}${argText(e.args)}\n`).join('');
}

/** tracefs uprobe_profile: file, event name, hits */
export function renderUprobeProfile(evs: readonly DynEvent[]): string {
  return evs.filter((e): e is UprobeEvent => e.kind === 'uprobe')
    .map(e => `  ${e.filename} ${e.event.padEnd(44)} ${e.hits.toString().padStart(15)}\n`).join('');
}
