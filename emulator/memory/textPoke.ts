/**
 * The one path through which running code is patched (Linux's
 * text_poke()): writes bytes into an executable region regardless of its
 * write permission and notifies every code-write listener, so decoded
 * instruction caches are invalidated. Every kprobe arm/disarm/optimize goes
 * through here; `mem.textPokeListeners` lets the debugger observe patches.
 */
import { Memory } from './memory';
import { VAddr } from './address';

/** Patch code; returns the bytes that were there before. */
export function textPoke(mem: Memory, addr: VAddr, bytes: Uint8Array): Uint8Array {
  const old = mem.readBytes(addr, bytes.length);
  mem.writeBytes(addr, bytes); // writeBytes notifies codeWriteListeners for X regions
  for (const l of mem.textPokeListeners) l(addr, old, bytes);
  return old;
}
