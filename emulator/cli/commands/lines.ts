/**
 * `kprobe-run lines IMAGE FILE:LINE`: every is_stmt address of the line (the
 * addresses a breakpoint on that line probes), ascending, one per line.
 */
import { ImageError, loadElf, requireLines } from '../../elf';
import { hex } from '../../memory/address';
import { CliError, CliIo, registerCommand } from '../io';

/** "path/to/file.c:42" -> ['path/to/file.c', 42] (the last ':' splits, so "C:\x.c:3" works). */
export function parseLocation(s: string): [string, number] {
  const i = s.lastIndexOf(':');
  const line = i > 0 ? s.slice(i + 1) : '';
  if (i <= 0 || !/^[1-9][0-9]*$/.test(line)) throw new CliError(`lines: bad location '${s}': expected FILE:LINE (line from 1)`);
  return [s.slice(0, i), Number(line)];
}

registerCommand('lines', {
  summary: 'list the code addresses of a source line (from DWARF .debug_line)',
  usage: 'IMAGE FILE:LINE',
  async run(args: string[], io: CliIo): Promise<number> {
    if (args.length !== 2) throw new CliError('lines: expected two arguments: IMAGE FILE:LINE');
    const [path, loc] = args;
    const [file, line] = parseLocation(loc);
    const table = requireLines(loadElf(path));
    const addrs = table.addressesForLine(file, line);
    if (addrs.length === 0) {
      if (table.nextLineWithCode(file, 1) === undefined) {
        const files = table.files();
        const list = files.length > 6 ? `${files.slice(0, 6).join(', ')}, ...` : files.join(', ');
        throw new ImageError(path, `no source file ${file} in the line table (files: ${list})`);
      }
      const next = table.nextLineWithCode(file, line);
      throw new ImageError(path, `${file}:${line} has no code (${next === undefined ? 'no line with code after it' : `next line with code: ${next}`})`);
    }
    io.out(addrs.map(hex).join('\n') + '\n');
    return 0;
  },
});
