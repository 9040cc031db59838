/**
 * 64-bit addresses as the debugger's front ends write them: `0x` + 16 hex
 * digits out, `0x...` hex or decimal in (never through a JS number).
 */
import { hex64 } from '../memory/address';

export function formatAddress(a: bigint): string {
  return '0x' + hex64(a);
}

/** An address a client typed or sent; a clear error naming `what` when it is not one. */
export function parseAddress(ref: string, what = 'memoryReference'): bigint {
  const t = ref.trim();
  if (!/^(0x[0-9a-f]+|\d+)$/i.test(t)) throw new Error(`${what} "${ref}" is not an address (use 0x hex or decimal)`);
  const v = BigInt(t);
  if (v < 0n || v >= 1n << 64n) throw new Error(`${what} ${ref} is outside the 64-bit address space`);
  return v;
}
