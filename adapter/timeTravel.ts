/**
 * Which DAP requests change the machine: in the past they discard the
 * recorded future (emulator/debug/timeTravel.ts SessionTimeTravel.beforeChange).
 */
import type { DebugProtocol } from '@vscode/debugprotocol';

/** requests that change the machine (in the past they discard the recorded future) */
const MUTATING_REQUESTS = new Set([
  'setBreakpoints', 'setFunctionBreakpoints', 'setInstructionBreakpoints', 'setDataBreakpoints', 'setExceptionBreakpoints',
  'setVariable', 'setExpression', 'writeMemory', '_probeSetEnabled', '_probeUnregister', '_probeSetGlobalEnabled',
  '_probeSetOptimization', '_probeLoadModule', '_probeUnloadModule',
]);

/**
 * Whether a request changes the machine: one of MUTATING_REQUESTS, or an
 * evaluate whose expression may write (an assignment, ++, --). A read-only
 * expression never counts; an assignment that changes nothing still does.
 */
export function changesMachine(request: DebugProtocol.Request): boolean {
  if (MUTATING_REQUESTS.has(request.command)) return true;
  const expression = (request.arguments as { expression?: unknown } | undefined)?.expression;
  return request.command === 'evaluate' && typeof expression === 'string' && /(^|[^=!<>])=(?!=)|\+\+|--/.test(expression);
}

