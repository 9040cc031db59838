/**
 * Property: a change made in the past gives exactly the machine a fresh run
 * making the same changes at the same points has. Random sequences (seeded,
 * reproducible: KPROBE_TT_SEED=<seed> runs one) of continue, instruction
 * step, reverse continue and step back (emulator/debug/timeTravel.ts, as the
 * session moves), and adding or removing a probe of every kind the debug
 * facade has: source-line kprobe and hardware breakpoints, a function
 * breakpoint, `p:` and `r:` targets, a Kretprobe-mode breakpoint, an
 * instruction breakpoint, a data breakpoint and a kwatch. A change in the
 * past goes through the session's path (SessionTimeTravel.beforeChange:
 * the recorded future is discarded). Meanwhile the test keeps the history
 * that stays (the forward calls made live, cut where a change in the past
 * dropped the rest, and the changes); at the end a fresh machine runs that
 * history without ever going back, to the session's position, and both
 * are compared: the whole machine state (machineState.ts) and the probe-hit
 * log; then both run to the end and are compared again.
 * KPROBE_TT_EACH=1 compares after every action; KPROBE_TT_ACTIONS=N makes
 * the sequences N actions long.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { bootForDebug } from '../../emulator/debug/launch';
import type { Machine } from '../../emulator/machine';
import type { ProbeManager } from '../../emulator/probes';
import { X0_SINK } from '../../emulator/arch/riscv64/insn';
import { SessionTimeTravel } from '../../emulator/debug/timeTravel';
import { repoPath } from '../util/paths';
import { firstDifference, stateLines } from './machineState';
import { probesOf } from '../../emulator/probes/attach';
import { timeTravelOf } from '../../emulator/timetravel/recorder';
import { mulberry32 } from '../util/prng';

const ARCHES = ['x86_64', 'aarch64', 'riscv64'] as const;
const SEEDS = process.env.KPROBE_TT_SEED ? [Number(process.env.KPROBE_TT_SEED)] : [1, 2, 7];
/** KPROBE_TT_EACH=1: compare after every action, not only at the end (to find the first action that parts them) */
const EACH = process.env.KPROBE_TT_EACH === '1';
/** actions per sequence (KPROBE_TT_ACTIONS=N for longer ones) */
const ACTIONS = Number(process.env.KPROBE_TT_ACTIONS ?? 28);
/** instructions per forward call of a continue, and calls per continue at most */
const SLICE = 25_000;
const SLICES_PER_CONTINUE = 4;

/**
 * Fields that are caches of the host's work, not machine state: they count
 * how the host got somewhere (how many instructions one call of the CPU's
 * run loop covered, decode-cache generations), which a re-execution in
 * other slices changes without changing the machine; the kprobes engine's
 * counts of detour frames translated code had already saved (the
 * translator is shared by the machines of the process: one may interpret
 * what the other runs translated).
 */
const HOST_WORK = /\.(tlbGeneration|instret|limit|innerInsns|lastR|lastW|lastX|cache|cacheMem|codePages|sliceLeft|stepLeft|jitState|th|presavedOptFrames|presavedKretFrames)$/;

/**
 * The x86 CPU's eager flags word (fBits) while the lazy-flags record holds
 * an operation (fOp is not F_EAGER = 0): nothing reads it until an eager
 * record overwrites it, and its leftover value depends on whether the last
 * eager record was made by the interpreter or translated code (the
 * translator is shared by the machines of the process, so one machine may
 * interpret what the other runs translated).
 */
function deadFlagBits(path: string, owner?: object): boolean {
  return path.endsWith('.fBits') && owner !== undefined && 'fOp' in owner && (owner as { fOp: unknown }).fOp !== 0;
}

/**
 * The riscv CPU's register file without its x0 sink slot (X0_SINK, the last
 * one): the interpreter's executors write there what an instruction writes
 * to x0 (the link of every `j` and `ret`), translated code drops such
 * writes and a restored context clears it; nothing reads it (x0 reads as
 * slot 0, the saved context says 0). Its leftover depends on which of them
 * ran last (the translator is shared by the machines of the process).
 */
function stateOf(arch: string): (path: string, view: ArrayBufferView) => ArrayBufferView {
  const registers = /\.regFile\.(lo|hi)$/;
  return (path, v) => (arch === 'riscv64' && registers.test(path) && v instanceof Int32Array ? v.subarray(0, X0_SINK) : v);
}

function markerLine(file: string, name: string): number {
  const i = readFileSync(repoPath('examples', 'kernel', file), 'utf8').split('\n').findIndex(l => l.includes(`/* #BP ${name} */`));
  assert.ok(i >= 0, `#BP ${name} in ${file}`);
  return i + 1;
}

/** a probe to add: what both machines register */
type AddSpec = { name: string; add(mgr: ProbeManager, m: Machine): number };

function specs(m: Machine): AddSpec[] {
  const sym = (name: string): bigint => {
    const s = m.image.symbols.lookup(name);
    assert.ok(s, `symbol ${name}`);
    return s.value;
  };
  const line = (file: string, marker: string) => ({ kind: 'line' as const, file, line: markerLine(file, marker) });
  return [
    { name: 'line do_fork_body', add: mgr => mgr.addBreakpoint({ target: line('fork.c', 'do_fork_body') }).id },
    { name: 'line sys_open_ok', add: mgr => mgr.addBreakpoint({ target: line('fs.c', 'sys_open_ok') }).id },
    { name: 'hardware line vfs_read_loop', add: mgr => mgr.addBreakpoint({ target: line('fs.c', 'vfs_read_loop'), mode: 'hardware' }).id },
    { name: 'function do_fork', add: mgr => mgr.addBreakpoint({ target: { kind: 'symbol', name: 'do_fork', offset: 0n } }).id },
    { name: 'p:alloc_pid', add: mgr => mgr.addBreakpoint({ target: 'p:alloc_pid' }).id },
    { name: 'r:sys_open', add: mgr => mgr.addBreakpoint({ target: 'r:sys_open' }).id },
    { name: 'kretprobe copy_process', add: mgr => mgr.addBreakpoint({ target: { kind: 'symbol', name: 'copy_process', offset: 0n }, mode: 'kretprobe' }).id },
    { name: 'instruction forks_done', add: mgr => mgr.addBreakpoint({ target: { kind: 'address', addr: sym('forks_done') } }).id },
    { name: 'data nr_forks', add: mgr => mgr.addDataBreakpoint({ addr: sym('nr_forks'), len: 8, access: 'write' }).id },
    {
      name: 'kwatch boot_counter',
      add: mgr => {
        const r = mgr.addProbeFile('kwatch boot_counter len=8 type=w {\n  printk("boot_counter %lu\\n", new);\n}\n', 'property.kprobe');
        assert.equal(r.probes.length, 1, r.errors.join('; '));
        return r.probes[0].id;
      },
    },
  ];
}

type Change = { kind: 'add'; spec: number } | { kind: 'remove'; id: number };
type Target = { kind: 'hit'; seq: number } | { kind: 'retired'; cpu: number; retired: number };
/** the history that stays: forward calls (cut at `target` when a change in the past dropped the rest) and changes */
type Entry = (
  | { kind: 'slice'; budget: number; after: Point; target?: Target }
  | { kind: 'step'; cpu: number; count: number; after: Point; target?: Target }
  | { kind: 'change'; change: Change }
) & { /** the recorder's call the entry is (TimeTravel.recordedCalls - 1 after it) */ op: number };
interface Point { g: number; hits: number; retired: number[] }

function pointOf(m: Machine): Point { return { g: m.totalInstructions, hits: m.kernel.hitSeq, retired: m.retired.slice() }; }

function boot(arch: string): Machine {
  return bootForDebug({ program: repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`), cpus: 2, record: true });
}

function applyChange(m: Machine, all: AddSpec[], c: Change): void {
  if (c.kind === 'add') all[c.spec].add(probesOf(m), m);
  else assert.ok(probesOf(m).remove(c.id), `remove probe ${c.id}`);
}

/** The session under test: the actions, and the history it leaves. */
class Session {
  readonly m: Machine;
  readonly travel: SessionTimeTravel;
  history: Entry[] = [];
  readonly log: string[] = [];
  /** how the machine got to where it is in the past (the stop that ends a cut forward call) */
  private arrival: Target | null = null;
  readonly all: AddSpec[];

  constructor(arch: string) {
    this.m = boot(arch);
    this.travel = new SessionTimeTravel(this.m);
    this.all = specs(this.m);
  }

  private get tt() { return timeTravelOf(this.m)!; }
  private frontier(): Point | undefined {
    for (let i = this.history.length - 1; i >= 0; i--) { const e = this.history[i]; if (e.kind !== 'change') return e.after; }
    return undefined;
  }

  continue(): void {
    for (let i = 0; i < SLICES_PER_CONTINUE; i++) {
      const live = !this.tt.inPast;
      const r = this.m.runSlice(SLICE);
      if (live) this.history.push({ kind: 'slice', budget: SLICE, after: pointOf(this.m), op: this.tt.recordedCalls - 1 });
      else this.arrival = null; // a recorded forward call's end
      if (r.kind !== 'running') break;
    }
  }

  step(cpu: number): void {
    const past = this.tt.inPast;
    const want = this.m.retired[cpu] + 1;
    const end = this.frontier();
    this.m.stepCpu(cpu, 1);
    if (!past) this.history.push({ kind: 'step', cpu, count: 1, after: pointOf(this.m), op: this.tt.recordedCalls - 1 });
    else if (!this.tt.inPast && end && this.m.totalInstructions > end.g) {
      // the recording ended on the way: the rest of the step ran live
      this.history.push({ kind: 'step', cpu, count: want - end.retired[cpu], after: pointOf(this.m), op: this.tt.recordedCalls - 1 });
    } else this.arrival = { kind: 'retired', cpu, retired: this.m.retired[cpu] };
  }

  reverseContinue(): void {
    const s = this.travel.reverseContinue();
    this.arrival = s.reason === 'entry' ? null : { kind: 'hit', seq: this.m.kernel.hitSeq };
  }

  stepBack(cpu: number): void {
    try {
      this.travel.stepBack(cpu, 'instruction');
    } catch (e) {
      assert.match(String(e), /has not run an instruction yet|not in the recording/, `step back after ${this.log.join(', ')}`);
      return;
    }
    this.arrival = { kind: 'retired', cpu, retired: this.m.retired[cpu] };
  }

  change(c: Change): void {
    if (this.tt.inPast) this.history = this.upTo();
    this.travel.beforeChange({ command: 'setBreakpoints' } as DebugProtocol.Request, () => { /* the facade's probes are the machine's */ });
    applyChange(this.m, this.all, c);
    this.history.push({ kind: 'change', change: c, op: this.tt.recordedCalls - 1 });
  }

  /**
   * The history as it stays when the future after the machine's point is
   * dropped: the recorded calls before the recorder's position, and the
   * call it is inside of cut at the stop that brought it there.
   */
  upTo(): Entry[] {
    const h = this.history.map(e => ({ ...e }));
    if (!this.tt.inPast) return h;
    const { op, inside } = this.tt.position;
    const keep = h.filter(e => e.op < op || (inside && e.op === op));
    const last = keep[keep.length - 1];
    if (inside) {
      assert.ok(last && last.op === op && last.kind !== 'change', `the recorded call ${op} the machine is inside of is a forward call of the history`);
      assert.ok(this.arrival, `how the machine got inside call ${op} (${JSON.stringify(pointOf(this.m))})`);
      last.target = this.arrival;
      last.after = pointOf(this.m);
    }
    return keep;
  }
}

/** A fresh machine running the history forward only, to the session's point. */
function fresh(arch: string, history: readonly Entry[], all: (m: Machine) => AddSpec[]): Machine {
  const m = boot(arch);
  const specsHere = all(m);
  for (const e of history) {
    if (e.kind === 'change') { applyChange(m, specsHere, e.change); continue; }
    if (e.target?.kind === 'hit') m.kernel.hitStopAt = e.target.seq;
    if (e.target?.kind === 'retired') m.travelStop = { cpu: e.target.cpu, retired: e.target.retired };
    try {
      // a cut call ends at its target (a stop that the call, made live, went past)
      if (e.kind === 'slice') m.runSlice(e.budget);
      else m.stepCpu(e.cpu, e.count);
    } finally {
      m.kernel.hitStopAt = 0;
      m.travelStop = null;
    }
    assert.deepEqual(pointOf(m), e.after, `the fresh machine after ${JSON.stringify(e)}`);
  }
  return m;
}

function compare(a: Machine, b: Machine, what: string): void {
  const skip = (path: string, owner?: object): boolean => HOST_WORK.test(path) || deadFlagBits(path, owner);
  const sa = stateLines(a, skip, stateOf(a.arch.name)), sb = stateLines(b, skip, stateOf(b.arch.name));
  assert.equal(firstDifference(sa, sb), undefined, `${what}: the machine state`);
  const seq = a.kernel.hitSeq;
  const hits = (m: Machine) => m.hitLog.records().filter(r => r.seq <= seq).map(r => JSON.stringify(r, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)));
  assert.deepEqual(hits(a), hits(b), `${what}: the probe-hit log`);
}

function runToEnd(m: Machine): void {
  // every stop of a breakpoint returns from runSlice: as many calls as it takes
  for (let i = 0; i < 200_000 && m.exit === null; i++) m.runSlice(200_000);
  assert.ok(m.exit, 'the machine ends');
}

/**
 * The kernel's task switch, a kprobe handler's return and lockstep save and
 * restore a CPU's context on some host paths and not on others (translated
 * code that saved a detour frame itself, a block run interpreted): the
 * round trip must leave the same machine to the comparison. (x86_64 is not
 * here: a restored context holds its flags eagerly where the CPU had a
 * lazy-flags record, the same flags in another form.)
 */
describe('the compared state is the machine, not how the host got there', () => {
  for (const arch of ['aarch64', 'riscv64']) {
    test(`${arch}: CPUs whose context was saved and restored are the same machine`, () => {
      const a = boot(arch), b = boot(arch);
      for (const m of [a, b]) m.runSlice(SLICE);
      for (const c of b.kernel.cpus) c.restoreContext(c.saveContext());
      compare(a, b, `${arch} after ${SLICE} instructions`);
    });
  }
});

describe('a change in the past = a fresh run making the same changes at the same points (random sequences)', () => {
  for (const arch of ARCHES) {
    for (const seed of SEEDS) {
      test(`${arch}, seed ${seed} (KPROBE_TT_SEED=${seed} repeats it)`, () => {
        const rnd = mulberry32(seed * 1000 + ARCHES.indexOf(arch));
        const s = new Session(arch);
        // a first breakpoint, so that continues stop and reverse continues have hits to go to
        s.change({ kind: 'add', spec: 0 });
        for (let n = 0; n < ACTIONS && s.m.exit === null; n++) {
          const x = rnd();
          const cpu = Math.floor(rnd() * s.m.cpus.length);
          if (x < 0.3) { s.log.push('continue'); s.continue(); }
          else if (x < 0.42) { s.log.push(`step ${cpu}`); s.step(cpu); }
          else if (x < 0.57) { s.log.push('reverse continue'); s.reverseContinue(); }
          else if (x < 0.67) { s.log.push(`step back ${cpu}`); s.stepBack(cpu); }
          else if (x < 0.87) {
            const spec = Math.floor(rnd() * s.all.length);
            s.log.push(`add ${s.all[spec].name}${timeTravelOf(s.m)!.inPast ? ' (in the past)' : ''}`);
            s.change({ kind: 'add', spec });
          } else {
            const ids = probesOf(s.m).list().map(p => p.id);
            if (!ids.length) continue;
            const id = ids[Math.floor(rnd() * ids.length)];
            s.log.push(`remove ${id}${timeTravelOf(s.m)!.inPast ? ' (in the past)' : ''}`);
            s.change({ kind: 'remove', id });
          }
          s.log[s.log.length - 1] += ` -> ${s.m.totalInstructions}/${s.m.kernel.hitSeq}${timeTravelOf(s.m)!.inPast ? ' (past)' : ''}`;
          if (EACH) compare(s.m, fresh(arch, s.upTo(), specs), `seed ${seed} on ${arch}: ${s.log.join(', ')}`);
        }
        const steps = `seed ${seed} on ${arch}: ${s.log.join(', ')}`;
        compare(s.m, fresh(arch, s.upTo(), specs), `${steps}; at the session's point`);
        // going on, the session follows the recording (the changes in it included), then runs live
        const f = fresh(arch, s.history, specs);
        runToEnd(s.m);
        runToEnd(f);
        compare(s.m, f, `${steps}; at the end of both runs`);
      });
    }
  }
});
