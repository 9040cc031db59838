/**
 * Types for the untyped `elfy` package (lib/elfy/parser.js, constants.js),
 * as far as this loader uses it. Every number elfy returns is a JS number,
 * 64-bit fields included (see elfyWalk.ts for what that and its other
 * quirks mean).
 */
declare module 'elfy' {
  /** mapFlags(): a set bit becomes `name: true`, or `<bit value>: true` when unnamed */
  export type ElfyFlags = Record<string, boolean>;

  export interface ElfyHeader {
    /** '32' | '64' */
    class: string;
    /** 'lsb' | 'msb' */
    endian: string;
    /** constants.type name, undefined when not in elfy's table */
    type: string | undefined;
    /** constants.machine name, undefined when not in elfy's table */
    machine: string | undefined;
    entry: number;
    phoff: number;
    shoff: number;
    flags: number;
    ehsize: number;
    phentsize: number;
    phnum: number;
    shentsize: number;
    shnum: number;
    shstrndx: number;
  }
  export interface ElfyProgram {
    /** constants.entryType name, undefined when not in elfy's table */
    type: string | undefined;
    offset: number;
    vaddr: number;
    paddr: number;
    filesz: number;
    memsz: number;
    flags: ElfyFlags;
    align: number;
    data: Buffer;
  }
  export interface ElfySection {
    /** sh_name offset after parseBody, the resolved name after resolveBody */
    name: string | number;
    /** constants.sectType name, or the number when not in elfy's table */
    type: string | number;
    flags: ElfyFlags;
    addr: number;
    off: number;
    size: number;
    link: number;
    info: number;
    addralign: number;
    entsize: number;
    data: Buffer;
  }
  export interface ElfyBody {
    programs: ElfyProgram[];
    sections: ElfySection[];
  }
  export interface ElfyFile extends ElfyHeader {
    body: ElfyBody;
  }
  export class Parser {
    constructor();
    execute(buf: Buffer): ElfyFile;
    parseHeader(buf: Buffer): ElfyHeader;
    parseBody(buf: Buffer, header: ElfyHeader): ElfyBody;
    resolveBody(body: ElfyBody, header: ElfyHeader): ElfyBody;
    resolveStr(strtab: Buffer, off: number): string;
    readUInt16(buf: Buffer, off: number): number;
    readUInt32(buf: Buffer, off: number): number;
    readUInt64(buf: Buffer, off: number): number;
  }
  export const constants: {
    type: Record<number, string>;
    machine: Record<number, string>;
    entryType: Record<number, string>;
    entryFlags: Record<number, string>;
    sectType: Record<number, string>;
    sectFlags: Record<number, string>;
  };
  export function parse(buf: Buffer): ElfyFile;
}
