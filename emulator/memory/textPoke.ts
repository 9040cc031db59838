/**
 * The one path through which running code is patched (Linux's
 * text_poke()): writes bytes into an executable region regardless of its
 * write permission and notifies every code-write listener, so decoded
 * instruction caches are invalidated. Every kprobe arm/disarm/optimize goes
 * through here; `mem.textPokeListeners` lets the debugger observe patches.
 *
 * The patch is made in the page (the region's backing), so every address
 * space that maps the same bytes (a file page shared by several processes,
 * which uprobes will patch) sees it and has its decoded code invalidated;
 * their textPokeListeners hear of it at their own virtual addresses.
 */
import { Memory, Region } from './memory';
import { VAddr } from './address';

/** Patch code; returns the bytes that were there before. */
export function textPoke(mem: Memory, addr: VAddr, bytes: Uint8Array): Uint8Array {
  const old = mem.readBytes(addr, bytes.length);
  mem.writeBytes(addr, bytes, 'textPoke'); // notifies codeWriteListeners of every space executing these bytes
  for (const l of mem.textPokeListeners) l(addr, old, bytes);
  // the other mappings of the patched bytes (other address spaces, other addresses)
  for (let i = 0; i < bytes.length;) {
    const r = mem.regionAt(addr + i) as Region; // writeBytes checked the whole range
    const n = Math.min(bytes.length - i, r.end - (addr + i));
    // bytes only this window of this space shows (kernel text): no other mapping to tell
    if (r.spaces.length === 1 && r.backing.mappings().length === 1) { i += n; continue; }
    const off = r.offset + (addr + i - r.base);
    for (const al of r.backing.aliases(off, n)) {
      if (al.region === r && al.memory === mem) continue; // this window: told above
      const s = i + (al.offset - off);
      for (const l of al.memory.textPokeListeners) l(al.vaddr, old.subarray(s, s + al.len), bytes.subarray(s, s + al.len));
    }
    i += n;
  }
  return old;
}
