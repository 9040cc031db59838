/**
 * tracefs's kprobe files (kernel/trace/trace_kprobe.c, trace.c):
 *
 *   kprobe_events   reading lists every live kprobe event (the kernel's
 *                   event table, as --list prints it); each written line is
 *                   one definition for the same parser that --event and
 *                   .kprobe files use: `p:[GRP/]EVENT SYM[+off] ARGS`,
 *                   `r...`, `-:[GRP/]EVENT`; opening it with O_TRUNC (`>`)
 *                   removes the events defined here first, O_APPEND (`>>`)
 *                   keeps them. A bad definition fails the write with
 *                   -EINVAL (a probe point the kernel refuses: -ENOENT for
 *                   an unknown symbol, -EILSEQ off an instruction boundary)
 *                   and adds an error_log entry, as Linux's
 *                   trace_probe_log_err does.
 *                   A new event is registered disabled, as Linux's are;
 *                   removing or clearing an enabled one is -EBUSY.
 *   events/GRP/EVENT/enable  "0\n"/"1\n": writing 1 arms the event's probe,
 *                   0 disarms it (the events defined here)
 *   kprobe_profile  per event: hits and misses
 *   tracing_on      "1\n" / "0\n"; writing 0 stops the trace lines (the events
 *                   still count their hits), a number other than 0 restarts them
 *   error_log       the last errors: "[SECONDS] trace_kprobe: error: MSG",
 *                   the command, '^' under Linux's column (Linux's message
 *                   for the parser's coded errors); `>` clears it
 *                   An event may hold several probes of one kind, type and
 *                   argument types (a definition naming an existing event
 *                   appends a probe to it, else -EEXIST with Linux's error);
 *                   `-:[GRP/]EVENT PROBEPOINT [ARGS]` removes only the
 *                   matching probes, `-:GRP/` every event of the group
 *   README          the mini-HOWTO's probe-event lines, true to what the
 *                   parser takes (tracing/events/readme.ts)
 *   uprobe_events   the same for uprobe definitions (PATH:OFFSET targets);
 *                   each file lists and accepts only its own kind, and `>`
 *                   clears only its own kind
 *   dynamic_events  every dynamic event, either kind, in the order they were
 *                   made (as Linux's dyn_event_list), in both directions;
 *                   also synthetic events (`s:`) and event probes (`e:`),
 *                   and `!KIND:[GRP/]EVENT ...` removes as `-:` does
 *                   (tracing/dynevent/registry.ts)
 *   synthetic_events  the synthetic events (`NAME FIELDS`, `!NAME`)
 *   events/syscalls/sys_{enter,exit}_NAME  the system-call events
 *   trace           the trace buffer under the nop tracer's header (not
 *                   consumed); `>` (O_TRUNC) clears it
 *   trace_pipe      the buffered lines, consumed by reading (whole lines that
 *                   fit the read); a read of an empty trace_pipe sleeps until
 *                   a line comes (O_NONBLOCK: -EAGAIN), so `cat trace_pipe`
 *                   runs until it is killed, as on Linux
 *   buffer_size_kb  the per-CPU buffer size in KiB (oldest lines overwritten)
 *   current_tracer, available_tracers, set_ftrace_filter, set_ftrace_notrace,
 *   available_filter_functions  the function tracer's (functionTracer.ts)
 *   events/enable, events/GRP/enable  "0", "1", or "X" when mixed; writing
 *                   0 or 1 disables or enables every event below
 *   events/GRP/EVENT/id  the event's number (dynamic events from 2000 up)
 *   events/GRP/EVENT/filter  "none", or the filter (tracing/events/filter.ts)
 *                   applied to its trace lines; "0" clears; a bad one is
 *                   -EINVAL with an error_log entry
 *   events/GRP/EVENT/format  its fields and print format (tracing/events/eventFormat.ts)
 *   available_events  "GRP:EVENT" per event defined through these files
 *   set_event       the enabled ones, "GRP:EVENT" each; writing "GRP:EVENT"
 *                   (or "EVENT", "GRP:*", "*:*") enables, a leading '!'
 *                   disables, `>` disables them all first (ftrace_event_write)
 *
 * The kernel's mount table knows the type; the machine hands it this
 * filesystem (kernel/fs/kernelMounts.ts), as the tracing subsystem sits
 * above the kernel's filesystem code.
 */
import { Errno } from '../kernel/abi';
import type { Kernel } from '../kernel/kernel';
import {
  appendError, clearTrace, consumeTrace, onTraceLine, errorLog, probeEventsReadme, removeMatches, eventFormat, kprobeEvents, kprobeProfile, parseEventDefinition, eventDefinitionLine, setTraceBufferKb,
  setTracingOn, stripEventComment, traceBufferKb, traceText, tracingOn,
} from './events';
import type { EventAdd, EventError } from './events';
import { filterErrorLog, filterErrorText, filterFields, parseFilter, setEventFilter } from './events/filter';
import { PseudoFile, addPseudoFiles, pseudoDir } from '../kernel/fs/pseudo';
import type { Inode } from '../kernel/fs/vfs';
import type { SymbolTable } from '../elf/types';
import { tracePrintk } from './events/tracePrintk';
import { moduleLoaded } from './events/moduleEvents';
import { UserRequestOp, kernelServiceOf } from '../kernel/user/kernelService';
import { functionTracerFiles, type FunctionTraceHooks } from './functionTracer';
import { DynEventRegistry } from './dynevent/registry';
import type { RegistryState } from './dynevent/registry';

/** What tracefs needs of the probe manager (compile and register event definitions, remove probes). */
export interface EventProbeSource {
  compileProbeFile(text: string, fileName: string): { specs: readonly unknown[]; diagnostics: readonly { line: number; column: number; message: string; severity: string }[] };
  addProbeSpecs(specs: readonly never[], fileName: string): { probes: readonly { id: number; verified: boolean }[]; errors: string[] };
  remove(id: number): boolean;
  /** enable_kprobe / disable_kprobe: the error text, or undefined when done */
  setEnabled(id: number, on: boolean): string | undefined;
  /** uprobe_events and uprobe_profile: the registered uprobes' lines */
  uprobeEvents(): string;
  uprobeProfile(): string;
}

/** tracing/error_log keeps this many entries (TRACING_LOG_ERRS_MAX) */
const LOG_ERRS_MAX = 16;
/** the file name of definitions written to kprobe_events, in probe labels */
const EVENTS_FILE = 'kprobe_events';
/** the first number `id` gives a dynamic event (Linux's dynamic event ids come after the static events') */
const FIRST_EVENT_ID = 2000;

/** Which definitions a file of tracefs takes: kprobe_events kernel probes, uprobe_events user probes, dynamic_events both. */
type EventsKind = 'kprobe' | 'uprobe' | 'dynamic';
const isUser = (d: EventAdd): boolean => d.target.kind === 'user';
const takes = (kind: EventsKind, d: EventAdd): boolean => kind === 'dynamic' || (kind === 'uprobe') === isUser(d);

const bytesOf = (text: string): number => new TextEncoder().encode(text).length;

/** What a uprobe's PATH is in the machine's filesystem (the parser's fileKind). */
function fileKindOf(k: Kernel, path: string): 'file' | 'other' | undefined {
  const r = k.fs.lookup(path, k.fs.root);
  if (!r.ok) return undefined;
  return r.inode.isReg ? 'file' : 'other';
}

/** a listing's lines, each with its newline */
const splitLines = (text: string): string[] => text.match(/[^\n]*\n/g) ?? [];

export function makeTracefs(k: Kernel, probes: () => EventProbeSource | null, ftrace: () => FunctionTraceHooks | null = () => null): Inode {
  const fs = k.fs;
  const tracer = functionTracerFiles(k, ftrace);
  const root = pseudoDir(fs, 0o700);
  k.tracePrintk = (cpu, ip, text) => tracePrintk(k, cpu, ip, text);
  // machine state in an object the tree reaches (kprobe_events' `state`), so time travel puts it back
  const state = {
    /** error_log entries, oldest first */
    errors: [] as string[],
    /** events defined through these files: "GRP/EVENT" -> its probes' ids (several probes may share an event) */
    defined: new Map<string, number[]>(),
    /** those of them enabled (events/GRP/EVENT/enable) */
    enabled: new Set<string>(),
    /** "GRP/EVENT" -> its events/GRP/EVENT/id number */
    ids: new Map<string, number>(),
    /** "GRP/EVENT" -> the definitions of its probes, in the order of `defined` (the first says the event's kind and fields) */
    kinds: new Map<string, EventAdd[]>(),
    nextId: FIRST_EVENT_ID,
    /** "GRP/EVENT" -> what its filter file shows (absent: "none") */
    filters: new Map<string, string>(),
    /** synthetic events and event probes (dynevent/registry.ts) */
    others: { events: new Map() } as RegistryState,
  };
  const { errors, defined, enabled, ids, kinds } = state;

  /** an error_log entry, stamped with the time (tracing_log_err) */
  const logEntry = (entry: string): void => {
    const ns = k.clock.now();
    const stamp = `[${String(ns / 1_000_000_000n).padStart(5)}.${String((ns % 1_000_000_000n) / 1000n).padStart(6, '0')}] `;
    errors.push(stamp + entry);
    if (errors.length > LOG_ERRS_MAX) errors.shift();
  };
  const logError = (text: string, err: EventError, kind: EventsKind = 'dynamic'): void => {
    // the subsystem of the file written (trace_kprobe / trace_uprobe); dynamic_events: the definition's kind
    const subsystem = kind === 'kprobe' ? 'trace_kprobe' : kind === 'uprobe' ? 'trace_uprobe' : undefined;
    logEntry(errorLog(text, err, subsystem));
  };
  const mkdirs = (group: string, event: string, newGroup: boolean): void => {
    // the directories of a new event (and of a new group), made by the kernel's tracefs_create_dir (kernelService.ts)
    const svc = kernelServiceOf(k);
    if (newGroup) svc?.post({ op: UserRequestOp.TracefsMkdir, args: [], name: group });
    svc?.post({ op: UserRequestOp.TracefsMkdir, args: [], name: event });
  };
  const others = new DynEventRegistry(state.others, k, {
    logEntry, nextId: () => state.nextId++, probeEventExists: key => defined.has(key),
    created: (group, event) => mkdirs(group, event, ![...defined.keys(), ...others.keys()].some(other => other !== `${group}/${event}` && other.startsWith(`${group}/`))),
  });
  k.traceSyscall = (cpu, call, args, ret) => others.onSyscall(cpu, call, args, ret);
  /** an event is gone: so is its filter */
  const forget = (key: string): void => { state.filters.delete(key); setEventFilter(k, key, null); };

  /** One line written to kprobe_events / uprobe_events / dynamic_events: 0 or -errno. */
  const command = (raw: string, kind: EventsKind): number => {
    const src = probes();
    // dynamic_events: synthetic events and event probes are the registry's; `!KIND:[GRP/]EVENT ...` removes
    // as `-:` does (dyn_event_release)
    if (kind === 'dynamic' && others.handles(raw)) return others.create(raw);
    const line = kind === 'dynamic' ? raw.replace(/^![^:\s]*:/, '-:') : raw;
    const r = parseEventDefinition(line, { symbolCount: name => sameNameCount(k.image.symbols, name), fileKind: path => fileKindOf(k, path) });
    if (!r.ok) {
      logError(line, r.error, kind);
      return -(r.error.errno ?? Errno.EINVAL);
    }
    const cmd = r.cmd;
    if (cmd.op !== 'remove' && !takes(kind, cmd)) {
      // Linux parses the probe point as its own file's kind: a symbol is no PATH:OFFSET, a path no kernel symbol
      logError(line, { column: cmd.targetColumn, message: kind === 'uprobe' ? 'Failed to parse address or file.' : 'Invalid probed address or symbol' }, kind);
      return -Errno.EINVAL;
    }
    if (cmd.op === 'remove') {
      // the probes the command names: of an event (or a whole group with `-:GRP/`), those at the probe point given
      const hits: [string, number][] = [];
      for (const [key, defs] of kinds) {
        defs.forEach((d, i) => { if (takes(kind, d) && removeMatches(cmd, d)) hits.push([key, i]); });
      }
      const otherHits = kind === 'dynamic' ? others.matches(cmd.group, cmd.event, cmd.match ?? []) : [];
      if (!hits.length && !otherHits.length) return -Errno.ENOENT;
      // Linux refuses to remove a probe of an enabled event
      if (hits.some(([key]) => enabled.has(key)) || otherHits.some(key => others.busy(key))) return -Errno.EBUSY;
      for (const key of otherHits) others.remove(key);
      for (const [key, i] of hits.reverse()) {
        src?.remove(defined.get(key)![i]);
        defined.get(key)!.splice(i, 1);
        kinds.get(key)!.splice(i, 1);
        if (!defined.get(key)!.length) { defined.delete(key); kinds.delete(key); ids.delete(key); forget(key); }
      }
      return 0;
    }
    if (!src) { logError(line, { column: 1, message: 'kprobes are not available on this machine' }); return -Errno.ENODEV; }
    const key = `${cmd.group}/${cmd.event}`;
    // a definition naming an existing event appends a probe to it, when kind, probe type and argument types agree
    const clash = appendError(cmd, [...kinds.values()].flat());
    if (clash) { logError(line, clash, kind); return -Errno.EEXIST; }
    // a synthetic, event-probe or syscall event of that name (trace_probe_register_event_call: EVENT_EXIST)
    if (others.get(key)) { logError(line, { column: cmd.column ?? 1, message: 'Given group/event name is already used by another event', code: 'EVENT_EXIST' }, kind); return -Errno.EEXIST; }
    const c = src.compileProbeFile(line, EVENTS_FILE);
    const bad = c.diagnostics.find(d => d.severity === 'error');
    if (bad) { logError(line, { column: bad.column, message: bad.message }, kind); return -Errno.EINVAL; }
    const added = src.addProbeSpecs(c.specs as never[], EVENTS_FILE);
    if (added.errors.length) {
      for (const p of added.probes) src.remove(p.id);
      const why = added.errors.join('; ');
      const errno = /ENOENT/.test(why) ? Errno.ENOENT : /EILSEQ/.test(why) ? Errno.EILSEQ : Errno.EINVAL;
      // trace_kprobe's messages for a refused registration, at the probe point
      const message = errno === Errno.ENOENT ? 'Invalid probed address or symbol'
        : errno === Errno.EILSEQ ? 'Probe point is not an instruction boundary' : 'Failed to register probe event';
      logError(line, { column: cmd.targetColumn, message }, kind);
      return -errno;
    }
    const id = added.probes[0]?.id;
    if (id === undefined) return -Errno.EINVAL;
    // a new event is registered disabled until its enable file says 1 (KPROBE_FLAG_DISABLED); a probe appended
    // to an enabled event is enabled with it
    src.setEnabled(id, enabled.has(key));
    if (!defined.has(key)) {
      const newGroup = ![...defined.keys(), ...others.keys()].some(other => other.startsWith(`${cmd.group}/`));
      mkdirs(cmd.group, cmd.event, newGroup);
      defined.set(key, []); kinds.set(key, []); ids.set(key, state.nextId++);
    }
    defined.get(key)!.push(id);
    kinds.get(key)!.push(cmd);
    return 0;
  };

  /**
   * What a file of `kind` lists: kprobe events from the kernel's event table, uprobe events from the probes,
   * both (dynamic_events) in the order they were made, as Linux's dyn_event_list keeps them: events defined
   * at boot (--event, probe files) first, then those written here in the order of their first definition.
   */
  const listed = (kind: EventsKind): string => {
    const lines = [
      ...(kind === 'uprobe' ? [] : splitLines(kprobeEvents(k))),
      ...(kind === 'kprobe' ? [] : splitLines(probes()?.uprobeEvents() ?? '')),
    ];
    if (kind !== 'dynamic') return lines.join('');
    // in the order of creation (their ids), boot-time events first
    const rank = (line: string): number => ids.get(/^[a-z]\d*:([^ ]+)/i.exec(line)?.[1] ?? '') ?? -1;
    const all = [...lines.map((line, i) => ({ line, i, r: rank(line) })), ...others.dynamicLines().map(([r, line], i) => ({ line, i: lines.length + i, r }))];
    return all.sort((a, b) => a.r - b.r || a.i - b.i).map(e => e.line).join('');
  };
  const eventsFile = (kind: EventsKind): PseudoFile => ({
    show: () => listed(kind),
    write: text => {
      for (const raw of text.split('\n')) {
        const line = stripEventComment(raw).trim();
        if (!line) continue;
        const rc = command(line, kind);
        if (rc < 0) return rc;
      }
      return bytesOf(text);
    },
    truncate: () => {
      const mine = [...defined.keys()].filter(key => takes(kind, kinds.get(key)![0]));
      if (mine.some(key => enabled.has(key))) return -Errno.EBUSY;
      if (kind === 'dynamic') { const rc = others.clear(false); if (rc < 0) return rc; }
      const src = probes();
      for (const key of mine) { for (const id of defined.get(key)!) src?.remove(id); defined.delete(key); ids.delete(key); kinds.delete(key); forget(key); }
    },
  });
  const events: PseudoFile & { state: typeof state } = { state, ...eventsFile('kprobe') };

  /** Enable or disable the defined events whose key passes `pick`: 0 or -errno. */
  const setEnabledWhere = (pick: (key: string) => boolean, on: boolean): number => {
    others.setEnabledWhere(pick, on);
    for (const [key, list] of defined) {
      if (!pick(key) || enabled.has(key) === on) continue;
      const defs = kinds.get(key) ?? [];
      for (const [i, id] of list.entries()) {
        const err = probes()?.setEnabled(id, on);
        // __enable_trace_kprobe skips a probe whose module is gone (or not loaded yet): the event is enabled
        // all the same, and its probe is armed when the module comes (moduleEvents.ts)
        const t = defs[i]?.target;
        if (err !== undefined && !(t?.kind === 'symbol' && t.module !== undefined && !moduleLoaded(k, t.module))) return -Errno.EINVAL;
      }
      if (on) enabled.add(key); else enabled.delete(key);
    }
    return 0;
  };
  /** events/enable and events/GRP/enable: "0", "1", "X" (mixed); a write of 0 or 1 reaches every event below */
  const enableAll = (pick: (key: string) => boolean): PseudoFile => ({
    show: () => {
      const keys = [...defined.keys(), ...others.keys()].filter(pick);
      const on = keys.filter(key => enabled.has(key) || others.get(key)?.enabled).length;
      return on === 0 ? '0\n' : on === keys.length ? '1\n' : 'X\n';
    },
    write: (text: string) => {
      const v = text.trim();
      if (v !== '0' && v !== '1') return -Errno.EINVAL;
      const rc = setEnabledWhere(pick, v === '1');
      return rc < 0 ? rc : bytesOf(text);
    },
  });
  /** events/GRP/EVENT/enable of an event defined here */
  const enableFile = (key: string): PseudoFile => ({
    show: () => (enabled.has(key) ? '1\n' : '0\n'),
    write: (text: string) => {
      const v = text.trim();
      if (!defined.has(key)) return -Errno.ENODEV;
      if (v !== '0' && v !== '1') return -Errno.EINVAL;
      const rc = setEnabledWhere(other => other === key, v === '1');
      return rc < 0 ? rc : bytesOf(text);
    },
  });
  /** events/GRP/EVENT/filter: "none", the filter as written, or its parse error (filter.ts) */
  const filterFile = (key: string): PseudoFile => ({
    show: () => state.filters.get(key) ?? 'none\n',
    write: (text: string) => {
      const def = kinds.get(key)?.[0];
      if (!def) return -Errno.ENODEV;
      const body = text.replace(/\n$/, '');
      // "0" clears the filter
      if (body.trim() === '0') { forget(key); return bytesOf(text); }
      const r = parseFilter(body, filterFields(def));
      if (!r.ok) {
        // Linux keeps the failed string with its error on show, and the event unfiltered
        state.filters.set(key, filterErrorText(body, r.error));
        setEventFilter(k, key, null);
        logEntry(filterErrorLog(body, r.error));
        return -Errno.EINVAL;
      }
      state.filters.set(key, `${r.filter.text}\n`);
      setEventFilter(k, key, r.filter);
      return bytesOf(text);
    },
  });
  const eventsDir = pseudoDir(fs);
  // the event directories follow the defined events at each lookup
  eventsDir.refresh = () => {
    for (const [group, g] of [...eventsDir.children!]) {
      if (!g.children) continue; // events/enable
      for (const [name, e] of [...g.children]) {
        if (e.children && !defined.has(`${group}/${name}`) && !others.get(`${group}/${name}`)) { g.children.delete(name); g.nlink--; }
      }
      if (![...g.children.values()].some(e => e.children)) { eventsDir.children!.delete(group); eventsDir.nlink--; }
    }
    for (const key of defined.keys()) {
      const [group, name] = key.split('/');
      if (!eventsDir.children!.get(group)?.children!.has(name)) {
        addPseudoFiles(fs, eventsDir, {
          [`${key}/enable`]: enableFile(key),
          [`${key}/id`]: { show: () => `${ids.get(key) ?? 0}\n` },
          [`${key}/filter`]: filterFile(key),
          [`${key}/format`]: { show: () => (kinds.has(key) ? eventFormat(kinds.get(key)![0], ids.get(key) ?? 0) : '') },
        });
      }
      const g = eventsDir.children!.get(group)!;
      if (!g.children!.has('enable')) addPseudoFiles(fs, g, { enable: enableAll(other => other.startsWith(`${group}/`)) });
    }
    for (const key of others.keys()) {
      const group = key.split('/')[0];
      if (!eventsDir.children!.get(group)?.children!.has(key.split('/')[1])) {
        addPseudoFiles(fs, eventsDir, Object.fromEntries(Object.entries(others.files(key)).map(([name, f]) => [`${key}/${name}`, f])));
      }
      const g = eventsDir.children!.get(group)!;
      if (!g.children!.has('enable')) addPseudoFiles(fs, g, { enable: enableAll(other => other.startsWith(`${group}/`)) });
    }
  };
  addPseudoFiles(fs, root, {
    events: eventsDir,
    kprobe_events: events,
    uprobe_events: eventsFile('uprobe'),
    dynamic_events: eventsFile('dynamic'),
    synthetic_events: {
      show: () => others.synthText(),
      write: (text: string) => {
        for (const line of text.split('\n')) {
          if (!stripEventComment(line).trim()) continue;
          const rc = others.synthLine(stripEventComment(line));
          if (rc < 0) return rc;
        }
        return bytesOf(text);
      },
      truncate: () => others.clear(true),
    },
    kprobe_profile: { show: () => kprobeProfile(k) },
    uprobe_profile: { show: () => probes()?.uprobeProfile() ?? '' },
    'events/enable': enableAll(() => true),
    README: { show: probeEventsReadme },
    available_events: { show: () => [...defined.keys(), ...others.keys()].map(key => `${key.replace('/', ':')}\n`).join('') },
    set_event: {
      show: () => [...defined.keys()].filter(key => enabled.has(key)).map(key => `${key.replace('/', ':')}\n`).join(''),
      write: (text: string) => {
        for (const word of text.split(/\s+/).filter(Boolean)) {
          const on = !word.startsWith('!');
          const spec = on ? word : word.slice(1);
          const [group, event] = spec.includes(':') ? spec.split(':', 2) : ['*', spec];
          const match = (g: string, e: string): boolean => (group === '*' || group === g) && (event === '*' || event === e);
          if (![...defined.keys(), ...others.keys()].some(key => match(...(key.split('/') as [string, string])))) return -Errno.EINVAL;
          const rc = setEnabledWhere(key => match(...(key.split('/') as [string, string])), on);
          if (rc < 0) return rc;
        }
        return bytesOf(text);
      },
      truncate: () => { setEnabledWhere(() => true, false); },
    },
    trace: {
      show: () => traceText(k, k.cpus.length, tracer.current()),
      write: (text: string) => bytesOf(text),
      truncate: () => clearTrace(k),
    },
    trace_pipe: {
      stream: {
        read: (len: number) => { const t = consumeTrace(k, len); return t === null ? null : new TextEncoder().encode(t); },
        wait: (wake: () => void) => onTraceLine(k, wake),
      },
    },
    buffer_size_kb: {
      show: () => `${traceBufferKb(k)}\n`,
      write: (text: string) => {
        const m = /^\s*(\d+)\n?$/.exec(text);
        if (!m || Number(m[1]) === 0) return -Errno.EINVAL;
        setTraceBufferKb(k, Number(m[1]));
        return bytesOf(text);
      },
    },
    ...tracer.files,
    tracing_on: {
      show: () => (tracingOn(k) ? '1\n' : '0\n'),
      // kstrtoul_from_user: a decimal number, a trailing newline allowed
      write: (text: string) => {
        const m = /^\s*(\d+)\n?$/.exec(text);
        if (!m) return -Errno.EINVAL;
        setTracingOn(k, m[1] !== '0' && !/^0+$/.test(m[1]));
        return new TextEncoder().encode(text).length;
      },
    },
    error_log: {
      show: () => errors.join(''),
      write: (text: string) => new TextEncoder().encode(text).length,
      truncate: () => { errors.length = 0; },
    },
  });
  return root;
}

/** names of a symbol table counted (number_of_same_symbols: a name several functions or objects have is not unique) */
const nameCounts = new WeakMap<SymbolTable, Map<string, number>>();

/** How many of the kernel's symbols (functions and objects, local ones too: kallsyms lists both) are named `name`. */
export function sameNameCount(symbols: SymbolTable, name: string): number {
  let m = nameCounts.get(symbols);
  if (!m) {
    m = new Map();
    for (const s of symbols.all()) {
      if (s.shndx === 0 || (s.type !== 'func' && s.type !== 'object' && s.type !== 'notype')) continue;
      m.set(s.name, (m.get(s.name) ?? 0) + 1);
    }
    nameCounts.set(symbols, m);
  }
  return m.get(name) ?? (symbols.lookup(name) ? 1 : 0);
}
