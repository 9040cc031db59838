/**
 * tracefs `tracing_on` (kernel/trace/trace.c rb_simple_write): 0 stops
 * recording trace lines, 1 starts it again; the events still fire (their
 * kprobe_profile hits count, as trace_kprobe's nhit does). The switch lives
 * on the kernel object under a symbol, as the event table does, so time
 * travel puts it back with the rest of the machine.
 */
const OFF = Symbol('tracing off');
type WithSwitch = { [OFF]?: boolean };

export function tracingOn(kernel: object): boolean { return !(kernel as WithSwitch)[OFF]; }

export function setTracingOn(kernel: object, on: boolean): void { (kernel as WithSwitch)[OFF] = !on; }
