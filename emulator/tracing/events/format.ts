/**
 * Trace lines as the kernel's `trace` file shows them (kernel/trace/
 * trace_output.c trace_print_context with the irq-info column, then
 * trace_kprobe.c print_kprobe_event / print_kretprobe_event and
 * trace_uprobe.c print_uprobe_event):
 *
 *             bash-1447    [001] d.... 1038282.286875: myprobe: (do_sys_open+0x0/0xd6) dfd=0x3
 *             bash-1447    [001] d.... 1038282.286878: myretprobe: (sys_openat+0xc/0xe <- do_sys_open) arg1=0xfffffffffffffffe
 *              zsh-24842   [006] ..... 258544.995456: zfree_entry: (0x446420) arg1=0x446420
 *
 * Context: "%16s-%-7d [%03d] " comm-pid and CPU, the five irq-info
 * characters, then " %5lu.%06lu: " seconds and microseconds (rounded,
 * ns2usecs) of the emulated kernel's clock.
 */

export interface TraceContext {
  comm: string;
  pid: number;
  cpu: number;
  /** virtual time in ns */
  ns: bigint;
  /** the irq-info column: "d...." for kprobes (the breakpoint handler runs with interrupts off), "....." for uprobes */
  flags: string;
}

/** Flags of a kprobe hit (interrupts disabled) and of a uprobe hit (task context). */
export const KPROBE_FLAGS = 'd....';
export const UPROBE_FLAGS = '.....';

/** "%16s-%-7d [%03d] FLAGS %5lu.%06lu: " */
export function traceContextText(c: TraceContext): string {
  const us = (c.ns + 500n) / 1000n;
  const secs = us / 1_000_000n;
  const rem = us % 1_000_000n;
  const comm = c.pid === 0 && !c.comm ? '<idle>' : c.comm.slice(0, 15);
  return `${comm.padStart(16)}-${String(c.pid).padEnd(7)} [${String(c.cpu).padStart(3, '0')}] ${c.flags} ${secs.toString().padStart(5)}.${rem.toString().padStart(6, '0')}: `;
}

/** `(ip)` of a kprobe event: %pS with offset and size */
export function kprobeLocation(symWithOffset: string): string {
  return `(${symWithOffset})`;
}

/** `(caller+off/size <- func)` of a kretprobe event */
export function kretprobeLocation(retWithOffset: string, funcName: string): string {
  return `(${retWithOffset} <- ${funcName})`;
}

/** `(0xip)` of a uprobe event, `(0xret <- 0xfunc)` of a uretprobe event */
export function uprobeLocation(ip: bigint, func?: bigint): string {
  return func === undefined ? `(0x${ip.toString(16)})` : `(0x${ip.toString(16)} <- 0x${func.toString(16)})`;
}

/** A whole trace line (no newline): context, "EVENT: ", location, " name=value"... */
export function traceLine(c: TraceContext, event: string, location: string, args: string): string {
  return `${traceContextText(c)}${event}: ${location}${args}`;
}
