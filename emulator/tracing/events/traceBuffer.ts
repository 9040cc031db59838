/**
 * The trace ring buffer behind tracefs `trace` and `trace_pipe`
 * (kernel/trace/ring_buffer.c, trace.c): every trace line an event writes
 * while tracing is on is kept, one buffer per CPU of `buffer_size_kb`
 * kilobytes; when a CPU's buffer is full its oldest lines are overwritten
 * (the default overwrite mode), and `entries-written` keeps counting them.
 * `trace` shows the lines of every CPU merged by time under the nop
 * tracer's header, without consuming them; `trace_pipe` consumes what it
 * shows; opening `trace` for writing with O_TRUNC clears every buffer.
 *
 * The buffer lives on the kernel object under a symbol (as the event table
 * and the tracing_on switch do), so time travel puts it back with the rest
 * of the machine.
 */
const BUFFER = Symbol('trace buffer');

/** buffer_size_kb's default (Linux's 1441792-byte per-CPU default, in KiB) */
export const DEFAULT_BUFFER_KB = 1408;
/** a ring-buffer event's header and the trace_entry before the text, counted against the buffer size */
const EVENT_OVERHEAD = 16;

interface Entry { seq: number; cpu: number; ns: bigint; text: string; bytes: number }

interface TraceBuffer {
  perCpu: Map<number, Entry[]>;
  bytes: Map<number, number>;
  sizeKb: number;
  /** lines written since the last clear, overwritten ones included */
  written: number;
  seq: number;
  /** readers of an empty trace_pipe, woken by the next line */
  waiters: (() => void)[];
}

function bufferOf(kernel: object): TraceBuffer {
  const k = kernel as { [BUFFER]?: TraceBuffer };
  return (k[BUFFER] ??= { perCpu: new Map(), bytes: new Map(), sizeKb: DEFAULT_BUFFER_KB, written: 0, seq: 0, waiters: [] });
}

/** Keep a trace line (without its newline) written on `cpu` at `ns`. */
export function recordTraceLine(kernel: object, cpu: number, ns: bigint, text: string): void {
  const b = bufferOf(kernel);
  const list = b.perCpu.get(cpu) ?? [];
  b.perCpu.set(cpu, list);
  const bytes = text.length + EVENT_OVERHEAD;
  let used = (b.bytes.get(cpu) ?? 0) + bytes;
  list.push({ seq: b.seq++, cpu, ns, text, bytes });
  const limit = b.sizeKb * 1024;
  while (used > limit && list.length) used -= list.shift()!.bytes;
  b.bytes.set(cpu, used);
  b.written++;
  for (const wake of b.waiters.splice(0)) wake();
}

/** Every buffered line, oldest first (by time, then by the order they were written). */
function entries(b: TraceBuffer): Entry[] {
  return [...b.perCpu.values()].flat().sort((x, y) => (x.ns < y.ns ? -1 : x.ns > y.ns ? 1 : x.seq - y.seq));
}

/** The current tracer's header with the irq-info columns (print_trace_header of `trace`). */
function header(b: TraceBuffer, buffered: number, cpus: number, tracer: string): string {
  return [
    `# tracer: ${tracer}`,
    '#',
    `# entries-in-buffer/entries-written: ${buffered}/${b.written}   #P:${cpus}`,
    '#',
    '#                                _-----=> irqs-off/BH-disabled',
    '#                               / _----=> need-resched',
    '#                              | / _---=> hardirq/softirq',
    '#                              || / _--=> preempt-depth',
    '#                              ||| / _-=> migrate-disable',
    '#                              |||| /     delay',
    '#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION',
    '#              | |         |   |||||     |         |',
    '',
  ].join('\n');
}

/** The `trace` file: the header (naming the current tracer), then every buffered line. */
export function traceText(kernel: object, cpus: number, tracer = 'nop'): string {
  const b = bufferOf(kernel);
  const all = entries(b);
  return header(b, all.length, cpus, tracer) + all.map(e => `${e.text}\n`).join('');
}

/**
 * `trace_pipe`: the oldest whole lines that fit in `max` bytes, consumed
 * (at least one line, cut to `max`, when the first alone is longer); null
 * when the buffer is empty.
 */
export function consumeTrace(kernel: object, max: number): string | null {
  const b = bufferOf(kernel);
  const all = entries(b);
  if (!all.length) return null;
  let text = '';
  for (const e of all) {
    const line = `${e.text}\n`;
    if (text && text.length + line.length > max) break;
    text += line;
    // the oldest line of its CPU's buffer (entries() merges the buffers in order)
    b.perCpu.get(e.cpu)!.shift();
    b.bytes.set(e.cpu, (b.bytes.get(e.cpu) ?? 0) - e.bytes);
  }
  return text.slice(0, Math.max(max, 0));
}

/** Call `wake` once the next trace line is written (a reader sleeping on an empty trace_pipe). */
export function onTraceLine(kernel: object, wake: () => void): void {
  bufferOf(kernel).waiters.push(wake);
}

/** `echo > trace`: empty every CPU's buffer and restart the written count. */
export function clearTrace(kernel: object): void {
  const b = bufferOf(kernel);
  b.perCpu.clear();
  b.bytes.clear();
  b.written = 0;
}

export function traceBufferKb(kernel: object): number { return bufferOf(kernel).sizeKb; }

/** buffer_size_kb: a new per-CPU size (at least 1 KiB); lines beyond it are dropped oldest first. */
export function setTraceBufferKb(kernel: object, kb: number): void {
  const b = bufferOf(kernel);
  b.sizeKb = Math.max(1, kb);
  const limit = b.sizeKb * 1024;
  for (const [cpu, list] of b.perCpu) {
    let used = b.bytes.get(cpu) ?? 0;
    while (used > limit && list.length) used -= list.shift()!.bytes;
    b.bytes.set(cpu, used);
  }
}
