/**
 * The guest's loaded modules, read from its `modules` list (struct module
 * laid out by the vmlinux's DWARF): name, state, the core and init areas,
 * the reference count and users, taints, the ELF sections' load addresses
 * (the sysfs `sections/` attributes, `mod->sect_attrs`) and the module's
 * own symbols (`mod->kallsyms`, what kallsyms answers for module text).
 *
 * renderProcModules() prints them as Linux 6.1's /proc/modules does
 * (kernel/module/procfs.c m_show + main.c print_unload_info, module_flags),
 * for a reader with kallsyms_show_value (root): newest first, unformed
 * modules skipped.
 */
import type { GuestMemory } from './guestMemory';
import type { KernelLayout } from './kernelLayout';
import type { KernelSymbols } from './guestMemory';

export interface GuestModuleSymbol { readonly name: string; readonly value: bigint; readonly size: bigint; readonly defined: boolean }

export interface GuestModule {
  /** the struct module's guest address */
  readonly addr: bigint;
  readonly name: string;
  /** 'live' | 'coming' | 'going' | 'unformed' (the enum's names, lower-case, without MODULE_STATE_) */
  readonly state: string;
  readonly core: { readonly base: bigint; readonly size: number; readonly textSize: number };
  readonly init: { readonly base: bigint; readonly size: number; readonly textSize: number };
  readonly refcount: number;
  /** modules using this one (source_list) */
  readonly usedBy: readonly string[];
  /** mod->init set and mod->exit not: cannot be unloaded */
  readonly permanent: boolean;
  readonly taints: bigint;
  /** section name -> load address (empty while the module is being formed) */
  readonly sections: ReadonlyMap<string, bigint>;
  /** the module's symbols (kallsyms), read on first use */
  symbols(): readonly GuestModuleSymbol[];
}

const MODULE_REF_BASE = 1;

function listEntries(mem: GuestMemory, head: bigint, linkOffset: bigint, max = 100000): bigint[] {
  const out: bigint[] = [];
  let p = mem.u64(head);
  while (p !== head && p !== 0n) {
    out.push(p - linkOffset);
    if (out.length > max) throw new Error(`the list at 0x${head.toString(16)} does not come back to its head`);
    p = mem.u64(p);
  }
  return out;
}
export { listEntries };

export function readModules(mem: GuestMemory, L: KernelLayout, syms: KernelSymbols): GuestModule[] {
  const head = syms.addressOf('modules');
  if (head === undefined) throw new Error('the vmlinux has no `modules` list symbol');
  const stateType = L.field('module', 'state').type;
  const stateName = (v: number): string => {
    const n = stateType.kind === 'int' ? stateType.enumerators?.get(BigInt(v)) : undefined;
    return n ? n.replace(/^MODULE_STATE_/, '').toLowerCase() : `state ${v}`;
  };
  const useSource = L.off('module_use', 'source_list'), useSrc = L.off('module_use', 'source');
  return listEntries(mem, head, L.off('module', 'list')).map(m => {
    const layout = (which: string): GuestModule['core'] => ({
      base: mem.u64(m + L.off('module', `${which}.base`)),
      size: mem.u32(m + L.off('module', `${which}.size`)),
      textSize: mem.u32(m + L.off('module', `${which}.text_size`)),
    });
    const users = listEntries(mem, m + L.off('module', 'source_list'), useSource)
      .map(u => mem.cstring(mem.u64(u + useSrc) + L.off('module', 'name'), 56));
    const sections = new Map<string, bigint>();
    const sa = mem.u64(m + L.off('module', 'sect_attrs'));
    if (sa !== 0n) {
      const n = mem.u32(sa + L.off('module_sect_attrs', 'nsections'));
      const each = BigInt(L.size('module_sect_attr'));
      const first = sa + L.off('module_sect_attrs', 'attrs');
      for (let i = 0n; i < BigInt(Math.min(n, 4096)); i++) {
        const a = first + i * each;
        sections.set(mem.cstring(mem.u64(a + L.off('module_sect_attr', 'battr.attr.name')), 128), mem.u64(a + L.off('module_sect_attr', 'address')));
      }
    }
    let symbols: GuestModuleSymbol[] | undefined;
    return {
      addr: m,
      name: mem.cstring(m + L.off('module', 'name'), 56),
      state: stateName(mem.u32(m + L.off('module', 'state'))),
      core: layout('core_layout'),
      init: layout('init_layout'),
      refcount: mem.i32(m + L.off('module', 'refcnt')) - MODULE_REF_BASE,
      usedBy: users,
      permanent: mem.u64(m + L.off('module', 'init')) !== 0n && mem.u64(m + L.off('module', 'exit')) === 0n,
      taints: mem.u64(m + L.off('module', 'taints')),
      sections,
      symbols: () => (symbols ??= moduleSymbols(mem, L, m)),
    };
  });
}

/** a module's Elf64_Sym table as kallsyms keeps it (mod->kallsyms: symtab, num_symtab, strtab) */
function moduleSymbols(mem: GuestMemory, L: KernelLayout, m: bigint): GuestModuleSymbol[] {
  const ks = mem.u64(m + L.off('module', 'kallsyms'));
  if (ks === 0n) return [];
  const tab = mem.u64(ks + L.off('mod_kallsyms', 'symtab'));
  const n = mem.u32(ks + L.off('mod_kallsyms', 'num_symtab'));
  const str = mem.u64(ks + L.off('mod_kallsyms', 'strtab'));
  const out: GuestModuleSymbol[] = [];
  const raw = mem.bytes(tab, Math.min(n, 65536) * 24);
  const v = new DataView(raw.buffer);
  // index 0 is ELF's null symbol
  for (let i = 1; i < Math.min(n, 65536); i++) {
    const name = mem.cstring(str + BigInt(v.getUint32(i * 24, true)), 512);
    out.push({ name, defined: v.getUint16(i * 24 + 6, true) !== 0, value: v.getBigUint64(i * 24 + 8, true), size: v.getBigUint64(i * 24 + 16, true) });
  }
  return out;
}

/** the taint letters of a module as module_flags() writes them (the guest's own taint_flags table) */
function moduleFlags(mem: GuestMemory, L: KernelLayout, syms: KernelSymbols, m: GuestModule, showState: boolean): string {
  if (m.taints === 0n && !(showState && (m.state === 'going' || m.state === 'coming'))) return '';
  const tf = syms.addressOf('taint_flags');
  let s = '(';
  if (tf !== undefined) {
    const each = BigInt(L.size('taint_flag'));
    for (let i = 0n; i < 64n; i++) {
      if ((m.taints >> i & 1n) === 0n) continue;
      const e = tf + i * each;
      if (mem.u8(e + L.off('taint_flag', 'module')) !== 0) s += String.fromCharCode(mem.u8(e + L.off('taint_flag', 'c_true')));
    }
  }
  if (showState && m.state === 'going') s += '-';
  if (showState && m.state === 'coming') s += '+';
  return s + ')';
}

const px = (a: bigint): string => a.toString(16).padStart(16, '0');

/** the guest's /proc/modules, line for line */
export function renderProcModules(mem: GuestMemory, L: KernelLayout, syms: KernelSymbols, mods: readonly GuestModule[]): string {
  let out = '';
  for (const m of mods) {
    if (m.state === 'unformed') continue;
    let users = m.usedBy.map(u => `${u},`).join('');
    if (m.permanent) users += '[permanent],';
    out += `${m.name} ${m.init.size + m.core.size} ${m.refcount} ${users || '-'}`;
    out += ` ${m.state === 'going' ? 'Unloading' : m.state === 'coming' ? 'Loading' : 'Live'}`;
    out += ` 0x${px(m.core.base)}`;
    if (m.taints !== 0n) out += ` ${moduleFlags(mem, L, syms, m, true)}`;
    out += '\n';
  }
  return out;
}
