/**
 * kallsyms_lookup() from the host side: a guest kernel address -> the
 * nearest preceding symbol, the offset into it and the module holding it.
 * Kernel addresses come from the vmlinux's symbol table (kallsyms lists the
 * same functions, static ones included); module addresses from the guest's
 * module list and each module's own symbol table in guest memory, chosen as
 * Linux's find_kallsyms_symbol() does (defined, named, not a mapping
 * symbol, the greatest value not above the address).
 */
import type { ElfImage } from '../../elf/types';
import type { GuestModule } from './modules';

export interface KsymHit { readonly name: string; readonly offset: bigint; readonly module: string | null }

const within = (a: bigint, base: bigint, size: number): boolean => a >= base && a < base + BigInt(size);

export function moduleAt(mods: readonly GuestModule[], addr: bigint): GuestModule | undefined {
  return mods.find(m => within(addr, m.core.base, m.core.size) || within(addr, m.init.base, m.init.size));
}

export function kallsymsLookup(vmlinux: ElfImage, mods: readonly GuestModule[], addr: bigint): KsymHit | null {
  const mod = moduleAt(mods, addr);
  if (mod) {
    let best: { name: string; value: bigint } | null = null;
    for (const s of mod.symbols()) {
      if (!s.defined || s.name === '' || /^\$[adtx](\.|$)/.test(s.name)) continue;
      if (s.value <= addr && (best === null || s.value > best.value)) best = s;
    }
    return best ? { name: best.name, offset: addr - best.value, module: mod.name } : null;
  }
  const r = vmlinux.symbols.resolve(addr);
  return r ? { name: r.sym.name, offset: r.offset, module: null } : null;
}
