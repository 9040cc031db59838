/** Linux 6.1's probe-event limits (kernel/trace/trace_probe.h, trace_kprobe.c, trace.h). */

/** arguments per event */
export const MAX_TRACE_ARGS = 128;
/** group and event names are shorter than this */
export const MAX_EVENT_NAME_LEN = 64;
/** an argument name's length at most */
export const MAX_ARG_NAME_LEN = 32;
/** an argument's expression (after NAME=), type included, at most */
export const MAX_ARGSTR_LEN = 63;
/** TYPE[N]: N at most */
export const MAX_ARRAY_LEN = 64;
/** the bytes of one event's fetched fields at most */
export const MAX_PROBE_EVENT_SIZE = 3072;
/** the fetch program of one argument: its instructions, the last one END */
export const FETCH_INSN_MAX = 16;
/** r[MAXACTIVE] at most */
export const KRETPROBE_MAXACTIVE_MAX = 4096;
/** $stackN and $argN at most: THREAD_SIZE / sizeof(long), 16 KiB stacks on x86_64, arm64 and riscv64 */
export const PARAM_MAX_STACK = 16384 / 8;
/** the argument names a probe event's own fields use (trace_probe.c reserved_field_names) */
export const RESERVED_FIELD_NAMES: readonly string[] = [
  'common_type', 'common_flags', 'common_preempt_count', 'common_pid', 'common_tgid', '__probe_ip', '__probe_ret_ip', '__probe_func',
];
