/**
 * Where an expression of the handler language lives in memory: the address
 * and size of an lvalue, for a data breakpoint (DAP dataBreakpointInfo ->
 * a watchpoint on a debug register).
 *
 *   boot_counter               a global / static (DWARF): its address, sizeof
 *   sym.field, arr[2]          a member / element: its address and size
 *   *(u32 *)0xffffffff81005000 memory through a pointer: 4 bytes there
 *   &sym, (u16 *)p             a pointer value: the memory it points to,
 *                              sizeof the pointed-to type (8 for void *)
 *
 * Anything else (a constant, `1 + 2`, a register, a handler local) has no
 * address: the error says what a data breakpoint needs. The expression is
 * compiled as a breakpoint condition's (kind 'condition', same names) and
 * its address computed over `env` (the stopped CPU's, or one with memory
 * only: globals need no registers).
 */
import type { Expr } from './ast';
import { HandlerCompiler } from './compiler';
import { CONTEXT_BY_KIND, argRegsOf, charSignedOf } from './context';
import { isPtr, sizeOf, typeName } from './ctypes';
import type { TE } from './exprCompiler';
import { parseOneExpression } from './evaluate';
import { Frame, LITERAL_POOL_BASE, StringPool } from './runtime';
import { CompileOptions, Diagnostic, HandlerEnv, HandlerFault } from './types';

export type AddressOfResult =
  | { ok: true; addr: bigint; size: number; typeName: string }
  | { ok: false; message: string };

const BUDGET = 10_000;

/** "'1 + 2' has no address: a data breakpoint needs a variable or a memory location" */
export function noAddressMessage(source: string): string {
  return `'${source.trim()}' has no address: a data breakpoint needs a variable or a memory location`;
}

/** The address and size of what `source` names (see the file comment). Never throws. */
export function addressOf(source: string, env: HandlerEnv, opts: CompileOptions): AddressOfResult {
  const text = source.trim();
  if (text === '') return { ok: false, message: 'empty expression' };
  const parsed = parseOneExpression(text, opts);
  if (!parsed.ok) return parsed;
  const { ast, diagnostics } = parsed;
  const first = (): Diagnostic | undefined => diagnostics.find(d => d.severity === 'error');
  const compiler = new HandlerCompiler({
    kind: 'condition', regNames: opts.regNames, argRegs: argRegsOf(opts), context: CONTEXT_BY_KIND.condition,
    symbolExists: opts.symbolExists, functionExists: opts.functionExists, charSigned: charSignedOf(opts),
    programName: opts.programName, programType: opts.programType,
  }, diagnostics, new StringPool(LITERAL_POOL_BASE));
  const te = compiler.expr(ast);
  let err = first();
  if (err || te.bad) return { ok: false, message: err ? `${err.line}:${err.column}: ${err.message}` : 'the expression does not compile' };
  let addrOf: TE;
  let size: number;
  let tname: string;
  if (te.lv && (te.lv.kind === 'mem' || te.lv.kind === 'prog')) {
    // an lvalue in memory (or a program name, which may be): its address, as & computes it
    addrOf = compiler.expr({ k: 'unary', op: '&', arg: ast, span: ast.span } as Expr);
    size = sizeOf(te.t);
    tname = typeName(te.t);
  } else if (isPtr(te.t) && !te.ctx && te.str === undefined && te.constant === undefined) {
    addrOf = te;
    size = te.t.to.kind === 'void' ? 8 : sizeOf(te.t.to);
    tname = te.t.to.kind === 'void' ? 'unsigned long' : typeName(te.t.to);
  } else {
    return { ok: false, message: noAddressMessage(text) };
  }
  err = first();
  if (err || addrOf.bad) return { ok: false, message: err ? noAddressMessage(text) : 'the expression does not compile' };
  const frame: Frame = { env, slots: new Array<bigint>(compiler.nslots).fill(0n), statics: compiler.statics.slice(), steps: 0, budget: BUDGET, ret: 0n, lits: compiler.lits };
  try {
    const addr = BigInt.asUintN(64, addrOf.ev(frame));
    return { ok: true, addr, size, typeName: tname };
  } catch (e) {
    if (e instanceof HandlerFault) {
      // a program name the compiler kept in a register (or only as a value) has no address
      if (/has no address here/.test(e.message)) return { ok: false, message: `'${text}' has no address here: ${e.message.replace(/^.*has no address here: /, '')}` };
      return { ok: false, message: `${e.line}:${e.column}: ${e.kind} fault: ${e.message}` };
    }
    return { ok: false, message: e instanceof Error ? e.message : String(e) };
  }
}
