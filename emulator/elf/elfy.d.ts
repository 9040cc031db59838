/** The part of the untyped `elfy` package this loader uses. */
declare module 'elfy' {
  interface ElfyProgram {
    type: string | undefined;
    data: Buffer;
  }
  interface ElfySection {
    name: string;
    type: string | number;
    data: Buffer;
  }
  interface ElfyFile {
    class: string;
    endian: string;
    phnum: number;
    shnum: number;
    shstrndx: number;
    body: { programs: ElfyProgram[]; sections: ElfySection[] };
  }
  export function parse(buf: Buffer): ElfyFile;
}
