/**
 * Parser of tracefs dynamic-event definitions, the lines users write to
 * /sys/kernel/debug/tracing/kprobe_events and uprobe_events:
 *
 *   p[:[GRP/][EVENT]] [MOD:]SYM[+offs][%return]|MEMADDR [FETCHARGS]
 *   r[MAXACTIVE][:[GRP/][EVENT]] [MOD:]SYM[+0]|MEMADDR [FETCHARGS]
 *   p[:[GRP/]EVENT] PATH:OFFSET[%return][(REF_CTR_OFFSET)] [FETCHARGS]   (a PATH makes it a uprobe)
 *   r[:[GRP/]EVENT] PATH:OFFSET[(REF_CTR_OFFSET)] [FETCHARGS]
 *   -:[GRP/][EVENT] [PROBEPOINT [NAME=FETCHARG...]]
 *
 * FETCHARGS: [NAME=]FETCHARG[:TYPE], FETCHARG one of %REG, @ADDR,
 * @SYM[+|-offs], @+OFFSET (uprobes), $stackN, $stack, $argN, $retval,
 * $comm, +|-[u]OFFS(FETCHARG), \IMM, \"STR"; TYPE one of u8..u64, s8..s64,
 * x8..x64, string, ustring, symbol, b<width>@<offset>/<container>, and
 * TYPE[N] arrays (default: x64, string for $comm) (argParse.ts).
 *
 * The checks are Linux 6.1's (trace_kprobe.c __trace_kprobe_create,
 * trace_uprobe.c __trace_uprobe_create, trace_probe.c), in Linux's order:
 * the probe point, then the event name, then the arguments; an error
 * carries Linux's code and is at the column Linux's error_log puts its '^'
 * (test/tracing/linuxSyntaxErrors.test.ts runs Linux's own selftests of
 * that). Never throws. Registers are checked against an architecture when
 * one is given (resolveEventArch does it later for text parsed without
 * one); kernel symbols and user files when the options can look them up.
 */
import { EADDRNOTAVAIL, ENOENT, ProbeFail, fail, failPlain, failWith, linuxErrorMessage, withErrno } from './errors';
import { IDENT, parseArg, regList, resolveReg } from './argParse';
import type { ArgContext, EventArch } from './argParse';
import { kstrtol, kstrtoul, kstrtouint } from './kstrto';
import { KRETPROBE_MAXACTIVE_MAX, MAX_EVENT_NAME_LEN, MAX_TRACE_ARGS } from './limits';
import type { EventAdd, EventCommand, EventError, EventTarget, FetchSource } from './types';

export { KRETPROBE_MAXACTIVE_MAX, MAX_TRACE_ARGS } from './limits';
export { fetchType } from './argParse';
export type { EventArch } from './argParse';

export interface EventParseOptions {
  /** check and resolve %REG names (without: resolveEventArch later) */
  arch?: EventArch;
  /**
   * how many kernel symbols have this name (Linux: 0 is "Invalid probed
   * address or symbol", more than 1 "The symbol is not unique"); without it
   * the symbol is looked up when the probe is registered
   */
  symbolCount?: (name: string) => number;
  /** what a uprobe's PATH is: a regular file, something else, or undefined when there is nothing */
  fileKind?: (path: string) => 'file' | 'other' | undefined;
}

export type EventParseResult = { ok: true; cmd: EventCommand } | { ok: false; error: EventError };

/** the is_good_system_name of a group: a C identifier that may also hold '-' */
export const GROUP = /^[A-Za-z_-][A-Za-z0-9_-]*$/;

export interface Word { text: string; column: number }

/** split on blanks, keeping each word's 1-based column */
export function words(text: string): Word[] {
  const out: Word[] = [];
  const re = /\S+/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) out.push({ text: m[0], column: m.index + 1 });
  return out;
}

/** Parse one definition line (no comment). */
export function parseEventDefinition(text: string, opts: EventParseOptions = {}): EventParseResult {
  try {
    return { ok: true, cmd: parseOrThrow(text, opts) };
  } catch (e) {
    if (e instanceof ProbeFail) {
      const error: EventError = { column: e.column, message: e.message };
      if (e.code !== undefined) error.code = e.code;
      if (e.errno !== undefined) error.errno = e.errno;
      return { ok: false, error };
    }
    return { ok: false, error: { column: 1, message: `cannot parse the definition: ${e instanceof Error ? e.message : String(e)}` } };
  }
}

function parseOrThrow(raw: string, opts: EventParseOptions): EventCommand {
  const w = words(raw);
  const text = raw.trim();
  if (!w.length) throw failPlain(1, 'empty definition: expected p[:[GRP/]EVENT] TARGET [FETCHARGS], r[MAXACTIVE][:[GRP/]EVENT] TARGET [FETCHARGS] or -:[GRP/]EVENT');
  const head = w[0];
  if (head.text.startsWith('-')) return parseRemove(w, text);
  const kind = head.text[0];
  if (kind !== 'p' && kind !== 'r') {
    throw failPlain(head.column, `expected 'p' (probe), 'r' (return probe) or '-:' (remove) at the start of the definition, not '${head.text}'`);
  }
  const colon = head.text.indexOf(':', 1);
  const eventText = colon >= 0 ? head.text.slice(colon + 1) : undefined;
  const mid = head.text.slice(1, colon >= 0 ? colon : undefined);
  let maxactive: number | undefined;
  if (/^[0-9]/.test(mid)) {
    if (kind === 'p') throw fail(head.column + 1, 'MAXACT_NO_KPROBE', `: only a return probe (r${mid}) takes MAXACTIVE`);
    // r0: kprobetrace.rst documents 0 as the default maxactive, and so does this parser (6.1's code says BAD_MAXACT)
    const n = mid.length > MAX_EVENT_NAME_LEN - 1 ? undefined : kstrtouint(mid);
    if (n === undefined) throw fail(head.column + 1, 'BAD_MAXACT', ` '${mid}': expected a number from 1 to ${KRETPROBE_MAXACTIVE_MAX}`);
    if (n > BigInt(KRETPROBE_MAXACTIVE_MAX)) throw fail(head.column + 1, 'MAXACT_TOO_BIG', `: ${mid} (at most ${KRETPROBE_MAXACTIVE_MAX})`);
    maxactive = Number(n);
  } else if (mid) {
    throw failPlain(head.column + 1, `expected ':' or a blank after '${kind}' but found '${mid[0]}'`);
  }
  if (w.length < 2) {
    if (eventText !== undefined) eventName(eventText, head.column + colon + 1, head.text.slice(0, colon + 1));
    throw failPlain(raw.trimEnd().length + 1, 'missing the probe point: expected [MOD:]SYM[+offs] or MEMADDR (a kprobe), or PATH:OFFSET (a uprobe)');
  }
  const tw = w[1];
  const place = parsePlace(tw, kind === 'r', opts);
  const target = place.target;
  const subsystem = target.kind === 'user' ? 'uprobe' : 'kprobe';
  if (maxactive !== undefined && subsystem === 'uprobe') throw failPlain(head.column + 1, 'Maxactive is not for uprobe: r[MAXACTIVE] applies to kretprobes only');
  let group: string | undefined, event: string | undefined;
  if (eventText !== undefined) ({ group, event } = eventName(eventText, head.column + colon + 1, head.text.slice(0, colon + 1)));
  const type = place.ret ? 'r' : 'p';
  const last = w[w.length - 1];
  const def: EventAdd = {
    op: 'add', type, subsystem, group: group ?? (subsystem === 'uprobe' ? 'uprobes' : 'kprobes'),
    event: event ?? defaultEventName(type, target), target, targetText: tw.text, targetColumn: tw.column, args: [], text,
    column: head.column, endColumn: last.column + last.text.length,
  };
  if (maxactive !== undefined) def.maxactive = maxactive;
  if (w.length - 2 > MAX_TRACE_ARGS) throw failPlain(w[2 + MAX_TRACE_ARGS].column, `Too many arguments: an event has at most ${MAX_TRACE_ARGS}`);
  const ctx: ArgContext = {
    kernel: subsystem === 'kprobe', ret: type === 'r', fentry: place.fentry, targetText: tw.text, arch: opts.arch, names: new Set(), size: 0,
  };
  w.slice(2).forEach((aw, i) => def.args.push(parseArg(aw.text, aw.column, i, ctx)));
  return def;
}

/** -:[GRP/][EVENT] [PROBEPOINT [ARGS]] (dyn_event_release: Linux logs no error for these) */
function parseRemove(w: Word[], text: string): EventCommand {
  const head = w[0];
  if (!head.text.startsWith('-:')) throw failPlain(head.column + 1, "expected ':' after '-' (-:[GRP/]EVENT removes an event)");
  const s = head.text.slice(2);
  const slash = s.indexOf('/');
  const group = slash >= 0 ? s.slice(0, slash) : undefined;
  const event = slash >= 0 ? s.slice(slash + 1) : s;
  if (group === undefined && !event) throw failPlain(head.column + 2, 'Event name is not specified: expected -:[GRP/]EVENT');
  const cmd: EventCommand = { op: 'remove', group, event, text };
  if (w.length > 1) cmd.match = w.slice(1).map(x => x.text);
  return cmd;
}

/** traceprobe_parse_event_name: [GRP/]EVENT or GRP.EVENT at 1-based column `col` (GRP/ alone: the event name is generated) */
function eventName(s: string, col: number, lead: string): { group?: string; event?: string } {
  let slash = s.indexOf('/');
  if (slash < 0) slash = s.indexOf('.');
  let group: string | undefined;
  let ev = s;
  let ecol = col;
  if (slash >= 0) {
    group = s.slice(0, slash);
    if (!group) throw fail(col, 'NO_GROUP_NAME', ` before '${s[slash]}'`);
    if (slash + 1 > MAX_EVENT_NAME_LEN) throw fail(col, 'GROUP_TOO_LONG', ` (at most ${MAX_EVENT_NAME_LEN - 1} characters)`);
    if (!GROUP.test(group)) throw fail(col, 'BAD_GROUP_NAME', `, not '${group}'`);
    ev = s.slice(slash + 1);
    ecol = col + slash + 1;
  }
  if (!ev) {
    if (slash >= 0) return { group };
    throw fail(ecol, 'NO_EVENT_NAME', `: expected [GRP/]EVENT after '${lead}'`);
  }
  if (ev.length >= MAX_EVENT_NAME_LEN) throw fail(ecol, 'EVENT_TOO_LONG', ` (at most ${MAX_EVENT_NAME_LEN - 1} characters)`);
  if (!IDENT.test(ev)) throw fail(ecol, 'BAD_EVENT_NAME', `, not '${ev}'`);
  return { group, event: ev };
}

/**
 * The kernel's generated name: p_SYM_OFFS / r_SYM_OFFS / p_0xADDR (':' and
 * '.' become '_'); uprobes p_BASE_0xOFFSET, BASE the file's name up to its
 * first '.', '-' or '_' (Linux writes 'p' for uretprobes too).
 */
export function defaultEventName(type: 'p' | 'r', t: EventTarget): string {
  let s: string;
  switch (t.kind) {
    case 'symbol': s = `${type}_${t.module ? `${t.module}:` : ''}${t.name}_${t.offset}`; break;
    case 'address': s = `${type}_0x${t.addr.toString(16)}`; break;
    case 'user': {
      const file = t.path.split('/').pop() ?? t.path;
      const base = file.split(/[.\-_]/)[0];
      s = t.offset !== undefined ? `p_${base}_0x${t.offset.toString(16)}` : `p_${base}_${t.symbol}${t.symOffset ? `_0x${t.symOffset.toString(16)}` : ''}`;
      break;
    }
  }
  s = s.replace(/[^A-Za-z0-9_]/g, '_').slice(0, MAX_EVENT_NAME_LEN - 1);
  return /^[0-9]/.test(s) ? `_${s}` : s;
}

interface Place { target: EventTarget; ret: boolean; fentry: boolean }

function parsePlace(tw: Word, ret: boolean, opts: EventParseOptions): Place {
  const s = tw.text;
  const addr = kstrtoul(s);
  if (addr !== undefined) {
    if (addr === 0n) throw fail(tw.column, 'FAIL_REG_PROBE', ': address 0');
    return { target: { kind: 'address', addr }, ret, fentry: false };
  }
  if (s.includes('/')) return parseUserPlace(tw, ret, opts);
  let sym = s;
  const pct = s.indexOf('%');
  if (pct >= 0) {
    if (s.slice(pct) !== '%return') throw fail(tw.column + pct, 'BAD_ADDR_SUFFIX', ` '${s.slice(pct)}': expected %return`);
    sym = s.slice(0, pct);
    ret = true;
  }
  // traceprobe_split_symbol_offset: the offset from the first '+' or '-'
  const so = /[+-]/.exec(sym);
  const name = so ? sym.slice(0, so.index) : sym;
  const offset = so ? kstrtol(sym.slice(so.index)) : 0n;
  if (/^[0-9]/.test(s)) throw failWith(tw.column, 'BAD_PROBE_ADDR', `Invalid probed address or symbol '${s}': expected a number (MEMADDR) or [MOD:]SYM[+offs]`);
  if (offset === undefined || offset < 0n || offset > 0xffffffffn) {
    throw fail(tw.column, 'BAD_PROBE_ADDR', ` '${s}': expected [MOD:]SYM[+offs] or MEMADDR${offset !== undefined && offset < 0n ? ' (a negative offset is not allowed)' : ''}`);
  }
  const mc = name.indexOf(':');
  const module = mc >= 0 ? name.slice(0, mc) : undefined;
  const fn = mc >= 0 ? name.slice(mc + 1) : name;
  if ((module !== undefined && !IDENT.test(module)) || !/^[A-Za-z_.][\w.$]*$/.test(fn)) {
    throw fail(tw.column, 'BAD_PROBE_ADDR', ` '${s}': expected [MOD:]SYM[+offs] or MEMADDR`);
  }
  const count = module === undefined ? opts.symbolCount?.(fn) : undefined;
  // kprobe_on_func_entry: a return probe is at a function's entry (an unknown symbol is reported below)
  if (ret && offset !== 0n && count !== 0) throw fail(tw.column, 'BAD_RETPROBE', `: a return probe takes SYM or SYM+0, not ${sym}`);
  if (count === 0) throw withErrno(fail(tw.column, 'BAD_PROBE_ADDR', `: the kernel has no symbol '${fn}'`), ENOENT);
  if (count !== undefined && count > 1) throw withErrno(fail(tw.column, 'NON_UNIQ_SYMBOL', `: ${count} symbols are named '${fn}' (probe one by its address)`), EADDRNOTAVAIL);
  const target: EventTarget = module !== undefined ? { kind: 'symbol', module, name: fn, offset } : { kind: 'symbol', name: fn, offset };
  return { target, ret, fentry: offset === 0n };
}

/**
 * The MOD:SYM of a kprobe event's probe point as trace_kprobe keeps it:
 * `symbol` is the name its kprobe is registered by, "MOD:SYM" whole for a
 * module's symbol (tk->symbol; kallsyms_lookup_name looks SYM up in MOD
 * only, so `nosuchmod:do_fork` finds nothing while "nosuchmod" is not
 * loaded, never the kernel's do_fork); `module` the module it waits for,
 * split off such a name as trace_kprobe_module_exist does (the first ':').
 */
export function moduleSymbol(t: { module?: string; name: string } | string): { module?: string; name: string; symbol: string } {
  if (typeof t !== 'string') return t.module !== undefined ? { module: t.module, name: t.name, symbol: `${t.module}:${t.name}` } : { name: t.name, symbol: t.name };
  const colon = t.indexOf(':');
  return colon > 0 ? { module: t.slice(0, colon), name: t.slice(colon + 1), symbol: t } : { name: t, symbol: t };
}

/** PATH:OFFSET[%return][(REF_CTR_OFFSET)] (and PATH:SYM[+offs], an extension of this emulator) */
function parseUserPlace(tw: Word, ret: boolean, opts: EventParseOptions): Place {
  const s = tw.text;
  const colon = s.lastIndexOf(':');
  if (colon < 0 || colon < s.lastIndexOf('/')) throw failPlain(tw.column + s.length, `expected ':OFFSET' after the path '${s}' (PATH:OFFSET)`);
  const path = s.slice(0, colon);
  const kind = opts.fileKind?.(path);
  if (opts.fileKind && kind === undefined) throw fail(tw.column, 'FILE_NOT_FOUND', `: ${path}`);
  if (kind === 'other') throw fail(tw.column, 'NO_REGULAR_FILE', `: ${path}`);
  const at = tw.column + colon + 1;
  let what = s.slice(colon + 1);
  let refCtr: bigint | undefined;
  const open = what.indexOf('(');
  if (open >= 0) {
    const close = what.indexOf(')', open);
    if (close < 0) throw fail(at + what.length, 'REFCNT_OPEN_BRACE', ": expected ')'");
    if (close + 1 < what.length) throw fail(at + close + 1, 'BAD_REFCNT_SUFFIX', `: nothing may follow ')', not '${what.slice(close + 1)}'`);
    refCtr = kstrtoul(what.slice(open + 1, close));
    if (refCtr === undefined) throw fail(at + open + 1, 'BAD_REFCNT', ` '${what.slice(open + 1, close)}': expected a number`);
    what = what.slice(0, open);
  }
  const pct = what.indexOf('%');
  if (pct >= 0) {
    if (what.slice(pct) !== '%return') throw fail(at + pct, 'BAD_ADDR_SUFFIX', ` '${what.slice(pct)}': expected %return`);
    what = what.slice(0, pct);
    ret = true;
  }
  if (!what) throw fail(at, 'BAD_UPROBE_OFFS', ': expected a number after the path (PATH:OFFSET)');
  if (/^[0-9]/.test(what)) {
    const off = kstrtoul(what);
    if (off === undefined) throw fail(at, 'BAD_UPROBE_OFFS', ` '${what}': expected a decimal or 0x hex number`);
    const target: EventTarget = { kind: 'user', path, offset: off };
    if (refCtr !== undefined) target.refCtr = refCtr;
    return { target, ret, fentry: false };
  }
  const m = /^([A-Za-z_][\w.$]*)(?:\+(\S+))?$/.exec(what);
  if (!m) throw fail(at, 'BAD_UPROBE_OFFS', ` '${what}': expected a number (or a symbol of the program)`);
  const so = m[2] !== undefined ? kstrtoul(m[2]) : 0n;
  if (so === undefined || so > 0xffffffffn) throw failPlain(at + m[1].length + 1, `Invalid probed address suffix '+${m[2]}': expected a number`);
  if (ret && so !== 0n) throw failPlain(at + m[1].length, 'Retprobe address must be an function entry: a return probe takes no offset (or +0)');
  const target: EventTarget = { kind: 'user', path, symbol: m[1], symOffset: so };
  if (refCtr !== undefined) target.refCtr = refCtr;
  return { target, ret, fentry: false };
}

function walk(s: FetchSource, f: (s: FetchSource) => void): void {
  f(s);
  if (s.k === 'deref') walk(s.inner, f);
}

/**
 * Check a definition parsed without an architecture against one: its
 * registers (resolved to pt_regs names in place) and its @SYM symbols.
 * Errors carry the column in the definition text.
 */
export function resolveEventArch(def: EventAdd, arch: EventArch, symbolExists?: (name: string) => boolean): EventError[] {
  const errs: EventError[] = [];
  for (const a of def.args) {
    walk(a.source, s => {
      if (s.k === 'reg') { const e = resolveReg(s, arch); if (e) errs.push(e); }
      if (s.k === 'sym' && symbolExists && !symbolExists(s.name)) errs.push({ column: s.column, message: `Invalid memory address: the image has no symbol '${s.name}' (@SYM)` });
    });
  }
  return errs;
}

/**
 * The kernel's error_log entry for a bad definition: the message (Linux's
 * own text when the error carries Linux's code, else ours), the command as
 * Linux logs it (its words joined by one blank, as argv_split left them),
 * and a '^' under the column:
 *
 *   trace_kprobe: error: Invalid register name
 *     Command: p:myprobe do_sys_open %foo
 *                                    ^
 */
export function errorLog(text: string, err: EventError, subsystem = /\S+\/\S*:/.test(text.split(/\s+/)[1] ?? '') ? 'trace_uprobe' : 'trace_kprobe'): string {
  const lead = '  Command: ';
  const { command, column } = loggedCommand(text, err.column);
  return `${subsystem}: error: ${linuxErrorMessage(err)}\n${lead}${command}\n${' '.repeat(lead.length + Math.max(0, column - 1))}^\n`;
}

/** the command's words joined by one blank, and where a 1-based column of the text falls in it */
export function loggedCommand(text: string, column: number): { command: string; column: number } {
  const w = words(text);
  if (!w.length) return { command: text, column };
  let at = 1;
  let mapped = column - w[0].column + 1;
  for (const x of w) {
    if (x.column <= column) mapped = at + (column - x.column);
    at += x.text.length + 1;
  }
  return { command: w.map(x => x.text).join(' '), column: Math.max(1, mapped) };
}

/** Whether a line is a dynamic-event definition (starts with p, r[N] or -:, then ':' or a blank). */
export function looksLikeEventDefinition(text: string): boolean {
  return /^\s*(?:[pr][0-9]*(?::|\s)|-:)/.test(text);
}

/** `text` without a trailing comment: from '#' (tracefs) or a '//' after a blank (.kprobe files) */
export function stripEventComment(text: string): string {
  const m = /(^|\s)(#|\/\/)/.exec(text);
  return m ? text.slice(0, m.index + m[1].length) : text;
}
