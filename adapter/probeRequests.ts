/**
 * The `_probe*` custom requests (adapter/dapCustom.ts) over ProbeControls:
 * argument checks with a clear error per request, then the controls' call.
 * Returns the response body (the state snapshot for the view requests).
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeRequest, ProbeRequestName } from './dapCustom';
import { readMemory } from './memoryAccess';
import type { ProbeControls } from './probeControls';

export function isProbeRequest(command: string): command is ProbeRequestName {
  return (Object.values(ProbeRequest) as string[]).includes(command);
}

/** Runs one `_probe*` request; throws an Error whose message names the request and what is wrong. */
export function handleProbeRequest(p: ProbeControls, command: ProbeRequestName, args: unknown): unknown {
  const a = (args ?? {}) as Record<string, unknown>;
  switch (command) {
    case ProbeRequest.list:
      break;
    case ProbeRequest.setGlobalEnabled:
    case ProbeRequest.setOptimization:
      if (typeof a.enabled !== 'boolean') throw new Error(`${command} needs {"enabled": true|false}`);
      if (command === ProbeRequest.setGlobalEnabled) p.setGlobalEnabled(a.enabled); else p.setOptimization(a.enabled);
      break;
    case ProbeRequest.setEnabled:
      if (typeof a.id !== 'number' || typeof a.enabled !== 'boolean') throw new Error(`${command} needs {"id": number, "enabled": true|false}`);
      p.setEnabled(a.id, a.enabled);
      break;
    case ProbeRequest.unregister:
      if (typeof a.id !== 'number') throw new Error(`${command} needs {"id": number}`);
      p.unregister(a.id);
      break;
    case ProbeRequest.debugfs:
      return p.debugfs();
    case ProbeRequest.loadModule:
      if (typeof a.path !== 'string' || (a.params !== undefined && (!Array.isArray(a.params) || a.params.some(x => typeof x !== 'string')))) {
        throw new Error(`${command} needs {"path": string, "params"?: string[]}`);
      }
      p.loadModule(a.path, (a.params as string[] | undefined) ?? []);
      break;
    case ProbeRequest.unloadModule:
      if (typeof a.name !== 'string') throw new Error(`${command} needs {"name": string}`);
      p.unloadModule(a.name);
      break;
    case ProbeRequest.readMemory: {
      if (typeof a.memoryReference !== 'string' || typeof a.count !== 'number'
        || (a.offset !== undefined && typeof a.offset !== 'number') || (a.patched !== undefined && typeof a.patched !== 'boolean')) {
        throw new Error(`${command} needs {"memoryReference": string, "count": number, "offset"?: number, "patched"?: boolean}`);
      }
      const dap: DebugProtocol.ReadMemoryArguments = { memoryReference: a.memoryReference, count: a.count, offset: a.offset as number | undefined };
      return readMemory(p.memoryView(), dap, a.patched === true);
    }
  }
  return p.state();
}
