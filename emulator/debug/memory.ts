/**
 * Kernel memory as the debugger shows it: probed code reads as its original
 * bytes (the engine's readTextWithoutProbes) unless the caller asks for the
 * bytes really in memory (`patched`: breakpoints and jumps visible); writes
 * that overlap a probed instruction or an optimized probe's detoured region
 * are refused with the probe named (the engine keeps a copy of the probed
 * instruction — opcode, single-step slot, detour buffer — and new bytes
 * under it would not be the ones that run). 64-bit addresses are bigint;
 * a non-canonical one is an error naming it, never a rounded number.
 */
import type { Machine } from '../machine';
import type { Memory } from '../memory/memory';
import { VAddr, hex64, toVAddr } from '../memory/address';
import { ProbePatch, patchesIn, probePatches } from './probePatches';

const formatAddress = (a: bigint): string => '0x' + hex64(a);

/** addr as a VAddr, or an error naming it (what = the request field it came from). */
export function canonicalVAddr(addr: bigint, what = 'address'): VAddr {
  const v = toVAddr(addr);
  if (v === null) throw new Error(`${what} ${formatAddress(addr)} is not a canonical address (bits 63..47 must be all 0 or all 1)`);
  return v;
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

export class DebugMemory {
  constructor(
    readonly mem: Memory,
    /** code with the probes' original bytes back; absent: memory as it is */
    private readonly original?: (addr: bigint, len: number) => Uint8Array,
    /** the probes' patches (writes over them are refused) */
    private readonly patchList?: () => ProbePatch[],
  ) {}

  /** The kernel memory of a machine, with its kprobes engine's patches when it has one. */
  static of(machine: Machine): DebugMemory {
    const mem = machine.kernel.mem;
    if (!machine.hasKprobes) return new DebugMemory(mem);
    const engine = machine.kprobes;
    return new DebugMemory(mem, (a, n) => engine.arming.readTextWithoutProbes(mem, a, n), () => probePatches(engine, machine.arch));
  }

  /** The probes' patches now. */
  patches(): ProbePatch[] { return this.patchList?.() ?? []; }

  /** Code bytes: the original ones (default) or as patched in memory. Throws for unmapped or non-canonical bytes. */
  readCode(addr: bigint, len: number, patched = false): Uint8Array {
    const v = canonicalVAddr(addr);
    if (patched || !this.original) return this.mem.readBytes(v, len);
    return this.original(addr, len);
  }

  /** Up to `count` bytes from addr: the readable prefix and how many bytes after it are not readable. */
  read(addr: bigint, count: number, patched = false): { bytes: Uint8Array; unreadable: number } {
    const v = toVAddr(addr);
    const n = v === null ? 0 : mappedLength(this.mem, v, Math.min(count, canonicalRoom(v)));
    const bytes = n > 0 ? this.readCode(addr, n, patched) : new Uint8Array(0);
    return { bytes, unreadable: count - n };
  }

  /** Write bytes at addr; a clear error (nothing written) for an unmapped range or one under a probe. */
  write(addr: bigint, data: Uint8Array): void {
    const v = canonicalVAddr(addr);
    canonicalVAddr(addr + BigInt(Math.max(0, data.length - 1)), 'end address');
    if (!this.mem.isMapped(v, data.length)) throw new Error(`${formatAddress(addr)}..+${data.length} is not mapped`);
    const hit = patchesIn(this.patches(), addr, data.length);
    if (hit.length) {
      const p = hit[0];
      const what = p.state === 'optimized' ? `the optimized probe's jump region ${formatAddress(p.addr)}..+${p.patchLength}`
        : `the probed instruction ${formatAddress(p.addr)}..+${Number(p.end - p.addr)}`;
      throw new Error(`${formatAddress(addr)}..+${data.length} overlaps ${what} of the ${p.kinds.map(k => `${k} probe`).join(', ')} at ${p.where}: `
        + 'unregister the probe before changing its code');
    }
    this.mem.writeBytes(v, data, 'debugger');
  }
}
