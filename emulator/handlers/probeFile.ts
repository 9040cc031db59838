/**
 * Parser of .kprobe files:
 *
 *   image "../kernel/build/kernel-x86_64.elf"       // optional, once
 *   kprobe do_fork { pre { ... } post { ... } fault { ... } }
 *   kretprobe sys_open maxactive=20 data_size=8 { entry { ... } return { ... } }
 *   jprobe do_fork { ...body... }
 *   batch { kprobe a { ... } kprobe b { ... } }      // register_kprobes(): all or none
 *   kwatch jiffies len=8 type=w { ...body... }       // register_kwatch(): a debug-register watchpoint
 *
 * Targets: `symbol`, `symbol+0xoff` (or `symbol + off`), `0xaddress`
 * (64-bit exact), `file.c:line`. Attributes: `maxactive=N`, `data_size=N`,
 * `disabled` / `disabled=true|false`; `maxactive` <= 0 (e.g. -1) asks for the default;
 * kwatch: `len=N` (bytes) and `type=w|rw|x|r` (or the DR7 codes 1, 3, 0), both required.
 * A kwatch's body is its handler (like a jprobe's). Comments: // and /* *\/.
 * Handler bodies are parsed with the handler-language parser from the same
 * token stream, so positions are file positions.
 */
import type { CType } from './ctypes';
import { SnippetAst, Span } from './ast';
import { Lexer, Token, tokenize } from './lexer';
import { Parser, describe, diagAt, joinSpan, spanOf } from './parser';
import { Diagnostic } from './types';
import type { Stmt } from './ast';
import type { KnownBody } from './sharedSnippets';
import type { EventAdd } from '../tracing/events/types';
import { moduleSymbol, parseEventDefinition, stripEventComment } from '../tracing/events/parse';

export type ProbeKindName = 'kprobe' | 'kretprobe' | 'jprobe' | 'uprobe' | 'uretprobe' | 'kwatch';

/** the probe kinds placed in user programs (by path and file offset or symbol) */
export const USER_PROBE_KINDS: readonly ProbeKindName[] = ['uprobe', 'uretprobe'];

export type ProbeTarget =
  /** `addr`: `symbol@0xaddr`, both struct kprobe fields set (register_kprobe says -EINVAL, as the documentation states) */
  | { kind: 'symbol'; name: string; offset: bigint; addr?: bigint }
  | { kind: 'address'; addr: bigint }
  | { kind: 'line'; file: string; line: number }
  /** a user program's instruction: `PATH:0xOFFSET` (file offset) or `PATH:symbol[+off]` (its ELF symbol); refCtr: `(REF_CTR_OFFSET)` */
  | { kind: 'user'; path: string; offset?: bigint; symbol?: string; symOffset?: bigint; refCtr?: bigint };

export interface ProbeAttrAst { name: string; value?: string; span: Span; valueSpan?: Span }
export interface ProbeHandlerAst {
  kind: string; span: Span; body: SnippetAst;
  /**
   * the body's text in the file, from its opening brace to its closing one: [start, end) offsets, where it
   * starts and how many tokens it is; absent when its parse reported a problem
   */
  text?: { start: number; end: number; line: number; column: number; tokens: number };
}

/**
 * A handler body the parse may take as it is instead of parsing it (the
 * statements of an earlier copy of the same text, sharedSnippets.ts): by
 * the handler's kind and where its opening brace is.
 */
export type KnownBodies = (kind: string, start: number) => KnownBody | undefined;

export interface ProbeAst {
  kind: ProbeKindName;
  /** span of the kind keyword */
  span: Span;
  /** undefined when the target could not be parsed (a diagnostic was reported) */
  target?: ProbeTarget;
  targetText: string;
  targetSpan: Span;
  attrs: ProbeAttrAst[];
  handlers: ProbeHandlerAst[];
  /** span of the whole probe */
  fullSpan: Span;
  /** the `batch { ... }` block the probe is in (registered together, with rollback) */
  batch?: ProbeBatch;
  /**
   * a kprobe_events / uprobe_events line (`p:GRP/NAME TARGET FETCHARGS`,
   * `r[N]:...`): its event (group, name and the whole definition: target,
   * fetch arguments; emulator/tracing/events)
   */
  event?: ProbeEvent;
}

/**
 * `batch { kprobe ... kretprobe ... }`: the probes are registered as one
 * register_kprobes() / register_kretprobes() call: when one fails, the ones
 * already registered are unregistered again and none stays.
 */
export interface ProbeBatch {
  /** 1-based, in file order */
  index: number;
  span: Span;
  /** number of probes in the block */
  size: number;
}

/** A dynamic event of a probe file: a trace line per hit. */
export interface ProbeEvent { group: string; name: string; def?: EventAdd }

export interface ProbeFileAst {
  fileName: string;
  /** the `image "path"` header (path as written, relative to the .kprobe file) */
  image?: { path: string; span: Span };
  probes: ProbeAst[];
}

const PROBE_KINDS = new Set(['kprobe', 'kretprobe', 'jprobe', 'uprobe', 'uretprobe', 'kwatch']);

class ProbeParseError extends Error {
  constructor(message: string, readonly span: Span) { super(message); }
}

/**
 * Parse a .kprobe file; never throws. Diagnostics are syntax errors (checkProbeFile adds semantic ones).
 * `toks`: parse these tokens of `text` (all of them, as tokenize gives them) instead of reading them as it goes.
 */
export function parseProbeFile(
  text: string, fileName: string,
  programType?: (kind: 'struct' | 'union' | 'enum' | 'typedef', name: string) => CType | undefined,
  toks?: Token[],
): { file: ProbeFileAst; diagnostics: Diagnostic[] } {
  const r = parse(text, fileName, programType, false, toks);
  return { file: r.file, diagnostics: r.diagnostics };
}

/**
 * parseProbeFile handing each probe to `take`, in file order, as soon as
 * nothing later in the file can change it, instead of keeping them all:
 * a file of thousands of probes holds only the probes not yet taken (its
 * trees die young). A batch member waits for its batch to close (its size);
 * a kprobe_events line waits for the end of the file (a later `-:` line may
 * remove it, a later definition may repeat its name), and so does every
 * probe after it. The file's `probes` is then empty; the probes taken and
 * the diagnostics are those of parseProbeFile.
 */
export function parseProbeFileTaking(
  text: string, fileName: string,
  programType: ((kind: 'struct' | 'union' | 'enum' | 'typedef', name: string) => CType | undefined) | undefined,
  take: (pr: ProbeAst) => void,
  known?: KnownBodies,
): { file: ProbeFileAst; diagnostics: Diagnostic[] } {
  const r = parse(text, fileName, programType, false, undefined, take, known);
  return { file: r.file, diagnostics: r.diagnostics };
}

/**
 * The file's `image "path"` header, as parseProbeFile(...).file.image gives
 * it, parsing no further than needed: the header counts only before the
 * first probe, so parsing stops at the header or after the first probe.
 */
export function parseProbeFileImage(text: string, fileName: string): ProbeFileAst['image'] {
  // only the first tokens matter: tokenize a growing prefix until the answer no longer depends on what follows
  for (let max = 256; ; max *= 16) {
    const toks = tokenize(text, 1, 1, max);
    const r = parse(text, fileName, undefined, true, toks);
    const cut = toks.length > max + 1;
    if (!cut || r.file.image || (r.file.probes.length > 0 && r.stoppedAt < toks.length - PREFIX_MARGIN)) return r.file.image;
  }
}

/** Tokens a parse that stopped short of a prefix's end may have looked ahead past where it stopped. */
const PREFIX_MARGIN = 16;

function parse(
  text: string, fileName: string,
  programType: ((kind: 'struct' | 'union' | 'enum' | 'typedef', name: string) => CType | undefined) | undefined,
  imageOnly: boolean,
  toks?: Token[],
  take?: (pr: ProbeAst) => void,
  known?: KnownBodies,
): { file: ProbeFileAst; diagnostics: Diagnostic[]; stoppedAt: number } {
  const diagnostics: Diagnostic[] = [];
  // without tokens given, the file's tokens are read as the parse goes and dropped after each probe:
  // a file of thousands of probes never holds all of its tokens at once
  const p = new Parser(toks ?? [], diagnostics, true, programType);
  if (!toks) p.stream(new Lexer(text));
  const file: ProbeFileAst = { fileName, probes: [] };
  let batches = 0;
  // probes handed to `take` (never events, so no later line removes one): with file.probes, the probes so far
  let taken = 0;
  const handOn = (all: boolean): void => {
    if (!take) return;
    let n = 0;
    while (n < file.probes.length && (all || file.probes[n].event === undefined)) n++;
    if (n === 0) return;
    // all of them (the usual case, a probe at a time): the array itself, an empty one in its place
    let done: ProbeAst[];
    if (n === file.probes.length) { done = file.probes; file.probes = []; } else done = file.probes.splice(0, n);
    taken += n;
    for (const pr of done) take(pr);
  };
  while (p.tok.kind !== 'eof' && !(imageOnly && (file.image || taken + file.probes.length))) {
    handOn(false);
    p.drop();
    const t = p.tok;
    try {
      if (t.kind === 'ident' && t.text === 'image') {
        p.next();
        const s = p.tok;
        if (s.kind !== 'string') throw new ProbeParseError(`expected the image path as a string after 'image' but found ${describe(s)}`, spanOf(s));
        p.next();
        const span = joinSpan(spanOf(t), spanOf(s));
        if (file.image) diagnostics.push(diagAt(span, `duplicate 'image' line (the first is at line ${file.image.span.line})`));
        else if (taken + file.probes.length) diagnostics.push(diagAt(span, "'image' must come before the probes"));
        else file.image = { path: s.str ?? '', span };
        if (p.is(';')) p.next();
        continue;
      }
      if (t.kind === 'ident' && PROBE_KINDS.has(t.text)) { file.probes.push(parseProbe(p, text, known)); continue; }
      if (isEventStart(t, text)) {
        const ev = parseEventLine(p, text, file);
        if (ev) file.probes.push(ev);
        continue;
      }
      if (t.kind === 'ident' && t.text === 'batch') {
        p.next();
        const open = p.tok;
        if (!p.is('{')) throw new ProbeParseError(`expected '{' after 'batch' but found ${describe(open)}`, spanOf(open));
        p.next();
        const batch: ProbeBatch = { index: ++batches, span: spanOf(t), size: 0 };
        while (!p.is('}')) {
          p.drop();
          const k = p.tok;
          if (k.kind === 'eof') throw new ProbeParseError(`unterminated batch (opened at line ${batch.span.line}): missing '}'`, spanOf(k));
          if (k.kind !== 'ident' || !PROBE_KINDS.has(k.text)) throw new ProbeParseError(`a batch holds kprobe, kretprobe and jprobe blocks, not ${describe(k)}`, spanOf(k));
          const pr = parseProbe(p, text, known);
          pr.batch = batch;
          batch.size++;
          file.probes.push(pr);
        }
        p.next();
        if (batch.size === 0) diagnostics.push(diagAt(batch.span, 'empty batch'));
        continue;
      }
      throw new ProbeParseError(`expected 'kprobe', 'kretprobe', 'jprobe', 'kwatch', 'uprobe', 'uretprobe', a kprobe_events / uprobe_events line (p[:[GRP/]EVENT] TARGET [FETCHARGS], r[MAXACTIVE][:...], -:[GRP/]EVENT), 'batch' or 'image' but found ${describe(t)}`, spanOf(t));
    } catch (err) {
      if (!(err instanceof ProbeParseError)) { p.report(err); skipToNextProbe(p, true, text); continue; }
      diagnostics.push(diagAt(err.span, err.message));
      skipToNextProbe(p, p.tok === t, text);
    }
  }
  handOn(true);
  return { file, diagnostics, stoppedAt: p.pos };
}

/** Skip to the next top-level probe keyword, over balanced braces. */
function skipToNextProbe(p: Parser, mustAdvance: boolean, text: string): void {
  if (mustAdvance) p.next();
  let depth = 0;
  while (p.tok.kind !== 'eof') {
    const first = /^[ \t]*$/.test(text.slice(text.lastIndexOf('\n', p.tok.start - 1) + 1, p.tok.start));
    if (p.is('{')) depth++;
    else if (p.is('}')) { depth = Math.max(0, depth - 1); p.next(); continue; }
    else if (depth === 0 && p.tok.kind === 'ident' && (PROBE_KINDS.has(p.tok.text) || p.tok.text === 'image' || p.tok.text === 'batch')) return;
    // a dynamic-event line starts a line of its own
    else if (depth === 0 && first && isEventStart(p.tok, text)) return;
    p.next();
  }
}

function parseProbe(p: Parser, text: string, known: KnownBodies | undefined): ProbeAst {
  const kw = p.next();
  const kind = kw.text as ProbeKindName;
  // target: a run of tokens with no whitespace between them
  const firstAt = p.pos;
  const first = p.tok;
  if (first.kind === 'eof' || p.is('{')) {
    const what = USER_PROBE_KINDS.includes(kind) ? 'PATH:0xOFFSET or PATH:symbol[+off]' : kind === 'kwatch' ? 'the watched variable: a symbol, symbol+offset or 0xaddress' : 'a symbol, symbol+offset, 0xaddress or file.c:line';
    throw new ProbeParseError(`missing target after '${kind}' (${what})`, spanOf(first));
  }
  let last = p.next();
  while (p.tok.kind !== 'eof' && !p.is('{') && p.tok.start === last.end && p.tok.kind !== 'string') last = p.next();
  // '@' is not a C token: it only joins `symbol@0xaddr` (both fields of struct kprobe set: -EINVAL at registration)
  let bad: Token | undefined;
  for (let k = firstAt; k < p.pos && bad === undefined; k++) {
    const t = p.toks[k];
    if (t.kind === 'error' && text.slice(t.start, t.end) !== '@') bad = t;
  }
  let targetText = text.slice(first.start, last.end);
  let targetSpan = joinSpan(spanOf(first), spanOf(last));
  if (USER_PROBE_KINDS.includes(kind)) return parseUserProbeRest(p, kind, kw, targetText, targetSpan, known);
  // `sym + 0x10` with spaces
  if (p.is('+') && /^[A-Za-z_][\w.]*$/.test(targetText) && p.peek().kind === 'number') {
    p.next();
    const n = p.next();
    targetText += '+' + n.text;
    targetSpan = joinSpan(targetSpan, spanOf(n));
  }
  const target = bad ? undefined : parseTarget(targetText);
  const diags = p.diags;
  if (bad) diags.push(diagAt(spanOf(bad), `invalid probe target: ${bad.message}`));
  else if (!target) diags.push(diagAt(targetSpan, `invalid probe target '${targetText}' (expected symbol, symbol+offset, 0xaddress or file.c:line)`));

  const attrs = parseAttrs(p);
  const { handlers, close } = parseBody(p, kind, kw, diags, known);
  return { kind, span: spanOf(kw), target, targetText, targetSpan, attrs, handlers, fullSpan: joinSpan(spanOf(kw), spanOf(close)) };
}

/** attributes of a probe (`maxactive=20 disabled`) */
function parseAttrs(p: Parser): ProbeAttrAst[] {
  const attrs: ProbeAttrAst[] = [];
  while (p.tok.kind === 'ident') {
    const n = p.next();
    if (p.is('=')) {
      p.next();
      // a negative number: maxactive=-1 (any value <= 0 asks for the default)
      const minus = p.is('-') ? p.next() : undefined;
      const v = p.tok;
      if (v.kind !== 'number' && (v.kind !== 'ident' || minus)) throw new ProbeParseError(`expected a value for attribute '${n.text}' but found ${describe(v)}`, spanOf(v));
      p.next();
      const valueSpan = minus ? joinSpan(spanOf(minus), spanOf(v)) : spanOf(v);
      attrs.push({ name: n.text, value: minus ? `-${v.text}` : v.text, span: joinSpan(spanOf(n), spanOf(v)), valueSpan });
    } else attrs.push({ name: n.text, span: spanOf(n) });
  }
  return attrs;
}

/** uprobe / uretprobe: PATH:0xOFF or PATH:symbol[+off], attributes, the handlers' body */
function parseUserProbeRest(p: Parser, kind: ProbeKindName, kw: Token, targetText: string, targetSpan: Span, known: KnownBodies | undefined): ProbeAst {
  const target = parseUserTarget(targetText);
  if (!target) p.diags.push(diagAt(targetSpan, `invalid ${kind} target '${targetText}' (expected PATH:0xOFFSET or PATH:symbol[+0xoff], e.g. /bin/app:0x1136 or /bin/app:main)`));
  const attrs = parseAttrs(p);
  const { handlers, close } = parseBody(p, kind, kw, p.diags, known);
  return { kind, span: spanOf(kw), target, targetText, targetSpan, attrs, handlers, fullSpan: joinSpan(spanOf(kw), spanOf(close)) };
}

/** `p`, `r`, `rN` followed by ':' or a blank, or `-:`: the start of a kprobe_events / uprobe_events line */
function isEventStart(t: Token, text: string): boolean {
  const next = text[t.end] ?? '';
  if (t.kind === 'ident' && /^[pr][0-9]*$/.test(t.text)) return next === ':' || next === ' ' || next === '\t';
  return t.kind === 'punct' && t.text === '-' && next === ':';
}

/**
 * A kprobe_events / uprobe_events line (Documentation/trace/kprobetrace.rst,
 * uprobetracer.rst), to the end of its line: `p[:[GRP/][EVENT]] TARGET
 * [FETCHARGS]`, `r[MAXACTIVE][:[GRP/][EVENT]] TARGET [FETCHARGS]` (a
 * kprobe / kretprobe, or a uprobe / uretprobe when TARGET is PATH:OFFSET),
 * or `-:[GRP/]EVENT`, which removes the event an earlier line of the file
 * defined. The event writes one trace line per hit. Errors are at the
 * column the definition parser names; undefined for a removal.
 */
function parseEventLine(p: Parser, text: string, file: ProbeFileAst): ProbeAst | undefined {
  const kw = p.tok;
  const eol = text.indexOf('\n', kw.start);
  const lineText = stripEventComment(text.slice(kw.start, eol < 0 ? text.length : eol)).trimEnd();
  // every token that starts on this line belongs to the definition
  let last = p.next();
  while (p.tok.kind !== 'eof' && p.tok.line === kw.line) last = p.next();
  const at = (column: number, len = 1): Span => ({ line: kw.line, column: kw.column + column - 1, endLine: kw.line, endColumn: kw.column + column - 1 + len });
  const r = parseEventDefinition(lineText);
  if (!r.ok) throw new ProbeParseError(r.error.message, at(r.error.column));
  const cmd = r.cmd;
  const same = (pr: ProbeAst, group: string | undefined, name: string): boolean => pr.event !== undefined && pr.event.name === name && (group === undefined || pr.event.group === group);
  if (cmd.op === 'remove') {
    const i = file.probes.findIndex(pr => same(pr, cmd.group, cmd.event));
    const name = `${cmd.group ? `${cmd.group}/` : ''}${cmd.event}`;
    if (i < 0) throw new ProbeParseError(`no event '${name}' is defined before this line (-: removes an event an earlier line of this file defined)`, at(3, name.length));
    file.probes.splice(i, 1);
    return undefined;
  }
  const dup = file.probes.find(pr => same(pr, cmd.group, cmd.event));
  if (dup) {
    throw new ProbeParseError(`event '${cmd.group}/${cmd.event}' is already defined at line ${dup.span.line} (remove it first with -:${cmd.group}/${cmd.event})`, at(1, cmd.text.indexOf(' ') > 0 ? cmd.text.indexOf(' ') : 1));
  }
  const user = cmd.subsystem === 'uprobe';
  const kind: ProbeKindName = user ? (cmd.type === 'r' ? 'uretprobe' : 'uprobe') : (cmd.type === 'r' ? 'kretprobe' : 'kprobe');
  const t = cmd.target;
  const target: ProbeTarget = t.kind === 'symbol' ? { kind: 'symbol', name: moduleSymbol(t).symbol, offset: t.offset } : t.kind === 'address' ? { kind: 'address', addr: t.addr } : { ...t };
  const targetSpan = at(cmd.targetColumn, cmd.targetText.length);
  const attrs: ProbeAttrAst[] = cmd.maxactive ? [{ name: 'maxactive', value: String(cmd.maxactive), span: at(2, String(cmd.maxactive).length) }] : [];
  return {
    kind, span: spanOf(kw), target, targetText: cmd.targetText, targetSpan, attrs, handlers: [],
    fullSpan: joinSpan(spanOf(kw), spanOf(last)), event: { group: cmd.group, name: cmd.event, def: cmd },
  };
}

/** Parse `PATH:0xOFFSET` / `PATH:symbol[+off]` (a uprobe target). */
export function parseUserTarget(s: string): ProbeTarget | undefined {
  const i = s.lastIndexOf(':');
  if (i <= 0 || i === s.length - 1) return undefined;
  const path = s.slice(0, i), what = s.slice(i + 1);
  let m = /^(0[xX][0-9a-fA-F]+|[0-9]+)$/.exec(what);
  if (m) {
    const off = BigInt(m[1]);
    return off > MAX_U64 ? undefined : { kind: 'user', path, offset: off };
  }
  m = /^([A-Za-z_][\w.$]*)(?:\+(0[xX][0-9a-fA-F]+|[0-9]+))?$/.exec(what);
  if (!m) return undefined;
  const off = m[2] ? BigInt(m[2]) : 0n;
  return off > 0xffffffffn ? undefined : { kind: 'user', path, symbol: m[1], symOffset: off };
}

/** `{ pre { ... } ... }` (or a jprobe's plain body) */
function parseBody(p: Parser, kind: ProbeKindName, kw: Token, diags: Diagnostic[], known: KnownBodies | undefined): { handlers: ProbeHandlerAst[]; close: Token } {
  const open = p.tok;
  if (!p.is('{')) throw new ProbeParseError(`expected '{' to start the ${kind} body but found ${describe(open)}`, spanOf(open));
  const handlers: ProbeHandlerAst[] = [];
  if (kind === 'jprobe' || kind === 'kwatch') {
    const { body, close, text } = handlerBody(p, kind, open, diags, known);
    handlers.push({ kind, span: spanOf(open), body: { k: 'body', body, span: joinSpan(spanOf(open), spanOf(close)) }, text });
    // the closing brace is the body's own (checked below)
    return { handlers, close: closeBody(p, kind, kw) };
  }
  p.next();
  while (!p.is('}') && p.tok.kind !== 'eof') {
    const h = p.tok;
    if (h.kind !== 'ident') {
      diags.push(diagAt(spanOf(h), `expected a handler kind (${kind === 'kprobe' ? 'pre, post or fault' : kind === 'uprobe' ? 'pre or fault' : 'entry or return'}) but found ${describe(h)}`));
      p.next();
      continue;
    }
    p.next();
    const hopen = p.tok;
    if (!p.is('{')) {
      diags.push(diagAt(spanOf(hopen), `expected '{' after '${h.text}' but found ${describe(hopen)}`));
      continue;
    }
    const { body, close, text } = handlerBody(p, h.text, hopen, diags, known);
    if (!p.is('}')) throw new ProbeParseError(`missing '}' to close the ${h.text} handler`, close.kind === 'eof' ? spanOf(h) : spanOf(close));
    p.next();
    handlers.push({ kind: h.text, span: spanOf(h), body: { k: 'body', body, span: joinSpan(spanOf(hopen), spanOf(close)) }, text });
  }
  return { handlers, close: closeBody(p, kind, kw) };
}

/** the probe's closing brace (consumed) */
function closeBody(p: Parser, kind: ProbeKindName, kw: Token): Token {
  const close = p.tok;
  if (!p.is('}')) throw new ProbeParseError(`missing '}' to close the ${kind} started at line ${kw.line}`, close.kind === 'eof' ? spanOf(kw) : spanOf(close));
  p.next();
  return close;
}

/**
 * The statements of a handler body from its opening brace `open` (the
 * current token) up to its closing one (the current token after: not
 * consumed), and where its text is (none when its parse reported a
 * problem). A body `known` for this kind at this place is taken as it is:
 * its tokens are skipped (the same text is the same tokens: checked at the
 * closing brace), its statements are the earlier copy's.
 */
function handlerBody(p: Parser, kind: string, open: Token, diags: Diagnostic[], known: KnownBodies | undefined): { body: Stmt[]; close: Token; text: ProbeHandlerAst['text'] } {
  const openAt = p.pos;
  const kb = known?.(kind, open.start);
  if (kb !== undefined) {
    const close = p.peek(kb.tokens - 1);
    if (close.kind === 'punct' && close.text === '}' && close.end === open.start + kb.text.length) {
      p.pos = openAt + kb.tokens - 1;
      return { body: kb.stmts, close, text: { start: open.start, end: close.end, line: open.line, column: open.column, tokens: kb.tokens } };
    }
  }
  p.next();
  const before = diags.length;
  const body = p.stmtList('}');
  const close = p.tok;
  const clean = diags.length === before && p.is('}');
  return { body, close, text: clean ? { start: open.start, end: close.end, line: open.line, column: open.column, tokens: p.pos - openAt + 1 } : undefined };
}

const MAX_U64 = (1n << 64n) - 1n;

/**
 * BigInt(digits) of a decimal or 0x number: through a number when it has
 * at most 12 digits (below 2^48: exact; reading a short number is cheaper
 * than BigInt's string parse), else the string parse.
 */
function smallBigInt(digits: string): bigint {
  const hex = digits.length > 2 && (digits.charCodeAt(1) | 0x20) === 120;
  const n = hex ? digits.length - 2 : digits.length;
  if (n > 12) return BigInt(digits);
  return BigInt(parseInt(digits, hex ? 16 : 10)); // parseInt reads past a 0x with radix 16
}

/** Parse a probe target text (also used for DAP function breakpoints such as `do_fork+0x4`). */
export function parseTarget(s: string): ProbeTarget | undefined {
  let m = /^(0[xX][0-9a-fA-F]+|[0-9]+)$/.exec(s);
  if (m) {
    const v = BigInt(m[1]);
    return v > MAX_U64 ? undefined : { kind: 'address', addr: v };
  }
  m = s.includes(':') ? /^(.*[^\s:]):([0-9]+)$/.exec(s) : null;
  if (m && /\.[A-Za-z]+$/.test(m[1])) {
    const line = Number(m[2]);
    return line >= 1 && line <= 10_000_000 ? { kind: 'line', file: m[1], line } : undefined;
  }
  m = /^([A-Za-z_][\w.$]*)(?:\+(0[xX][0-9a-fA-F]+|[0-9]+))?(?:@(0[xX][0-9a-fA-F]+))?$/.exec(s);
  if (m) {
    const off = m[2] ? smallBigInt(m[2]) : 0n;
    if (off > 0xffffffffn) return undefined;
    if (m[3] === undefined) return { kind: 'symbol', name: m[1], offset: off };
    const addr = BigInt(m[3]);
    return addr > MAX_U64 ? undefined : { kind: 'symbol', name: m[1], offset: off, addr };
  }
  return undefined;
}
