/**
 * Symbol table (.symtab, else .dynsym) with kallsyms-like address resolution
 * and kernel-style formatting ("do_fork+0x4/0x60").
 */
import { ElfSection, ElfSymbol, SymbolTable } from './types';
import { ByteReader, strAt } from './reader';
import { hex } from '../memory/address';

const SHN_UNDEF = 0;
const SHN_LORESERVE = 0xff00;

const TYPES: Record<number, ElfSymbol['type']> = { 0: 'notype', 1: 'object', 2: 'func', 3: 'section', 4: 'file', 6: 'tls' };
const BINDS: Record<number, ElfSymbol['bind']> = { 0: 'local', 1: 'global', 2: 'weak' };

/** Read the entries of a SHT_SYMTAB/SHT_DYNSYM section (index 0, the null symbol, is skipped). */
export function readSymbols(symtab: ElfSection, sections: readonly ElfSection[], elfClass: 32 | 64, little: boolean): ElfSymbol[] {
  const entsize = elfClass === 64 ? 24 : 16;
  const strtab = symtab.link < sections.length ? sections[symtab.link].data : new Uint8Array(0);
  const r = new ByteReader(symtab.data, little);
  const n = Math.floor(symtab.data.length / entsize);
  const out: ElfSymbol[] = [];
  for (let i = 1; i < n; i++) {
    const b = i * entsize;
    let name: number, info: number, shndx: number, value: bigint, size: bigint;
    if (elfClass === 64) {
      name = r.u32At(b); info = r.u8At(b + 4); shndx = r.u16At(b + 6); value = r.u64At(b + 8); size = r.u64At(b + 16);
    } else {
      name = r.u32At(b); value = BigInt(r.u32At(b + 4)); size = BigInt(r.u32At(b + 8)); info = r.u8At(b + 12); shndx = r.u16At(b + 14);
    }
    out.push({
      name: strAt(strtab, name),
      value,
      size,
      type: TYPES[info & 0xf] ?? 'other',
      bind: BINDS[info >> 4] ?? 'other',
      shndx,
    });
  }
  return out;
}

export function buildSymbolTable(symtab: ElfSection | undefined, sections: readonly ElfSection[], elfClass: 32 | 64, little: boolean): SymbolTable {
  const syms = symtab ? readSymbols(symtab, sections, elfClass, little) : [];
  return new ElfSymbolTable(syms, sections);
}

function bindRank(s: ElfSymbol): number {
  return s.bind === 'global' ? 0 : s.bind === 'weak' ? 1 : 2;
}
function typeRank(s: ElfSymbol): number {
  return s.type === 'func' ? 0 : s.type === 'object' ? 1 : s.type === 'notype' ? 2 : 3;
}

/** Symbols that may name a code/data address (what kallsyms would list). */
function isAddressSymbol(s: ElfSymbol): boolean {
  if (s.shndx === SHN_UNDEF || s.name === '') return false;
  if (s.type !== 'func' && s.type !== 'object' && s.type !== 'notype') return false;
  // ARM/AArch64/RISC-V mapping symbols ($x, $d, $a.1 ...) and assembler locals
  return !s.name.startsWith('$') && !s.name.startsWith('.L');
}

export class ElfSymbolTable implements SymbolTable {
  private readonly named: ElfSymbol[];
  private readonly byName = new Map<string, ElfSymbol>();
  /** address symbols ascending by value (ties: sized first, then global, then func) */
  private readonly sorted: ElfSymbol[];
  private readonly funcs: ElfSymbol[];
  /** maxEnd[i] = greatest value+size among sorted[0..i] */
  private readonly maxEnd: bigint[];

  constructor(syms: readonly ElfSymbol[], private readonly sections: readonly ElfSection[]) {
    this.named = syms.filter((s) => s.name !== '');
    for (const s of this.named) {
      const prev = this.byName.get(s.name);
      if (!prev || better(s, prev)) this.byName.set(s.name, s);
    }
    const cmp = (a: ElfSymbol, b: ElfSymbol): number =>
      a.value < b.value ? -1 : a.value > b.value ? 1
        : (a.size === 0n ? 1 : 0) - (b.size === 0n ? 1 : 0) || bindRank(a) - bindRank(b) || typeRank(a) - typeRank(b);
    this.sorted = this.named.filter(isAddressSymbol).sort(cmp);
    let m = 0n;
    this.maxEnd = this.sorted.map((s) => (m = s.value + s.size > m ? s.value + s.size : m));
    this.funcs = this.named.filter((s) => s.type === 'func' && s.shndx !== SHN_UNDEF).sort(cmp);
  }

  get count(): number { return this.named.length; }

  lookup(name: string): ElfSymbol | undefined {
    return this.byName.get(name);
  }

  resolve(addr: bigint): { sym: ElfSymbol; offset: bigint } | undefined {
    const a = BigInt.asUintN(64, addr);
    // last index with value <= a
    let lo = 0, hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sorted[mid].value <= a) lo = mid + 1; else hi = mid;
    }
    // 1. the sized symbol containing a with the greatest value (innermost)
    for (let i = lo - 1; i >= 0 && this.maxEnd[i] > a; i--) {
      const s = this.sorted[i];
      if (s.size > 0n && a < s.value + s.size) return { sym: s, offset: a - s.value };
    }
    // 2. the nearest preceding zero-size symbol (an assembler label), unless a
    //    sized symbol starts between it and a, and only within its section
    const s = lo > 0 ? this.sorted[lo - 1] : undefined;
    return s && s.size === 0n && this.inSymbolSection(s, a) ? { sym: s, offset: a - s.value } : undefined;
  }

  /** a zero-size symbol covers addresses up to the end of its section */
  private inSymbolSection(s: ElfSymbol, a: bigint): boolean {
    if (s.shndx >= SHN_LORESERVE) return false;
    const sec = this.sections[s.shndx];
    if (!sec) return false;
    return a >= sec.addr && a < sec.addr + sec.size;
  }

  format(addr: bigint, withSize = true): string {
    const r = this.resolve(addr);
    if (!r) return hex(addr);
    const base = `${r.sym.name}+${hex(r.offset)}`;
    return withSize && r.sym.size > 0n ? `${base}/${hex(r.sym.size)}` : base;
  }

  functions(): readonly ElfSymbol[] {
    return this.funcs;
  }

  all(): readonly ElfSymbol[] {
    return this.named;
  }
}

function better(a: ElfSymbol, b: ElfSymbol): boolean {
  const defA = a.shndx !== SHN_UNDEF ? 0 : 1;
  const defB = b.shndx !== SHN_UNDEF ? 0 : 1;
  if (defA !== defB) return defA < defB;
  if (bindRank(a) !== bindRank(b)) return bindRank(a) < bindRank(b);
  return typeRank(a) < typeRank(b);
}
