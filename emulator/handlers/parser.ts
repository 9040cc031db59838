/**
 * Recursive-descent parser for handler snippets (a C statement subset).
 * Works on a token array so that .kprobe files can parse handler bodies out
 * of the same token stream. Records diagnostics and recovers at statement
 * boundaries; never throws to its caller.
 */
import { Declarator, Expr, MAX_NESTING, SnippetAst, Span, Stmt, nestingMessage } from './ast';
import { CType, T, TYPEDEFS, charType, ptrTo } from './ctypes';
import { Lexer, Token } from './lexer';
import { Diagnostic } from './types';

class ParseError extends Error {
  constructor(message: string, readonly span: Span) { super(message); }
}

const TYPE_KEYWORDS = new Set(['int', 'long', 'short', 'char', 'signed', 'unsigned', 'void', 'const', 'volatile', 'struct', 'union', 'enum', 'float', 'double']);
const STMT_KEYWORDS = new Set(['if', 'else', 'while', 'do', 'for', 'break', 'continue', 'return', 'switch', 'goto', 'case', 'default', 'static', 'extern', 'typedef']);

const BINARY_PREC: Record<string, number> = {
  '||': 1, '&&': 2, '|': 3, '^': 4, '&': 5, '==': 6, '!=': 6, '<': 7, '>': 7, '<=': 7, '>=': 7,
  '<<': 8, '>>': 8, '+': 9, '-': 9, '*': 10, '/': 10, '%': 10,
};
const ASSIGN_OPS = new Set(['=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<=', '>>=']);

export function spanOf(t: Token): Span { return { line: t.line, column: t.column, endLine: t.endLine, endColumn: t.endColumn }; }
export function joinSpan(a: Span, b: Span): Span { return { line: a.line, column: a.column, endLine: b.endLine, endColumn: b.endColumn }; }

export function diagAt(span: Span, message: string, severity: 'error' | 'warning' = 'error'): Diagnostic {
  return { message, severity, ...span };
}

/** tokens a streamed parse asks its lexer for at a time, and how many it has gone past before it drops them */
const STREAM_CHUNK = 256;
const STREAM_DROP = 1024;

export class Parser {
  pos = 0;
  /**
   * Nesting level of what is being parsed: one per statement, assignment,
   * unary operand and ?: branch being parsed recursively, and one per operator
   * of a chain parsed by a loop (`a + b + c`, `a[1][2]`, `x->y->z`,
   * `a, b, c`), which the syntax tree nests just the same. Bounded by
   * MAX_NESTING, so the tree the checker and the compiler walk is too.
   */
  private depth = 0;
  constructor(
    readonly toks: Token[], readonly diags: Diagnostic[], private readonly charSigned = true,
    /** the program's types by name (DWARF): struct / union / enum tags and typedefs in casts and sizeof */
    private readonly programType?: (kind: 'struct' | 'union' | 'enum' | 'typedef', name: string) => CType | undefined,
  ) {}

  /** a word that starts a type name: a keyword, a known typedef, or one of the program's typedefs */
  isTypeWord(w: string): boolean {
    return TYPE_KEYWORDS.has(w) || TYPEDEFS.has(w) || (this.programType !== undefined && this.programType('typedef', w) !== undefined);
  }

  /** where more tokens come from (streamed: `toks` is a window that grows as the parse goes on) */
  private lexer?: Lexer;

  /**
   * Parse tokens from `lexer` as they are needed, starting with none: the
   * parse sees what it would see with all of them; drop() forgets the
   * tokens before the current one.
   */
  stream(lexer: Lexer): this {
    this.lexer = lexer;
    return this;
  }

  get tok(): Token { const i = this.pos; return i < this.toks.length ? this.toks[i] : this.load(i); }
  peek(k = 1): Token {
    const i = this.pos + k;
    if (i >= this.toks.length) this.load(i);
    return this.toks[Math.min(i, this.toks.length - 1)];
  }

  /** tokens up to index i (or up to the eof token) from the lexer; the token at i, or the last one */
  private load(i: number): Token {
    const lx = this.lexer;
    while (lx !== undefined && !lx.done && i >= this.toks.length) lx.fill(this.toks, Math.max(i + 1, this.toks.length + STREAM_CHUNK));
    return this.toks[Math.min(i, this.toks.length - 1)];
  }

  /**
   * Streamed: forget the tokens before the previous one once there are many
   * (indices into toks change: call only between top-level items).
   */
  drop(): void {
    if (this.lexer === undefined || this.pos < STREAM_DROP) return;
    this.toks.splice(0, this.pos - 1);
    this.pos = 1;
  }
  is(text: string): boolean { const t = this.tok; return (t.kind === 'punct' || t.kind === 'ident') && t.text === text; }
  next(): Token { const t = this.tok; if (t.kind !== 'eof') this.pos++; return t; }
  private prevSpan(): Span { return spanOf(this.toks[Math.max(0, this.pos - 1)]); }

  fail(message: string, t: Token = this.tok): never {
    if (t.kind === 'error') throw new ParseError(t.message ?? 'invalid token', spanOf(t));
    throw new ParseError(message, spanOf(t));
  }
  expect(text: string, what?: string): Token {
    if (!this.is(text)) this.fail(`expected '${text}'${what ? ` ${what}` : ''} but found ${describe(this.tok)}`);
    return this.next();
  }

  // ---- snippets ---------------------------------------------------------

  /** Parse until eof. With allowExpr, a snippet that is one bare expression (no ';') parses as an expression. */
  parseSnippet(allowExpr: boolean): SnippetAst {
    const first = this.tok;
    if (allowExpr && this.lexer !== undefined) this.load(Infinity); // the check below looks at every token
    if (allowExpr && first.kind !== 'eof' && !this.toks.some(t => t.kind === 'punct' && (t.text === ';' || t.text === '{'))
      && !(first.kind === 'ident' && STMT_KEYWORDS.has(first.text))) {
      try {
        const e = this.expression();
        if (this.tok.kind !== 'eof') this.fail(`unexpected ${describe(this.tok)} after the expression`);
        return { k: 'expr', expr: e, span: e.span };
      } catch (err) {
        this.report(err);
        return { k: 'expr', expr: { k: 'error', span: spanOf(first) }, span: spanOf(first) };
      }
    }
    const body = this.stmtList(null);
    return { k: 'body', body, span: joinSpan(spanOf(first), this.prevSpan()) };
  }

  /** Statements until '}' (not consumed) or eof (closer = null). */
  stmtList(closer: '}' | null): Stmt[] {
    const out: Stmt[] = [];
    while (this.tok.kind !== 'eof' && !(closer && this.is(closer))) {
      const start = this.pos;
      try {
        out.push(this.statement());
      } catch (err) {
        this.report(err);
        this.recover(start);
      }
    }
    return out;
  }

  report(err: unknown): void {
    if (err instanceof ParseError) this.diags.push(diagAt(err.span, err.message));
    else if (err instanceof RangeError) this.diags.push(diagAt(spanOf(this.tok), nestingMessage('snippet')));
    else throw err;
  }

  /** Skip to just after the next ';' or before a '}' at nesting depth 0; always makes progress. */
  private recover(start: number): void {
    if (this.pos === start) this.next();
    let depth = 0;
    while (this.tok.kind !== 'eof') {
      if (this.is('{')) depth++;
      else if (this.is('}')) { if (depth === 0) return; depth--; if (depth === 0) { this.next(); return; } }
      else if (this.is(';') && depth === 0) { this.next(); return; }
      this.next();
    }
  }

  // ---- statements -------------------------------------------------------

  /** One more nesting level for what follows (see depth); fails at the current token past MAX_NESTING. */
  private deeper(what: 'statement' | 'expression'): void {
    if (++this.depth > MAX_NESTING) this.fail(nestingMessage(what));
  }

  /** Run a recursive step one level deeper; the level is restored however it ends. */
  private nested<R>(what: 'statement' | 'expression', f: () => R): R {
    const saved = this.depth;
    try { this.deeper(what); return f(); } finally { this.depth = saved; }
  }

  statement(): Stmt {
    return this.nested('statement', () => this.statementInner());
  }

  private statementInner(): Stmt {
    const t = this.tok;
    const s = spanOf(t);
    if (t.kind === 'punct' && t.text === '{') {
      this.next();
      const body = this.stmtList('}');
      this.expect('}', 'to close the block');
      return { k: 'block', body, span: joinSpan(s, this.prevSpan()) };
    }
    if (t.kind === 'punct' && t.text === ';') { this.next(); return { k: 'empty', span: s }; }
    if (t.kind === 'ident') {
      switch (t.text) {
        case 'if': {
          this.next(); this.expect('(', "after 'if'");
          const test = this.expression(); this.expect(')', 'to close the if condition');
          const then = this.statement();
          let els: Stmt | undefined;
          if (this.is('else')) { this.next(); els = this.statement(); }
          return { k: 'if', test, then, else: els, span: joinSpan(s, this.prevSpan()) };
        }
        case 'while': {
          this.next(); this.expect('(', "after 'while'");
          const test = this.expression(); this.expect(')', 'to close the while condition');
          const body = this.statement();
          return { k: 'while', test, body, span: joinSpan(s, this.prevSpan()) };
        }
        case 'do': {
          this.next();
          const body = this.statement();
          this.expect('while', "after the do body");
          this.expect('(', "after 'while'");
          const test = this.expression(); this.expect(')', 'to close the while condition'); this.expect(';', 'after do-while');
          return { k: 'do', body, test, span: joinSpan(s, this.prevSpan()) };
        }
        case 'for': {
          this.next(); this.expect('(', "after 'for'");
          let init: Stmt | undefined;
          if (this.is(';')) this.next();
          else if (this.startsType()) init = this.declaration();
          else { const e = this.expression(); init = { k: 'expr', expr: e, span: e.span }; this.expect(';', 'after the for initializer'); }
          const test = this.is(';') ? undefined : this.expression();
          this.expect(';', 'after the for condition');
          const update = this.is(')') ? undefined : this.expression();
          this.expect(')', 'to close the for header');
          const body = this.statement();
          return { k: 'for', init, test, update, body, span: joinSpan(s, this.prevSpan()) };
        }
        case 'break': this.next(); this.expect(';', "after 'break'"); return { k: 'break', span: s };
        case 'continue': this.next(); this.expect(';', "after 'continue'"); return { k: 'continue', span: s };
        case 'return': {
          this.next();
          const value = this.is(';') ? undefined : this.expression();
          this.expect(';', 'after the return statement');
          return { k: 'return', value, span: joinSpan(s, this.prevSpan()) };
        }
        case 'else': this.fail("'else' without a matching 'if'");
        // falls through (fail never returns)
        case 'switch': case 'goto': case 'case': case 'default':
          this.fail(`'${t.text}' is not supported in handler snippets`);
        // falls through
        case 'static': {
          // a variable that keeps its value across runs of this handler (per probe and handler)
          this.next();
          if (!this.startsType()) this.fail(`expected a type after 'static' but found ${describe(this.tok)}`);
          const d = this.declaration();
          return { ...d, isStatic: true } as Stmt;
        }
        case 'extern': case 'typedef':
          this.fail(`'${t.text}' declarations are not supported in handler snippets (locals and static variables only)`);
      }
      if (this.startsType()) return this.declaration();
    }
    const e = this.expression();
    this.expect(';', 'after the expression');
    return { k: 'expr', expr: e, span: joinSpan(e.span, this.prevSpan()) };
  }

  startsType(): boolean {
    const t = this.tok;
    return t.kind === 'ident' && this.isTypeWord(t.text);
  }

  private declaration(): Stmt {
    const s = spanOf(this.tok);
    const base = this.typeSpecifiers();
    const decls: Declarator[] = [];
    for (;;) {
      let t: CType = base;
      while (this.is('*')) { this.next(); t = ptrTo(t); while (this.is('const') || this.is('volatile')) this.next(); }
      const nameTok = this.tok;
      if (nameTok.kind !== 'ident' || STMT_KEYWORDS.has(nameTok.text) || this.isTypeWord(nameTok.text)) {
        this.fail(`expected a variable name but found ${describe(nameTok)}`);
      }
      this.next();
      if (this.is('[')) this.fail('local arrays are not supported (handler locals are not in emulated memory)');
      if (this.is('(')) this.fail('function declarations are not supported in handler snippets');
      if (t.kind === 'void') this.fail(`variable '${nameTok.text}' declared void`, nameTok);
      let init: Expr | undefined;
      if (this.is('=')) { this.next(); init = this.assignment(); }
      decls.push({ name: nameTok.text, type: t, init, span: spanOf(nameTok) });
      if (this.is(',')) { this.next(); continue; }
      break;
    }
    this.expect(';', 'after the declaration');
    return { k: 'decl', decls, span: joinSpan(s, this.prevSpan()) };
  }

  /** Type specifiers (no declarator): `unsigned long`, `u32`, `const char`, ... */
  typeSpecifiers(): CType {
    let signed: boolean | undefined;
    let longs = 0, short = false, int = false, char = false, vd = false;
    let named: CType | undefined;
    let any = false;
    const first = this.tok;
    for (;;) {
      const t = this.tok;
      if (t.kind !== 'ident') break;
      const w = t.text;
      if (w === 'const' || w === 'volatile') { this.next(); continue; }
      if (w === 'struct' || w === 'union' || w === 'enum') {
        if (any) this.fail(`'${w}' cannot follow other type words`);
        this.next();
        const tagTok = this.tok;
        if (tagTok.kind !== 'ident') this.fail(`expected a ${w} name after '${w}' but found ${describe(tagTok)}`);
        const found = this.programType?.(w, tagTok.text);
        if (!found) {
          this.fail(this.programType
            ? `unknown type '${w} ${tagTok.text}' (the image's debug info has no such ${w})`
            : `'${w}' types need the image's debug info (DWARF); here use integer types and casts such as *(u64 *)(addr + offset)`, tagTok);
        }
        this.next();
        named = found; any = true;
        break;
      }
      if (w === 'float' || w === 'double') this.fail(`'${w}' is not supported (integers only)`);
      if (w === 'signed' || w === 'unsigned') {
        if (signed !== undefined) this.fail(`duplicate '${w}'`);
        signed = w === 'signed';
      } else if (w === 'long') { if (++longs > 2) this.fail("'long long long' is too long"); }
      else if (w === 'short') short = true;
      else if (w === 'int') int = true;
      else if (w === 'char') char = true;
      else if (w === 'void') vd = true;
      else if (TYPEDEFS.has(w) && !any) { named = TYPEDEFS.get(w); this.next(); any = true; break; }
      else if (!any && (named = this.programType?.('typedef', w)) !== undefined) { this.next(); any = true; break; }
      else break;
      any = true;
      this.next();
    }
    while (this.is('const') || this.is('volatile')) this.next();
    if (!any) this.fail(`expected a type but found ${describe(first)}`);
    if (named) return named;
    if (vd) { if (signed !== undefined || longs || short || int || char) this.fail('invalid combination of type specifiers with void', first); return T.void; }
    if (char) {
      if (longs || short || int) this.fail('invalid combination of type specifiers with char', first);
      return signed === undefined ? charType(this.charSigned) : signed ? T.schar : T.uchar;
    }
    if (short) { if (longs) this.fail("'short' and 'long' together", first); return signed === false ? T.ushort : T.short; }
    if (longs === 2) return signed === false ? T.ullong : T.llong;
    if (longs === 1) return signed === false ? T.ulong : T.long;
    return signed === false ? T.uint : T.int;
  }

  /** A type name as in casts and sizeof: specifiers then '*'s. */
  typeName(): CType {
    let t = this.typeSpecifiers();
    while (this.is('*')) { this.next(); t = ptrTo(t); while (this.is('const') || this.is('volatile')) this.next(); }
    return t;
  }

  // ---- expressions ------------------------------------------------------

  expression(): Expr {
    const saved = this.depth;
    try {
      let e = this.assignment();
      while (this.is(',')) {
        this.deeper('expression');
        this.next();
        const r = this.assignment();
        e = { k: 'comma', left: e, right: r, span: joinSpan(e.span, r.span) };
      }
      return e;
    } finally { this.depth = saved; }
  }

  assignment(): Expr {
    return this.nested('expression', () => {
      const left = this.conditional();
      if (this.tok.kind === 'punct' && ASSIGN_OPS.has(this.tok.text)) {
        const op = this.next().text;
        const value = this.assignment();
        return { k: 'assign', op, target: left, value, span: joinSpan(left.span, value.span) };
      }
      return left;
    });
  }

  private conditional(): Expr {
    const test = this.binary(1);
    if (!this.is('?')) return test;
    return this.nested('expression', () => {
      this.next();
      const then = this.expression();
      this.expect(':', "in the conditional expression");
      const els = this.conditional();
      return { k: 'cond', test, then, else: els, span: joinSpan(test.span, els.span) };
    });
  }

  /** Operators of one precedence level fold left in a loop; each costs a nesting level (the tree nests them). */
  private binary(minPrec: number): Expr {
    const saved = this.depth;
    try {
      let left = this.unary();
      for (;;) {
        const t = this.tok;
        const prec = t.kind === 'punct' ? BINARY_PREC[t.text] : undefined;
        if (prec === undefined || prec < minPrec) return left;
        this.deeper('expression');
        this.next();
        const right = this.binary(prec + 1);
        const span = joinSpan(left.span, right.span);
        left = t.text === '&&' || t.text === '||'
          ? { k: 'logical', op: t.text, left, right, span }
          : { k: 'binary', op: t.text, left, right, span };
      }
    } finally { this.depth = saved; }
  }

  private unary(): Expr {
    return this.nested('expression', () => this.unaryInner());
  }

  private unaryInner(): Expr {
    const t = this.tok;
    const s = spanOf(t);
    if (t.kind === 'punct') {
      if (t.text === '++' || t.text === '--') {
        this.next();
        const arg = this.unary();
        return { k: 'incdec', op: t.text, prefix: true, arg, span: joinSpan(s, arg.span) };
      }
      if (t.text === '-' || t.text === '+' || t.text === '!' || t.text === '~' || t.text === '*' || t.text === '&') {
        this.next();
        const arg = this.unary();
        return { k: 'unary', op: t.text, arg, span: joinSpan(s, arg.span) };
      }
      if (t.text === '(' && this.peek().kind === 'ident' && this.isTypeWord(this.peek().text)) {
        this.next();
        const type = this.typeName();
        this.expect(')', 'to close the cast');
        const arg = this.unary();
        return { k: 'cast', type, arg, span: joinSpan(s, arg.span) };
      }
    }
    if (t.kind === 'ident' && t.text === 'sizeof') {
      this.next();
      if (this.is('(') && this.peek().kind === 'ident' && this.isTypeWord(this.peek().text)) {
        this.next();
        const type = this.typeName();
        this.expect(')', 'to close sizeof');
        return { k: 'sizeof', type, span: joinSpan(s, this.prevSpan()) };
      }
      const arg = this.unary();
      return { k: 'sizeof', arg, span: joinSpan(s, arg.span) };
    }
    return this.postfix(this.primary());
  }

  private postfix(e: Expr): Expr {
    const saved = this.depth;
    try { return this.postfixChain(e); } finally { this.depth = saved; }
  }

  private postfixChain(e: Expr): Expr {
    for (;;) {
      const t = this.tok;
      if (t.kind !== 'punct') return e;
      if (t.text === '[' || t.text === '->' || t.text === '.' || t.text === '++' || t.text === '--') this.deeper('expression');
      if (t.text === '[') {
        this.next();
        const index = this.expression();
        this.expect(']', 'to close the index');
        e = { k: 'index', obj: e, index, span: joinSpan(e.span, this.prevSpan()) };
      } else if (t.text === '->' || t.text === '.') {
        this.next();
        const f = this.tok;
        if (f.kind !== 'ident') this.fail(`expected a field name after '${t.text}' but found ${describe(f)}`);
        this.next();
        e = { k: 'member', obj: e, field: f.text, arrow: t.text === '->', fieldSpan: spanOf(f), span: joinSpan(e.span, spanOf(f)) };
      } else if (t.text === '++' || t.text === '--') {
        this.next();
        e = { k: 'incdec', op: t.text, prefix: false, arg: e, span: joinSpan(e.span, spanOf(t)) };
      } else if (t.text === '(') {
        this.fail(e.k === 'ident' ? 'unexpected call' : 'only named builtins can be called');
      } else return e;
    }
  }

  private primary(): Expr {
    const t = this.tok;
    const s = spanOf(t);
    switch (t.kind) {
      case 'number': {
        this.next();
        return { k: 'num', value: t.value ?? 0n, type: literalType(t.value ?? 0n, t.unsigned ?? false, t.longs ?? 0, t.decimal ?? true), span: s };
      }
      case 'char': {
        this.next();
        const v = t.value ?? 0n;
        return { k: 'num', value: this.charSigned ? BigInt.asIntN(8, v) : v, type: T.int, span: s };
      }
      case 'string': {
        let str = '';
        let last = t;
        while (this.tok.kind === 'string') { last = this.next(); str += last.str ?? ''; }
        return { k: 'str', value: str, span: joinSpan(s, spanOf(last)) };
      }
      case 'ident': {
        if (STMT_KEYWORDS.has(t.text) || TYPE_KEYWORDS.has(t.text) || TYPEDEFS.has(t.text)) this.fail(`unexpected '${t.text}' in an expression`);
        this.next();
        if (this.is('(')) {
          this.next();
          const args: Expr[] = [];
          if (!this.is(')')) {
            for (;;) {
              args.push(this.assignment());
              if (this.is(',')) { this.next(); continue; }
              break;
            }
          }
          this.expect(')', `to close the call to ${t.text}`);
          return { k: 'call', callee: t.text, calleeSpan: s, args, span: joinSpan(s, this.prevSpan()) };
        }
        // KERN_* log-level prefixes behave like the kernel's string macros
        if (t.text.startsWith('KERN_') && KERN_LEVELS[t.text] !== undefined) {
          let str = KERN_LEVELS[t.text];
          let end = s;
          while (this.tok.kind === 'string') { const l = this.next(); str += l.str ?? ''; end = spanOf(l); }
          return { k: 'str', value: str, span: joinSpan(s, end) };
        }
        return { k: 'ident', name: t.text, span: s };
      }
      case 'punct':
        if (t.text === '(') {
          this.next();
          const e = this.expression();
          this.expect(')', 'to close the parenthesis');
          return e;
        }
        return this.fail(`expected an expression but found ${describe(t)}`);
      default:
        return this.fail(`expected an expression but found ${describe(t)}`);
    }
  }
}

/** Kernel log-level prefixes (SOH + level), stripped by printk. */
export const KERN_LEVELS: Record<string, string> = {
  KERN_EMERG: '\x010', KERN_ALERT: '\x011', KERN_CRIT: '\x012', KERN_ERR: '\x013',
  KERN_WARNING: '\x014', KERN_NOTICE: '\x015', KERN_INFO: '\x016', KERN_DEBUG: '\x017',
  KERN_DEFAULT: '', KERN_CONT: '\x01c',
};

/** C's rule for the type of an integer literal (LP64). */
export function literalType(v: bigint, unsigned: boolean, longs: number, decimal: boolean): CType {
  const cands: CType[] = [];
  if (!unsigned) {
    if (longs === 0) cands.push(T.int);
    if (longs === 0 && !decimal) cands.push(T.uint);
    if (longs <= 1) cands.push(T.long);
    if (longs <= 1 && !decimal) cands.push(T.ulong);
    cands.push(T.llong);
    cands.push(longs === 2 ? T.ullong : T.ulong); // a too-large decimal literal becomes unsigned (gcc warns)
  } else {
    if (longs === 0) cands.push(T.uint);
    if (longs <= 1) cands.push(T.ulong);
    cands.push(T.ullong);
  }
  for (const c of cands) {
    if (c.kind !== 'int') continue;
    const max = c.signed ? (1n << BigInt(c.size * 8 - 1)) - 1n : (1n << BigInt(c.size * 8)) - 1n;
    if (v <= max) return c;
  }
  return T.ullong;
}

export function describe(t: Token): string {
  if (t.kind === 'eof') return 'end of input';
  if (t.kind === 'string') return 'a string literal';
  if (t.kind === 'error') return t.message ?? 'an invalid token';
  return `'${t.text}'`;
}
