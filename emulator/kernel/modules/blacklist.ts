/**
 * A module's own kprobe blacklist, as Linux 6.1's kernel/kprobes.c makes it
 * when the module is coming (add_module_kprobe_blacklist, from the module
 * notifier) and drops it when the module is going
 * (remove_module_kprobe_blacklist), from the sections the module loader
 * found (find_module_sections):
 *
 *   _kprobe_blacklist  the addresses NOKPROBE_SYMBOL(fn) stored, one
 *                      unsigned long each: each one that is module text
 *                      and has a symbol becomes an entry (others are
 *                      skipped, as populate_kprobe_blacklist does)
 *   .kprobes.text      (__kprobes functions) and .noinstr.text (noinstr):
 *                      every function in the section, one entry each
 *                      (kprobe_add_area_blacklist)
 *
 * An entry is [entry, entry + size), size as kallsyms_lookup_size_offset
 * gives it for a module address: up to the module's next symbol, or the
 * end of the text of the part (core or init) holding it
 * (find_kallsyms_symbol). Entries keep Linux's order: the
 * _kprobe_blacklist ones in section order, then the areas in address
 * order. The name is what the debugfs file prints with %ps: "fn [mod]".
 * (__irqentry_text is the kernel image's only: a module has none in 6.1.)
 */
import type { ElfSymbol } from '../../elf/types';

export interface BlacklistEntry { readonly start: bigint; readonly end: bigint; readonly name: string }

/** a section as the loader laid it out: its address, size, whether code, which part, and its bytes (relocated; none for NOBITS) */
export interface LaidOutSection {
  readonly name: string;
  readonly addr: bigint;
  readonly size: bigint;
  readonly exec: boolean;
  readonly init: boolean;
  readonly bytes?: Uint8Array;
}

export const KPROBE_BLACKLIST_SECTION = '_kprobe_blacklist';
const AREA_SECTIONS = ['.kprobes.text', '.noinstr.text'];

export function moduleKprobeBlacklist(module: string, sections: readonly LaidOutSection[], symbols: readonly ElfSymbol[],
  pointerSize: number): BlacklistEntry[] {
  const text = (init: boolean): { lo: bigint; hi: bigint } | null => {
    const secs = sections.filter(s => s.exec && s.init === init && s.size > 0n);
    if (!secs.length) return null;
    return { lo: secs.reduce((a, s) => (s.addr < a ? s.addr : a), secs[0].addr), hi: secs.reduce((a, s) => (s.addr + s.size > a ? s.addr + s.size : a), 0n) };
  };
  const parts = [text(false), text(true)].filter((p): p is { lo: bigint; hi: bigint } => p !== null);
  const byAddr = [...symbols].filter(s => s.name).sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  /** kernel_text_address + kallsyms_lookup_size_offset: the symbol at or before addr and the size to the next one; null when not module text */
  const lookup = (addr: bigint): { sym: ElfSymbol; size: bigint } | null => {
    const part = parts.find(p => addr >= p.lo && addr < p.hi);
    if (!part) return null;
    let best: ElfSymbol | undefined;
    let next = part.hi;
    for (const s of byAddr) {
      if (s.value <= addr) { if (s.value >= part.lo) best = s; } else if (s.value < next) { next = s.value; break; }
    }
    return best ? { sym: best, size: next - best.value } : null;
  };
  const out: BlacklistEntry[] = [];
  /** kprobe_add_ksym_blacklist: [entry, entry + size); the size, or -1 when refused */
  const add = (entry: bigint): bigint => {
    const r = lookup(entry);
    if (!r) return -1n;
    out.push({ start: entry, end: entry + r.size, name: `${r.sym.name} [${module}]` });
    return r.size;
  };
  for (const s of sections) {
    if (s.name !== KPROBE_BLACKLIST_SECTION || !s.bytes) continue;
    const dv = new DataView(s.bytes.buffer, s.bytes.byteOffset, s.bytes.byteLength);
    for (let off = 0; off + pointerSize <= dv.byteLength; off += pointerSize) {
      add(pointerSize === 8 ? dv.getBigUint64(off, true) : BigInt(dv.getUint32(off, true)));
    }
  }
  for (const name of AREA_SECTIONS) {
    for (const s of sections) {
      if (s.name !== name) continue;
      // kprobe_add_area_blacklist: symbol after symbol; stops at an address without one
      for (let entry = s.addr; entry < s.addr + s.size;) {
        const size = add(entry);
        if (size < 0n) break;
        entry += size === 0n ? 1n : size;
      }
    }
  }
  return out;
}
