/**
 * The user programs of a machine's filesystem as the debugger sees them, so
 * that breakpoints can be set in their sources: which executable's DWARF line
 * table has a source file (a gutter breakpoint in that file becomes a uprobe
 * on the program: where is the breakpoint resolver's, resolver.ts), and the
 * program a user task runs (to symbolize its stack).
 *
 * The tree is walked once per machine on first use: regular files with an
 * execute bit that start with the ELF magic and parse as ELF (at most
 * MAX_PROGRAM_BYTES each); files without line tables are skipped.
 */
import type { Kernel } from '../kernel/kernel';
import type { Inode } from '../kernel/fs/vfs';
import { parsedImage } from '../kernel/user/process';
import type { ElfImage } from '../elf/types';

const MAX_PROGRAM_BYTES = 64 * 1024 * 1024;
const MAX_FILES = 20000;

export interface UserProgram {
  path: string;
  inode: Inode;
  image: ElfImage;
}

export class UserPrograms {
  private programs: UserProgram[] | null = null;

  constructor(private readonly kernel: Kernel) {}

  /** Executables of the filesystem that carry a DWARF line table. */
  withLines(): readonly UserProgram[] {
    if (this.programs) return this.programs;
    const out: UserProgram[] = [];
    const fs = this.kernel.fs;
    const seen = new Set<Inode>();
    const walk = (dir: Inode, prefix: string): void => {
      for (const [name, child] of dir.children ?? []) {
        if (seen.size > MAX_FILES) return;
        if (seen.has(child)) continue;
        seen.add(child);
        const path = `${prefix}/${name}`;
        if (child.isDir) { walk(child, path); continue; }
        if (!child.isReg || (child.mode & 0o111) === 0 || child.size < 64 || child.size > MAX_PROGRAM_BYTES) continue;
        try {
          const magic = child.read(0, 4);
          if (magic[0] !== 0x7f || magic[1] !== 0x45 || magic[2] !== 0x4c || magic[3] !== 0x46) continue;
          const image = parsedImage(child, path);
          if (image.lines && image.lines.files().length) out.push({ path, inode: child, image });
        } catch { /* not a program we can read */ }
      }
    };
    walk(fs.root, '');
    this.programs = out;
    return out;
  }

  /** The program whose line table names `file` (as `same` compares paths), and its DWARF spelling of it. */
  programFor(same: (dwarfFile: string) => boolean): { program: UserProgram; file: string } | undefined {
    for (const p of this.withLines()) {
      const f = p.image.lines?.files().find(same);
      if (f !== undefined) return { program: p, file: f };
    }
    return undefined;
  }

  /** The program image the user task `pid` runs, if it is a user process. */
  imageOf(pid: number): ElfImage | undefined {
    return this.kernel.processes.get(pid)?.image;
  }
}
