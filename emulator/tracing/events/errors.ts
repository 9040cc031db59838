/**
 * Linux's probe-event error codes and the messages its tracefs error_log
 * prints for them (the ERRORS table of Linux 6.1's kernel/trace/
 * trace_probe.h; test/tracing/linuxSyntaxErrors.test.ts compares this table
 * with the fetched header).
 */
import type { EventError } from './types';

export const PROBE_ERRORS = {
  FILE_NOT_FOUND: 'Failed to find the given file',
  NO_REGULAR_FILE: 'Not a regular file',
  BAD_REFCNT: 'Invalid reference counter offset',
  REFCNT_OPEN_BRACE: 'Reference counter brace is not closed',
  BAD_REFCNT_SUFFIX: 'Reference counter has wrong suffix',
  BAD_UPROBE_OFFS: 'Invalid uprobe offset',
  MAXACT_NO_KPROBE: 'Maxactive is not for kprobe',
  BAD_MAXACT: 'Invalid maxactive number',
  MAXACT_TOO_BIG: 'Maxactive is too big',
  BAD_PROBE_ADDR: 'Invalid probed address or symbol',
  NON_UNIQ_SYMBOL: 'The symbol is not unique',
  BAD_RETPROBE: 'Retprobe address must be an function entry',
  BAD_ADDR_SUFFIX: 'Invalid probed address suffix',
  NO_GROUP_NAME: 'Group name is not specified',
  GROUP_TOO_LONG: 'Group name is too long',
  BAD_GROUP_NAME: 'Group name must follow the same rules as C identifiers',
  NO_EVENT_NAME: 'Event name is not specified',
  EVENT_TOO_LONG: 'Event name is too long',
  BAD_EVENT_NAME: 'Event name must follow the same rules as C identifiers',
  EVENT_EXIST: 'Given group/event name is already used by another event',
  RETVAL_ON_PROBE: '$retval is not available on probe',
  BAD_STACK_NUM: 'Invalid stack number',
  BAD_ARG_NUM: 'Invalid argument number',
  BAD_VAR: 'Invalid $-variable specified',
  BAD_REG_NAME: 'Invalid register name',
  BAD_MEM_ADDR: 'Invalid memory address',
  BAD_IMM: 'Invalid immediate value',
  IMMSTR_NO_CLOSE: 'String is not closed with \'"\'',
  FILE_ON_KPROBE: 'File offset is not available with kprobe',
  BAD_FILE_OFFS: 'Invalid file offset value',
  SYM_ON_UPROBE: 'Symbol is not available with uprobe',
  TOO_MANY_OPS: 'Dereference is too much nested',
  DEREF_NEED_BRACE: 'Dereference needs a brace',
  BAD_DEREF_OFFS: 'Invalid dereference offset',
  DEREF_OPEN_BRACE: 'Dereference brace is not closed',
  COMM_CANT_DEREF: '$comm can not be dereferenced',
  BAD_FETCH_ARG: 'Invalid fetch argument',
  ARRAY_NO_CLOSE: 'Array is not closed',
  BAD_ARRAY_SUFFIX: 'Array has wrong suffix',
  BAD_ARRAY_NUM: 'Invalid array size',
  ARRAY_TOO_BIG: 'Array number is too big',
  BAD_TYPE: 'Unknown type is specified',
  BAD_STRING: 'String accepts only memory argument',
  BAD_SYMSTRING: 'Symbol String doesn\'t accept data/userdata',
  BAD_BITFIELD: 'Invalid bitfield',
  ARG_NAME_TOO_LONG: 'Argument name is too long',
  NO_ARG_NAME: 'Argument name is not specified',
  BAD_ARG_NAME: 'Argument name must follow the same rules as C identifiers',
  USED_ARG_NAME: 'This argument name is already used',
  ARG_TOO_LONG: 'Argument expression is too long',
  NO_ARG_BODY: 'No argument expression',
  BAD_INSN_BNDRY: 'Probe point is not an instruction boundary',
  FAIL_REG_PROBE: 'Failed to register probe event',
  DIFF_PROBE_TYPE: 'Probe type is different from existing probe',
  DIFF_ARG_TYPE: 'Argument type or name is different from existing probe',
  SAME_PROBE: 'There is already the exact same probe event',
  NO_EVENT_INFO: 'This requires both group and event name to attach',
  BAD_ATTACH_EVENT: 'Attached event does not exist',
  BAD_ATTACH_ARG: 'Attached event does not have this field',
  NO_EP_FILTER: 'No filter rule after \'if\'',
  EVENT_TOO_BIG: 'Event too big (too many fields?)',
} as const;

export type ProbeErrorCode = keyof typeof PROBE_ERRORS;

/**
 * The message Linux's error_log shows for an error: the ERRORS text of its
 * code, or (an error Linux has no code for) our message.
 */
export function linuxErrorMessage(err: EventError): string {
  return err.code !== undefined && err.code in PROBE_ERRORS ? PROBE_ERRORS[err.code as ProbeErrorCode] : err.message;
}

/** A definition error on its way out of the parser: Linux's code, the column, the message with what was expected. */
export class ProbeFail extends Error {
  /** the errno of a tracefs write, when not EINVAL */
  errno?: number;
  constructor(readonly column: number, readonly code: ProbeErrorCode | undefined, message: string) { super(message); }
}

/** Linux's errnos for a probe point the kernel cannot place (uapi/asm-generic/errno*.h) */
export const ENOENT = 2, EADDRNOTAVAIL = 99;

/** `f` with the errno the write gets (trace_kprobe_create's -ENOENT / -EADDRNOTAVAIL for a symbol not there / not unique). */
export function withErrno(f: ProbeFail, errno: number): ProbeFail {
  f.errno = errno;
  return f;
}

/**
 * Fail with Linux's code: the message is Linux's text, then `more` as
 * written (what was found and what was expected: " 'x': expected ...").
 */
export function fail(column: number, code: ProbeErrorCode, more = ''): ProbeFail {
  return new ProbeFail(column, code, PROBE_ERRORS[code] + more);
}

/** Fail with Linux's code and our own message (what was found, what was expected). */
export function failWith(column: number, code: ProbeErrorCode, message: string): ProbeFail {
  return new ProbeFail(column, code, message);
}

/** Fail where Linux has no error_log entry (it rejects silently, or accepts what this emulator does not). */
export function failPlain(column: number, message: string): ProbeFail {
  return new ProbeFail(column, undefined, message);
}
