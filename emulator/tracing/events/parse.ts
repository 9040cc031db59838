/**
 * Parser of tracefs dynamic-event definitions, the lines users write to
 * /sys/kernel/debug/tracing/kprobe_events and uprobe_events:
 *
 *   p[:[GRP/][EVENT]] [MOD:]SYM[+offs]|MEMADDR [FETCHARGS]
 *   r[MAXACTIVE][:[GRP/][EVENT]] [MOD:]SYM[+0]|MEMADDR [FETCHARGS]
 *   p[:[GRP/]EVENT] PATH:OFFSET [FETCHARGS]        (a PATH makes it a uprobe)
 *   r[:[GRP/]EVENT] PATH:OFFSET [FETCHARGS]
 *   -:[GRP/]EVENT
 *
 * FETCHARGS: [NAME=]FETCHARG[:TYPE], FETCHARG one of %REG, @ADDR,
 * @SYM[+|-offs], @+OFFSET (uprobes), $stackN, $stack, $argN, $retval,
 * $comm, +|-[u]OFFS(FETCHARG), \IMM, \"STR"; TYPE one of u8..u64, s8..s64,
 * x8..x64, string, ustring, symbol (default: x64, string for $comm).
 *
 * Never throws: an error names the 1-based column and what was expected,
 * as the kernel's tracefs error_log points at the bad word. Registers are
 * checked against an architecture when one is given (resolveEventArch does
 * it later for text parsed without one).
 */
import type { ArchInfo } from '../../arch/types';
import type { EventAdd, EventCommand, EventError, EventTarget, FetchArgDef, FetchSource, FetchType } from './types';

/** Linux's limits (trace_probe.h): arguments per event, name lengths, dereference nesting, kretprobe maxactive */
export const MAX_TRACE_ARGS = 128;
export const MAX_EVENT_NAME_LEN = 64;
export const MAX_ARG_NAME_LEN = 32;
export const MAX_DEREF_NESTING = 12;
export const KRETPROBE_MAXACTIVE_MAX = 4096;
/** $stackN / $argN upper bound (the kernel's PARAM_MAX_STACK) */
const PARAM_MAX_STACK = 4096 / 8;

/** What the parser needs of an architecture: register names and aliases, the long size. */
export type EventArch = Pick<ArchInfo, 'name' | 'regs' | 'regAliases'> & { abi: { pointerSize: number } };

export interface EventParseOptions {
  /** check and resolve %REG names (without: resolveEventArch later) */
  arch?: EventArch;
}

export type EventParseResult = { ok: true; cmd: EventCommand } | { ok: false; error: EventError };

class Fail extends Error {
  constructor(readonly column: number, message: string) { super(message); }
}

const INT_TYPES: readonly FetchType[] = [1, 2, 4, 8].flatMap(size => {
  const bits = size * 8;
  return [
    { name: `u${bits}`, kind: 'int', size, signed: false, hex: false },
    { name: `s${bits}`, kind: 'int', size, signed: true, hex: false },
    { name: `x${bits}`, kind: 'int', size, signed: false, hex: true },
  ] as FetchType[];
});

/** the named fetch type, or undefined */
export function fetchType(name: string, pointerSize = 8): FetchType | undefined {
  if (name === 'string') return { name, kind: 'string', size: 8, signed: false, hex: false };
  if (name === 'ustring') return { name, kind: 'string', size: 8, signed: false, hex: false, user: true };
  if (name === 'symbol') return { name, kind: 'symbol', size: pointerSize === 4 ? 4 : 8, signed: false, hex: true };
  return INT_TYPES.find(t => t.name === name);
}

const TYPE_NAMES = 'u8, u16, u32, u64, s8, s16, s32, s64, x8, x16, x32, x64, string, ustring or symbol';
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NUMBER = /^(0[xX][0-9a-fA-F]+|[0-9]+)$/;

/** kstrtoul(s, 0): decimal, 0x hex or 0 octal; undefined when it is not a number or exceeds 64 bits */
function parseUnsigned(s: string): bigint | undefined {
  let v: bigint;
  if (/^0[xX][0-9a-fA-F]+$/.test(s)) v = BigInt(s);
  else if (/^0[0-7]+$/.test(s)) v = BigInt('0o' + s.slice(1));
  else if (/^[0-9]+$/.test(s)) v = BigInt(s);
  else return undefined;
  return v < 1n << 64n ? v : undefined;
}

interface Word { text: string; column: number }

/** split on blanks, keeping each word's 1-based column */
function words(text: string): Word[] {
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
    if (e instanceof Fail) return { ok: false, error: { column: e.column, message: e.message } };
    return { ok: false, error: { column: 1, message: `cannot parse the definition: ${e instanceof Error ? e.message : String(e)}` } };
  }
}

function parseOrThrow(raw: string, opts: EventParseOptions): EventCommand {
  const w = words(raw);
  const text = raw.trim();
  if (!w.length) throw new Fail(1, 'empty definition: expected p[:[GRP/]EVENT] TARGET [FETCHARGS], r[MAXACTIVE][:[GRP/]EVENT] TARGET [FETCHARGS] or -:[GRP/]EVENT');
  const head = w[0];
  if (head.text.startsWith('-')) {
    if (!head.text.startsWith('-:')) throw new Fail(head.column + 1, "expected ':' after '-' (-:[GRP/]EVENT removes an event)");
    const { group, event } = eventName(head.text.slice(2), head.column + 2, true);
    if (!event) throw new Fail(head.column + 2, 'Event name is not specified: expected -:[GRP/]EVENT');
    if (w.length > 1) throw new Fail(w[1].column, `-:${head.text.slice(2)} takes no arguments (it removes the event by name)`);
    return { op: 'remove', group, event, text };
  }
  const m = /^([pr])([0-9]*)(?::(.*))?$/.exec(head.text);
  if (!m) {
    const bad = /^([pr])([0-9]*)(.)/.exec(head.text);
    if (bad) throw new Fail(head.column + 1 + bad[2].length, `expected ':' or a blank after '${bad[1]}${bad[2]}' but found '${bad[3]}'`);
    throw new Fail(head.column, `expected 'p' (probe), 'r' (return probe) or '-:' (remove) at the start of the definition, not '${head.text}'`);
  }
  const type = m[1] as 'p' | 'r';
  let maxactive: number | undefined;
  if (m[2]) {
    if (type === 'p') throw new Fail(head.column + 1, `Maxactive is not for kprobe: only a return probe (r${m[2]}) takes MAXACTIVE`);
    const n = Number(m[2]);
    if (n > KRETPROBE_MAXACTIVE_MAX) throw new Fail(head.column + 1, `Maxactive is too big: ${m[2]} (at most ${KRETPROBE_MAXACTIVE_MAX})`);
    maxactive = n;
  }
  let group: string | undefined, event: string | undefined;
  if (m[3] !== undefined) {
    const col = head.column + 2 + m[2].length;
    if (m[3] === '') throw new Fail(col, `Event name is not specified: expected [GRP/]EVENT after '${type}${m[2]}:'`);
    ({ group, event } = eventName(m[3], col, false));
  }
  if (w.length < 2) throw new Fail(raw.trimEnd().length + 1, 'missing the probe point: expected [MOD:]SYM[+offs] or MEMADDR (a kprobe), or PATH:OFFSET (a uprobe)');
  const tw = w[1];
  const target = parseTarget(tw, type);
  const subsystem = target.kind === 'user' ? 'uprobe' : 'kprobe';
  if (maxactive !== undefined && subsystem === 'uprobe') throw new Fail(head.column + 1, 'Maxactive is not for uprobe: r[MAXACTIVE] applies to kretprobes only');
  const def: EventAdd = {
    op: 'add', type, subsystem, group: group ?? (subsystem === 'uprobe' ? 'uprobes' : 'kprobes'),
    event: event ?? defaultEventName(type, target), target, targetText: tw.text, targetColumn: tw.column, args: [], text,
  };
  if (maxactive !== undefined) def.maxactive = maxactive;
  if (w.length - 2 > MAX_TRACE_ARGS) throw new Fail(w[2 + MAX_TRACE_ARGS].column, `Too many arguments: an event has at most ${MAX_TRACE_ARGS}`);
  const names = new Set<string>();
  w.slice(2).forEach((aw, i) => {
    const a = parseArg(aw, i, def, opts);
    if (names.has(a.name)) throw new Fail(aw.column, `This argument name is already used: '${a.name}'`);
    names.add(a.name);
    def.args.push(a);
  });
  return def;
}

/** [GRP/]EVENT (GRP/ alone: the event name is generated) */
function eventName(s: string, col: number, remove: boolean): { group?: string; event?: string } {
  const slash = s.indexOf('/');
  let group: string | undefined;
  let ev = s;
  if (slash >= 0) {
    group = s.slice(0, slash);
    ev = s.slice(slash + 1);
    if (!group) throw new Fail(col, 'Group name is not specified: expected GRP before \'/\'');
    if (group.length > MAX_EVENT_NAME_LEN) throw new Fail(col, `Group name is too long (at most ${MAX_EVENT_NAME_LEN} characters)`);
    if (!IDENT.test(group)) throw new Fail(col, `Group name must follow the same rules as C identifiers, not '${group}'`);
    if (!ev && remove) throw new Fail(col + slash + 1, 'Event name is not specified: expected -:GRP/EVENT');
  }
  if (!ev) return { group };
  const ecol = col + (slash >= 0 ? slash + 1 : 0);
  if (ev.length > MAX_EVENT_NAME_LEN) throw new Fail(ecol, `Event name is too long (at most ${MAX_EVENT_NAME_LEN} characters)`);
  if (!IDENT.test(ev)) throw new Fail(ecol, `Event name must follow the same rules as C identifiers, not '${ev}'`);
  return { group, event: ev };
}

/** the kernel's generated name: p_SYM_OFFS / r_SYM_OFFS / p_0xADDR; uprobes p_BASENAME_0xOFFSET; non-identifier characters become '_' */
export function defaultEventName(type: 'p' | 'r', t: EventTarget): string {
  let s: string;
  switch (t.kind) {
    case 'symbol': s = `${type}_${t.module ? `${t.module}:` : ''}${t.name}_${t.offset}`; break;
    case 'address': s = `${type}_0x${t.addr.toString(16)}`; break;
    case 'user': {
      const base = t.path.split('/').pop() ?? t.path;
      s = t.offset !== undefined ? `${type}_${base}_0x${t.offset.toString(16)}` : `${type}_${base}_${t.symbol}${t.symOffset ? `_0x${t.symOffset.toString(16)}` : ''}`;
      break;
    }
  }
  s = s.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(s) ? `_${s}` : s;
}

function parseTarget(tw: Word, type: 'p' | 'r'): EventTarget {
  const s = tw.text;
  const colon = s.lastIndexOf(':');
  if (s.includes('/')) {
    // PATH:OFFSET (a uprobe)
    if (colon < 0 || colon < s.lastIndexOf('/')) throw new Fail(tw.column + s.length, `expected ':OFFSET' after the path '${s}' (PATH:OFFSET)`);
    const path = s.slice(0, colon);
    const what = s.slice(colon + 1);
    const wcol = tw.column + colon + 1;
    if (what.includes('(')) throw new Fail(wcol + what.indexOf('('), 'reference counters (PATH:OFFSET(REFCTR)) are not supported');
    if (!what) throw new Fail(wcol, 'Invalid uprobe offset: expected a number after the path (PATH:OFFSET)');
    if (/^[0-9]/.test(what)) {
      const off = parseUnsigned(what);
      if (off === undefined) throw new Fail(wcol, `Invalid uprobe offset '${what}': expected a decimal or 0x hex number`);
      return { kind: 'user', path, offset: off };
    }
    const m = /^([A-Za-z_][\w.$]*)(?:\+(\S+))?$/.exec(what);
    if (!m) throw new Fail(wcol, `Invalid uprobe offset '${what}': expected a number (or a symbol of the program)`);
    const so = m[2] !== undefined ? parseUnsigned(m[2]) : 0n;
    if (so === undefined || so > 0xffffffffn) throw new Fail(wcol + m[1].length + 1, `Invalid probed address suffix '+${m[2]}': expected a number`);
    if (type === 'r' && so !== 0n) throw new Fail(wcol + m[1].length, 'Retprobe address must be an function entry: a return probe takes no offset (or +0)');
    return { kind: 'user', path, symbol: m[1], symOffset: so };
  }
  if (/^[0-9]/.test(s)) {
    const addr = parseUnsigned(s);
    if (addr === undefined) throw new Fail(tw.column, `Invalid probed address or symbol '${s}': expected a number (MEMADDR) or [MOD:]SYM[+offs]`);
    if (addr === 0n) throw new Fail(tw.column, 'Invalid probed address: 0');
    return { kind: 'address', addr };
  }
  let module: string | undefined;
  let sym = s;
  let col = tw.column;
  if (colon >= 0) {
    module = s.slice(0, colon);
    sym = s.slice(colon + 1);
    if (!IDENT.test(module)) throw new Fail(tw.column, `Invalid module name '${module}' (MOD:SYM)`);
    col += colon + 1;
  }
  const m = /^([A-Za-z_.][\w.$]*)(?:([+-])(.*))?$/.exec(sym);
  if (!m) throw new Fail(col, `Invalid probed address or symbol '${sym}': expected [MOD:]SYM[+offs] or MEMADDR`);
  let offset = 0n;
  if (m[2] !== undefined) {
    const ocol = col + m[1].length;
    if (m[2] === '-') throw new Fail(ocol, 'Invalid probed address suffix: a negative offset is not allowed (SYM+offs)');
    if (m[3] === 'return' || m[3] === '') throw new Fail(ocol + 1, `Invalid probed address suffix '+${m[3]}': expected an offset number`);
    const v = parseUnsigned(m[3]);
    if (v === undefined || v > 0xffffffffn) throw new Fail(ocol + 1, `Invalid probed address suffix '+${m[3]}': expected an offset number`);
    offset = v;
    if (type === 'r' && v !== 0n) throw new Fail(ocol, `Retprobe address must be an function entry: a return probe takes SYM or SYM+0, not ${sym}`);
  }
  return module !== undefined ? { kind: 'symbol', module, name: m[1], offset } : { kind: 'symbol', name: m[1], offset };
}

/** [NAME=]FETCHARG[:TYPE] */
function parseArg(aw: Word, index: number, def: EventAdd, opts: EventParseOptions): FetchArgDef {
  let s = aw.text;
  let col = aw.column;
  let name = `arg${index + 1}`;
  const eq = s.indexOf('=');
  // a name comes before the first '=' (an immediate string \"a=b" has its '=' after the backslash)
  if (eq >= 0 && !s.slice(0, eq).includes('\\')) {
    const n = s.slice(0, eq);
    if (!n) throw new Fail(col, 'Argument name is not specified before \'=\'');
    if (n.length > MAX_ARG_NAME_LEN) throw new Fail(col, `Argument name is too long (at most ${MAX_ARG_NAME_LEN} characters)`);
    if (!IDENT.test(n)) throw new Fail(col, `Argument name must follow the same rules as C identifiers, not '${n}'`);
    name = n;
    s = s.slice(eq + 1);
    col += eq + 1;
    if (!s) throw new Fail(col, `No argument expression after '${n}='`);
  }
  const argText = s;
  // the type: after the last ':' that is outside parentheses and past an immediate string
  let typeName: string | undefined;
  let typeCol = 0;
  const closing = Math.max(s.lastIndexOf(')'), s.startsWith('\\"') ? s.lastIndexOf('"') : -1);
  const tc = s.indexOf(':', closing + 1);
  if (tc >= 0) {
    typeName = s.slice(tc + 1);
    typeCol = col + tc + 1;
    s = s.slice(0, tc);
    if (!s) throw new Fail(col, 'No argument expression before the type');
  }
  const source = parseSource(s, col, def, 0, opts);
  const pointerSize = opts.arch?.abi.pointerSize ?? 8;
  let type: FetchType;
  if (typeName === undefined) {
    type = source.k === 'comm' || source.k === 'immstr' ? (fetchType('string') as FetchType) : (fetchType(pointerSize === 4 ? 'x32' : 'x64') as FetchType);
  } else {
    if (/\[/.test(typeName)) throw new Fail(typeCol + typeName.indexOf('['), `array types (${typeName}) are not supported here: fetch each element with its own +OFFS(...) argument`);
    if (/^b[0-9]/.test(typeName)) throw new Fail(typeCol, `bitfield types (${typeName}) are not supported here: fetch the container and mask it`);
    const t = fetchType(typeName, pointerSize);
    if (!t) throw new Fail(typeCol, `Unknown type '${typeName}': expected ${TYPE_NAMES}`);
    type = t;
  }
  if (source.k === 'comm' && type.kind !== 'string') throw new Fail(typeCol, `$comm can only be a string, not ${type.name}`);
  if (source.k === 'immstr' && type.kind !== 'string') throw new Fail(typeCol, `an immediate string can only be a string, not ${type.name}`);
  if (type.kind === 'string' && !isMemory(source) && source.k !== 'comm' && source.k !== 'immstr' && source.k !== 'imm') {
    throw new Fail(typeCol, `String accepts only memory argument: use +0(${s}):${type.name} for the string ${s} points to`);
  }
  return { name, text: argText, source, type, column: aw.column };
}

/** a memory fetch: the final step loads from an address */
export function isMemory(s: FetchSource): boolean {
  return s.k === 'deref' || s.k === 'mem' || s.k === 'sym' || s.k === 'foffs';
}

function parseSource(s: string, col: number, def: EventAdd, depth: number, opts: EventParseOptions): FetchSource {
  const uprobe = def.subsystem === 'uprobe';
  switch (s[0]) {
    case '%': {
      const r = s.slice(1);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(r)) throw new Fail(col, `Invalid register name '${s}': expected %REG${opts.arch ? ` (${regList(opts.arch)})` : ''}`);
      const src: FetchSource = { k: 'reg', reg: r, text: r, column: col };
      if (opts.arch) {
        const e = resolveReg(src, opts.arch);
        if (e) throw new Fail(e.column, e.message);
      }
      return src;
    }
    case '@': {
      const r = s.slice(1);
      if (r.startsWith('+')) {
        if (!uprobe) throw new Fail(col, 'File offset is not available with kprobe: @+OFFSET is for uprobes');
        const off = parseUnsigned(r.slice(1));
        if (off === undefined) throw new Fail(col + 2, `Invalid file offset value '${r.slice(1)}'`);
        return { k: 'foffs', offset: off };
      }
      if (/^[0-9]/.test(r)) {
        const a = parseUnsigned(r);
        if (a === undefined) throw new Fail(col + 1, `Invalid memory address '${r}': expected a number`);
        return { k: 'mem', addr: a };
      }
      if (uprobe) throw new Fail(col + 1, 'Symbol is not available with uprobe: use @ADDR or @+OFFSET');
      const m = /^([A-Za-z_.][\w.$]*)(?:([+-])(.*))?$/.exec(r);
      if (!m) throw new Fail(col + 1, `Invalid memory address '${r}': expected @ADDR or @SYM[+|-offs]`);
      let offset = 0n;
      if (m[2] !== undefined) {
        const v = parseUnsigned(m[3]);
        if (v === undefined) throw new Fail(col + 2 + m[1].length, `Invalid offset '${m[3]}' after @${m[1]}${m[2]}: expected a number`);
        offset = m[2] === '-' ? -v : v;
      }
      return { k: 'sym', name: m[1], offset, column: col + 1 };
    }
    case '$': {
      const v = s.slice(1);
      if (v === 'stack') return { k: 'stackp' };
      if (v === 'retval') {
        if (def.type !== 'r') throw new Fail(col, '$retval is not available on probe: it is for return probes (r...)');
        return { k: 'retval' };
      }
      if (v === 'comm' || v === 'COMM') return { k: 'comm' };
      let m = /^stack(.*)$/.exec(v);
      if (m) {
        if (!/^[0-9]+$/.test(m[1]) || Number(m[1]) > PARAM_MAX_STACK) throw new Fail(col + 6, `Invalid stack number '${m[1]}': expected $stackN with 0 <= N <= ${PARAM_MAX_STACK}`);
        return { k: 'stack', n: Number(m[1]) };
      }
      m = /^arg(.*)$/.exec(v);
      if (m) {
        if (!/^[0-9]+$/.test(m[1]) || Number(m[1]) < 1 || Number(m[1]) > PARAM_MAX_STACK) throw new Fail(col + 4, `Invalid argument number '${m[1]}': expected $argN with N >= 1`);
        if (uprobe) throw new Fail(col, '$argN is not available with uprobe events: use the ABI registers (%di, %x0, %a0...)');
        if (def.type === 'r') throw new Fail(col, '$argN is only available at function entry: on a return probe use $retval');
        if (def.target.kind === 'symbol' && def.target.offset !== 0n) throw new Fail(col, `$argN is only available at function entry (offset 0), not at ${def.targetText}`);
        return { k: 'arg', n: Number(m[1]) };
      }
      throw new Fail(col, `Invalid $-variable '${s}': expected $stack, $stackN, $argN, $retval or $comm`);
    }
    case '\\': {
      const r = s.slice(1);
      if (r.startsWith('"')) {
        if (r.length < 2 || !r.endsWith('"')) throw new Fail(col + 1, 'String is not closed with \'"\'');
        return { k: 'immstr', value: r.slice(1, -1) };
      }
      const neg = r.startsWith('-');
      const v = parseUnsigned(neg ? r.slice(1) : r);
      if (v === undefined) throw new Fail(col + 1, `Invalid immediate value '${r}': expected \\NUMBER or \\"STRING"`);
      return { k: 'imm', value: BigInt.asUintN(64, neg ? -v : v) };
    }
    case '+': case '-': {
      const m = /^([+-])(u?)([^(]*)(\(?)/.exec(s) as RegExpExecArray;
      const offText = m[3];
      const ocol = col + 1 + m[2].length;
      if (!m[4]) {
        const num = (/^(0[xX][0-9a-fA-F]*|[0-9]*)/.exec(offText) as RegExpExecArray)[0];
        if (!num) throw new Fail(ocol, `Invalid dereference offset '${offText}': expected a number`);
        throw new Fail(ocol + num.length, `Dereference needs a brace: expected ${m[1]}${m[2]}${num}(FETCHARG)`);
      }
      const off = parseUnsigned(offText);
      if (off === undefined) throw new Fail(ocol, `Invalid dereference offset '${offText}': expected a number`);
      if (!s.endsWith(')')) throw new Fail(col + s.length, 'Dereference brace is not closed: expected \')\' at the end');
      if (depth + 1 > MAX_DEREF_NESTING) throw new Fail(col, `Dereference is too much nested (at most ${MAX_DEREF_NESTING} levels)`);
      const innerCol = col + m[0].length;
      const innerText = s.slice(m[0].length, -1);
      if (!innerText) throw new Fail(innerCol, 'expected a FETCHARG inside the braces');
      const inner = parseSource(innerText, innerCol, def, depth + 1, opts);
      if (inner.k === 'comm') throw new Fail(innerCol, '$comm can not be dereferenced');
      if (inner.k === 'immstr') throw new Fail(innerCol, 'an immediate string can not be dereferenced');
      return { k: 'deref', offset: m[1] === '-' ? -off : off, user: m[2] === 'u' || uprobe, inner };
    }
    default:
      throw new Fail(col, `Invalid fetch argument '${s}': expected %REG, @ADDR, @SYM[+|-offs], $stackN, $stack, $argN, $retval, $comm, +|-[u]OFFS(FETCHARG) or \\IMM`);
  }
}

function regList(arch: EventArch): string {
  return arch.regs.map(r => `%${r.name}`).join(' ');
}

/** Resolve a %REG against an architecture (aliases: %rax -> ax); an error naming the column otherwise. */
function resolveReg(src: Extract<FetchSource, { k: 'reg' }>, arch: EventArch): EventError | undefined {
  const names = new Set(arch.regs.map(r => r.name));
  const n = src.text;
  const lower = n.toLowerCase();
  const hit = names.has(n) ? n : names.has(lower) ? lower : arch.regAliases?.[lower];
  if (hit !== undefined && (names.has(hit) || hit === 'ip' || hit === 'pc')) { src.reg = hit; return undefined; }
  return { column: src.column, message: `Invalid register name '%${n}' for ${arch.name}: expected one of ${regList(arch)}` };
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
 * The kernel's error_log entry for a bad definition: the message, the
 * command, and a '^' under the column:
 *
 *   trace_kprobe: error: Invalid register name '%foo' ...
 *     Command: p:myprobe do_sys_open %foo
 *                                    ^
 */
export function errorLog(text: string, err: EventError, subsystem = /\S+\/\S*:/.test(text.split(/\s+/)[1] ?? '') ? 'trace_uprobe' : 'trace_kprobe'): string {
  const lead = '  Command: ';
  return `${subsystem}: error: ${err.message}\n${lead}${text}\n${' '.repeat(lead.length + Math.max(0, err.column - 1))}^\n`;
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
