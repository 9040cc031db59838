/**
 * DAP readMemory / writeMemory (and `_probeReadMemory`) over the debug
 * facade's kernel memory (emulator/debug/memory.ts: original bytes of
 * probed code by default, no writes over a probe): `0x...` memory
 * references and base64 data.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { formatAddress, parseAddress } from '../emulator/debug/index';
import type { DebugMemory } from '../emulator/debug/index';

/** Most bytes one readMemory returns. */
export const MAX_MEMORY_READ = 1 << 20;

export function readMemory(view: DebugMemory, args: DebugProtocol.ReadMemoryArguments, patched = false): NonNullable<DebugProtocol.ReadMemoryResponse['body']> {
  const start = parseAddress(args.memoryReference) + BigInt(args.offset ?? 0);
  const count = Math.min(Math.max(0, Math.floor(args.count)), MAX_MEMORY_READ);
  const r = view.read(start, count, patched);
  return { address: formatAddress(start), data: Buffer.from(r.bytes).toString('base64'), unreadableBytes: r.unreadable };
}

/** Writes the bytes; returns the start address and count (for the `memory` event). Throws a clear error for a bad range. */
export function writeMemory(view: DebugMemory, args: DebugProtocol.WriteMemoryArguments): { start: bigint; count: number } {
  const start = parseAddress(args.memoryReference) + BigInt(args.offset ?? 0);
  const data = new Uint8Array(Buffer.from(args.data, 'base64'));
  view.write(start, data);
  return { start, count: data.length };
}
