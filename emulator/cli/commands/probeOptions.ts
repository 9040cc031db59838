/**
 * Probe options of `kprobe-run run`:
 *
 *   --probes FILE.kprobe   (repeatable) compile the file against the image and
 *                          register its probes before the kernel runs. Compile
 *                          errors: "file:line:col: message" on stderr, exit 1,
 *                          nothing runs. A registration failure (an unknown
 *                          symbol: -ENOENT, with a "did you mean") prints one
 *                          line per probe on stderr and the run goes on.
 *                          Without IMAGE, run boots the image the files' `image
 *                          "..."` header names (probeFilesImage).
 *   --list                 after power-off, print /sys/kernel/debug/kprobes/list
 *                          (and the hit counts of the probes) after the console;
 *                          a kwatch line names its debug register, address,
 *                          len and type.
 *   --kprobes-enabled 0|1  the debugfs `enabled` knob at boot (0: probes are
 *                          registered but not armed).
 *   --event 'DEF'          (repeatable) a kprobe_events / uprobe_events
 *                          definition (`p:myprobe do_sys_open dfd=%di`,
 *                          `r:ret do_sys_open $retval`, `-:myprobe`), as one
 *                          more line of probe file: its hits print the
 *                          kernel's trace line. A bad definition prints the
 *                          kernel's error_log (the column marked '^'), exit 1.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Machine } from '../../machine';
import { didYouMean, similarSymbols } from '../../elf';
import type { ProbeSpec } from '../../handlers';
import { parseProbeFileImage } from '../../handlers';
import { ProbeManager } from '../../probes';
import type { ProbeListRow } from '../../probes';
import { fileProbeLabel } from '../../probes/fileProbes';
import { CliError, CliIo } from '../io';
import { hex } from '../../memory/address';
import { RunContext, registerRunOption } from './runOptions';
import { errorLog, kprobeEvents, kprobeProfile } from '../../tracing/events';
import { hitLogListSection } from '../../trace/report';
import { probesOf } from '../../probes/attach';

interface ProbeCliState {
  files: string[];
  /** --event definitions, in order */
  events: string[];
  list: boolean;
  enabled?: boolean;
}

const states = new WeakMap<RunContext, ProbeCliState>();

/** The context's probe state; the setup/teardown hooks are added once, on first use. */
function stateOf(ctx: RunContext): ProbeCliState {
  let s = states.get(ctx);
  if (s) return s;
  const st: ProbeCliState = { files: [], events: [], list: false };
  states.set(ctx, st);
  ctx.setup.push((m, io) => setupProbes(m, io, st));
  ctx.teardown.push((m, io) => { if (st.list) printList(m, io); });
  return st;
}

function readProbeFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new CliError(`--probes: cannot read ${path}${code === 'ENOENT' ? ': no such file' : code ? `: ${code}` : ''}`);
  }
}

function samePath(a: string, b: string): boolean {
  try { return realpathSync(a) === realpathSync(b); } catch { return resolve(a) === resolve(b); }
}

/** Compile every file first (any error: exit 1 before boot), then register. */
export function setupProbes(m: Machine, io: CliIo, st: ProbeCliState): void {
  if (st.files.length === 0 && st.events.length === 0 && st.enabled === undefined) return;
  let mgr: ProbeManager;
  try {
    mgr = probesOf(m);
  } catch (e) {
    throw new CliError(`--probes: ${e instanceof Error ? e.message : String(e)}`);
  }
  const compiled = st.files.map(f => ({ file: f, ...mgr.compileProbeFile(readProbeFile(f), f) }));
  let errors = 0, eventErrors = 0;
  if (st.events.length) {
    const lines = eventLines(st.events);
    const c = { file: EVENT_FILE, ...mgr.compileProbeFile(lines.map(l => l.text).join('\n'), EVENT_FILE) };
    eventErrors = printEventDiagnostics(lines, c.diagnostics, io);
    compiled.push({ ...c, diagnostics: [] });
  }
  for (const c of compiled) {
    for (const d of c.diagnostics) {
      if (d.severity === 'error') errors++;
      io.err(`${c.file}:${d.line}:${d.column}: ${d.severity === 'warning' ? 'warning: ' : ''}${d.message}\n`);
    }
    if (c.image !== undefined) {
      const want = resolve(dirname(c.file), c.image);
      if (!samePath(want, m.image.path)) io.err(`${c.file}: warning: written for image ${c.image}, running ${m.image.path}\n`);
    }
  }
  if (errors || eventErrors) {
    const where = [
      errors ? `${errors} error${errors === 1 ? '' : 's'} in probe file${st.files.length === 1 ? '' : 's'}` : '',
      eventErrors ? `${eventErrors} error${eventErrors === 1 ? '' : 's'} in --event definition${st.events.length === 1 ? '' : 's'}` : '',
    ].filter(Boolean);
    throw new CliError(`run: ${where.join(' and ')}; nothing was run`);
  }
  if (st.enabled === false) mgr.writeKprobesEnabled('0');
  for (const c of compiled) {
    const r = mgr.addProbeSpecs(c.specs, c.file, { entries: false });
    const hints = symbolHints(m, c.specs, c.file);
    for (const e of r.errors) io.err(`${e}${hints.find(h => e.startsWith(h.label))?.hint ?? ''}\n`);
  }
}

/** the file name of the --event definitions (one line each) in messages */
const EVENT_FILE = '--event';

/** One line of an --event value: the option's number and, for a value of several lines, the line's. */
interface EventLine { text: string; event: number; line?: number }

/**
 * The --event values line by line: as a write to kprobe_events, each line
 * of a value is a definition of its own.
 */
function eventLines(events: readonly string[]): EventLine[] {
  return events.flatMap((e, i) => {
    const lines = e.split(/\r?\n/);
    return lines.map((text, j) => ({ text, event: i + 1, line: lines.length > 1 ? j + 1 : undefined }));
  });
}

/** --event diagnostics as the kernel's error_log (the definition's line, '^' under the column); the number of errors */
function printEventDiagnostics(lines: readonly EventLine[], diags: readonly { line: number; column: number; message: string; severity: string }[], io: CliIo): number {
  let errors = 0;
  for (const d of diags) {
    if (d.severity === 'error') errors++;
    const l = lines[d.line - 1] ?? { text: '', event: d.line };
    const lead = l.text.length - l.text.trimStart().length;
    io.err(`--event ${l.event}${l.line !== undefined ? ` line ${l.line}` : ''}: ${errorLog(l.text.trim(), { column: d.column - lead, message: d.message })}`);
  }
  return errors;
}

/** "did you mean" for the probes whose target symbol the image does not have (their registration fails with -ENOENT). */
function symbolHints(m: Machine, specs: readonly ProbeSpec[], file: string): { label: string; hint: string }[] {
  const out: { label: string; hint: string }[] = [];
  for (const spec of specs) {
    const t = spec.target;
    if (t.kind !== 'symbol' || m.image.symbols.lookup(t.name)) continue;
    const hint = didYouMean(similarSymbols(m.image.symbols, t.name));
    if (hint) out.push({ label: `${fileProbeLabel(file, spec)}:`, hint });
  }
  return out;
}

/**
 * The image named by the `image "..."` headers of the context's probe files
 * (relative to each file), for `run --probes f.kprobe` without IMAGE:
 * undefined when no file has a header; an error when they name different images.
 */
export function probeFilesImage(ctx: RunContext): string | undefined {
  const files = states.get(ctx)?.files ?? [];
  let found: { image: string; file: string } | undefined;
  for (const f of files) {
    const header = parseProbeFileImage(readProbeFile(f), f);
    if (!header) continue;
    const image = resolve(dirname(f), header.path);
    if (found && !samePath(found.image, image)) {
      throw new CliError(`run: no IMAGE given and the probe files name different images: ${found.file} names ${found.image}, ${f} names ${image}`);
    }
    found ??= { image, file: f };
  }
  return found?.image;
}

function siteCount(p: ProbeListRow): string {
  return p.siteCount > 1 ? ` (${p.siteCount} sites)` : '';
}

/**
 * tracefs kprobe_events and kprobe_profile, where kprobe events are
 * registered (probe-file lines, --event, event breakpoints).
 */
export function printKprobeEvents(m: Machine, io: CliIo): void {
  const kernel = m.kernel;
  const events = kprobeEvents(kernel);
  if (!events) return;
  io.out(`# cat /sys/kernel/debug/tracing/kprobe_events\n${events}`);
  io.out(`# cat /sys/kernel/debug/tracing/kprobe_profile\n${kprobeProfile(kernel)}`);
}

/**
 * debugfs list (where the machine has kprobes), uprobe_events (where a
 * uprobe is registered), then one line per probe: "file:line:col kprobe
 * do_fork: 96 hits, 0 missed".
 */
export function printList(m: Machine, io: CliIo): void {
  let mgr: ProbeManager;
  try { mgr = probesOf(m); } catch (e) {
    io.out(`# /sys/kernel/debug/kprobes: ${e instanceof Error ? e.message : String(e)}\n`);
    return;
  }
  if (mgr.hasKprobes) {
    io.out('# cat /sys/kernel/debug/kprobes/list\n');
    io.out(mgr.debugfsList());
    io.out(`# cat /sys/kernel/debug/kprobes/enabled\n${mgr.kprobesEnabled ? 1 : 0}\n`);
  }
  printKprobeEvents(m, io);
  const events = mgr.uprobeEvents();
  if (events || !mgr.hasKprobes) io.out(`# cat /sys/kernel/debug/tracing/uprobe_events\n${events}`);
  if (events) io.out(`# cat /sys/kernel/debug/tracing/uprobe_profile\n${mgr.uprobeProfile()}`);
  io.out(hitLogListSection(m.hitLog));
  const probes = mgr.listRows();
  if (!probes.length) return;
  let out = '# probe hits\n';
  for (const p of probes) {
    const at = p.file ? `${p.file.name}:${p.file.line}:${p.file.column}` : `breakpoint ${p.id}`;
    const gone = p.gone;
    const w = p.watch;
    const suspended = w?.suspended ? ' [SUSPENDED]' : '';
    const state = !p.verified ? 'not registered' : `${p.hits} hit${p.hits === 1 ? '' : 's'}, ${p.nmissed} missed${gone ? ' [GONE]' : p.enabled ? suspended : ' [DISABLED]'}`;
    // a debug-register probe: its register (the number register_kwatch returned) and what it watches
    const reg = w ? ` (${w.registerName ? `${w.registerName}, ` : ''}${hex(w.addr)} len ${w.len} type ${w.type})` : '';
    out += `${at} ${p.kind} ${p.target}${siteCount(p)}${reg}: ${state}\n`;
  }
  io.out(out);
}

registerRunOption({
  name: '--probes', arg: 'FILE.kprobe', commands: ['run', 'exec'], repeatable: true,
  help: 'register the probes of a .kprobe file before boot. Compile errors stop the run '
    + 'before boot; a probe that fails to register (e.g. -ENOENT for an unknown symbol) is reported and the others run. '
    + 'Without IMAGE, the image named by the file\'s `image "..."` header is booted',
  apply: (v, ctx) => {
    if (!v) throw new CliError('--probes: expected a .kprobe file');
    stateOf(ctx).files.push(v);
  },
});
registerRunOption({
  name: '--list', help: 'after power-off, print /sys/kernel/debug/kprobes/list, the enabled knob, /sys/kernel/debug/tracing/kprobe_events and kprobe_profile, uprobe_events and each probe\'s hits and nmissed', commands: ['run', 'exec'],
  apply: (_v, ctx) => { stateOf(ctx).list = true; },
});
registerRunOption({
  name: '--event', arg: 'DEF', commands: ['run', 'exec'], repeatable: true,
  help: 'a kprobe_events / uprobe_events definition, e.g. \'p:myprobe do_sys_open dfd=%di name=+0(%di):string\', '
    + '\'r:myret do_sys_open $retval\' or \'-:myprobe\' (Linux Documentation/trace/kprobetrace.rst): each hit prints the '
    + 'trace line; a bad definition prints the kernel\'s error_log with the column and stops the run before boot',
  apply: (v, ctx) => {
    if (!v) throw new CliError('--event: expected a definition such as \'p:myprobe do_fork\'');
    stateOf(ctx).events.push(v);
  },
});
registerRunOption({
  name: '--kprobes-enabled', arg: '0|1', help: 'the debugfs kprobes `enabled` knob at boot (default 1; 0: probes are registered but not armed)', commands: ['run'],
  apply: (v, ctx) => {
    if (v !== '0' && v !== '1') throw new CliError(`--kprobes-enabled: expected 0 or 1, got '${v}'`);
    stateOf(ctx).enabled = v === '1';
  },
});
