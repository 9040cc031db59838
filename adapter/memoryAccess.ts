/**
 * DAP readMemory / writeMemory over the kernel's memory bus: 64-bit
 * addresses as bigint (`0x...` memory references), unmapped bytes reported
 * as unreadable (reads) or refused with the range (writes).
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { Memory } from '../emulator/memory/memory';
import { toVAddr } from '../emulator/memory/address';
import { formatAddress, parseAddress } from './disassemble';

/** Most bytes one readMemory returns. */
export const MAX_MEMORY_READ = 1 << 20;

export function readMemory(mem: Memory, args: DebugProtocol.ReadMemoryArguments): NonNullable<DebugProtocol.ReadMemoryResponse['body']> {
  const start = parseAddress(args.memoryReference) + BigInt(args.offset ?? 0);
  const count = Math.min(Math.max(0, args.count), MAX_MEMORY_READ);
  const bytes: number[] = [];
  let unreadable = 0;
  for (let i = 0; i < count; i++) {
    const v = toVAddr(start + BigInt(i));
    if (v === null || !mem.isMapped(v, 1)) { unreadable = count - i; break; }
    bytes.push(mem.readBytes(v, 1)[0]);
  }
  return { address: formatAddress(start), data: Buffer.from(bytes).toString('base64'), unreadableBytes: unreadable };
}

/** Writes the bytes; returns the start address and count (for the `memory` event). Throws a clear error for a bad range. */
export function writeMemory(mem: Memory, args: DebugProtocol.WriteMemoryArguments): { start: bigint; count: number } {
  const start = parseAddress(args.memoryReference) + BigInt(args.offset ?? 0);
  const data = Buffer.from(args.data, 'base64');
  const v = toVAddr(start);
  const end = toVAddr(start + BigInt(Math.max(0, data.length - 1)));
  if (v === null || end === null) throw new Error(`${formatAddress(start)} is not a canonical address`);
  if (!mem.isMapped(v, data.length)) throw new Error(`${formatAddress(start)}..+${data.length} is not mapped`);
  mem.writeBytes(v, new Uint8Array(data));
  return { start, count: data.length };
}
