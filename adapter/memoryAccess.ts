/**
 * DAP readMemory / writeMemory (and `_probeReadMemory`) over the kernel's
 * memory bus: 64-bit addresses as bigint (`0x...` memory references),
 * converted to VAddr only through toVAddr (a non-canonical address is an
 * error naming it, never a rounded number), unmapped bytes reported as
 * unreadable (reads) or refused with the range (writes).
 *
 * Probed code reads as the original bytes by default (the engine's
 * readTextWithoutProbes); `patched` gives the bytes really in memory (the
 * breakpoint / jump). Writes that overlap a probed instruction (or an
 * optimized probe's detoured region) are refused with the probe named: the
 * engine keeps a copy of the probed instruction (opcode, single-step slot,
 * detour buffer), and new bytes under it would not be the ones that run.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { Memory } from '../emulator/memory/memory';
import { VAddr, toVAddr } from '../emulator/memory/address';
import { formatAddress, parseAddress } from './disassemble';
import { ProbePatch, patchesIn } from './probePatches';

/** Most bytes one readMemory returns. */
export const MAX_MEMORY_READ = 1 << 20;

/** What the memory requests read and check through. */
export interface MemoryView {
  mem: Memory;
  /** code with the probes' original bytes back (engine.readTextWithoutProbes); absent: memory as is */
  readOriginal?(addr: bigint, len: number): Uint8Array;
  /** the probes' patches (writes over them are refused) */
  patches?(): ProbePatch[];
}

/** addr as a VAddr, or an error naming it (what = the request field it came from). */
export function canonicalVAddr(addr: bigint, what = 'address'): VAddr {
  const v = toVAddr(addr);
  if (v === null) throw new Error(`${what} ${formatAddress(addr)} is not a canonical address (bits 63..47 must be all 0 or all 1)`);
  return v;
}

/** Code bytes for the debugger: the original ones (default) or as patched in memory. */
export function readCode(view: MemoryView, addr: bigint, len: number, patched = false): Uint8Array {
  const v = canonicalVAddr(addr);
  if (patched || !view.readOriginal) return view.mem.readBytes(v, len);
  return view.readOriginal(addr, len);
}

/** Bytes from `v` on that are mapped RAM (stops at the first hole), at most `max`. */
function mappedLength(mem: Memory, v: VAddr, max: number): number {
  let n = 0;
  while (n < max) {
    const r = mem.regionAt(v + n);
    if (!r || r.device) break;
    n += Math.min(max - n, r.end - (v + n));
  }
  return n;
}

/** Bytes left before the end of the canonical half that holds addr. */
function canonicalRoom(v: VAddr): number {
  return v >= 0 ? 2 ** 47 - v : -v;
}

export function readMemory(view: MemoryView, args: DebugProtocol.ReadMemoryArguments, patched = false): NonNullable<DebugProtocol.ReadMemoryResponse['body']> {
  const start = parseAddress(args.memoryReference) + BigInt(args.offset ?? 0);
  const count = Math.min(Math.max(0, Math.floor(args.count)), MAX_MEMORY_READ);
  const v = toVAddr(start);
  const n = v === null ? 0 : mappedLength(view.mem, v, Math.min(count, canonicalRoom(v)));
  const bytes = n > 0 ? readCode(view, start, n, patched) : new Uint8Array(0);
  return { address: formatAddress(start), data: Buffer.from(bytes).toString('base64'), unreadableBytes: count - n };
}

/** Writes the bytes; returns the start address and count (for the `memory` event). Throws a clear error for a bad range. */
export function writeMemory(view: MemoryView, args: DebugProtocol.WriteMemoryArguments): { start: bigint; count: number } {
  const start = parseAddress(args.memoryReference) + BigInt(args.offset ?? 0);
  const data = Buffer.from(args.data, 'base64');
  const v = canonicalVAddr(start);
  canonicalVAddr(start + BigInt(Math.max(0, data.length - 1)), 'end address');
  if (!view.mem.isMapped(v, data.length)) throw new Error(`${formatAddress(start)}..+${data.length} is not mapped`);
  const hit = view.patches ? patchesIn(view.patches(), start, data.length) : [];
  if (hit.length) {
    const p = hit[0];
    const what = p.state === 'optimized' ? `the optimized probe's jump region ${formatAddress(p.addr)}..+${p.patchLength}`
      : `the probed instruction ${formatAddress(p.addr)}..+${Number(p.end - p.addr)}`;
    throw new Error(`${formatAddress(start)}..+${data.length} overlaps ${what} of the ${p.kinds.map(k => `${k} probe`).join(', ')} at ${p.where}: `
      + 'unregister the probe before changing its code');
  }
  view.mem.writeBytes(v, new Uint8Array(data));
  return { start, count: data.length };
}
