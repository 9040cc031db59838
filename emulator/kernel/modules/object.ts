/**
 * A relocatable ELF object (ET_REL: `clang -c` / `gcc -c`, a `.ko`) as the
 * module loader needs it: its sections (parseElf reads and checks the
 * headers), its symbol table in index order (relocations name symbols by
 * index) and its SHT_RELA sections grouped by the section they patch.
 * Every problem is an ImageError naming the file and what is wrong.
 */
import { parseElf } from '../../elf/elfFile';
import { ElfImage, ElfSection, ImageError } from '../../elf/types';
import { strAt } from '../../elf/reader';
import type { Rela } from './relocations';

const ET_REL = 1;
const SHT_SYMTAB = 2, SHT_RELA = 4, SHT_REL = 9;
export const SHF_WRITE = 1n, SHF_ALLOC = 2n, SHF_EXECINSTR = 4n;
export const SHN_UNDEF = 0, SHN_ABS = 0xfff1, SHN_COMMON = 0xfff2;

export interface ObjSymbol {
  readonly index: number;
  readonly name: string;
  readonly value: bigint;
  readonly size: bigint;
  /** STT_*: 0 notype, 1 object, 2 func, 3 section, 4 file */
  readonly type: number;
  /** STB_*: 0 local, 1 global, 2 weak */
  readonly bind: number;
  readonly shndx: number;
}

export interface RelObject {
  readonly path: string;
  readonly image: ElfImage;
  readonly sections: readonly ElfSection[];
  readonly symbols: readonly ObjSymbol[];
  /** relocations per patched section index (allocated sections) */
  readonly relas: ReadonlyMap<number, readonly Rela[]>;
  /** relocations of the debug sections (.debug_line, .debug_info...), per patched section index */
  readonly debugRelas: ReadonlyMap<number, readonly Rela[]>;
}

export function parseRelObject(bytes: Uint8Array, path: string): RelObject {
  const image = parseElf(bytes, path);
  if (image.type !== ET_REL) throw new ImageError(path, `not a relocatable object (e_type ${image.type}; a module is built with -c, e_type 1)`);
  if (image.elfClass !== 64) throw new ImageError(path, 'a 32-bit object: modules are ELF64');
  if (image.endian !== 'little') throw new ImageError(path, 'a big-endian object');
  const sections = image.sections;
  const symtab = sections.find(s => s.type === SHT_SYMTAB);
  if (!symtab) throw new ImageError(path, 'no symbol table (.symtab): a module needs one');
  const strtab = sections[symtab.link];
  if (!strtab) throw new ImageError(path, `.symtab links to section ${symtab.link}, which does not exist`);
  const symbols: ObjSymbol[] = [];
  const sd = new DataView(symtab.data.buffer, symtab.data.byteOffset, symtab.data.byteLength);
  if (symtab.data.length % 24 !== 0) throw new ImageError(path, `.symtab size ${symtab.data.length} is not a multiple of 24`);
  for (let i = 0, off = 0; off < symtab.data.length; i++, off += 24) {
    const info = sd.getUint8(off + 4);
    symbols.push({
      index: i, name: strAt(strtab.data, sd.getUint32(off, true)), type: info & 0xf, bind: info >> 4,
      shndx: sd.getUint16(off + 6, true), value: sd.getBigUint64(off + 8, true), size: sd.getBigUint64(off + 16, true),
    });
  }
  const relas = new Map<number, Rela[]>();
  const debugRelas = new Map<number, Rela[]>();
  for (const s of sections) {
    if (s.type === SHT_REL) throw new ImageError(path, `${s.name}: SHT_REL relocations (without addends) are not used on 64-bit targets`);
    if (s.type !== SHT_RELA) continue;
    const target = sections[s.info];
    if (!target) throw new ImageError(path, `${s.name} patches section ${s.info}, which does not exist`);
    const debug = (target.flags & SHF_ALLOC) === 0n;
    if (debug && !target.name.startsWith('.debug_')) continue; // not loaded, not debug info
    if (s.data.length % 24 !== 0) throw new ImageError(path, `${s.name}: size ${s.data.length} is not a multiple of 24`);
    const dv = new DataView(s.data.buffer, s.data.byteOffset, s.data.byteLength);
    const into = debug ? debugRelas : relas;
    const list = into.get(s.info) ?? [];
    for (let off = 0; off < s.data.length; off += 24) {
      const info = dv.getBigUint64(off + 8, true);
      const sym = Number(info >> 32n);
      if (sym >= symbols.length) throw new ImageError(path, `${s.name}+0x${off.toString(16)}: symbol index ${sym} is outside .symtab (${symbols.length} symbols)`);
      list.push({ offset: dv.getBigUint64(off, true), type: Number(info & 0xffffffffn), sym, addend: dv.getBigInt64(off + 16, true) });
    }
    into.set(s.info, list);
  }
  return { path, image, sections, symbols, relas, debugRelas };
}

/** module names as Linux keeps them (MODULE_NAME_LEN - 1) */
const MODULE_NAME_MAX = 55;

/** a .modinfo entry ("license" -> "GPL"), undefined when absent */
export function modinfo(obj: RelObject, key: string): string | undefined {
  const info = obj.sections.find(s => s.name === '.modinfo');
  if (!info) return undefined;
  for (const entry of new TextDecoder().decode(info.data).split('\0')) if (entry.startsWith(`${key}=`)) return entry.slice(key.length + 1);
  return undefined;
}

/** the module's name: its .modinfo "name=", else the file's base name without .ko / .o ('-' read as '_') */
export function moduleName(obj: RelObject, path: string): string {
  const n0 = modinfo(obj, 'name');
  if (n0 !== undefined) return n0.slice(0, MODULE_NAME_MAX);
  const base = path.split(/[\\/]/).pop() ?? path;
  const n = base.replace(/\.(ko|o)$/, '').replace(/-/g, '_');
  if (!/^[A-Za-z0-9_]+$/.test(n)) throw new ImageError(path, `cannot name the module after its file '${base}' (use letters, digits, '_' or '-')`);
  return n.slice(0, MODULE_NAME_MAX);
}
