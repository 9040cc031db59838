/**
 * The kernel log: PrintkRecords, one per line, delivered to listeners as
 * they are completed. Console writes from the image are byte streams,
 * line-buffered per CPU (a partial line waits for its newline or for power
 * off); text printed by the emulator or probe handlers is split into lines
 * at once.
 */
import { PrintkRecord } from './types';

export type PrintkListener = (r: PrintkRecord) => void;

const decoder = new TextDecoder('utf-8');

export class PrintkLog {
  readonly records: PrintkRecord[] = [];
  private readonly listeners: PrintkListener[] = [];
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
    for (const l of [...this.listeners]) l(r);
  }
}
