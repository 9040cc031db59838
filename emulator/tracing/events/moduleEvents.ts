/**
 * Kprobe events on a module's symbol, MOD:SYM (Linux
 * kernel/trace/trace_kprobe.c: register_trace_kprobe,
 * trace_kprobe_module_exist, trace_kprobe_module_callback):
 *
 *   - the event's kprobe is registered by the name "MOD:SYM" (SYM looked up
 *     in MOD only: parse.ts moduleSymbol);
 *   - when that fails with -ENOENT while MOD is not loaded, the definition
 *     is accepted all the same ("This probe might be able to register after
 *     target module is loaded. Continue.") and the event is listed in
 *     kprobe_events, its kprobe not registered: enabling it arms nothing yet;
 *   - each time MOD comes (the module notifier's MODULE_STATE_COMING: its
 *     symbols known, its init not yet run) the event's kprobe is
 *     unregistered and registered again, at MOD's new address, enabled or
 *     disabled as the event is ("Failed to re-register probe EVENT on MOD:
 *     ERR" when that fails);
 *   - when MOD goes, the kprobes engine kills the probe ([GONE] in
 *     kprobes/list) and the event stays defined and listed.
 *
 * The probe layer owns the events' probes: it hands each MOD:SYM event's
 * probe here as a ModuleEventProbe. The watches are kernel state (kept on
 * the kernel object, as the event table of profile.ts is).
 */
import type { KernelApi } from '../../kernel/types';
import type { ModuleNotifier } from '../../kernel/kernel';
import { moduleTableOf } from '../../kernel/modules/modules';
import type { Kernel } from '../../kernel/kernel';
import { ENOENT } from './errors';
import { moduleSymbol } from './parse';

/** What this file needs of an event's probe (the probe layer implements it). */
export interface ModuleEventProbe {
  /** the event's name, for messages */
  readonly event: string;
  /** the event is still defined (a removed event's probe is never registered again) */
  defined(): boolean;
  /** its kprobes are registered now */
  registered(): boolean;
  /** __unregister_trace_kprobe then __register_trace_kprobe: 0 or -errno */
  reregister(): number;
}

interface Watch { readonly module: string; readonly def: object; readonly probe: ModuleEventProbe }

const WATCHES = Symbol('module kprobe events');
type WithWatches = { [WATCHES]?: Watch[] };
type NotifierKernel = KernelApi & { moduleNotifiers?: ModuleNotifier[] };

function watchesOf(kernel: object): Watch[] | undefined { return (kernel as WithWatches)[WATCHES]; }

/** Whether MOD is loaded (find_module: coming or live or going, not yet freed). */
export function moduleLoaded(kernel: object, module: string): boolean {
  const m = moduleTableOf(kernel as Kernel)?.get(module);
  return m !== undefined && m.state !== 'unloaded';
}

/**
 * After the first registration of an event's probe named `symbol`: when
 * the name is MOD:SYM, the event follows MOD's loads from now on. Returns
 * true when a failed registration (`errno`) is to be accepted: -ENOENT
 * while MOD is not loaded (the event waits for MOD).
 */
export function watchModuleEvent(kernel: object, symbol: string, def: object, probe: ModuleEventProbe, errno: number): boolean {
  const { module } = moduleSymbol(symbol);
  const k = kernel as NotifierKernel & WithWatches;
  if (module === undefined || !k.moduleNotifiers) return false;
  const pending = errno === -ENOENT && !moduleLoaded(kernel, module);
  if (errno !== 0 && !pending) return false;
  let watches = k[WATCHES];
  if (!watches) {
    watches = k[WATCHES] = [];
    k.moduleNotifiers.push((name, state) => { if (state === 'coming') moduleComing(k, name); });
  }
  watches.push({ module, def, probe });
  if (pending) k.printk(-1, 'trace_kprobe: This probe might be able to register after target module is loaded. Continue.', 'kernel');
  return pending;
}

/** trace_kprobe_module_callback(MODULE_STATE_COMING): the module's events registered again */
function moduleComing(kernel: NotifierKernel, module: string): void {
  const watches = watchesOf(kernel);
  if (!watches) return;
  for (let i = watches.length - 1; i >= 0; i--) if (!watches[i].probe.defined()) watches.splice(i, 1);
  for (const w of watches) {
    if (w.module !== module) continue;
    const rc = w.probe.reregister();
    if (rc) kernel.printk(-1, `trace_kprobe: Failed to re-register probe ${w.probe.event} on ${module}: ${rc}`, 'kernel');
  }
}

/** An event defined and waiting for its module (kprobe_events lists it though its kprobe is not registered). */
export function moduleEventWaiting(kernel: object, def: object): boolean {
  return watchesOf(kernel)?.some(w => w.def === def && w.probe.defined() && !w.probe.registered()) ?? false;
}
