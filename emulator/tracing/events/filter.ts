/**
 * Event filters: tracefs events/GRP/EVENT/filter, in the syntax of Linux's
 * kernel/trace/trace_events_filter.c (Documentation/trace/events.rst,
 * "Event filtering"):
 *
 *   filter := expr; expr := term ('||' term)*; term := unary ('&&' unary)*
 *   unary  := '!' unary | '(' expr ')' | FIELD OP VALUE
 *   numeric fields: == != < <= > >= and & (a bit test: FIELD & VALUE is
 *   not 0); VALUE a decimal, 0x hex or negative integer
 *   string fields: == != and ~ (a glob: *, ?, [...]); VALUE a "..." or
 *   '...' string (6.1 takes no bare word: "did you forget quotes")
 *
 * The fields are the event's own (its fetch arguments by name; kprobes
 * __probe_ip, kretprobes __probe_func and __probe_ret_ip) and the common
 * ones (common_pid, common_type, common_flags, common_preempt_count; COMM
 * and CPU as 6.1 adds them). "0" written clears the filter, as in Linux.
 * A bad filter is -EINVAL with Linux's parse error, its position (the
 * 0-based byte where Linux's parser stood) and message: the filter file
 * then shows the string, a '^' line and "parse_error: MESSAGE", and the
 * event is unfiltered (Linux swaps in the filter with the error and
 * disables it).
 */

import type { EventAdd, FetchArgDef } from './types';

/** err_text of trace_events_filter.c, by error */
export const FILTER_ERRORS = {
  INVALID_OP: 'Invalid operator',
  TOO_MANY_OPEN: 'Too many \'(\'',
  TOO_MANY_CLOSE: 'Too few \'(\'',
  MISSING_QUOTE: 'Missing matching quote',
  OPERAND_TOO_LONG: 'Operand too long',
  EXPECT_STRING: 'Expecting string field',
  EXPECT_DIGIT: 'Expecting numeric field',
  ILLEGAL_FIELD_OP: 'Illegal operation for field type',
  FIELD_NOT_FOUND: 'Field not found',
  ILLEGAL_INTVAL: 'Illegal integer value',
  INVALID_FILTER: 'Meaningless filter expression',
  INVALID_VALUE: 'Invalid value (did you forget quotes)?',
} as const;
export type FilterErrorKind = keyof typeof FILTER_ERRORS;

export interface FilterError { kind: FilterErrorKind; message: string; pos: number }

export type FieldKind = 'num' | 'str';
export type FieldValue = { kind: 'num'; v: bigint; signed: boolean } | { kind: 'str'; v: string };

type Op = '==' | '!=' | '<' | '<=' | '>' | '>=' | '&' | '~';
type Node =
  | { k: 'or' | 'and'; a: Node; b: Node }
  | { k: 'not'; a: Node }
  | { k: 'pred'; field: string; op: Op; num?: bigint; str?: string };

export interface EventFilter { text: string; root: Node }

/** the longest operand Linux takes (MAX_FILTER_STR_VAL) */
const MAX_OPERAND = 256;
const STR_OPS: readonly Op[] = ['==', '!=', '~'];

class ParseFail extends Error {
  constructor(readonly err: FilterError) { super(err.message); }
}
const fail = (kind: FilterErrorKind, pos: number): never => { throw new ParseFail({ kind, message: FILTER_ERRORS[kind], pos }); };

/**
 * Linux's calc_stack pre-pass: quotes and parentheses balance. An unclosed
 * quote is reported at it, a ')' with no '(' at it, an unclosed '(' at it.
 */
function balance(s: string): void {
  let quote = '', lastQuote = 0;
  const opens: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) { if (c === quote) quote = ''; continue; }
    if (c === '"' || c === '\'') { quote = c; lastQuote = i; } else if (c === '(') opens.push(i);
    else if (c === ')') { if (!opens.length) fail('TOO_MANY_CLOSE', i); opens.pop(); }
  }
  if (quote) fail('MISSING_QUOTE', lastQuote);
  if (opens.length) fail('TOO_MANY_OPEN', opens[opens.length - 1]);
}

/**
 * Parse a filter for an event with `fields` (name -> kind). The errors and
 * their positions are parse_pred's: an unknown field just after its name,
 * an operator at its start, a quoted value for a numeric field or an
 * operator strings do not take at the quote, a number for a string field
 * or a glob on a number at the value, an unquoted word at its start
 * ("did you forget quotes"), a number that kstrtoll refuses at its start.
 */
export function parseFilter(text: string, fields: ReadonlyMap<string, FieldKind>): { ok: true; filter: EventFilter } | { ok: false; error: FilterError } {
  const s = text.replace(/\n$/, '');
  let i = 0;
  const ws = (): void => { while (i < s.length && /\s/.test(s[i])) i++; };
  const expr = (): Node => {
    let a = term();
    for (ws(); s.startsWith('||', i); ws()) { i += 2; a = { k: 'or', a, b: term() }; }
    return a;
  };
  const term = (): Node => {
    let a = unary();
    for (ws(); s.startsWith('&&', i); ws()) { i += 2; a = { k: 'and', a, b: unary() }; }
    return a;
  };
  const unary = (): Node => {
    ws();
    if (s[i] === '!' && s[i + 1] !== '=') { i++; return { k: 'not', a: unary() }; }
    if (s[i] === '(') {
      i++;
      const a = expr();
      ws();
      if (s[i] !== ')') fail('INVALID_FILTER', i);
      i++;
      return a;
    }
    return pred();
  };
  const pred = (): Node => {
    ws();
    const fStart = i;
    while (i < s.length && /[A-Za-z0-9_]/.test(s[i])) i++;
    const field = s.slice(fStart, i);
    if (!field) fail('INVALID_FILTER', fStart);
    const kind = fields.get(field);
    if (!kind) fail('FIELD_NOT_FOUND', i);
    ws();
    const op = (['==', '!=', '<=', '>=', '<', '>', '&', '~'] as const).find(o => s.startsWith(o, i) && !(o === '&' && s.startsWith('&&', i)));
    if (!op) fail('INVALID_OP', i);
    i += op!.length;
    ws();
    const vStart = i;
    if (s[i] === '"' || s[i] === '\'') {
      if (!STR_OPS.includes(op!)) fail('ILLEGAL_FIELD_OP', i);
      if (kind !== 'str') fail('EXPECT_DIGIT', i);
      const q = s[i];
      let j = i + 1, value = '';
      for (; j < s.length && s[j] !== q; j++) {
        if (s[j] === '\\' && s[j + 1] === q) j++;
        value += s[j];
      }
      if (j >= s.length) fail('MISSING_QUOTE', vStart);
      if (value.length >= MAX_OPERAND) fail('OPERAND_TOO_LONG', vStart + 1);
      i = j + 1;
      return { k: 'pred', field, op: op!, str: value };
    }
    if (/[0-9-]/.test(s[i] ?? '')) {
      if (kind === 'str') fail('EXPECT_STRING', i);
      if (op === '~') fail('ILLEGAL_FIELD_OP', i);
      if (s[i] === '-') i++;
      while (i < s.length && /[A-Za-z0-9]/.test(s[i])) i++;
      const value = s.slice(vStart, i);
      // 0xfeedfacedeadbeef is 18 chars at most
      if (value.length >= 24) fail('OPERAND_TOO_LONG', i);
      const m = /^(-?)(0x[0-9a-f]+|0[0-7]*|[1-9][0-9]*)$/i.exec(value);
      if (!m) fail('ILLEGAL_INTVAL', vStart);
      const mag = m![2].length > 1 && m![2][0] === '0' && !/^0x/i.test(m![2]) ? BigInt(`0o${m![2].slice(1)}`) : BigInt(m![2]);
      return { k: 'pred', field, op: op!, num: m![1] ? -mag : mag };
    }
    return fail('INVALID_VALUE', i);
  };
  try {
    balance(s);
    ws();
    if (i >= s.length) fail('INVALID_FILTER', 0);
    const root = expr();
    ws();
    if (i < s.length) fail('INVALID_FILTER', i);
    return { ok: true, filter: { text: s, root } };
  } catch (e) {
    if (e instanceof ParseFail) return { ok: false, error: e.err };
    throw e;
  }
}

/** The fields a filter of the event may name, by kind (the event's format: common fields, probe fields, arguments). */
export function filterFields(def: EventAdd): Map<string, FieldKind> {
  const m = new Map<string, FieldKind>([
    ['common_pid', 'num'], ['common_type', 'num'], ['common_flags', 'num'], ['common_preempt_count', 'num'],
    ['COMM', 'str'], ['comm', 'str'], ['CPU', 'num'], ['cpu', 'num'],
  ]);
  for (const f of def.type === 'r' ? ['__probe_func', '__probe_ret_ip'] : ['__probe_ip']) m.set(f, 'num');
  for (const a of def.args) if (a.count === undefined) m.set(a.name, a.type.kind === 'string' || a.type.symstr ? 'str' : 'num');
  return m;
}

/** An argument's value from its printed text ("0x2a", "-2", "\"str\"", "(fault)"); undefined when it has none to compare. */
export function argValue(a: FetchArgDef, text: string): FieldValue | undefined {
  if (a.type.kind === 'string' || a.type.symstr) {
    const m = /^"([^]*)"$/.exec(text);
    return { kind: 'str', v: m ? m[1] : '' };
  }
  if (!/^-?(0x[0-9a-f]+|\d+)$/i.test(text)) return undefined;
  const neg = text.startsWith('-');
  const mag = BigInt(neg ? text.slice(1) : text);
  return { kind: 'num', v: neg ? -mag : mag, signed: a.type.signed };
}

/** glob_match as filter_pred_pchar uses it: *, ?, [...] classes */
function globMatch(pattern: string, s: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) { re += '\\['; continue; }
      let cls = pattern.slice(i + 1, end).replace(/\\/g, '\\\\');
      if (cls.startsWith('!')) cls = `^${cls.slice(1)}`;
      re += `[${cls}]`;
      i = end;
    } else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${re}$`, 's').test(s);
}

/** Whether an event's field values pass the filter. */
export function filterMatch(f: EventFilter, values: ReadonlyMap<string, FieldValue>): boolean {
  const ev = (n: Node): boolean => {
    switch (n.k) {
      case 'or': return ev(n.a) || ev(n.b);
      case 'and': return ev(n.a) && ev(n.b);
      case 'not': return !ev(n.a);
      case 'pred': {
        const v = values.get(n.field);
        if (!v) return false;
        if (v.kind === 'str') {
          const eq = n.op === '~' ? globMatch(n.str!, v.v) : v.v === n.str;
          return n.op === '!=' ? !eq : eq;
        }
        // a negative constant compares as the field's type does (an unsigned field sees its two's complement)
        const x = v.signed ? BigInt.asIntN(64, v.v) : BigInt.asUintN(64, v.v);
        const y = v.signed ? n.num! : BigInt.asUintN(64, n.num!);
        switch (n.op) {
          case '==': return x === y;
          case '!=': return x !== y;
          case '<': return x < y;
          case '<=': return x <= y;
          case '>': return x > y;
          case '>=': return x >= y;
          case '&': return (BigInt.asUintN(64, v.v) & BigInt.asUintN(64, n.num!)) !== 0n;
          default: return false;
        }
      }
    }
  };
  return ev(f.root);
}

/** What the filter file shows after a failed write (append_filter_err): the string, '^' under the error, the message. */
export function filterErrorText(text: string, e: FilterError): string {
  const s = text.replace(/\n$/, '');
  let pos = Math.min(e.pos, s.length);
  if (pos) pos++;
  return `${s}\n${'^'.padStart(pos)}\nparse_error: ${e.message}\n`;
}

/** error_log's entry for it (tracing_log_err with "event filter parse error") */
export function filterErrorLog(text: string, e: FilterError): string {
  const lead = '  Command: ';
  const s = text.replace(/\n$/, '');
  return `event filter parse error: error: ${e.message}\n${lead}${s}\n${' '.repeat(lead.length + Math.min(e.pos, s.length))}^\n`;
}

/**
 * The filters of a kernel's events, "GRP/EVENT" -> filter, on the kernel
 * object itself (under a symbol) so that time travel puts them back with
 * the machine.
 */
const FILTERS = Symbol('event filters');
type WithFilters = { [FILTERS]?: Map<string, EventFilter> };

export function eventFilter(kernel: object, key: string): EventFilter | undefined {
  return (kernel as WithFilters)[FILTERS]?.get(key);
}

export function setEventFilter(kernel: object, key: string, f: EventFilter | null): void {
  const k = kernel as WithFilters;
  const m = k[FILTERS] ??= new Map();
  if (f) m.set(key, f); else m.delete(key);
}
