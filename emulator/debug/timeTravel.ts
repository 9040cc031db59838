/**
 * Reverse execution for a debug session (a front end's step back, reverse
 * continue and go to a hit of the timeline), on the machine's time-travel recorder
 * (emulator/timetravel/recorder.ts):
 *
 *   stepBack, granularity instruction  -> the selected CPU one instruction back
 *   stepBack, line (default)           -> back to the first instruction of the previous source line
 *                                         the CPU ran (at most LINE_BACK_LIMIT instructions back)
 *   reverseContinue                    -> the previous hit of any enabled probe (breakpoint, .kprobe
 *                                         file probe, kretprobe, uprobe, watchpoint), else the start
 *                                         of the recording
 *   goToHit(seq)                       -> the stop after hit `seq` of the probe-hit log
 *
 * Each move answers with where the machine stopped (a front end reports it
 * as a stop) and positionLine() gives the console line that marks where in
 * the run the machine now is.
 */
import type { Machine } from '../machine';
import type { BreakpointHit } from '../probes';
import { timeTravelOf } from '../timetravel/recorder';
import type { TravelResult } from '../timetravel/recorder';
import type { HitRecord } from '../trace/hitLog';
import { kprobeDisabled } from '../kprobes/kprobe';

/** A change a front end is about to make (its request's name: setBreakpoints, writeMemory, evaluate...). */
export interface MachineChange { command: string }

/** A line step back gives up after this many instructions (a loop without line information). */
export const LINE_BACK_LIMIT = 2000;

export interface TravelStop {
  /** why the machine stopped there (a DAP stopped reason) */
  reason: 'step' | 'breakpoint' | 'goto' | 'entry';
  cpu: number;
  description: string;
  /** the probe address to report as the stop's pc (a stop after a hit: the probe, not its slot) */
  reportPc?: bigint;
}

/** How the Debug Console names a change request when it discards the recorded future. */
function changeName(request: MachineChange): string {
  switch (request.command) {
    case 'setBreakpoints': case 'setFunctionBreakpoints': case 'setInstructionBreakpoints': case 'setDataBreakpoints': case 'setExceptionBreakpoints':
      return `a breakpoint change (${request.command})`;
    case 'setVariable': case 'setExpression': case 'writeMemory': case 'evaluate':
      return `a write (${request.command})`;
    default:
      return `a probe change (${request.command})`;
  }
}

/** What a stop at a recorded point reported: shown again when time travel lands there. */
interface StopNote { cpu: number; reportPc?: bigint; hit?: BreakpointHit }

export class SessionTimeTravel {
  /** stops by recorded position (a kprobe stop sits in its slot: the note keeps the probe address and the hit) */
  private readonly notes = new Map<string, StopNote>();

  constructor(private readonly m: Machine) {}

  /** A stop of the machine: what it reported, kept for when time travel comes back to this point. */
  noteStop(cpu: number, reportPc: bigint | undefined, hit: BreakpointHit | undefined): void {
    const k = this.positionKey();
    if (k !== undefined && (reportPc !== undefined || hit)) this.notes.set(k, { cpu, reportPc, hit });
  }

  /**
   * A request that changes the machine is about to run. In
   * the past the recorded future is discarded (the recorder says how much in
   * the Debug Console), the stops noted there are forgotten, and `resync`
   * makes the probes of this point the client's breakpoints.
   */
  beforeChange(request: MachineChange, resync: () => void): void {
    const tt = timeTravelOf(this.m);
    if (!tt) return;
    const wasPast = tt.inPast;
    tt.mutating(changeName(request));
    if (!wasPast) return;
    const g = this.m.totalInstructions;
    for (const k of [...this.notes.keys()]) if (Number(k.slice(0, k.indexOf(':'))) > g) this.notes.delete(k);
    resync();
  }

  /** What a stop of `cpu` at the machine's current point reported, when there was one. */
  noteHere(cpu: number): StopNote | undefined {
    const k = this.positionKey();
    const note = k === undefined ? undefined : this.notes.get(k);
    return note?.cpu === cpu ? note : undefined;
  }

  private positionKey(): string | undefined {
    const m = this.m;
    return timeTravelOf(m) ? `${m.totalInstructions}:${m.kernel.hitSeq}:${m.retired.join(',')}` : undefined;
  }

  /** The selected CPU one instruction or one source line back. */
  stepBack(cpu: number, granularity: 'instruction' | 'line'): TravelStop {
    const tt = this.need();
    if (granularity === 'instruction') {
      const r = tt.stepBack(cpu);
      return this.stop(r, 'step', cpu, `Stepped back one instruction on CPU ${cpu}`);
    }
    const lineOf = (): string | undefined => {
      const l = this.m.image.lines?.lineForAddress(this.m.cpus[cpu].getPc());
      return l && l.line > 0 ? `${l.file}:${l.line}` : undefined;
    };
    const start = lineOf();
    let n = 0;
    let prev: string | undefined;
    // back until the pc leaves the starting line, then while it stays on the line it reached
    for (; n < LINE_BACK_LIMIT; n++) {
      const r = tt.stepBack(cpu);
      if (!r.ok) return this.stop(r, 'step', cpu, '');
      const here = lineOf();
      if (prev === undefined) {
        if (here !== undefined && here !== start) prev = here;
        continue;
      }
      if (here !== prev) {
        // one too far: the previous line began one instruction later
        tt.seek({ kind: 'retired', cpu, retired: this.m.retired[cpu] + 1 });
        break;
      }
    }
    const msg = n >= LINE_BACK_LIMIT ? `Stepped back ${LINE_BACK_LIMIT} instructions without reaching another source line` : `Stepped back one line on CPU ${cpu}`;
    return { reason: 'step', cpu, description: msg };
  }

  /**
   * Back to the previous hit of a probe enabled now (a kprobe of the
   * kprobes engine disabled or unregistered since is passed over; uprobe
   * and watchpoint hits always count), or the start of the recording.
   */
  reverseContinue(): TravelStop {
    const tt = this.need();
    const log = this.m.hitLog;
    const recs = log.records();
    const bySeq = new Map(recs.map(r => [r.seq, r]));
    const engine = this.m.hasKprobes ? this.m.kprobes : null;
    const enabledNow = new Map<number, boolean>();
    const enabled = (h: HitRecord): boolean => {
      if (!engine || h.kind === 'uprobe' || h.kind === 'uretprobe' || h.kind === 'watchpoint') return true;
      let on = enabledNow.get(h.seq);
      if (on === undefined) {
        const p = engine.getKprobe(h.addr); // a kretprobe's return hits carry its entry probe's address
        on = p !== undefined && !kprobeDisabled(p);
        enabledNow.set(h.seq, on);
      }
      return on;
    };
    const r = tt.reverseToHit(recs, seq => { const h = bySeq.get(seq); return h !== undefined && enabled(h); });
    if (!r.ok) throw new Error(`reverse continue: ${r.why}`);
    const seq = this.hitSeq();
    const rec = bySeq.get(seq) ?? [...recs].reverse().find(h => h.seq <= seq);
    if (r.description === 'the start of the recording' || !rec) {
      return { reason: 'entry', cpu: r.cpu ?? 0, description: 'Reverse continue: the start of the recording' };
    }
    return { reason: 'breakpoint', cpu: rec.cpu, description: `Reverse continue: hit ${rec.seq} of ${rec.probe}`, reportPc: rec.addr };
  }

  /** To the stop after hit `seq` of the probe-hit log (the timeline's click). */
  goToHit(seq: number): TravelStop {
    const tt = this.need();
    const rec = this.m.hitLog.records().find(h => h.seq === seq);
    if (!rec) throw new Error(`hit ${seq} is not in the probe-hit log`);
    const r = tt.goToHit(seq);
    if (!r.ok) throw new Error(`go to hit ${seq}: ${r.why}`);
    return { reason: 'goto', cpu: rec.cpu, description: `Hit ${seq} of ${rec.probe}`, reportPc: rec.addr };
  }

  /** The Debug Console line that marks where the machine now is. */
  positionLine(): string {
    const m = this.m;
    const secs = Number(m.kernel.clock.now() / 1000n) / 1e6;
    return `kprobe: time travel: now at ${m.totalInstructions} instructions, [${secs.toFixed(6)}], after hit ${this.hitSeq()}${timeTravelOf(m)?.inPast ? ' (continue replays the recording)' : ''}`;
  }

  private stop(r: TravelResult, reason: TravelStop['reason'], cpu: number, description: string): TravelStop {
    if (!r.ok) throw new Error(`step back: ${r.why}`);
    return { reason, cpu, description };
  }

  private need() {
    const tt = timeTravelOf(this.m);
    if (!tt) throw new Error('time travel is off in this session (launch attribute "record": false)');
    return tt;
  }

  private hitSeq(): number {
    return this.m.kernel.hitSeq;
  }
}
