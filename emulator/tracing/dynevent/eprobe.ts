/**
 * Event probes (Linux 6.1 kernel/trace/trace_eprobe.c): a dynamic event
 * attached to another trace event, recording fetch arguments computed
 * from that event's fields each time it fires:
 *
 *   e[:[GRP/][EVENT]] SYSTEM.EVENT|SYSTEM/EVENT [NAME=FETCHARG[:TYPE]...] [if FILTER]
 *
 * FETCHARG is the kprobe argument syntax (events/argParse.ts) where
 * `$FIELD` is a field of the attached event and registers are refused
 * (TPARG_FL_TPOINT). GRP defaults to `eprobes`, EVENT to the attached
 * event's name. The FILTER (the attached event's fields) decides which of
 * its firings the probe records. Errors are Linux's (trace_probe.h
 * ERRORS) at Linux's error_log position, logged as "event_probe".
 *
 * A hit prints "EVENT: (SYSTEM.EVENT) NAME=VALUE..." (print_eprobe_event).
 */
import { parseArg } from '../events/argParse';
import { ProbeFail, fail } from '../events/errors';
import { MAX_EVENT_NAME_LEN, MAX_TRACE_ARGS } from '../events/limits';
import { IDENT } from '../events/argParse';
import type { EventError, FetchArgDef, FetchSource } from '../events/types';
import { parseFilter } from '../events/filter';
import { GROUP, words, type Word } from '../events/parse';
import { COMMON_FIELDS, COMMON_SIZE, fieldOf } from '../events/eventFormat';
import type { EventFilter, FieldKind, FilterError } from '../events/filter';

/** EPROBE_EVENT_SYSTEM */
export const EPROBE_SYSTEM = 'eprobes';

export interface EprobeDef {
  group: string;
  event: string;
  /** the attached event */
  system: string;
  attached: string;
  args: FetchArgDef[];
  filter?: EventFilter;
}

/** What the parser needs to know of the attachable events: their fields, or undefined when there is no such event. */
export type AttachLookup = (system: string, event: string) => ReadonlyMap<string, FieldKind> | undefined;

export type EprobeResult =
  | { ok: true; def: EprobeDef }
  /** `errors`: the error_log entries Linux makes, in order (the last is what the write failed on); `filter`: a filter parse error */
  | { ok: false; errno: 'EINVAL' | 'EEXIST'; errors: EventError[]; filter?: { text: string; error: FilterError } };

class Failed extends Error {
  constructor(readonly errors: EventError[], readonly errno: 'EINVAL' | 'EEXIST' = 'EINVAL') { super('eprobe'); }
}

const err = (e: ProbeFail): EventError => ({ column: e.column, message: e.message, code: e.code });

/**
 * traceprobe_parse_event_name over `s` at column `col`: GROUP/EVENT or
 * GROUP.EVENT (an empty EVENT after the separator: undefined).
 */
function eventName(s: string, col: number): { group?: string; event?: string } {
  let slash = s.indexOf('/');
  if (slash < 0) slash = s.indexOf('.');
  let group: string | undefined;
  let ev = s;
  let ecol = col;
  if (slash >= 0) {
    group = s.slice(0, slash);
    if (!group) throw fail(col, 'NO_GROUP_NAME');
    if (slash + 1 > MAX_EVENT_NAME_LEN) throw fail(col, 'GROUP_TOO_LONG');
    if (!GROUP.test(group)) throw fail(col, 'BAD_GROUP_NAME');
    ev = s.slice(slash + 1);
    ecol = col + slash + 1;
  }
  if (!ev) {
    if (slash >= 0) return { group };
    throw fail(ecol, 'NO_EVENT_NAME');
  }
  if (ev.length >= MAX_EVENT_NAME_LEN) throw fail(ecol, 'EVENT_TOO_LONG');
  if (!IDENT.test(ev)) throw fail(ecol, 'BAD_EVENT_NAME');
  return { group, event: ev };
}

/** every $FIELD an argument reads */
function fieldsOf(s: FetchSource): string[] {
  if (s.k === 'field') return [s.name];
  if (s.k === 'deref') return fieldsOf(s.inner);
  return [];
}

/**
 * Parse an `e...` line of dynamic_events (__trace_eprobe_create). `exists`
 * says whether GRP/EVENT is taken by any event (EVENT_EXIST).
 */
export function parseEprobe(line: string, attach: AttachLookup, exists: (key: string) => boolean): EprobeResult {
  const w = words(line);
  try {
    // not an eprobe: Linux's ops all decline it (-ECANCELED), and the write is -EINVAL with no log
    if (w.length < 2 || !w[0].text.startsWith('e')) throw new Failed([]);
    const head = w[0];
    let group = EPROBE_SYSTEM;
    let event: string | undefined;
    const colon = head.text.indexOf(':', 1);
    if (colon >= 0) {
      try {
        const n = eventName(head.text.slice(colon + 1), head.column + colon + 1);
        if (n.group !== undefined) group = n.group;
        event = n.event;
      } catch (e) {
        if (e instanceof ProbeFail) throw new Failed([err(e)]);
        throw e;
      }
    }
    // the attached SYSTEM.EVENT: any problem with it ends in NO_EVENT_INFO (after the parser's own error)
    const at = w[1];
    const logged: EventError[] = [];
    let sys: string | undefined, sysEvent: string | undefined;
    try {
      const n = eventName(at.text, at.column);
      sys = n.group; sysEvent = n.event;
    } catch (e) {
      if (!(e instanceof ProbeFail)) throw e;
      logged.push(err(e));
    }
    if (logged.length || sys === undefined || sysEvent === undefined) throw new Failed([...logged, err(fail(at.column, 'NO_EVENT_INFO'))]);
    event ??= sysEvent;
    let rest = w.slice(2);
    let filterWords: Word[] | undefined;
    const ifAt = rest.findIndex(x => x.text === 'if');
    if (ifAt >= 0) { filterWords = rest.slice(ifAt + 1); rest = rest.slice(0, ifAt); }
    const fields = attach(sys, sysEvent);
    if (!fields) throw new Failed([err(fail(at.column, 'BAD_ATTACH_EVENT'))]);
    const def: EprobeDef = { group, event, system: sys, attached: sysEvent, args: [] };
    if (filterWords !== undefined) {
      if (!filterWords.length) {
        // the position past the last word and a blank (the index is past argv)
        const last = w[w.length - 1];
        throw new Failed([err(fail(last.column + last.text.length + 1, 'NO_EP_FILTER'))]);
      }
      const text = filterWords.map(x => x.text).join(' ');
      const r = parseFilter(text, fields);
      if (!r.ok) return { ok: false, errno: 'EINVAL', errors: [], filter: { text, error: r.error } };
      def.filter = r.filter;
    }
    const ctx = { kernel: true, ret: false, fentry: false, targetText: `${sys}.${sysEvent}`, names: new Set<string>(), size: 0, tevent: true };
    for (const [i, aw] of rest.slice(0, MAX_TRACE_ARGS).entries()) {
      let a: FetchArgDef;
      try {
        a = parseArg(aw.text, aw.column, i, ctx);
      } catch (e) {
        if (e instanceof ProbeFail) throw new Failed([err(e)]);
        throw e;
      }
      // trace_eprobe_tp_arg_update: the field must be one of the attached event's
      if (fieldsOf(a.source).some(f => !fields.has(f))) throw new Failed([err(fail(aw.column, 'BAD_ATTACH_ARG'))]);
      def.args.push(a);
    }
    if (exists(`${group}/${event}`)) throw new Failed([err(fail(head.column, 'EVENT_EXIST'))], 'EEXIST');
    return { ok: true, def };
  } catch (e) {
    if (e instanceof Failed) return { ok: false, errno: e.errno, errors: e.errors };
    throw e;
  }
}

/** dynamic_events' line of an event probe (eprobe_dyn_event_show) */
export function eprobeLine(d: EprobeDef): string {
  return `e:${d.group}/${d.event} ${d.system}.${d.attached}${d.args.map(a => ` ${a.name}=${a.text}`).join('')}\n`;
}

/**
 * eprobe_dyn_event_match: the removal's words after [GRP/]EVENT: none
 * matches, else the first must be the attached SYSTEM/EVENT (or
 * SYSTEM.EVENT), and the rest the first arguments as defined.
 */
export function eprobeMatches(d: EprobeDef, args: readonly string[]): boolean {
  if (!args.length) return true;
  const sep = args[0].search(/[/.]/);
  if (sep < 0) return false;
  if (args[0].slice(0, sep) !== d.system || args[0].slice(sep + 1) !== d.attached) return false;
  const more = args.slice(1);
  if (more.length > d.args.length) return false;
  return more.every((x, i) => x === `${d.args[i].name}=${d.args[i].text}`);
}

/** events/eprobes/EVENT/format: the common fields, then one field per argument as kprobe events lay them out */
export function eprobeFormat(d: EprobeDef, id: number): string {
  const lines = [`name: ${d.event}`, `ID: ${id}`, 'format:', ...COMMON_FIELDS, ''];
  // eprobe_trace_entry_head: the common entry, then the arguments
  let offset = COMMON_SIZE;
  const fmts: string[] = [], values: string[] = [];
  for (const a of d.args) {
    const f = fieldOf(a.type);
    lines.push(`\tfield:${f.type} ${a.name};\toffset:${offset};\tsize:${f.size};\tsigned:${f.signed ? 1 : 0};`);
    offset += f.size;
    fmts.push(` ${a.name}=${f.fmt}`);
    values.push(f.value(a.name));
  }
  lines.push('', `print fmt: "${fmts.join('')}"${values.map(v => `, ${v}`).join('')}`, '');
  return lines.join('\n');
}
