/** Syntax tree of handler snippets. Every node carries its source range (1-based). */
import { CType } from './ctypes';

export interface Span { line: number; column: number; endLine: number; endColumn: number }

export type Expr =
  | { k: 'num'; value: bigint; type: CType; span: Span }
  | { k: 'str'; value: string; span: Span }
  | { k: 'ident'; name: string; span: Span }
  | { k: 'member'; obj: Expr; field: string; arrow: boolean; fieldSpan: Span; span: Span }
  | { k: 'index'; obj: Expr; index: Expr; span: Span }
  | { k: 'call'; callee: string; calleeSpan: Span; args: Expr[]; span: Span }
  | { k: 'unary'; op: '-' | '+' | '!' | '~' | '*' | '&'; arg: Expr; span: Span }
  | { k: 'incdec'; op: '++' | '--'; prefix: boolean; arg: Expr; span: Span }
  | { k: 'cast'; type: CType; arg: Expr; span: Span }
  | { k: 'sizeof'; type?: CType; arg?: Expr; span: Span }
  | { k: 'binary'; op: string; left: Expr; right: Expr; span: Span }
  | { k: 'logical'; op: '&&' | '||'; left: Expr; right: Expr; span: Span }
  | { k: 'assign'; op: string; target: Expr; value: Expr; span: Span }
  | { k: 'cond'; test: Expr; then: Expr; else: Expr; span: Span }
  | { k: 'comma'; left: Expr; right: Expr; span: Span }
  | { k: 'error'; span: Span };

export interface Declarator { name: string; type: CType; init?: Expr; span: Span }

export type Stmt =
  | { k: 'expr'; expr: Expr; span: Span }
  | { k: 'decl'; decls: Declarator[]; span: Span; isStatic?: boolean }
  | { k: 'block'; body: Stmt[]; span: Span }
  | { k: 'if'; test: Expr; then: Stmt; else?: Stmt; span: Span }
  | { k: 'while'; test: Expr; body: Stmt; span: Span }
  | { k: 'do'; body: Stmt; test: Expr; span: Span }
  | { k: 'for'; init?: Stmt; test?: Expr; update?: Expr; body: Stmt; span: Span }
  | { k: 'break'; span: Span }
  | { k: 'continue'; span: Span }
  | { k: 'return'; value?: Expr; span: Span }
  | { k: 'empty'; span: Span };

/** A parsed snippet: a statement list, or (condition / log shorthand) one bare expression. */
export type SnippetAst = { k: 'body'; body: Stmt[]; span: Span } | { k: 'expr'; expr: Expr; span: Span };

/**
 * The one nesting limit of handler code, in levels of the syntax tree:
 * every statement inside another, every operator of a chain (`a + b + c` is
 * two levels), every parenthesis, unary operator, ?: branch, index, member
 * access and call argument counts one. The parser reports the token where
 * it is exceeded (so the checker, the compiler, the language server and the
 * closures run per hit never recurse deeper); the compiler checks it again
 * for trees built elsewhere.
 */
export const MAX_NESTING = 150;

/** The diagnostic text for code past MAX_NESTING. */
export function nestingMessage(what: 'statement' | 'expression' | 'snippet'): string {
  const subject = what === 'statement' ? 'statements are' : `${what} is`;
  return `${subject} nested too deeply: more than ${MAX_NESTING} levels (each operator of a chain such as a + b + c, `
    + 'each parenthesis, call and block counts one); split it with local variables';
}
