/**
 * The kernel's symbol table with the loaded modules' symbols (Linux's
 * kallsyms + each module's own table): lookups by name find module
 * symbols after the image's, addresses inside a module resolve to its
 * symbols, and formatting appends the module's name as printk's %pS does
 * ("handler_pre+0x12/0x40 [kprobe_example]"); of a module's symbols at one
 * address the name is the first in its symtab, as Linux's
 * find_kallsyms_symbol gives it. The machine installs it as
 * the image's `symbols`, so every consumer (debugfs list, stack traces,
 * disassembly, handlers' symbol()) sees modules.
 */
import type { ElfSymbol, SymbolTable } from '../../elf/types';

interface ModuleSyms { name: string; lo: bigint; hi: bigint; byAddr: ElfSymbol[]; byName: Map<string, ElfSymbol> }

export class KallsymsTable implements SymbolTable {
  private readonly mods: ModuleSyms[] = [];

  constructor(readonly base: SymbolTable) {}

  /** a module's symbols (functions and objects, their module set), covering [lo, hi) (its core and init areas) */
  add(module: string, symbols: readonly ElfSymbol[], ranges: readonly { lo: bigint; hi: bigint }[]): void {
    const byAddr = [...symbols].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    const byName = new Map<string, ElfSymbol>();
    for (const s of byAddr) if (!byName.has(s.name) || s.bind === 'global') byName.set(s.name, s);
    for (const r of ranges) this.mods.push({ name: module, lo: r.lo, hi: r.hi, byAddr, byName });
  }

  /** forget a module's symbols in [lo, hi) (init memory freed) or all of them */
  remove(module: string, range?: { lo: bigint; hi: bigint }): void {
    for (let i = this.mods.length - 1; i >= 0; i--) {
      const m = this.mods[i];
      if (m.name === module && (!range || (m.lo === range.lo && m.hi === range.hi))) this.mods.splice(i, 1);
    }
  }

  /** the module whose memory holds addr */
  moduleAt(addr: bigint): string | undefined {
    return this.mods.find(m => addr >= m.lo && addr < m.hi)?.name;
  }

  get count(): number { return this.base.count + this.mods.reduce((n, m) => n + m.byAddr.length, 0); }

  lookup(name: string): ElfSymbol | undefined {
    const b = this.base.lookup(name);
    if (b) return b;
    // "MOD:SYM" (module_kallsyms_lookup_name): SYM in that module only
    const colon = name.indexOf(':');
    const mod = colon > 0 ? name.slice(0, colon) : undefined;
    for (const m of this.mods) {
      const s = mod === undefined ? m.byName.get(name) : m.name === mod ? m.byName.get(name.slice(colon + 1)) : undefined;
      if (s && s.value >= m.lo && s.value < m.hi) return s;
    }
    return undefined;
  }

  resolve(addr: bigint): { sym: ElfSymbol; offset: bigint } | undefined {
    const m = this.mods.find(x => addr >= x.lo && addr < x.hi);
    if (!m) return this.base.resolve(addr);
    // find_kallsyms_symbol: the greatest value not above addr, and of the symbols at that value the first in the
    // module's symtab (its locals come first: a static init function before the init_module alias module_init makes)
    let best: ElfSymbol | undefined;
    for (const s of m.byAddr) {
      if (s.value > addr) break;
      if (s.value < m.lo || (best && s.value === best.value)) continue;
      if (s.size > 0n ? addr < s.value + s.size : true) best = s;
    }
    return best ? { sym: best, offset: addr - best.value } : undefined;
  }

  format(addr: bigint, withSize = false): string {
    const mod = this.moduleAt(addr);
    if (!mod) return this.base.format(addr, withSize);
    const r = this.resolve(addr);
    if (!r) return `0x${addr.toString(16)} [${mod}]`;
    return `${r.sym.name}+0x${r.offset.toString(16)}${withSize && r.sym.size > 0n ? `/0x${r.sym.size.toString(16)}` : ''} [${mod}]`;
  }

  functions(): readonly ElfSymbol[] {
    const extra = this.mods.flatMap(m => m.byAddr.filter(s => s.type === 'func' && s.value >= m.lo && s.value < m.hi));
    return [...this.base.functions(), ...extra].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  }

  all(): readonly ElfSymbol[] {
    return [...this.base.all(), ...this.mods.flatMap(m => m.byAddr.filter(s => s.value >= m.lo && s.value < m.hi))];
  }
}
