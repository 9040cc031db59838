/**
 * The DAP `evaluate` request over a stopped CPU: `$reg` for a register,
 * handler-language expressions (adapter/evaluate.ts) over a StoppedCpuEnv,
 * and bare kernel symbol names (their address). Hovers over a C identifier
 * that names a kernel symbol show the symbol's address first.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { Cpu } from '../emulator/arch/types';
import type { CompileOptions } from '../emulator/handlers';
import type { KprobesEngine } from '../emulator/kprobes';
import type { Machine } from '../emulator/machine';
import { symbolAt } from '../emulator/probes';
import { formatAddress } from './disassemble';
import { evaluateExpression, formatValue, isIdentifier } from './evaluate';
import { registerVariables } from './registers';
import { ProbeStop, StoppedCpuEnv } from './stoppedEnv';

export interface EvaluateInput {
  machine: Machine;
  engine: KprobesEngine;
  compileOptions: CompileOptions;
  cpu: Cpu;
  /** the breakpoint probe the CPU is stopped at */
  stop?: ProbeStop;
  expression: string;
  /** DAP context: watch, repl, hover, clipboard... */
  context?: string;
}

export type EvaluateAnswer =
  | { ok: true; body: DebugProtocol.EvaluateResponse['body'] }
  | { ok: false; id: number; message: string };

export const EVAL_ERROR_NO_REGISTER = 1011;
export const EVAL_ERROR = 1012;

export function evaluateForDap(inp: EvaluateInput): EvaluateAnswer {
  const { machine: m, cpu } = inp;
  const expr = inp.expression.trim();
  const reg = /^\$(\w+)$/.exec(expr);
  if (reg) {
    const v = registerVariables(m.arch, cpu).find(x => x.name === reg[1]);
    if (!v) return { ok: false, id: EVAL_ERROR_NO_REGISTER, message: `no register ${reg[1]} on ${m.arch.name}` };
    return { ok: true, body: { result: v.value, variablesReference: 0, memoryReference: v.value } };
  }
  const sym = isIdentifier(expr) ? m.image.symbols.lookup(expr) : undefined;
  const symbolAnswer = (s: NonNullable<typeof sym>): EvaluateAnswer => ({
    ok: true,
    body: { result: `${formatAddress(s.value)} <${s.name}>`, type: 'symbol', variablesReference: 0, memoryReference: formatAddress(s.value) },
  });
  if (sym && inp.context === 'hover') return symbolAnswer(sym);
  const env = new StoppedCpuEnv(m.kernel, inp.engine, cpu, inp.stop);
  const r = evaluateExpression(expr, env, inp.compileOptions);
  env.flush();
  if (r.ok) {
    const v = r.value;
    const body: DebugProtocol.EvaluateResponse['body'] = { result: formatValue(v, a => symbolAt(m.image, a)), type: v.typeName, variablesReference: 0 };
    if (v.type.kind === 'ptr') body.memoryReference = formatAddress(BigInt.asUintN(64, v.value));
    return { ok: true, body };
  }
  if (sym) return symbolAnswer(sym);
  return { ok: false, id: EVAL_ERROR, message: `cannot evaluate "${expr}": ${r.message}` };
}
