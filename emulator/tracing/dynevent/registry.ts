/**
 * The trace events that are not probes on code: synthetic events
 * (synth.ts) and event probes (eprobe.ts), which are dynamic events (Linux
 * 6.1's dyn_event_list entries of synth_event_ops and eprobe_dyn_event_ops),
 * and the static system-call events they may attach to (syscallEvents.ts).
 * tracefs.ts keeps the kprobe / uprobe events; it asks this registry for
 * its lines of `dynamic_events` / `synthetic_events` and its event
 * directories, and hands it the lines of its kinds (`s:`, `e:`, a
 * `synthetic_events` line) and the removals (`-:`, `!`) that may match.
 *
 * The dynamic events' state is a plain object the tracefs tree reaches, so
 * time travel puts it back with the rest of the machine.
 */
import { Errno } from '../../kernel/abi';
import type { Kernel } from '../../kernel/kernel';
import type { PseudoFile } from '../../kernel/fs/pseudo';
import { errorLog } from '../events/parse';
import { fetchArgText } from '../events/fetchArgs';
import type { FetchEnv } from '../events/fetchArgs';
import { filterErrorLog, filterMatch } from '../events/filter';
import type { FieldKind, FieldValue } from '../events/filter';
import { traceContextText } from '../events/format';
import { recordTraceLine } from '../events/traceBuffer';
import { tracingOn } from '../events/tracingOn';
import { readUser, readUserString } from '../events/runtime';
import { mustVAddr } from '../../memory/address';
import { SYNTH_SYSTEM, parseSynthDynamic, parseSynthLine, synthErrorLog, synthFieldsText, synthFormat, synthRemoval } from './synth';
import type { SynthEvent, SynthResult } from './synth';
import { eprobeFormat, eprobeLine, eprobeMatches, parseEprobe } from './eprobe';
import type { EprobeDef } from './eprobe';
import { syscallEnterText, syscallEvents, syscallExitText, syscallFieldNames, syscallFormat } from './syscallEvents';
import type { SyscallEvent } from './syscallEvents';

export type OtherEvent = { group: string; event: string; enabled: boolean; id: number } & (
  | { kind: 'synth'; synth: SynthEvent }
  | { kind: 'eprobe'; eprobe: EprobeDef }
  | { kind: 'syscall'; syscall: SyscallEvent }
);

export interface RegistryState { events: Map<string, OtherEvent>; syscallsOn?: Set<string> }

/** What the registry needs of tracefs: an error_log entry, the next event id, the new event's directories made by the kernel. */
export interface RegistryHost {
  logEntry(entry: string): void;
  nextId(): number;
  created(group: string, event: string): void;
  /** whether a kprobe/uprobe event already has this GRP/EVENT */
  probeEventExists(key: string): boolean;
}

const bytesOf = (text: string): number => new TextEncoder().encode(text).length;
const KERNEL_HALF = 1n << 63n;

export class DynEventRegistry {
  /** the static syscall events of the kernel's arch, by "syscalls/sys_enter_NAME" */
  private readonly statics: Map<string, OtherEvent>;

  constructor(readonly state: RegistryState, private readonly k: Kernel, private readonly host: RegistryHost) {
    state.syscallsOn ??= new Set();
    this.statics = new Map([...syscallEvents(k.arch.syscalls)].map(([key, e]) => {
      const [group, event] = key.split('/');
      return [key, { kind: 'syscall', group, event, syscall: e, id: e.id, enabled: false }];
    }));
  }

  private get events(): Map<string, OtherEvent> { return this.state.events; }

  /** every event of the registry, the static ones too */
  keys(): string[] { return [...this.statics.keys(), ...this.events.keys()]; }
  get(key: string): OtherEvent | undefined { return this.events.get(key) ?? this.syscallEvent(key); }
  private syscallEvent(key: string): OtherEvent | undefined {
    const e = this.statics.get(key);
    // the enabled flag lives in the state (time travel); the event itself follows the arch
    if (e) e.enabled = this.state.syscallsOn!.has(key);
    return e;
  }
  private setOn(key: string, e: OtherEvent, on: boolean): void {
    if (e.kind === 'syscall') { if (on) this.state.syscallsOn!.add(key); else this.state.syscallsOn!.delete(key); }
    e.enabled = on;
  }

  /** whether `line` (of dynamic_events) is a definition of this registry's kinds (Linux's other ops decline it) */
  handles(line: string): boolean { return /^(s:|e)/.test(line); }

  private taken(key: string): boolean { return this.get(key) !== undefined || this.host.probeEventExists(key); }

  /** A definition line of dynamic_events (`s:...`, `e...`): 0 or -errno. */
  create(line: string): number {
    if (line.startsWith('s:')) return this.addSynth(parseSynthDynamic(line, name => this.events.has(`${SYNTH_SYSTEM}/${name}`)));
    const r = parseEprobe(line, (system, event) => this.attachable(system, event), key => this.taken(key));
    if (!r.ok) {
      for (const e of r.errors) this.host.logEntry(errorLog(line, e, 'event_probe'));
      if (r.filter) this.host.logEntry(filterErrorLog(r.filter.text, r.filter.error));
      return -Errno[r.errno];
    }
    this.add({ kind: 'eprobe', group: r.def.group, event: r.def.event, eprobe: r.def, enabled: false, id: 0 });
    return 0;
  }

  /** find_and_get_event: the fields of an event an eprobe may attach to (not a kprobe, uprobe or eprobe event) */
  private attachable(system: string, event: string): ReadonlyMap<string, FieldKind> | undefined {
    const e = this.get(`${system}/${event}`);
    if (!e || e.kind === 'eprobe') return undefined;
    const names = e.kind === 'syscall' ? syscallFieldNames(e.syscall) : e.synth.fields.map(f => f.name);
    const m = new Map<string, FieldKind>([['common_pid', 'num'], ['COMM', 'str'], ['comm', 'str'], ['CPU', 'num'], ['cpu', 'num']]);
    for (const n of names) m.set(n, 'num');
    return m;
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
    e.id = this.host.nextId();
    this.events.set(`${e.group}/${e.event}`, e);
    this.host.created(e.group, e.event);
  }

  /**
   * The dynamic events a removal names (dyn_event_release's ops->match): of
   * event `event` ('' any) in `group` (undefined any); `args` the words after it.
   */
  matches(group: string | undefined, event: string, args: readonly string[]): string[] {
    return [...this.events.entries()]
      .filter(([, e]) => (event === '' || e.event === event) && (group === undefined || e.group === group))
      // synth_event_match looks at the name and group alone
      .filter(([, e]) => e.kind !== 'eprobe' || eprobeMatches(e.eprobe, args))
      .map(([key]) => key);
  }

  /** is_busy: an enabled event cannot be removed */
  busy(key: string): boolean { return this.events.get(key)?.enabled ?? false; }

  remove(key: string): void { this.events.delete(key); }

  /** dyn_events_release_all of this registry's dynamic events (`onlySynth`: only synthetic ones): 0 or -EBUSY */
  clear(onlySynth: boolean): number {
    const mine = [...this.events.entries()].filter(([, e]) => !onlySynth || e.kind === 'synth');
    if (mine.some(([, e]) => e.enabled)) return -Errno.EBUSY;
    for (const [key] of mine) this.events.delete(key);
    return 0;
  }

  /** dynamic_events lines: [id, line] (synth_event_show, eprobe_dyn_event_show) */
  dynamicLines(): [number, string][] {
    return [...this.events.values()].map(e => [e.id, e.kind === 'synth' ? `s:${e.group}/${synthFieldsText(e.synth)}\n` : e.kind === 'eprobe' ? eprobeLine(e.eprobe) : '']);
  }

  /** synthetic_events' text */
  synthText(): string {
    return [...this.events.values()].map(e => (e.kind === 'synth' ? `${synthFieldsText(e.synth)}\n` : '')).join('');
  }

  /** Enable or disable the events whose key passes `pick` (events/enable, GRP/enable, set_event). */
  setEnabledWhere(pick: (key: string) => boolean, on: boolean): void {
    for (const key of this.keys()) if (pick(key)) this.setOn(key, this.get(key)!, on);
  }

  /** events/GRP/EVENT/{enable,id,format,filter} of an event of this registry */
  files(key: string): Record<string, PseudoFile> {
    const e = (): OtherEvent | undefined => this.get(key);
    return {
      enable: {
        show: () => (e()?.enabled ? '1\n' : '0\n'),
        write: (text: string) => {
          const ev = e();
          if (!ev) return -Errno.ENODEV;
          const v = text.trim();
          if (v !== '0' && v !== '1') return -Errno.EINVAL;
          this.setOn(key, ev, v === '1');
          return bytesOf(text);
        },
      },
      id: { show: () => `${e()?.id ?? 0}\n` },
      format: {
        show: () => {
          const ev = e();
          if (!ev) return '';
          return ev.kind === 'synth' ? synthFormat(ev.synth, ev.id) : ev.kind === 'eprobe' ? eprobeFormat(ev.eprobe, ev.id) : syscallFormat(ev.syscall, ev.id);
        },
      },
      filter: { show: () => 'none\n' },
    };
  }

  /**
   * A system call entered (`ret` undefined: its arguments in `args`) or
   * returned on `cpu`: the trace line of its event when enabled, and of
   * each enabled event probe on it whose filter passes.
   */
  onSyscall(cpu: number, call: string, args: readonly bigint[], ret?: bigint): void {
    if (!tracingOn(this.k)) return;
    const key = `syscalls/sys_${ret === undefined ? 'enter' : 'exit'}_${call}`;
    const ev = this.get(key);
    if (!ev || ev.kind !== 'syscall') return;
    const probes = [...this.events.values()].filter(e => e.enabled && e.kind === 'eprobe' && `${e.eprobe.system}/${e.eprobe.attached}` === key);
    if (!ev.enabled && !probes.length) return;
    const task = this.k.currentTask(cpu);
    const ns = this.k.clock.now(cpu);
    const context = traceContextText({ comm: task?.comm ?? '', pid: task?.pid ?? 0, cpu, ns, flags: '.....' });
    const emit = (text: string): void => { const line = context + text; recordTraceLine(this.k, cpu, ns, line); this.k.printk(cpu, line, 'probe'); };
    if (ev.enabled) emit(ret === undefined ? syscallEnterText(ev.syscall, args) : syscallExitText(ev.syscall, ret));
    const fields = new Map<string, bigint>([['__syscall_nr', BigInt(ev.syscall.nr)]]);
    if (ret === undefined) ev.syscall.args.forEach(([, name], i) => fields.set(name, args[i] ?? 0n));
    else fields.set('ret', ret);
    for (const p of probes) {
      if (p.kind !== 'eprobe') continue;
      const d = p.eprobe;
      if (d.filter) {
        const values = new Map<string, FieldValue>([...fields].map(([n, v]) => [n, { kind: 'num', v, signed: false }]));
        values.set('common_pid', { kind: 'num', v: BigInt(task?.pid ?? 0), signed: true });
        values.set('COMM', { kind: 'str', v: task?.comm ?? '' }).set('comm', { kind: 'str', v: task?.comm ?? '' });
        values.set('CPU', { kind: 'num', v: BigInt(cpu), signed: false }).set('cpu', { kind: 'num', v: BigInt(cpu), signed: false });
        if (!filterMatch(d.filter, values)) continue;
      }
      const env = this.fetchEnv(cpu, fields);
      emit(`${d.event}: (${d.system}.${d.attached})${d.args.map(a => ` ${a.name}=${fetchArgText(a, env)}`).join('')}`);
    }
  }

  /** an event probe's fetch environment: the attached event's fields, the current task's user memory, kernel memory */
  private fetchEnv(cpu: number, fields: ReadonlyMap<string, bigint>): FetchEnv {
    const k = this.k;
    const kernelRead = (addr: bigint, len: number): Uint8Array => {
      if (addr < KERNEL_HALF) throw new Error('not a kernel address');
      return k.mem.readBytes(mustVAddr(addr), len);
    };
    const none = (): bigint => { throw new Error('an event probe has no registers'); };
    return {
      reg: none, sp: none, retval: none, arg: none,
      comm: () => k.currentTask(cpu)?.comm ?? '',
      field: name => fields.get(name),
      read: (addr, size, user) => {
        if (user) return readUser(k, cpu, addr, size);
        const b = kernelRead(addr, size);
        let v = 0n;
        for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]);
        return v;
      },
      readString: (addr, max, user) => {
        if (user) return readUserString(k, cpu, addr, max);
        const bytes: number[] = [];
        for (let i = 0; i < max; i++) { const c = kernelRead(addr + BigInt(i), 1)[0]; if (!c) break; bytes.push(c); }
        return new TextDecoder().decode(Uint8Array.from(bytes));
      },
      symbol: name => k.image.symbols.lookup(name)?.value,
      symbolize: addr => `0x${addr.toString(16)}`,
    };
  }
}
