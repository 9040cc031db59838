import assert from 'node:assert/strict';
import { compileHandler, CompiledHandler, Diagnostic, HandlerKind } from '../../emulator/handlers';
import { FakeEnv, X86_REGS } from './fakeEnv';

export function compile(src: string, kind: HandlerKind = 'pre', extra: { stepBudget?: number; symbolExists?: (n: string) => boolean } = {}): CompiledHandler {
  const r = compileHandler(src, kind, { regNames: X86_REGS, ...extra });
  const errs = r.diagnostics.filter(d => d.severity === 'error');
  assert.deepEqual(errs, [], `unexpected errors for: ${src}`);
  assert.ok(r.handler);
  return r.handler;
}

export function diags(src: string, kind: HandlerKind = 'pre', extra: { symbolExists?: (n: string) => boolean } = {}): Diagnostic[] {
  return compileHandler(src, kind, { regNames: X86_REGS, ...extra }).diagnostics;
}

/** Run `return <expr>;`-style bodies and give the returned value (int) */
export function run(src: string, env: FakeEnv = new FakeEnv(), kind: HandlerKind = 'pre'): bigint {
  return compile(src, kind).run(env);
}

/** Evaluate an expression of any type by storing it in a local of type `type` and printing it with %lld/%llu. */
export function evalAs(type: string, expr: string, fmt = '%lld'): string {
  const env = new FakeEnv();
  compile(`${type} v = ${expr}; printk("${fmt}", v);`).run(env);
  return env.text;
}
