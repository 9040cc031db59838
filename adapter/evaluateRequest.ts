/**
 * The DAP `evaluate` request over a stopped CPU: the debug target evaluates
 * (emulator/debug/evaluate.ts: registers, handler-language expressions, C
 * names of the program's DWARF, kernel symbols); an expandable answer gets a
 * variablesReference of the session's. Errors are answers in the console,
 * never notifications (adapter/errors.ts).
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { DebugTarget, EvaluateRequest } from '../emulator/debug/index';

export type EvaluateAnswer =
  | { ok: true; body: DebugProtocol.EvaluateResponse['body'] }
  | { ok: false; error: 'evaluateNoRegister' | 'evaluate'; message: string };

export function evaluateForDap(target: DebugTarget, req: EvaluateRequest): EvaluateAnswer {
  // the target's answer has the shape of DAP's evaluate body
  return target.evaluate(req);
}
