/**
 * DAP `evaluate` (watch, hover, Debug Console) in the handler language:
 * one C expression of the handler-snippet language (emulator/handlers),
 * compiled with the context of a breakpoint condition (`regs`, `p`, `ri`,
 * `current`, `jiffies`, `arg0..5`, `symbol("name")`...) and run once over a
 * HandlerEnv of the stopped CPU (emulator/debug/stoppedEnv.ts).
 *
 * Unlike a condition (whose value is reduced to 0/1), the expression's value
 * and static C type are kept: integers print as hex and decimal, pointers as
 * hex with their symbol, `char *` with the string. The language's own
 * parser, compiler and runtime, assembled as compileLogMessage (logMessage.ts)
 * does; the debugger (emulator/debug/evaluate.ts) calls only this API.
 */
import type { Expr } from './ast';
import { HandlerCompiler } from './compiler';
import { CONTEXT_BY_KIND, CURRENT_FIELDS, argRegsOf, charSignedOf } from './context';
import { CType, charText, isAggregate, isCharPtr, isPtr, sizeOf, typeName } from './ctypes';
import { tokenize } from './lexer';
import { Parser } from './parser';
import { DYNAMIC_POOL_BASE, Frame, LITERAL_POOL_BASE, StringPool, readCString } from './runtime';
import { CompileOptions, Diagnostic, HandlerEnv, HandlerFault } from './types';

/** Statements + loop iterations one evaluation may cost. */
const EVAL_STEP_BUDGET = 10_000;
/** Longest string shown for a `char *` value. */
const MAX_SHOWN_STRING = 256;

export interface EvalValue {
  /** raw value in the canonical form of its type (signed types negative when negative) */
  value: bigint;
  type: CType;
  /** e.g. "unsigned long", "char *" */
  typeName: string;
  /** the string a `char *` points to ("(efault)" when unreadable) */
  text?: string;
  /**
   * the value is the handler's own copy of a string (a literal, or a char
   * array the environment hands over as text: `current->comm`, Linux's
   * `char comm[TASK_COMM_LEN]`): its address is private to the evaluation,
   * outside kernel memory, so only the string is shown
   */
  pooled?: true;
  /** a struct / union / array of the program: `value` is its address */
  aggregate?: true;
}

/** Whether addr lies in one of the handler's string pools (runtime.ts: literals, strings from the environment). */
function inStringPool(addr: bigint): boolean {
  return new StringPool(LITERAL_POOL_BASE).owns(addr) || new StringPool(DYNAMIC_POOL_BASE).owns(addr);
}

export type EvalResult = { ok: true; value: EvalValue } | { ok: false; message: string };

/** A compile error or run-time fault as "line:column: message" (column counts from 1 in the expression). */
function at(line: number, column: number, message: string): string {
  return `${line}:${column}: ${message}`;
}

/** `char [16]` for `current->comm` (a char array field of the context), else undefined. */
function arrayTypeName(ast: Expr): string | undefined {
  if (ast.k !== 'member' || !ast.arrow || ast.obj.k !== 'ident' || ast.obj.name !== 'current') return undefined;
  const f = CURRENT_FIELDS.find(x => x.name === ast.field);
  return f?.array !== undefined && f.type.kind === 'ptr' ? `${typeName(f.type.to)} [${f.array}]` : undefined;
}

function firstError(diags: readonly Diagnostic[]): Diagnostic | undefined {
  return diags.find(d => d.severity === 'error');
}

/**
 * Parse `source` as exactly one handler-language expression (no ';', nothing
 * after it): its AST and the diagnostics array (for the compiler to add to),
 * or the first error as "line:column: message".
 */
export function parseOneExpression(source: string, opts: CompileOptions):
  { ok: true; ast: Expr; diagnostics: Diagnostic[] } | { ok: false; message: string } {
  const diagnostics: Diagnostic[] = [];
  const parser = new Parser(tokenize(source, 1, 1), diagnostics, charSignedOf(opts), opts.programType);
  let ast: Expr | undefined;
  try {
    ast = parser.expression();
    if (parser.tok.kind !== 'eof') parser.fail(`unexpected '${parser.tok.text}' after the expression (one expression, no ';')`);
  } catch (e) {
    parser.report(e);
  }
  const err = firstError(diagnostics);
  if (err || !ast) return { ok: false, message: err ? at(err.line, err.column, err.message) : 'cannot parse the expression' };
  return { ok: true, ast, diagnostics };
}

/** Compile and run one handler-language expression against env. Never throws. */
export function evaluateExpression(source: string, env: HandlerEnv, opts: CompileOptions): EvalResult {
  if (source.trim() === '') return { ok: false, message: 'empty expression' };
  const parsed = parseOneExpression(source, opts);
  if (!parsed.ok) return parsed;
  const { ast, diagnostics } = parsed;
  const compiler = new HandlerCompiler({
    kind: 'condition', regNames: opts.regNames, argRegs: argRegsOf(opts),
    context: CONTEXT_BY_KIND.condition, symbolExists: opts.symbolExists, functionExists: opts.functionExists, charSigned: charSignedOf(opts),
    programName: opts.programName, programType: opts.programType, programWritable: opts.programWritable, programScopeFirst: opts.programScopeFirst,
  }, diagnostics, new StringPool(LITERAL_POOL_BASE));
  const te = compiler.valueOrAggregate(ast);
  const err = firstError(diagnostics);
  if (err || te.bad) return { ok: false, message: err ? at(err.line, err.column, err.message) : 'the expression does not compile' };
  const frame: Frame = { env, slots: new Array<bigint>(compiler.nslots).fill(0n), statics: compiler.statics.slice(), steps: 0, budget: EVAL_STEP_BUDGET, ret: 0n, lits: compiler.lits };
  try {
    const value = te.ev(frame);
    const out: EvalValue = { value, type: te.t, typeName: arrayTypeName(ast) ?? typeName(te.t) };
    if (isAggregate(te.t)) out.aggregate = true;
    const charArray = te.t.kind === 'array' && te.t.of.kind === 'int' && te.t.of.size === 1 && !te.t.of.bool;
    if (isCharPtr(te.t) || charArray) {
      try {
        out.text = value === 0n ? '(null)' : readCString(frame, value, MAX_SHOWN_STRING, te.span);
        if (inStringPool(value)) out.pooled = true;
      } catch {
        out.text = '(efault)';
      }
    }
    return { ok: true, value: out };
  } catch (e) {
    if (e instanceof HandlerFault) return { ok: false, message: at(e.line, e.column, `${e.kind} fault: ${e.message}`) };
    return { ok: false, message: e instanceof Error ? e.message : String(e) };
  }
}

/** hex of the value at its type's width (two's complement for negative signed values) */
export function hexOf(v: EvalValue): string {
  const bits = v.aggregate ? 64 : sizeOf(v.type) * 8;
  return '0x' + BigInt.asUintN(bits, v.value).toString(16);
}

/**
 * Display text: integers `0x2a (42)` (signed negatives `0xffffffea (-22)`),
 * chars as gdb shows them (`65 'A'`), enums by name,
 * pointers `0xffffffff81000000 <do_fork>`, `char *` with the string, and a
 * string the handler holds itself (`current->comm`, a literal) as the
 * string alone, `"kworker/1:1"`, as gdb shows a char array: its address is
 * not a kernel address.
 */
export function formatValue(v: EvalValue, symbolize: (addr: bigint) => string | undefined): string {
  const hex = hexOf(v);
  if (v.aggregate) return v.text !== undefined ? JSON.stringify(v.text) : `{...} @ ${hex}`;
  if (v.type.kind === 'int' && v.type.size === 1 && !v.type.bool && /\bchar$/.test(v.type.name)) {
    // a char as gdb prints it: 65 'A', 10 '\n', -1 '\377'
    return `${v.value.toString()} '${charText(Number(BigInt.asUintN(8, v.value)))}'`;
  }
  if (v.type.kind === 'int' && v.type.enumerators) {
    const name = v.type.enumerators.get(v.value);
    if (name !== undefined) return name;
  }
  if (isPtr(v.type)) {
    const addr = BigInt.asUintN(64, v.value);
    if (v.text !== undefined) return v.pooled ? JSON.stringify(v.text) : `${hex} ${JSON.stringify(v.text)}`;
    const sym = addr !== 0n ? symbolize(addr) : undefined;
    return sym ? `${hex} <${sym}>` : hex;
  }
  return `${hex} (${v.value.toString()})`;
}

/** Strings that look like a C identifier (hover candidates for kernel symbols). */
export function isIdentifier(text: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_.]*$/.test(text);
}
