/**
 * An nm(1)-like symbol listing for `kprobe-run sym IMAGE --list [PATTERN]`
 * and `kprobe-run info IMAGE --symbols`: one line per function / object /
 * untyped symbol, ascending by address,
 *
 *   ffffffff81001a90 0000000000000064 T do_fork
 *
 * (value, size, nm's type letter, name). Letters as nm prints them: T text,
 * D data, B bss, R read-only, A absolute, U undefined, W/V weak function /
 * object; lower case for local symbols. Section and file symbols are left
 * out, as nm does.
 */
import type { ElfImage, ElfSymbol } from './types';

const SHN_UNDEF = 0, SHN_ABS = 0xfff1, SHN_COMMON = 0xfff2;
const SHF_WRITE = 1n, SHF_EXECINSTR = 4n;
const SHT_NOBITS = 8;

export function typeLetter(img: ElfImage, s: ElfSymbol): string {
  if (s.shndx === SHN_UNDEF) return s.bind === 'weak' ? (s.type === 'object' ? 'v' : 'w') : 'U';
  if (s.bind === 'weak') return s.type === 'object' ? 'V' : 'W';
  let c: string;
  if (s.shndx === SHN_ABS) c = 'A';
  else if (s.shndx === SHN_COMMON) c = 'C';
  else {
    const sec = img.sections[s.shndx];
    if (!sec) c = '?';
    else if (sec.type === SHT_NOBITS) c = 'B';
    else if (sec.flags & SHF_EXECINSTR) c = 'T';
    else if (sec.flags & SHF_WRITE) c = 'D';
    else c = 'R';
  }
  return s.bind === 'local' ? c.toLowerCase() : c;
}

/** nm-like lines of the image's symbols whose name contains `pattern` (all when undefined). */
export function symbolListing(img: ElfImage, pattern?: string): string[] {
  const width = img.elfClass === 64 ? 16 : 8;
  const pad = (v: bigint): string => BigInt.asUintN(img.elfClass, v).toString(16).padStart(width, '0');
  return img.symbols.all()
    .filter(s => s.name !== '' && s.type !== 'section' && s.type !== 'file' && (pattern === undefined || s.name.includes(pattern)))
    .slice()
    .sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(s => `${pad(s.value)} ${pad(s.size)} ${typeLetter(img, s)} ${s.name}`);
}
