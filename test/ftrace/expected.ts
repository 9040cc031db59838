/**
 * The result of each Linux 6.1 ftracetest case (by its "description:"
 * line) in the emulated kernel, per arch and directory, as achieved; see
 * ftracetest.test.ts for why a case is not PASS. A change here is a change
 * of what the emulated kernel can do: a PASS turned into anything else is a
 * regression.
 */
export type Result = 'PASS' | 'FAIL' | 'UNRESOLVED' | 'UNTESTED' | 'UNSUPPORTED' | 'XFAIL' | 'UNDEFINED';

const KPROBE: Record<string, Result> = {
  'Kprobe dynamic event - adding and removing': 'PASS',
  'Kprobe dynamic event - busy event check': 'PASS',
  'Kprobe dynamic event with arguments': 'PASS',
  'Kprobe event with comm arguments': 'PASS',
  'Kprobe event string type argument': 'PASS',
  'Kprobe event symbol argument': 'PASS',
  'Kprobe event argument syntax': 'PASS',
  'Kprobes event arguments with types': 'PASS',
  'Kprobe event user-memory access': 'PASS',
  'Kprobe event auto/manual naming': 'PASS',
  'Kprobe dynamic event with function tracer': 'PASS',
  'Kprobe dynamic event - probing module': 'PASS',
  'Create/delete multiprobe on kprobe event': 'PASS',
  'Test failure of registering kprobe on non unique symbol': 'PASS',
  'Kprobe event parser error log check': 'PASS',
  'Kretprobe dynamic event with arguments': 'PASS',
  'Kretprobe dynamic event with maxactive': 'PASS',
  'Kretprobe %return suffix test': 'PASS',
  'Register/unregister many kprobe events': 'PASS',
  'Kprobe events - probe points': 'PASS',
  'Kprobe profile': 'PASS',
  'Uprobe event parser error log check': 'PASS',
};

const DYNEVENT: Record<string, Result> = {
  'Generic dynamic event - add/remove eprobe events': 'PASS',
  'Generic dynamic event - add/remove kprobe events': 'PASS',
  'Generic dynamic event - add/remove synthetic events': 'PASS',
  'Generic dynamic event - selective clear (compatibility)': 'PASS',
  'Event probe event parser error log check': 'PASS',
  'Generic dynamic event - generic clear event': 'PASS',
  'Generic dynamic event - check if duplicate events are caught': 'PASS',
};

/**
 * aarch64 and riscv64: the sample kernel is built without patchable
 * function entries there, so there is no function tracer (available_tracers
 * is "nop") and kprobe_ftrace.tc's `function:tracer` requirement makes it
 * UNSUPPORTED, as on a Linux built without CONFIG_FUNCTION_TRACER.
 */
const KPROBE_NO_FTRACE: Record<string, Result> = {
  ...KPROBE,
  'Kprobe dynamic event with function tracer': 'UNSUPPORTED',
};

/**
 * riscv64: Linux 6.1's kprobe_args_string.tc and kprobe_args_syntax.tc pick
 * the first argument's register by `uname -m` and know no riscv64 (Linux
 * added it later): they say "Please implement other architecture here" and
 * exit UNTESTED, as on a real riscv64 Linux 6.1.
 */
const KPROBE_RISCV64: Record<string, Result> = {
  ...KPROBE_NO_FTRACE,
  'Kprobe event string type argument': 'UNTESTED',
  'Kprobe event argument syntax': 'UNTESTED',
};

export const EXPECTED: Record<string, Record<string, Record<string, Result>>> = {
  x86_64: { kprobe: KPROBE, dynevent: DYNEVENT },
  aarch64: { kprobe: KPROBE_NO_FTRACE, dynevent: DYNEVENT },
  riscv64: { kprobe: KPROBE_RISCV64, dynevent: DYNEVENT },
};
