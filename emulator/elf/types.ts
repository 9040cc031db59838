/**
 * What the ELF/DWARF loader produces. Every address and 64-bit field is a
 * bigint (exact); sizes that always fit (section data lengths) are numbers.
 */

/** Bad input: message already names the file and what is wrong. */
export class ImageError extends Error {
  constructor(readonly file: string, readonly what: string) {
    super(`${file}: ${what}`);
    this.name = 'ImageError';
  }
}

export interface ElfSegment {
  type: number;          // p_type (1 = PT_LOAD)
  flags: number;         // p_flags (PF_X=1, PF_W=2, PF_R=4)
  offset: bigint;
  vaddr: bigint;
  paddr: bigint;
  filesz: bigint;
  memsz: bigint;
  align: bigint;
  /** file bytes of the segment (filesz long) */
  data: Uint8Array;
}

export interface ElfSection {
  index: number;
  name: string;
  type: number;
  flags: bigint;
  addr: bigint;
  offset: bigint;
  size: bigint;
  link: number;
  info: number;
  addralign: bigint;
  entsize: bigint;
  /** file bytes (empty for SHT_NOBITS) */
  data: Uint8Array;
}

export interface ElfSymbol {
  name: string;
  value: bigint;
  size: bigint;
  type: 'notype' | 'object' | 'func' | 'section' | 'file' | 'tls' | 'other';
  bind: 'local' | 'global' | 'weak' | 'other';
  /** section header index (0 = undefined) */
  shndx: number;
  /** the loaded module the symbol belongs to (kallsyms: `[name]`); absent for the image's own */
  module?: string;
}

export interface SymbolTable {
  readonly count: number;
  /** by exact name (prefers global/func over local when names repeat) */
  lookup(name: string): ElfSymbol | undefined;
  /** the function/object symbol containing addr (value <= addr < value+size, or nearest preceding when size is 0) */
  resolve(addr: bigint): { sym: ElfSymbol; offset: bigint } | undefined;
  /** kernel style: "do_fork+0x4/0x60" (withSize) or "do_fork+0x4"; falls back to hex address */
  format(addr: bigint, withSize?: boolean): string;
  /** every function symbol, ascending by address */
  functions(): readonly ElfSymbol[];
  /** name completion / listing */
  all(): readonly ElfSymbol[];
}

export interface LineRow {
  address: bigint;
  file: string;      // absolute or as recorded (directory joined with file name)
  line: number;
  column: number;
  isStmt: boolean;
  endSequence: boolean;
}

export interface LineTable {
  /** every is_stmt address of file:line, ascending, deduplicated. file matches by full path or path suffix. */
  addressesForLine(file: string, line: number): bigint[];
  /** the source position of addr (row with greatest address <= addr within a sequence) */
  lineForAddress(addr: bigint): { file: string; line: number; column: number } | undefined;
  /** nearest line >= line in that file that has code (breakpoint moving) */
  nextLineWithCode(file: string, line: number): number | undefined;
  /** all source files named in the table */
  files(): string[];
  /** all rows (for tests/diagnostics) */
  rows(): readonly LineRow[];
  /** the file a line-table unit (its .debug_line offset, a CU's DW_AT_stmt_list) numbers `index` (DW_AT_call_file / decl_file) */
  fileOf?(unit: number, index: number): string | undefined;
}

export interface ElfImage {
  path: string;
  elfClass: 32 | 64;
  endian: 'little' | 'big';
  /** e_machine */
  machine: number;
  /** 'x86_64' | 'aarch64' | 'riscv64' | 'i386' | 'arm' | ... (from e_machine + class) */
  archName: string;
  /** e_type (2 = EXEC, 3 = DYN) */
  type: number;
  entry: bigint;
  segments: ElfSegment[];
  sections: ElfSection[];
  symbols: SymbolTable;
  /** null when the image has no .debug_line */
  lines: LineTable | null;
  section(name: string): ElfSection | undefined;
}
