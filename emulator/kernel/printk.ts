/**
 * The kernel log: PrintkRecords, one per line, delivered to listeners as
 * they are completed. Console writes from the image are byte streams,
 * line-buffered per CPU (a partial line waits for its newline or for power
 * off); text printed by the emulator or probe handlers is split into lines
 * at once.
 *
 * ORDER. Records are delivered in the order they are stored (Linux's
 * printk ring buffer order, by sequence number), which is the machine's
 * execution order: CPU 0's turn of a round, then CPU 1's, ... Each record
 * carries the virtual time of its CPU (emulator/kernel/clock.ts), and every
 * CPU's turn in a round starts at the round's start time, so a line CPU 1
 * prints can carry an earlier stamp than one CPU 0 printed in the same
 * round: less than one quantum earlier, never across rounds; each CPU's own
 * stamps never go back (a CPU the debugger single-steps past the end of its
 * turn is the exception: its clock runs on outside the round). The log is not re-sorted by time, on purpose:
 *   - Linux does the same: dmesg lists records in sequence order and
 *     their stamps come from each CPU's local_clock(), which is not
 *     monotonic across CPUs, so stamps going back between CPUs is what a
 *     real kernel log shows;
 *   - a merge by time would have to hold every record until the round
 *     ends (or until every CPU's clock passed it): a line would reach the
 *     console after later code already ran, a breakpoint stop mid-round
 *     would hide lines another CPU printed before the stop in execution
 *     order, and a CPU the debugger single-steps runs outside the round
 *     order, so "the round" would no longer bound the delay.
 * The CLI and the debugger take the same records from the same listeners
 * (Machine.onPrintk), so both print the same lines in the same order; the
 * Debug Console shows each record's stamp as it is.
 */
import { hostOwned } from '../base/marks';
import { PrintkRecord } from './types';

export type PrintkListener = (r: PrintkRecord) => void;

const decoder = new TextDecoder('utf-8');

export class PrintkLog {
  readonly records: PrintkRecord[] = [];
  private readonly listeners: PrintkListener[] = hostOwned([]);
  /** quiet: time travel is re-executing what the listeners already heard (records are still kept) */
  readonly replay = hostOwned({ quiet: false });
  /** pending bytes of an unfinished console line, per CPU */
  private readonly partial = new Map<number, number[]>();
  /** keep the last `keep` records in `records` (listeners see all); older ones are dropped in batches of keep/4, so at most keep * 5/4 are held */
  constructor(private readonly keep = 100_000) {}

  onRecord(l: PrintkListener): () => void {
    this.listeners.push(l);
    return () => {
      const i = this.listeners.indexOf(l);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Console bytes from the image on `cpu`. */
  consoleBytes(cpu: number, bytes: Uint8Array, timeNs: bigint): void {
    let buf = this.partial.get(cpu);
    for (const b of bytes) {
      if (b === 0x0a) {
        const line = buf ? decoder.decode(Uint8Array.from(buf)) : '';
        this.partial.delete(cpu);
        buf = undefined;
        this.emit({ timeNs, cpu, text: line, source: 'kernel' });
      } else {
        if (!buf) { buf = []; this.partial.set(cpu, buf); }
        buf.push(b);
      }
    }
  }

  /** Text from the emulator / a probe handler: every line is a record (a trailing newline adds none). */
  text(cpu: number, text: string, source: PrintkRecord['source'], timeNs: bigint): void {
    const lines = text.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    for (const line of lines) this.emit({ timeNs, cpu, text: line, source });
  }

  /** Emit every unfinished console line (power off, end of run). */
  flush(timeNs: bigint): void {
    const cpus = [...this.partial.keys()].sort((a, b) => a - b);
    for (const cpu of cpus) {
      const buf = this.partial.get(cpu)!;
      this.partial.delete(cpu);
      this.emit({ timeNs, cpu, text: decoder.decode(Uint8Array.from(buf)), source: 'kernel' });
    }
  }

  private emit(r: PrintkRecord): void {
    this.records.push(r);
    // batched: dropping one record per line past `keep` moved the whole array every time
    if (this.records.length > this.keep + (this.keep >> 2)) this.records.splice(0, this.records.length - this.keep);
    if (!this.replay.quiet) for (const l of [...this.listeners]) l(r);
  }
}
