/**
 * trace_printk / trace_puts (kernel/trace/trace.c __trace_puts,
 * __trace_bprintk; trace_output.c print_bprintk_msg): the text a kernel or
 * module function writes into the trace buffer, shown in `trace` and
 * `trace_pipe` as "<context>FUNC: text", FUNC being the caller's function
 * (%ps of its _THIS_IP_). The string's own newline ends the line.
 */
import type { Kernel } from '../../kernel/kernel';
import { recordTraceLine } from './traceBuffer';
import { tracingOn } from './tracingOn';
import { traceContextText } from './format';

/** One trace_printk from `cpu`, called at `ip`, its formatted text. */
export function tracePrintk(k: Kernel, cpu: number, ip: bigint, text: string): void {
  if (!tracingOn(k)) return;
  const task = k.currentTask(cpu);
  const ns = k.clock.now(cpu);
  const fn = k.image.symbols.resolve(ip)?.sym.name ?? `0x${ip.toString(16)}`;
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  const line = `${traceContextText({ comm: task?.comm ?? '', pid: task?.pid ?? 0, cpu, ns, flags: '.....' })}${fn}: ${body}`;
  recordTraceLine(k, cpu, ns, line);
  k.printk(cpu, line, 'probe');
}
