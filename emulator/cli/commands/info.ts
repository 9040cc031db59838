/** `kprobe-run info IMAGE [--symbols]`: what the image is and what the loader found in it (and its symbols, nm-like). */
import { ElfImage, ImageError, PT_LOAD, loadElf } from '../../elf';
import { hex } from '../../memory/address';
import { CliError, CliIo, registerCommand } from '../io';
import { symbolListing } from '../../elf/symbolList';

const TYPES: Record<number, string> = { 0: 'NONE', 1: 'REL (relocatable)', 2: 'EXEC (executable)', 3: 'DYN (shared object / PIE)', 4: 'CORE' };

function flags(f: number): string {
  return (f & 4 ? 'R' : '-') + (f & 2 ? 'W' : '-') + (f & 1 ? 'X' : '-');
}

export function describeImage(img: ElfImage): string[] {
  const out: string[] = [];
  out.push(`image:     ${img.path}`);
  out.push(`arch:      ${img.archName} (e_machine ${img.machine})`);
  out.push(`class:     ELF${img.elfClass}, ${img.endian} endian`);
  out.push(`type:      ${TYPES[img.type] ?? `0x${img.type.toString(16)}`}`);
  out.push(`entry:     ${hex(img.entry)}`);
  const loads = img.segments.filter((s) => s.type === PT_LOAD);
  out.push(`segments:  ${img.segments.length} (${loads.length} LOAD)`);
  for (const s of loads) {
    out.push(`  LOAD vaddr ${hex(s.vaddr)} memsz ${hex(s.memsz)} filesz ${hex(s.filesz)} ${flags(s.flags)}`);
  }
  out.push(`sections:  ${img.sections.length}`);
  const symtab = img.section('.symtab') ? '.symtab' : img.section('.dynsym') ? '.dynsym' : 'none: stripped';
  out.push(`symbols:   ${img.symbols.count} (${symtab}), ${img.symbols.functions().length} functions`);
  let debug: string;
  try {
    const lines = img.lines;
    debug = lines ? `yes (${lines.rows().length} rows, ${lines.files().length} source files)` : 'no (.debug_line missing)';
  } catch (e) {
    if (!(e instanceof ImageError)) throw e;
    debug = `unreadable (${e.what})`;
  }
  out.push(`debug line info: ${debug}`);
  return out;
}

registerCommand('info', {
  summary: 'show an ELF image: arch, entry, load segments, symbols, debug info',
  usage: 'IMAGE [--symbols]',
  help: '--symbols  then list every symbol, nm-like (as kprobe-run sym IMAGE --list)\n',
  async run(args: string[], io: CliIo): Promise<number> {
    const withSymbols = args.includes('--symbols');
    const rest = args.filter((a) => a !== '--symbols');
    if (rest.length !== 1) throw new CliError('info: expected one argument: IMAGE');
    const img = loadElf(rest[0]);
    const lines = describeImage(img);
    if (withSymbols) lines.push('', ...symbolListing(img));
    io.out(lines.join('\n') + '\n');
    return 0;
  },
});
