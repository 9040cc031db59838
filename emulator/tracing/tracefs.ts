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
 *                   the command, '^' under Linux's column; `>` clears it
 *
 * The kernel's mount table knows the type; the machine hands it this
 * filesystem (kernel/fs/kernelMounts.ts), as the tracing subsystem sits
 * above the kernel's filesystem code.
 */
import { Errno } from '../kernel/abi';
import type { Kernel } from '../kernel/kernel';
import { errorLog, kprobeEvents, kprobeProfile, parseEventDefinition, setTracingOn, stripEventComment, tracingOn } from './events';
import { PseudoFile, addPseudoFiles, pseudoDir } from '../kernel/fs/pseudo';
import type { Inode } from '../kernel/fs/vfs';

/** What tracefs needs of the probe manager (compile and register event definitions, remove probes). */
export interface EventProbeSource {
  compileProbeFile(text: string, fileName: string): { specs: readonly unknown[]; diagnostics: readonly { line: number; column: number; message: string; severity: string }[] };
  addProbeSpecs(specs: readonly never[], fileName: string): { probes: readonly { id: number; verified: boolean }[]; errors: string[] };
  remove(id: number): boolean;
  /** enable_kprobe / disable_kprobe: the error text, or undefined when done */
  setEnabled(id: number, on: boolean): string | undefined;
}

/** tracing/error_log keeps this many entries (TRACING_LOG_ERRS_MAX) */
const LOG_ERRS_MAX = 16;
/** the file name of definitions written to kprobe_events, in probe labels */
const EVENTS_FILE = 'kprobe_events';

export function makeTracefs(k: Kernel, probes: () => EventProbeSource | null): Inode {
  const fs = k.fs;
  const root = pseudoDir(fs, 0o700);
  // machine state in an object the tree reaches (kprobe_events' `state`), so time travel puts it back
  const state = {
    /** error_log entries, oldest first */
    errors: [] as string[],
    /** events defined through kprobe_events: "GRP/EVENT" -> probe id */
    defined: new Map<string, number>(),
    /** those of them enabled (events/GRP/EVENT/enable) */
    enabled: new Set<string>(),
  };
  const { errors, defined, enabled } = state;

  const logError = (text: string, column: number, message: string): void => {
    const ns = k.clock.now();
    const stamp = `[${String(ns / 1_000_000_000n).padStart(5)}.${String((ns % 1_000_000_000n) / 1000n).padStart(6, '0')}] `;
    errors.push(stamp + errorLog(text, { column, message }));
    if (errors.length > LOG_ERRS_MAX) errors.shift();
  };

  /** One line written to kprobe_events: 0 or -errno. */
  const command = (line: string): number => {
    const src = probes();
    const r = parseEventDefinition(line);
    if (!r.ok) { logError(line, r.error.column, r.error.message); return -Errno.EINVAL; }
    const cmd = r.cmd;
    if (cmd.op === 'remove') {
      const key = [...defined.keys()].find(key => key === `${cmd.group}/${cmd.event}` || (cmd.group === undefined && key.endsWith(`/${cmd.event}`)));
      if (key === undefined) return -Errno.ENOENT;
      // Linux refuses to remove an enabled event
      if (enabled.has(key)) return -Errno.EBUSY;
      src?.remove(defined.get(key)!);
      defined.delete(key);
      return 0;
    }
    if (!src) { logError(line, 1, 'kprobes are not available on this machine'); return -Errno.ENODEV; }
    const key = `${cmd.group}/${cmd.event}`;
    if (defined.has(key)) return -Errno.EEXIST;
    const c = src.compileProbeFile(line, EVENTS_FILE);
    const bad = c.diagnostics.find(d => d.severity === 'error');
    if (bad) { logError(line, bad.column, bad.message); return -Errno.EINVAL; }
    const added = src.addProbeSpecs(c.specs as never[], EVENTS_FILE);
    if (added.errors.length) {
      for (const p of added.probes) src.remove(p.id);
      const why = added.errors.join('; ');
      const errno = /ENOENT/.test(why) ? Errno.ENOENT : /EILSEQ/.test(why) ? Errno.EILSEQ : Errno.EINVAL;
      // trace_kprobe's messages for a refused registration, at the probe point
      const message = errno === Errno.ENOENT ? 'Invalid probed address or symbol'
        : errno === Errno.EILSEQ ? 'Probe point is not an instruction boundary' : 'Failed to register probe event';
      logError(line, cmd.targetColumn, message);
      return -errno;
    }
    const id = added.probes[0]?.id;
    if (id === undefined) return -Errno.EINVAL;
    // a new event is registered disabled until its enable file says 1 (KPROBE_FLAG_DISABLED)
    src.setEnabled(id, false);
    defined.set(key, id);
    return 0;
  };

  const events: PseudoFile & { state: typeof state } = {
    state,
    show: () => kprobeEvents(k),
    write: text => {
      for (const raw of text.split('\n')) {
        const line = stripEventComment(raw).trim();
        if (!line) continue;
        const rc = command(line);
        if (rc < 0) return rc;
      }
      return new TextEncoder().encode(text).length;
    },
    truncate: () => {
      if (enabled.size) return -Errno.EBUSY;
      const src = probes();
      for (const id of defined.values()) src?.remove(id);
      defined.clear();
    },
  };
  /** events/GRP/EVENT/enable of an event defined here */
  const enableFile = (key: string): PseudoFile => ({
    show: () => (enabled.has(key) ? '1\n' : '0\n'),
    write: (text: string) => {
      const id = defined.get(key);
      const v = text.trim();
      if (id === undefined) return -Errno.ENODEV;
      if (v !== '0' && v !== '1') return -Errno.EINVAL;
      const err = probes()?.setEnabled(id, v === '1');
      if (err !== undefined) return -Errno.EINVAL;
      if (v === '1') enabled.add(key); else enabled.delete(key);
      return new TextEncoder().encode(text).length;
    },
  });
  const eventsDir = pseudoDir(fs);
  // the event directories follow the defined events at each lookup
  eventsDir.refresh = () => {
    for (const [group, g] of [...eventsDir.children!]) {
      for (const name of [...g.children!.keys()]) if (!defined.has(`${group}/${name}`)) { g.children!.delete(name); g.nlink--; }
      if (!g.children!.size) { eventsDir.children!.delete(group); eventsDir.nlink--; }
    }
    for (const key of defined.keys()) {
      const [group, name] = key.split('/');
      if (!eventsDir.children!.get(group)?.children!.has(name)) addPseudoFiles(fs, eventsDir, { [`${key}/enable`]: enableFile(key) });
    }
  };
  addPseudoFiles(fs, root, {
    events: eventsDir,
    kprobe_events: events,
    kprobe_profile: { show: () => kprobeProfile(k) },
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
