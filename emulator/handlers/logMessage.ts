/**
 * Breakpoint log messages (VS Code logpoints).
 *
 * Two forms:
 * 1. A plain message with `{expr}` interpolations, e.g.
 *      `do_fork flags={regs->di} comm={current->comm}`
 *    Each `{...}` is a handler-language expression; `{{` and `}}` are literal
 *    braces. Values print by type: char pointers as strings (like %s: "(null)",
 *    "(efault)"), pointers as 0x-hex, signed integers in decimal, unsigned
 *    integers in decimal. The line ends with a newline.
 * 2. A handler snippet: the trimmed message starts with '{', the brace that
 *    opens it is the one that closes at the very end, and the text inside
 *    contains a ';' outside string/char literals, e.g.
 *      `{ if (regs->di & 0x100) printk("vm clone\n"); }`
 *    An interpolation can never contain ';' (expressions have none), and a
 *    plain message like `{a}; {b}` does not qualify because its first brace
 *    closes early, so the two forms cannot be confused.
 */
import { Expr, Span } from './ast';
import { CONTEXT_BY_KIND, argRegsOf, charSignedOf } from './context';
import { isCharPtr, isPtr } from './ctypes';
import { DEFAULT_STEP_BUDGET, HandlerCompiler, compileHandlerFull } from './compiler';
import { tokenize } from './lexer';
import { Parser, diagAt } from './parser';
import { formatPrintk } from './printk';
import { Ev, Frame, LITERAL_POOL_BASE, StringPool, readCString, step } from './runtime';
import { CompileOptions, CompiledHandler, Diagnostic } from './types';

/** Index of the brace closing the one at `open`, skipping string/char literals; -1 if none. Also reports a top-level ';'. */
function matchBrace(s: string, open: number): { close: number; semicolon: boolean } {
  let depth = 0, semicolon = false;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === '"' || c === "'") {
      i++;
      while (i < s.length && s[i] !== c) { if (s[i] === '\\') i++; i++; }
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}') { depth--; if (depth === 0) return { close: i, semicolon }; }
    else if (c === ';') semicolon = true;
  }
  return { close: -1, semicolon };
}

/** Whether a log message is a handler snippet rather than a plain message with {expr} parts (rule in the file comment). */
export function isHandlerSnippetLogMessage(message: string): boolean {
  const t = message.trim();
  if (!t.startsWith('{') || !t.endsWith('}')) return false;
  const m = matchBrace(t, 0);
  return m.close === t.length - 1 && m.semicolon;
}

interface Part { text?: string; ev?: Ev; fmt?: 'str' | 'ptr' | 'signed' | 'unsigned' }

/** Compile a breakpoint log message; run() prints the line and returns 0. */
export function compileLogMessage(message: string, opts: CompileOptions): { handler?: CompiledHandler; diagnostics: Diagnostic[] } {
  if (isHandlerSnippetLogMessage(message)) {
    const r = compileHandlerFull(message, 'log', opts);
    return { handler: r.handler, diagnostics: r.diagnostics };
  }
  const diagnostics: Diagnostic[] = [];
  const c = new HandlerCompiler({
    kind: 'log', regNames: opts.regNames, argRegs: argRegsOf(opts),
    context: CONTEXT_BY_KIND.log, symbolExists: opts.symbolExists, functionExists: opts.functionExists, charSigned: charSignedOf(opts),
    programName: opts.programName, programType: opts.programType, programWritable: opts.programWritable,
  }, diagnostics, new StringPool(LITERAL_POOL_BASE));
  // positions of each character
  const line0 = 1 + (opts.lineOffset ?? 0), col0 = 1 + (opts.columnOffset ?? 0);
  const posAt = (idx: number): { line: number; column: number } => {
    let line = line0, column = col0;
    for (let i = 0; i < idx; i++) { if (message[i] === '\n') { line++; column = 1; } else column++; }
    return { line, column };
  };
  const spanAt = (a: number, b: number): Span => { const s = posAt(a), e = posAt(b); return { line: s.line, column: s.column, endLine: e.line, endColumn: e.column }; };
  const parts: Part[] = [];
  let lit = '';
  for (let i = 0; i < message.length; i++) {
    const ch = message[i];
    if (ch === '{' && message[i + 1] === '{') { lit += '{'; i++; continue; }
    if (ch === '}' && message[i + 1] === '}') { lit += '}'; i++; continue; }
    if (ch !== '{') { lit += ch; continue; }
    const m = matchBrace(message, i);
    if (m.close < 0) { diagnostics.push(diagAt(spanAt(i, i + 1), "unclosed '{' in the log message (write '{{' for a literal brace)")); break; }
    if (lit) { parts.push({ text: lit }); lit = ''; }
    const inner = message.slice(i + 1, m.close);
    const p = posAt(i + 1);
    const toks = tokenize(inner, p.line, p.column);
    const parser = new Parser(toks, diagnostics, charSignedOf(opts), opts.programType);
    let e: Expr | undefined;
    if (toks[0].kind === 'eof') diagnostics.push(diagAt(spanAt(i, m.close + 1), 'empty {} in the log message (write {{}} for literal braces)'));
    else {
      try {
        e = parser.expression();
        if (parser.tok.kind !== 'eof') parser.fail(`unexpected ${parser.tok.text || 'input'} after the expression in {...}`);
      } catch (err) { parser.report(err); e = undefined; }
    }
    if (e) {
      const r = c.value(e);
      if (!r.bad) parts.push({ ev: r.ev, fmt: isCharPtr(r.t) ? 'str' : isPtr(r.t) ? 'ptr' : r.t.kind === 'int' && r.t.signed ? 'signed' : 'unsigned' });
    }
    i = m.close;
  }
  if (lit) parts.push({ text: lit });
  if (diagnostics.some(d => d.severity === 'error')) return { diagnostics };
  const budget = opts.stepBudget ?? DEFAULT_STEP_BUDGET;
  const nslots = c.nslots, lits = c.lits, statics = c.statics.slice();
  const span = spanAt(0, message.length);
  const handler: CompiledHandler = {
    kind: 'log',
    run(env) {
      const f: Frame = { env, slots: new Array<bigint>(nslots).fill(0n), statics, steps: 0, budget, ret: 0n, lits };
      try {
        step(f, span);
        let out = '';
        for (const p of parts) {
          if (p.text !== undefined) { out += p.text; continue; }
          const v = p.ev!(f);
          switch (p.fmt) {
            case 'str': out += formatPrintk('%s', [v], { readCString: (a, max) => readCString(f, a, max, span) }); break;
            case 'ptr': out += '0x' + BigInt.asUintN(64, v).toString(16); break;
            default: out += v.toString(); break;
          }
        }
        env.printk(out + '\n');
        return 0n;
      } finally {
        env.spent?.(Math.min(f.steps, budget));
      }
    },
  };
  return { handler, diagnostics };
}
