/**
 * procfs's symbol and module files:
 *
 *   kallsyms  "%px %c %s\n" per kernel symbol (not those scripts/kallsyms
 *             ignores: mapping symbols, local labels...), ascending by address, with
 *             nm's type letters (T/t text, D/d data, B/b bss, R/r read-only,
 *             W weak...) as scripts/kallsyms takes them from nm; then each
 *             loaded module's symbols, "%px %c %s\t[%s]\n" (t/T for
 *             functions, d/D for objects: their sections are the module's)
 *   modules   one line per module as kernel/module/procfs.c m_show prints it:
 *             "NAME SIZE REFCOUNT USERS, STATE 0xADDR (O)" (USERS "-" when
 *             none; Live / Loading / Unloading; out-of-tree taint O)
 */
import type { ElfSymbol } from '../../elf';
import type { Kernel } from '../kernel';
import type { KernelModule } from '../modules/modules';
import { typeLetter } from '../../elf/symbolList';

const px = (v: bigint): string => BigInt.asUintN(64, v).toString(16).padStart(16, '0');
const byAddress = (a: ElfSymbol, b: ElfSymbol): number => (a.value < b.value ? -1 : a.value > b.value ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
/** scripts/kallsyms.c is_ignored_symbol's prefixes: ARM / RISC-V mapping symbols ($x, $d), local labels, CRCs, linker thunks */
const IGNORED_PREFIXES = ['$', '.L', '__crc_', '__efistub_', '__kvm_nvhe_$', '__kvm_nvhe_.L', '__AArch64ADRPThunk_', '__kcfi_typeid_'];
const listed = (s: ElfSymbol): boolean => s.name !== '' && s.type !== 'section' && s.type !== 'file'
  && !IGNORED_PREFIXES.some(p => s.name.startsWith(p));

export function procKallsyms(k: Kernel, modules: readonly KernelModule[]): string {
  const own = new Set<ElfSymbol>(modules.flatMap(m => m.symbols));
  const img = k.image;
  const out = img.symbols.all().filter(s => listed(s) && !own.has(s)).slice().sort(byAddress)
    .map(s => `${px(s.value)} ${typeLetter(img, s)} ${s.name}\n`);
  for (const m of modules) {
    if (m.state === 'unloaded') continue;
    for (const s of m.symbols.filter(listed).slice().sort(byAddress)) {
      const c = s.type === 'object' ? 'd' : 't';
      out.push(`${px(s.value)} ${s.bind === 'local' ? c : c.toUpperCase()} ${s.name}\t[${m.name}]\n`);
    }
  }
  return out.join('');
}

const STATE: Record<string, string> = { coming: 'Loading', live: 'Live', going: 'Unloading' };

export function procModules(modules: readonly KernelModule[]): string {
  return modules.filter(m => m.state !== 'unloaded').map(m => {
    const size = (m.core.hi - m.core.lo) + (m.init && !m.initFreed ? m.init.hi - m.init.lo : 0n);
    const users = [...m.usedBy].map(u => `${u.name},`).join('') || '-';
    return `${m.name} ${size} ${m.usedBy.size} ${users} ${STATE[m.state]} 0x${px(m.core.lo)} (O)\n`;
  }).join('');
}
