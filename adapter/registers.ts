/**
 * The Registers scope: one DAP variable per register row of the debug
 * target (emulator/debug/registers.ts), writable through setVariable.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { RegisterRow } from '../emulator/debug/index';

export function registerVariables(rows: readonly RegisterRow[]): DebugProtocol.Variable[] {
  return rows.map(r => ({
    name: r.name,
    value: r.value,
    type: `u${r.bits}`,
    variablesReference: 0,
    evaluateName: `$${r.name}`,
    presentationHint: { kind: 'property' },
  }));
}
