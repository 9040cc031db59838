/**
 * One fetch argument of a dynamic-event definition, [NAME=]FETCHARG[:TYPE],
 * parsed as Linux 6.1's trace_probe.c does (traceprobe_parse_probe_arg,
 * its _body, parse_probe_arg, parse_probe_vars): the same checks in the same
 * order, each error at the column Linux's error_log points at, and the same
 * limits (the expression's length, the fetch program's 16 instructions,
 * the event's size, array lengths, bitfields).
 */
import type { ArchInfo } from '../../arch/types';
import { fail, failPlain, failWith } from './errors';
import { kstrtol, kstrtoul, kstrtouint, simpleStrtoul } from './kstrto';
import {
  FETCH_INSN_MAX, MAX_ARG_NAME_LEN, MAX_ARGSTR_LEN, MAX_ARRAY_LEN, MAX_PROBE_EVENT_SIZE, PARAM_MAX_STACK, RESERVED_FIELD_NAMES,
} from './limits';
import type { EventError, FetchArgDef, FetchSource, FetchType } from './types';

/** What the parser needs of an architecture: register names and aliases, the long size. */
export type EventArch = Pick<ArchInfo, 'name' | 'regs' | 'regAliases'> & { abi: { pointerSize: number } };

/** How the probe fetches: a kernel probe (else a uprobe), a return probe, at a function's entry (where $argN is). */
export interface ArgContext {
  kernel: boolean;
  ret: boolean;
  fentry: boolean;
  /** where the probe is, for messages */
  targetText: string;
  arch?: EventArch;
  /** argument names used so far */
  names: Set<string>;
  /** bytes of the event's fields so far */
  size: number;
  /** an event probe's argument (TPARG_FL_TPOINT): $NAME is a field of the attached event, registers are refused */
  tevent?: boolean;
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
  if (name === 'symstr') return { name, kind: 'string', size: 8, signed: false, hex: false, symstr: true };
  if (name === 'symbol') return { name, kind: 'symbol', size: pointerSize === 4 ? 4 : 8, signed: false, hex: true };
  return INT_TYPES.find(t => t.name === name);
}

const TYPE_NAMES = 'u8, u16, u32, u64, s8, s16, s32, s64, x8, x16, x32, x64, string, ustring or symbol';
/** is_good_name: a C identifier */
export const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** find_fetch_type: a bitfield b...@.../SIZE is its container u8..u64 */
function findType(name: string | undefined, pointerSize: number): FetchType | undefined {
  if (name === undefined) return fetchType(pointerSize === 4 ? 'x32' : 'x64');
  if (name.startsWith('b')) {
    const slash = name.indexOf('/');
    if (slash < 0) return undefined;
    const bits = kstrtoul(name.slice(slash + 1));
    return bits === 8n || bits === 16n || bits === 32n || bits === 64n ? fetchType(`u${bits}`) : undefined;
  }
  return fetchType(name, pointerSize);
}

/** the final fetch operation of an expression, which decides how its value is stored */
type FinalOp = 'deref' | 'uderef' | 'imm' | 'comm' | 'data' | 'value';

function finalOp(s: FetchSource, kernel: boolean): FinalOp {
  switch (s.k) {
    case 'deref': return s.user && kernel ? 'uderef' : 'deref';
    case 'mem': case 'sym': case 'foffs': return 'deref';
    case 'imm': return 'imm';
    case 'comm': return 'comm';
    case 'immstr': return 'data';
    default: return 'value';
  }
}

/** Parse one argument word (its 1-based column `col`), the `index`-th of the definition. */
export function parseArg(word: string, col: number, index: number, ctx: ArgContext): FetchArgDef {
  const eq = word.indexOf('=');
  let name = `arg${index + 1}`;
  let body = word;
  let bodyCol = col;
  if (eq >= 0) {
    if (eq > MAX_ARG_NAME_LEN) throw fail(col, 'ARG_NAME_TOO_LONG', ` (at most ${MAX_ARG_NAME_LEN} characters)`);
    if (eq === 0) throw fail(col, 'NO_ARG_NAME', " before '='");
    name = word.slice(0, eq);
    body = word.slice(eq + 1);
    bodyCol = col + eq + 1;
  }
  if (!IDENT.test(name)) throw fail(col, 'BAD_ARG_NAME', `, not '${name}'`);
  if (RESERVED_FIELD_NAMES.includes(name) || ctx.names.has(name)) throw fail(col, 'USED_ARG_NAME', `: '${name}'`);
  ctx.names.add(name);
  if (body.length > MAX_ARGSTR_LEN) throw fail(bodyCol, 'ARG_TOO_LONG', ` (at most ${MAX_ARGSTR_LEN} characters, this one has ${body.length})`);
  if (!body) throw fail(bodyCol, 'NO_ARG_BODY', ` after '${name}='`);

  // FETCHARG:TYPE[N]: the type after the first ':'
  const tc = body.indexOf(':');
  const expr = tc >= 0 ? body.slice(0, tc) : body;
  let typeName = tc >= 0 ? body.slice(tc + 1) : undefined;
  const typeCol = tc >= 0 ? bodyCol + tc + 1 : bodyCol;
  let count: number | undefined;
  if (typeName !== undefined && typeName.includes('[')) {
    const open = typeName.indexOf('[');
    const rest = typeName.slice(open + 1);
    const close = rest.indexOf(']');
    const numCol = typeCol + open + 1;
    if (close < 0) throw fail(bodyCol + body.length, 'ARRAY_NO_CLOSE', `: expected ']' after ${typeName}`);
    if (close + 1 < rest.length) throw fail(numCol + close + 1, 'BAD_ARRAY_SUFFIX', `: nothing may follow ']', not '${rest.slice(close + 1)}'`);
    const n = kstrtouint(rest.slice(0, close));
    if (n === undefined || n === 0n) throw fail(numCol, 'BAD_ARRAY_NUM', ` '${rest.slice(0, close)}': expected a number from 1 to ${MAX_ARRAY_LEN}`);
    if (n > BigInt(MAX_ARRAY_LEN)) throw fail(numCol, 'ARRAY_TOO_BIG', `: ${n} (at most ${MAX_ARRAY_LEN})`);
    count = Number(n);
    typeName = typeName.slice(0, open);
  }
  const pointerSize = ctx.arch?.abi.pointerSize ?? 8;
  let type: FetchType;
  if ((!ctx.tevent && (expr === '$comm' || expr === '$COMM')) || expr.startsWith('\\"')) {
    // Linux rejects these without an error_log entry
    if (count !== undefined || (typeName !== undefined && typeName !== 'string')) {
      throw failPlain(typeCol, `${expr.startsWith('\\') ? 'an immediate string' : expr} can only be a string, not ${typeName}${count !== undefined ? `[${count}]` : ''}`);
    }
    type = fetchType('string') as FetchType;
  } else {
    const t = findType(typeName, pointerSize);
    if (!t) throw failWith(typeCol, 'BAD_TYPE', `Unknown type '${typeName}': expected ${TYPE_NAMES}`);
    type = t;
  }
  ctx.size += (type.kind === 'string' ? 4 : type.size) * (count ?? 1);
  if (ctx.size > MAX_PROBE_EVENT_SIZE) throw fail(bodyCol, 'EVENT_TOO_BIG', ` (the fields of an event take at most ${MAX_PROBE_EVENT_SIZE} bytes)`);

  const prog = { at: 0 };
  const source = parseSource(expr, bodyCol, prog, ctx);
  const op = finalOp(source, ctx.kernel);
  // the store instruction: strings keep IMM/COMM/DATA's value and need one more; so do non-memory values
  if (type.symstr) {
    // the symbol of a value: a register, $stackN, $retval, $argN or a kernel memory load
    if (op !== 'value' && op !== 'deref') throw fail(typeCol, 'BAD_SYMSTRING', `: symstr takes a value (%REG, $stackN, $retval, $argN, +OFFS(...)), not ${expr}`);
    if (source.k === 'stackp') throw fail(typeCol, 'BAD_SYMSTRING', `: symstr takes a value (%REG, $stackN, $retval, $argN, +OFFS(...)), not ${expr}`);
    step(prog, bodyCol);
  } else if (type.kind === 'string') {
    if (op === 'value') throw fail(typeCol, 'BAD_STRING', `: use +0(${expr}):${typeName} for the string ${expr} points to`);
    if (op === 'imm' || op === 'comm' || op === 'data' || count !== undefined) step(prog, bodyCol);
  } else if (op !== 'deref' && op !== 'uderef') {
    step(prog, bodyCol);
  }
  const store = type.symstr ? 'symstr' : type.kind === 'string' ? 'string' : op === 'deref' ? 'mem' : op === 'uderef' ? 'umem' : 'raw';
  if (typeName?.startsWith('b')) type = { ...type, bitfield: bitfield(typeName, type, typeCol, prog) };
  if (count !== undefined) {
    if (store !== 'mem' && store !== 'string') throw fail(typeCol, 'BAD_STRING', `: an array (${typeName}[${count}]) is read from memory: use +0(${expr}):${typeName}[${count}]`);
    step(prog, bodyCol);
  }
  const def: FetchArgDef = { name, text: body, source, type, column: col };
  if (count !== undefined) def.count = count;
  return def;
}

/** one more fetch instruction; the last slot is END */
function step(prog: { at: number }, col: number): void {
  if (++prog.at >= FETCH_INSN_MAX - 1) throw fail(col, 'TOO_MANY_OPS', ` (an argument is at most ${FETCH_INSN_MAX - 1} fetch steps)`);
}

/** b<width>@<offset>/<container> (__parse_bitfield_probe_arg) */
function bitfield(t: string, container: FetchType, col: number, prog: { at: number }): { width: number; offset: number } {
  const bad = (why: string) => fail(col, 'BAD_BITFIELD', ` '${t}': ${why}`);
  const w = simpleStrtoul(t.slice(1));
  if (w.value === 0n || t[1 + w.end] !== '@') throw bad('expected b<width>@<offset>/<container> with a width of at least 1');
  const from = 2 + w.end;
  const o = simpleStrtoul(t.slice(from));
  if (o.end === 0 || t[from + o.end] !== '/') throw bad('expected a bit offset after \'@\'');
  if (++prog.at >= FETCH_INSN_MAX - 1) throw bad('the argument has too many fetch steps');
  if (w.value + o.value > BigInt(container.size * 8)) throw bad(`${w.value} bits from bit ${o.value} do not fit in ${container.size * 8}`);
  return { width: Number(w.value), offset: Number(o.value) };
}

/** parse_probe_arg: one FETCHARG at 1-based column `col`; `prog.at` counts its fetch instructions */
function parseSource(s: string, col: number, prog: { at: number }, ctx: ArgContext): FetchSource {
  switch (s[0]) {
    case '$': return parseVar(s.slice(1), col, ctx);
    case '%': {
      // eprobes do not handle registers
      if (ctx.tevent) throw failWith(col, 'BAD_VAR', `${s}: an event probe reads the attached event's fields ($FIELD), not registers`);
      const r = s.slice(1);
      if (!IDENT.test(r)) throw fail(col, 'BAD_REG_NAME', ` '${s}': expected %REG${ctx.arch ? ` (${regList(ctx.arch)})` : ''}`);
      const src: FetchSource = { k: 'reg', reg: r, text: r, column: col };
      if (ctx.arch) {
        const e = resolveReg(src, ctx.arch);
        if (e) throw fail(e.column, 'BAD_REG_NAME', e.message.slice('Invalid register name'.length));
      }
      return src;
    }
    case '@': {
      const r = s.slice(1);
      let src: FetchSource;
      if (/^[0-9]/.test(r)) {
        const a = kstrtoul(r);
        if (a === undefined) throw fail(col, 'BAD_MEM_ADDR', ` '${r}': expected a number`);
        src = { k: 'mem', addr: a };
      } else if (r.startsWith('+')) {
        if (ctx.kernel) throw fail(col, 'FILE_ON_KPROBE', ': @+OFFSET is for uprobes');
        const off = kstrtol(r.slice(1));
        if (off === undefined) throw fail(col, 'BAD_FILE_OFFS', ` '${r.slice(1)}'`);
        src = { k: 'foffs', offset: off };
      } else {
        if (!ctx.kernel) throw fail(col, 'SYM_ON_UPROBE', ': use @ADDR or @+OFFSET');
        const m = /^([A-Za-z_.][\w.$]*)(?:([+-])(.*))?$/.exec(r);
        if (!m) throw failPlain(col + 1, `Invalid memory address '${r}': expected @ADDR or @SYM[+|-offs]`);
        let offset = 0n;
        if (m[2] !== undefined) {
          const v = kstrtoul(m[3]);
          if (v === undefined) throw failPlain(col + 2 + m[1].length, `Invalid offset '${m[3]}' after @${m[1]}${m[2]}: expected a number`);
          offset = m[2] === '-' ? -v : v;
        }
        src = { k: 'sym', name: m[1], offset, column: col + 1 };
        step(prog, col);
      }
      step(prog, col);
      return src;
    }
    case '+': case '-': {
      let a = s;
      const user = a[1] === 'u';
      if (user) a = a[0] + a.slice(2);
      const p = a[0] === '+' ? a.slice(1) : a;
      const open = p.indexOf('(');
      if (open < 0) {
        const num = (/^(0[xX][0-9a-fA-F]*|[0-9]*)/.exec(p) as RegExpExecArray)[0] || 'OFFS';
        throw fail(col, 'DEREF_NEED_BRACE', `: expected ${s[0]}${user ? 'u' : ''}${num}(FETCHARG)`);
      }
      const off = kstrtol(p.slice(0, open));
      if (off === undefined) throw fail(col, 'BAD_DEREF_OFFS', ` '${p.slice(0, open)}': expected a number`);
      // Linux's arithmetic: past the '(' counted from the offset's first character, plus one for a '+'
      const innerCol = col + open + 1 + (p[0] !== '-' ? 1 : 0);
      const rest = p.slice(open + 1);
      const close = rest.lastIndexOf(')');
      if (close < 0) throw fail(innerCol + rest.length, 'DEREF_OPEN_BRACE', ": expected ')' at the end");
      const inner = parseSource(rest.slice(0, close), innerCol, prog, ctx);
      if (inner.k === 'comm' || inner.k === 'immstr') throw fail(innerCol, 'COMM_CANT_DEREF', inner.k === 'immstr' ? ' (nor can an immediate string)' : '');
      step(prog, innerCol);
      return { k: 'deref', offset: off, user: user || !ctx.kernel, inner };
    }
    case '\\': {
      const r = s.slice(1);
      if (r.startsWith('"')) {
        const str = r.slice(1);
        if (!str.endsWith('"')) throw fail(col + 2 + str.length, 'IMMSTR_NO_CLOSE');
        return { k: 'immstr', value: str.slice(0, -1) };
      }
      const v = /^[0-9]/.test(r) ? kstrtoul(r) : r[0] === '-' ? kstrtol(r) : r[0] === '+' ? kstrtol(r.slice(1)) : undefined;
      if (v === undefined) throw fail(col + 1, 'BAD_IMM', ` '${r}': expected \\NUMBER or \\"STRING"`);
      return { k: 'imm', value: BigInt.asUintN(64, v) };
    }
    default:
      throw fail(col, 'BAD_FETCH_ARG', ` '${s}': expected %REG, @ADDR, @SYM[+|-offs], $stackN, $stack, $argN, $retval, $comm, +|-[u]OFFS(FETCHARG) or \\IMM`);
  }
}

/** parse_probe_vars: $retval, $stack, $stackN, $comm, $argN */
function parseVar(v: string, col: number, ctx: ArgContext): FetchSource {
  if (ctx.tevent) return { k: 'field', name: v, column: col };
  if (v === 'retval') {
    if (!ctx.ret) throw fail(col, 'RETVAL_ON_PROBE', ': it is for return probes (r...)');
    return { k: 'retval' };
  }
  if (v.startsWith('stack')) {
    const n = v.slice(5);
    if (n === '') return { k: 'stackp' };
    const num = /^[0-9]/.test(n) ? kstrtoul(n, 10) : undefined;
    if (num === undefined) throw failWith(col, 'BAD_VAR', `Invalid $-variable '$${v}': expected $stack or $stackN (N a decimal number)`);
    if (ctx.kernel && num > BigInt(PARAM_MAX_STACK)) throw fail(col, 'BAD_STACK_NUM', ` '${n}': expected $stackN with 0 <= N <= ${PARAM_MAX_STACK}`);
    return { k: 'stack', n: Number(num) };
  }
  if (v === 'comm' || v === 'COMM') return { k: 'comm' };
  if (v.startsWith('arg')) {
    if (!ctx.kernel) throw failWith(col, 'BAD_VAR', '$argN is not available with uprobe events: use the ABI registers (%di, %x0, %a0...)');
    if (ctx.ret) throw failWith(col, 'BAD_VAR', '$argN is only available at function entry: on a return probe use $retval');
    if (!ctx.fentry) throw failWith(col, 'BAD_VAR', `$argN is only available at function entry (offset 0), not at ${ctx.targetText}`);
    const n = kstrtoul(v.slice(3), 10);
    if (n === undefined) throw failWith(col, 'BAD_VAR', `Invalid $-variable '$${v}': expected $argN (N a decimal number)`);
    if (n === 0n || n > BigInt(PARAM_MAX_STACK)) throw fail(col, 'BAD_ARG_NUM', ` '${v.slice(3)}': expected $argN with 1 <= N <= ${PARAM_MAX_STACK}`);
    return { k: 'arg', n: Number(n) };
  }
  throw failWith(col, 'BAD_VAR', `Invalid $-variable '$${v}': expected $stack, $stackN, $argN, $retval or $comm`);
}

export function regList(arch: EventArch): string {
  return arch.regs.map(r => `%${r.name}`).join(' ');
}

/** Resolve a %REG against an architecture (aliases: %rax -> ax); an error naming the column otherwise. */
export function resolveReg(src: Extract<FetchSource, { k: 'reg' }>, arch: EventArch): EventError | undefined {
  const names = new Set(arch.regs.map(r => r.name));
  const n = src.text;
  const lower = n.toLowerCase();
  const hit = names.has(n) ? n : names.has(lower) ? lower : arch.regAliases?.[lower];
  if (hit !== undefined && (names.has(hit) || hit === 'ip' || hit === 'pc')) { src.reg = hit; return undefined; }
  return { column: src.column, code: 'BAD_REG_NAME', message: `Invalid register name '%${n}' for ${arch.name}: expected one of ${regList(arch)}` };
}
