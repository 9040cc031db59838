/**
 * compileHandler(): snippet text -> diagnostics + a CompiledHandler whose
 * run() executes a tree of closures (never eval / new Function).
 *
 * Locals are zero-initialised when their declaration runs (C leaves them
 * indeterminate). Every statement executed and every loop iteration costs one
 * step of the per-invocation budget.
 */
import { SnippetAst, Span, Stmt } from './ast';
import { compileCall, JPROBE_RETURN } from './calls';
import { CONTEXT_BY_KIND, ContextName, argRegsOf, charSignedOf } from './context';
import { CType, T, converter, isInt, isPtr, typeName } from './ctypes';
import { ExprCompiler, TE } from './exprCompiler';
import { Token, tokenize } from './lexer';
import { Parser, diagAt } from './parser';
import { Frame, LITERAL_POOL_BASE, StringPool, step } from './runtime';
import { CompileOptions, CompiledHandler, Diagnostic, HandlerEnv, HandlerKind } from './types';

export const DEFAULT_STEP_BUDGET = 100000;

/** Statement completion codes. */
const NORMAL = 0, BREAK = 1, CONTINUE = 2, RETURN = 3;

/** the literal pool and statics of every handler that has none (shared: never written) */
const NO_LITERALS = new StringPool(LITERAL_POOL_BASE);
const NO_STATICS: bigint[] = Object.freeze([]) as unknown as bigint[];
/** the local slots of every run of a handler that has no locals (shared: nothing writes a slot it did not declare) */
const NO_SLOTS: bigint[] = Object.freeze([]) as unknown as bigint[];
type Exec = (f: Frame) => number;

const RESERVED = new Set(['jiffies', 'NULL', 'true', 'false']);
const CONTEXT_NAMES = new Set(['regs', 'p', 'ri', 'current', 'trapnr', 'flags']);
/** a kwatch handler's names for its hit (context 'watch') */
const WATCH_CONTEXT_NAMES = new Set(['debugreg', 'addr', 'access', 'old', 'new']);

export class HandlerCompiler extends ExprCompiler {
  private loops = 0;

  override call(e: Parameters<ExprCompiler['call']>[0]): TE { return compileCall(this, e); }

  private returnType(): CType | undefined {
    switch (this.o.kind) {
      case 'post': case 'log': case 'jprobe': case 'kwatch': return undefined; // void
      case 'condition': return T.bool;
      default: return T.int;
    }
  }

  block(body: Stmt[]): Exec {
    this.scopes.push(new Map());
    const parts = body.map(s => this.stmt(s));
    this.scopes.pop();
    if (parts.length === 1) return parts[0];
    return f => {
      for (const p of parts) { const r = p(f); if (r !== NORMAL) return r; }
      return NORMAL;
    };
  }

  stmt(s: Stmt): Exec {
    this.nesting++;
    try {
      return this.tooDeep(s.span, 'statement') ? () => NORMAL : this.stmtNode(s);
    } finally { this.nesting--; }
  }

  private stmtNode(s: Stmt): Exec {
    const span = s.span;
    switch (s.k) {
      case 'empty': return f => { step(f, span); return NORMAL; };
      case 'expr': {
        const r = this.expr(s.expr);
        if (r.ctx) this.warn(r.span, 'statement has no effect');
        const ev = r.ev;
        return f => { step(f, span); ev(f); return NORMAL; };
      }
      case 'block': return this.block(s.body);
      case 'decl': {
        const inits: { slot: number; init?: (f: Frame) => bigint }[] = [];
        const scope = this.scopes[this.scopes.length - 1];
        if (s.isStatic) {
          // storage of the compiled handler: initialised once (to a constant, as C requires), kept across runs
          for (const d of s.decls) {
            if (RESERVED.has(d.name) || (CONTEXT_NAMES.has(d.name) && this.has(d.name as ContextName)) || (WATCH_CONTEXT_NAMES.has(d.name) && this.has('watch'))) this.error(d.span, `'${d.name}' is a context name and cannot be redeclared`);
            else if (scope.has(d.name)) this.error(d.span, `redeclaration of '${d.name}'`);
            let v = 0n;
            if (d.init) {
              const init = this.value(d.init);
              if (!init.bad && init.constant === undefined) this.error(init.span, `the initializer of static '${d.name}' must be a constant`);
              else if (!init.bad && init.constant !== undefined) v = converter(d.type)(init.constant);
            }
            const slot = this.statics.length;
            this.statics.push(v);
            scope.set(d.name, { slot, type: d.type, isStatic: true });
          }
          return f => { step(f, span); return NORMAL; };
        }
        for (const d of s.decls) {
          if (RESERVED.has(d.name) || (CONTEXT_NAMES.has(d.name) && this.has(d.name as ContextName)) || (WATCH_CONTEXT_NAMES.has(d.name) && this.has('watch')) || (/^arg[0-5]$/.test(d.name) && this.has('args'))) this.error(d.span, `'${d.name}' is a context name and cannot be redeclared`);
          else if (scope.has(d.name)) this.error(d.span, `redeclaration of '${d.name}'`);
          const init = d.init ? this.value(d.init) : undefined;
          const slot = this.nslots++;
          scope.set(d.name, { slot, type: d.type });
          inits.push({ slot, init: init && !init.bad ? this.coerce(init, d.type, 'initialization') : undefined });
        }
        return f => {
          step(f, span);
          for (const d of inits) f.slots[d.slot] = d.init ? d.init(f) : 0n;
          return NORMAL;
        };
      }
      case 'if': {
        const t = this.cond(this.value(s.test));
        const a = this.stmtScoped(s.then);
        const b = s.else ? this.stmtScoped(s.else) : undefined;
        return b ? f => { step(f, span); return t(f) !== 0n ? a(f) : b(f); } : f => { step(f, span); return t(f) !== 0n ? a(f) : NORMAL; };
      }
      case 'while': case 'do': {
        const t = this.cond(this.value(s.test));
        this.loops++;
        const body = this.stmtScoped(s.body);
        this.loops--;
        const isDo = s.k === 'do';
        return f => {
          for (let first = true; ; first = false) {
            step(f, span);
            if (!(isDo && first) && t(f) === 0n) return NORMAL;
            const r = body(f);
            if (r === BREAK) return NORMAL;
            if (r === RETURN) return RETURN;
          }
        };
      }
      case 'for': {
        this.scopes.push(new Map());
        const init = s.init ? this.stmt(s.init) : undefined;
        const t = s.test ? this.cond(this.value(s.test)) : undefined;
        const upd = s.update ? this.expr(s.update).ev : undefined;
        this.loops++;
        const body = this.stmtScoped(s.body);
        this.loops--;
        this.scopes.pop();
        return f => {
          if (init) init(f);
          for (;;) {
            step(f, span);
            if (t && t(f) === 0n) return NORMAL;
            const r = body(f);
            if (r === BREAK) return NORMAL;
            if (r === RETURN) return RETURN;
            if (upd) upd(f);
          }
        };
      }
      case 'break': case 'continue':
        if (this.loops === 0) this.error(span, `'${s.k}' outside a loop`);
        return s.k === 'break' ? () => BREAK : () => CONTINUE;
      case 'return': {
        const rt = this.returnType();
        if (!s.value) {
          return f => { step(f, span); f.ret = 0n; return RETURN; };
        }
        const r = this.value(s.value);
        if (!rt) {
          if (!r.bad) this.warn(s.value.span, `a ${this.o.kind} handler returns nothing; the value is ignored`);
          const ev = r.ev;
          return f => { step(f, span); ev(f); f.ret = 0n; return RETURN; };
        }
        const ev = r.bad ? r.ev : this.coerce(r, rt, 'return');
        const cv = converter(rt);
        return f => { step(f, span); f.ret = cv(ev(f)); return RETURN; };
      }
    }
  }

  /** A sub-statement of if/while/for gets its own scope (C99). */
  private stmtScoped(s: Stmt): Exec {
    this.scopes.push(new Map());
    const e = this.stmt(s);
    this.scopes.pop();
    return e;
  }

  /** Condition of if/while/for/?: — must be a scalar. */
  cond(r: TE): (f: Frame) => bigint {
    if (!r.bad && !isInt(r.t) && !isPtr(r.t)) this.error(r.span, `used '${typeName(r.t)}' where a scalar is required`);
    return r.ev;
  }
}

/** Everything compileHandler/compileProbeFile share about one snippet. */
export interface SnippetResult {
  handler?: CompiledHandler;
  diagnostics: Diagnostic[];
  /** context fields the snippet uses, e.g. 'ri->data', 'write:regs->ip' */
  used: Set<string>;
  /** registers the snippet assigns, each with its first assignment's target span */
  regWrites: ReadonlyMap<string, Span>;
  /** the handler keeps no state of its own (no statics): another copy of its text may run it (sharedSnippets.ts) */
  shareable?: boolean;
}

/** Compile an already-parsed snippet. */
/**
 * Compile a parsed snippet. `programName`: the program names it sees, when
 * not opts.programName (a probe's own scope: no copy of the options per
 * handler).
 */
export function compileSnippetAst(ast: SnippetAst, kind: HandlerKind, opts: CompileOptions, diagnostics: Diagnostic[],
  programName: CompileOptions['programName'] = opts.programName): SnippetResult {
  const c = new HandlerCompiler({
    kind,
    regNames: opts.regNames,
    argRegs: argRegsOf(opts),
    context: CONTEXT_BY_KIND[kind],
    symbolExists: opts.symbolExists,
    functionExists: opts.functionExists,
    programName,
    programType: opts.programType,
    programWritable: opts.programWritable,
    charSigned: charSignedOf(opts),
  }, diagnostics, new StringPool(LITERAL_POOL_BASE));
  let body: Exec;
  if (ast.k === 'expr') {
    const r = c.value(ast.expr);
    if (kind !== 'condition' && !r.bad) c.warn(ast.span, `a ${kind} handler that is a bare expression only evaluates it`);
    const ev = c.cond(r);
    const span = ast.span;
    body = f => { step(f, span); f.ret = ev(f) !== 0n ? 1n : 0n; return RETURN; };
  } else {
    body = c.block(ast.body);
  }
  const used = c.used, regWrites = c.regWrites;
  if (diagnostics.some(d => d.severity === 'error')) return { diagnostics, used, regWrites };
  const budget = opts.stepBudget ?? DEFAULT_STEP_BUDGET;
  const nslots = c.nslots;
  // a handler without literals or statics keeps no pool or array of its own (10,000 probes keep 10,000 handlers):
  // nothing interns into a compiled handler's pool at run time, and no code touches statics it did not declare
  const lits = c.lits.empty ? NO_LITERALS : c.lits;
  const statics = c.statics.length === 0 ? NO_STATICS : c.statics.slice();
  const isCond = kind === 'condition';
  const handler: CompiledHandler = {
    kind,
    run(env: HandlerEnv): bigint {
      const f: Frame = { env, slots: nslots === 0 ? NO_SLOTS : new Array<bigint>(nslots).fill(0n), statics, steps: 0, budget, ret: 0n, lits };
      let r: number;
      try {
        r = body(f);
      } catch (e) {
        if (e === JPROBE_RETURN) return 0n;
        throw e;
      } finally {
        env.spent?.(Math.min(f.steps, budget));
      }
      const v = r === RETURN ? f.ret : 0n;
      return isCond ? (v !== 0n ? 1n : 0n) : v;
    },
  };
  return { handler, diagnostics, used, regWrites, shareable: statics === NO_STATICS };
}

/** Tokens of a snippet placed at the options' line/column offsets. */
export function snippetTokens(source: string, opts: Pick<CompileOptions, 'lineOffset' | 'columnOffset'>): Token[] {
  return tokenize(source, 1 + (opts.lineOffset ?? 0), 1 + (opts.columnOffset ?? 0));
}

/**
 * Compile handler source of the given kind. Condition and log snippets may be
 * a single bare expression (no ';'); every other kind is a statement list.
 */
export function compileHandler(source: string, kind: HandlerKind, opts: CompileOptions): { handler?: CompiledHandler; diagnostics: Diagnostic[] } {
  const r = compileHandlerFull(source, kind, opts);
  return { handler: r.handler, diagnostics: r.diagnostics };
}

export function compileHandlerFull(source: string, kind: HandlerKind, opts: CompileOptions): SnippetResult {
  const diagnostics: Diagnostic[] = [];
  const toks = snippetTokens(source, opts);
  const p = new Parser(toks, diagnostics, charSignedOf(opts), opts.programType);
  const ast = p.parseSnippet(kind === 'condition' || kind === 'log');
  if (diagnostics.length) return { diagnostics, used: new Set(), regWrites: new Map() };
  if (ast.k === 'body' && ast.body.length === 0 && kind === 'condition') {
    diagnostics.push(diagAt(ast.span, 'empty condition'));
    return { diagnostics, used: new Set(), regWrites: new Map() };
  }
  return compileSnippetAst(ast, kind, opts, diagnostics);
}

export function spanFromTokens(a: Token, b: Token): Span {
  return { line: a.line, column: a.column, endLine: b.endLine, endColumn: b.endColumn };
}
