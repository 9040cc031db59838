/**
 * `--at N:ACTION` for `kprobe-run run` (repeatable): an action carried out
 * once the machine has run N instructions in all (deterministic: the same
 * image, probes and actions give the same trace). Actions, as the debugger's
 * views offer them while a session runs:
 *
 *   kprobes-enabled=0|1      the debugfs kprobes `enabled` knob
 *   sysctl=NAME=VALUE        a kernel sysctl (debug.kprobes_optimization=0|1)
 *   disable=PROBE            disable_kprobe on a --probes probe
 *   enable=PROBE             enable_kprobe
 *   unregister=PROBE         unregister it
 *
 * PROBE: `FILE:LINE` of the probe in its .kprobe file (the file name as
 * given, or its base name), or its target as written (`do_fork`,
 * `do_fork+0x4`) when one probe has it. Each action says what it did on
 * stderr (an `emulator` line); one that cannot be done (no such probe, a bad
 * value) ends the run with a one-line error naming the option. As in Linux,
 * unregistering a probe that is already unregistered is harmless: a line
 * says so and the run goes on; enabling or disabling it is -EINVAL.
 */
import { basename } from 'node:path';
import type { Machine } from '../../machine';
import type { ProbeEntry } from '../../probes';
import { CliError, CliIo } from '../io';
import { registerRunOption, RunContext } from './runOptions';
import { probesOf } from '../../probes/attach';

const ACTIONS = ['kprobes-enabled', 'sysctl', 'disable', 'enable', 'unregister'] as const;
type ActionName = typeof ACTIONS[number];

export interface TimedAction {
  /** total instructions after which it runs */
  at: number;
  /** the option text, for messages */
  text: string;
  apply(m: Machine, io: CliIo): void;
}

/** Probes an --at action unregistered, per machine (a later action may name them again). */
const unregistered = new WeakMap<Machine, { entry: ProbeEntry; at: number }[]>();

const matches = (e: ProbeEntry, which: string): boolean =>
  !!e.file && (`${e.file.name}:${e.file.line}` === which || `${basename(e.file.name)}:${e.file.line}` === which);

/** The live probe `which` names, or the one an earlier action unregistered (gone). */
function findProbe(m: Machine, which: string, opt: string): { entry: ProbeEntry; goneAt?: number } {
  const all = probesOf(m).list('file');
  const byPos = all.filter(e => matches(e, which));
  if (byPos.length === 1) return { entry: byPos[0] };
  const byTarget = all.filter(e => e.target === which);
  if (byTarget.length === 1) return { entry: byTarget[0] };
  if (byTarget.length > 1) throw new CliError(`${opt}: ${byTarget.length} probes are on '${which}'; name one as FILE:LINE (${byTarget.map(e => `${e.file?.name}:${e.file?.line}`).join(', ')})`);
  const gone = unregistered.get(m) ?? [];
  const goneByPos = gone.filter(g => matches(g.entry, which));
  const goneByTarget = gone.filter(g => g.entry.target === which);
  const g = goneByPos.length === 1 ? goneByPos[0] : goneByTarget.length === 1 ? goneByTarget[0] : undefined;
  if (g) return { entry: g.entry, goneAt: g.at };
  throw new CliError(`${opt}: no --probes probe '${which}' (give FILE:LINE or the target as written${all.length ? `; probes: ${all.map(e => `${e.file?.name}:${e.file?.line} ${e.target}`).join(', ')}` : ''})`);
}

function action(name: ActionName, arg: string, opt: string): (m: Machine, io: CliIo) => string {
  switch (name) {
    case 'kprobes-enabled':
      return m => {
        if (probesOf(m).writeKprobesEnabled(arg) !== 0) throw new CliError(`${opt}: the enabled knob takes 0 or 1, not '${arg}'`);
        return `/sys/kernel/debug/kprobes/enabled = ${arg}`;
      };
    case 'sysctl':
      return m => {
        const eq = arg.indexOf('=');
        if (eq <= 0) throw new CliError(`${opt}: expected sysctl=NAME=VALUE`);
        const r = m.writeSysctl(arg.slice(0, eq).trim(), arg.slice(eq + 1));
        if (r.errno !== 0) throw new CliError(`${opt}: ${r.reason}`);
        return `sysctl ${arg}`;
      };
    default:
      return m => {
        const { entry: e, goneAt } = findProbe(m, arg, opt);
        const what = `${name}_${e.kind === 'kretprobe' ? 'kretprobe' : 'kprobe'} ${e.file?.name}:${e.file?.line} (${e.kind} ${e.target})`;
        if (goneAt !== undefined) {
          const since = `already unregistered (at ${goneAt} instructions)`;
          if (name === 'unregister') return `${what}: ${since}, nothing to do`;
          throw new CliError(`${opt}: ${what}: -EINVAL, the probe was ${since}`);
        }
        if (name === 'unregister') {
          probesOf(m).remove(e.id);
          const list = unregistered.get(m) ?? [];
          list.push({ entry: e, at: m.totalInstructions });
          unregistered.set(m, list);
          return what;
        }
        const err = probesOf(m).setEnabled(e.id, name === 'enable');
        if (err) throw new CliError(`${opt}: ${err}`);
        return what;
      };
  }
}

registerRunOption({
  name: '--at', arg: 'N:ACTION', repeatable: true, commands: ['run'],
  help: 'after N instructions in all, do ACTION: kprobes-enabled=0|1, sysctl=NAME=VALUE, disable=PROBE, '
    + 'enable=PROBE or unregister=PROBE, where PROBE is FILE:LINE of a --probes probe or its target as written '
    + '(e.g. --at 300000:disable=do_fork); deterministic',
  apply: (v, ctx: RunContext) => {
    const opt = `--at ${v}`;
    const m = /^([0-9][0-9_]*):([a-z-]+)=(.+)$/.exec(v);
    if (!m) throw new CliError(`--at: expected N:ACTION=ARG (e.g. 300000:disable=do_fork), got '${v}'`);
    const name = m[2] as ActionName;
    if (!ACTIONS.includes(name)) throw new CliError(`--at: unknown action '${m[2]}' (known: ${ACTIONS.join(', ')})`);
    const at = Number(m[1].replace(/_/g, ''));
    if (!Number.isSafeInteger(at)) throw new CliError(`--at: instruction count '${m[1]}' is too large`);
    const act = action(name, m[3], opt);
    ctx.timed.push({
      at, text: v,
      apply: (mach, io) => { const what = act(mach, io); io.err(`kprobe-run: at ${mach.totalInstructions} instructions: ${what}\n`); },
    });
  },
});
