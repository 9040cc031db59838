/**
 * The dynamic events that are not probes on code (Linux 6.1's
 * dyn_event_list entries of synth_event_ops and eprobe_dyn_event_ops):
 * synthetic events (synth.ts) and event probes (eprobe.ts), beside the
 * kprobe / uprobe events tracefs.ts keeps. tracefs.ts asks this registry
 * for its lines of `dynamic_events` / `synthetic_events`, its event
 * directories, and hands it the lines that are its kind (`s:`, `e:`, a
 * `synthetic_events` line) and the removals (`-:`, `!`) that may match it.
 *
 * The state is a plain object the tracefs tree reaches, so time travel
 * puts it back with the rest of the machine.
 */
import { Errno } from '../../kernel/abi';
import type { PseudoFile } from '../../kernel/fs/pseudo';
import { SYNTH_SYSTEM, parseSynthDynamic, parseSynthLine, synthErrorLog, synthFieldsText, synthFormat, synthRemoval } from './synth';
import type { SynthEvent, SynthResult } from './synth';

export interface OtherEvent {
  kind: 'synth';
  group: string;
  event: string;
  synth: SynthEvent;
  enabled: boolean;
  /** the events/GRP/EVENT/id number (also the order of creation, as dyn_event_list keeps it) */
  id: number;
}

export interface RegistryState { events: Map<string, OtherEvent> }

/** What the registry needs of tracefs: an error_log entry, the next event id, the new event's directories made by the kernel. */
export interface RegistryHost {
  logEntry(entry: string): void;
  nextId(): number;
  created(group: string, event: string, newGroup: boolean): void;
  /** whether a kprobe/uprobe event already has this GRP/EVENT */
  probeEventExists(key: string): boolean;
}

const bytesOf = (text: string): number => new TextEncoder().encode(text).length;

export class DynEventRegistry {
  constructor(readonly state: RegistryState, private readonly host: RegistryHost) {}

  private get events(): Map<string, OtherEvent> { return this.state.events; }

  keys(): string[] { return [...this.events.keys()]; }
  get(key: string): OtherEvent | undefined { return this.events.get(key); }

  /** whether `line` (of dynamic_events) is a definition of this registry's kinds */
  handles(line: string): boolean { return /^s:/.test(line); }

  /** A definition line of dynamic_events (`s:...`): 0 or -errno. */
  create(line: string): number {
    return this.addSynth(parseSynthDynamic(line, name => this.events.has(`${SYNTH_SYSTEM}/${name}`)));
  }

  /** A line of synthetic_events: define (`NAME FIELDS`) or remove (`!NAME`). */
  synthLine(line: string): number {
    const gone = synthRemoval(line);
    if (gone !== undefined) {
      const key = `${SYNTH_SYSTEM}/${gone}`;
      const e = this.events.get(key);
      if (!e) return -Errno.ENOENT;
      if (e.enabled) return -Errno.EBUSY;
      this.events.delete(key);
      return 0;
    }
    return this.addSynth(parseSynthLine(line, name => this.events.has(`${SYNTH_SYSTEM}/${name}`)));
  }

  private addSynth(r: SynthResult): number {
    if (!r.ok) {
      this.host.logEntry(synthErrorLog(r.error));
      return -Errno[r.error.errno];
    }
    const key = `${SYNTH_SYSTEM}/${r.event.name}`;
    if (this.host.probeEventExists(key)) return -Errno.EEXIST;
    this.add({ kind: 'synth', group: SYNTH_SYSTEM, event: r.event.name, synth: r.event, enabled: false, id: 0 });
    return 0;
  }

  private add(e: OtherEvent): void {
    const newGroup = !this.keys().some(k => k.startsWith(`${e.group}/`));
    e.id = this.host.nextId();
    this.events.set(`${e.group}/${e.event}`, e);
    this.host.created(e.group, e.event, newGroup);
  }

  /**
   * The events a removal names (dyn_event_release's ops->match): of event
   * `event` ('' any) in `group` (undefined any); `args` the words after it.
   */
  matches(group: string | undefined, event: string, args: readonly string[]): string[] {
    void args; // synth_event_match looks at the name and group alone
    return [...this.events.entries()]
      .filter(([, e]) => (event === '' || e.event === event) && (group === undefined || e.group === group))
      .map(([key]) => key);
  }

  /** is_busy: an enabled event cannot be removed */
  busy(key: string): boolean { return this.events.get(key)?.enabled ?? false; }

  remove(key: string): void { this.events.delete(key); }

  /** dyn_events_release_all of this registry's events (`synth`: only synthetic ones): 0 or -EBUSY */
  clear(onlySynth: boolean): number {
    const mine = [...this.events.entries()].filter(([, e]) => !onlySynth || e.kind === 'synth');
    if (mine.some(([, e]) => e.enabled)) return -Errno.EBUSY;
    for (const [key] of mine) this.events.delete(key);
    return 0;
  }

  /** dynamic_events lines: [id, line] (synth_event_show: "s:synthetic/NAME\tFIELDS") */
  dynamicLines(): [number, string][] {
    return [...this.events.values()].map(e => [e.id, `s:${e.group}/${synthFieldsText(e.synth)}\n`]);
  }

  /** synthetic_events' text */
  synthText(): string {
    return [...this.events.values()].filter(e => e.kind === 'synth').map(e => `${synthFieldsText(e.synth)}\n`).join('');
  }

  /** Enable or disable the events whose key passes `pick` (events/enable, GRP/enable, set_event). */
  setEnabledWhere(pick: (key: string) => boolean, on: boolean): void {
    for (const [key, e] of this.events) if (pick(key)) e.enabled = on;
  }

  /** events/GRP/EVENT/{enable,id,format,filter} of an event of this registry */
  files(key: string): Record<string, PseudoFile> {
    const e = (): OtherEvent | undefined => this.events.get(key);
    return {
      enable: {
        show: () => (e()?.enabled ? '1\n' : '0\n'),
        write: (text: string) => {
          const ev = e();
          if (!ev) return -Errno.ENODEV;
          const v = text.trim();
          if (v !== '0' && v !== '1') return -Errno.EINVAL;
          ev.enabled = v === '1';
          return bytesOf(text);
        },
      },
      id: { show: () => `${e()?.id ?? 0}\n` },
      format: { show: () => { const ev = e(); return ev ? synthFormat(ev.synth, ev.id) : ''; } },
      filter: { show: () => 'none\n' },
    };
  }
}
