/**
 * Several probes on one event, as Linux's trace_kprobe / trace_uprobe allow
 * (README: "Create/append/remove"): a definition naming an existing event
 * appends its probe to that event when the probe type and the arguments'
 * names and types are the same (register_trace_kprobe / append_trace_kprobe,
 * trace_probe_compare_arg_type); `-:EVENT PROBEPOINT [ARGS]` removes only the
 * probes of the event that match (trace_kprobe_match / trace_uprobe_match).
 * Pure functions over parsed definitions: the events' owner applies them.
 */
import { fail } from './errors';
import type { EventAdd, EventError, EventRemove, EventTarget, FetchArgDef } from './types';

function error(e: ReturnType<typeof fail>): EventError {
  return { column: e.column, message: e.message, code: e.code };
}

/** where Linux puts '^' for an argument the definition lacks: past its last word and a blank */
function pastEnd(def: EventAdd): number {
  return (def.endColumn ?? def.text.length + 1) + 1;
}

/** trace_probe_compare_arg_type: the name, the fetch type (a bitfield's is its container's) and the array length */
function sameArgType(a: FetchArgDef, b: FetchArgDef): boolean {
  return a.name === b.name && a.type.name === b.type.name && (a.count ?? 0) === (b.count ?? 0);
}

function samePlace(a: EventTarget, b: EventTarget): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'symbol' && b.kind === 'symbol') return a.module === b.module && a.name === b.name && a.offset === b.offset;
  if (a.kind === 'address' && b.kind === 'address') return a.addr === b.addr;
  if (a.kind === 'user' && b.kind === 'user') return a.path === b.path && a.offset === b.offset && a.symbol === b.symbol && a.symOffset === b.symOffset;
  return false;
}

/**
 * Whether `def` may be added next to the events already defined
 * (`existing`: every definition in force, of both kinds): undefined when it
 * creates a new event or appends a probe to the event of its name; else
 * Linux's error (EVENT_EXIST, DIFF_PROBE_TYPE, DIFF_ARG_TYPE, SAME_PROBE)
 * at Linux's column.
 */
export function appendError(def: EventAdd, existing: readonly EventAdd[]): EventError | undefined {
  const named = existing.filter(e => e.group === def.group && e.event === def.event);
  if (!named.length) return undefined;
  const head = def.column ?? 1;
  const same = named.filter(e => e.subsystem === def.subsystem);
  if (!same.length) return error(fail(head, 'EVENT_EXIST', `${def.group}/${def.event} is a ${named[0].subsystem} event`));
  const first = same[0];
  if (first.type !== def.type) return error(fail(head, 'DIFF_PROBE_TYPE', `${def.group}/${def.event} holds ${first.type === 'r' ? 'return probes' : 'probes'}`));
  const n = Math.min(def.args.length, first.args.length);
  for (let i = 0; i < n; i++) {
    if (!sameArgType(def.args[i], first.args[i])) {
      return error(fail(def.args[i].column, 'DIFF_ARG_TYPE', `the event's argument ${i + 1} is ${first.args[i].name} of type ${first.args[i].type.name}`));
    }
  }
  if (def.args.length > n) return error(fail(def.args[n].column, 'DIFF_ARG_TYPE', `the event has ${first.args.length} arguments`));
  if (first.args.length > n) return error(fail(pastEnd(def), 'DIFF_ARG_TYPE', `the event has ${first.args.length} arguments`));
  if (same.some(e => samePlace(e.target, def.target) && e.args.every((a, i) => a.text === def.args[i].text))) {
    return error(fail(head, 'SAME_PROBE'));
  }
  return undefined;
}

/** the probe point as Linux's kprobe_events / uprobe_events show it (what `-:EVENT PROBEPOINT` compares with) */
function placeText(def: EventAdd): string {
  const t = def.target;
  switch (t.kind) {
    case 'symbol': return `${t.module ? `${t.module}:` : ''}${t.name}${t.offset ? `+${t.offset}` : ''}`;
    case 'address': return `0x${t.addr.toString(16).padStart(16, '0')}`;
    case 'user': {
      const off = t.offset !== undefined ? `0x${t.offset.toString(16).padStart(16, '0')}` : `${t.symbol}${t.symOffset ? `+0x${t.symOffset.toString(16)}` : ''}`;
      return `${t.path}:${off}${t.refCtr ? `(0x${t.refCtr.toString(16)})` : ''}`;
    }
  }
}

/**
 * Whether `-:[GRP/]EVENT [PROBEPOINT [NAME=FETCHARG...]]` removes the probe
 * `def`: same event (an empty EVENT: any), same group when given, and when a
 * probe point is given, the same point and arguments beginning with those
 * listed (NAME=FETCHARG as defined).
 */
export function removeMatches(rm: EventRemove, def: EventAdd): boolean {
  if (rm.event !== '' && rm.event !== def.event) return false;
  if (rm.group !== undefined && rm.group !== def.group) return false;
  const words = rm.match ?? [];
  if (!words.length) return true;
  if (words[0] !== placeText(def)) return false;
  const args = words.slice(1);
  if (args.length > def.args.length) return false;
  return args.every((w, i) => w === `${def.args[i].name}=${def.args[i].text}`);
}
