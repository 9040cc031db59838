/**
 * `kprobe-run sym IMAGE NAME|ADDR|NAME+OFF`:
 *   NAME      -> "0xADDR NAME size 0xN TYPE" (every symbol of that name, preferred first)
 *   ADDR      -> "symbol+0xoff/0xsize" (kernel %pS style)
 *   NAME+OFF  -> "0xADDR symbol+0xoff/0xsize"
 * An unknown NAME is an error with a "did you mean" (nearest names, else names containing it).
 * `kprobe-run sym IMAGE --list [PATTERN]`: nm-like listing (elf/symbolList.ts).
 */
import { ElfSymbol, ImageError, SymbolTable, loadElf, requireSymbols, similarSymbols } from '../../elf';
import { hex } from '../../memory/address';
import { CliError, CliIo, registerCommand } from '../io';
import { symbolListing } from '../../elf/symbolList';

const NUMBER = /^(0x[0-9a-f]+|[0-9]+)$/i;
const LIMIT = 2n ** 64n;

function describe(s: ElfSymbol): string {
  return `${hex(s.value)} ${s.name} size ${hex(s.size)} ${s.type}${s.bind === 'global' ? '' : ` (${s.bind})`}`;
}

/** " (did you mean 'do_fork'?)": nearest names by spelling, else up to 5 names containing `name`. */
export function symbolHint(symbols: SymbolTable, name: string): string {
  const near = similarSymbols(symbols, name);
  if (near.length) return ` (did you mean ${near.map(n => `'${n}'`).join(' or ')}?)`;
  const containing = [...new Set(symbols.all().filter((s) => s.name.includes(name)).map((s) => s.name))].sort().slice(0, 5);
  return containing.length ? ` (similar: ${containing.join(', ')})` : '';
}

registerCommand('sym', {
  summary: 'look up a symbol by name, name the symbol containing an address, or list the symbols (nm-like)',
  usage: 'IMAGE NAME|ADDR|NAME+OFF | IMAGE --list [PATTERN]',
  help: 'NAME      address, size, type and binding of every symbol of that name\n'
    + 'ADDR      the symbol containing the address, as symbol+0xoff/0xsize\n'
    + 'NAME+OFF  the address, and symbol+0xoff/0xsize\n'
    + '--list [PATTERN]  every symbol (or those whose name contains PATTERN), nm-like:\n'
    + '          "VALUE SIZE TYPE NAME" ascending by address; TYPE is nm\'s letter (T text, D data, B bss, R read-only, lower case: local)\n',
  async run(args: string[], io: CliIo): Promise<number> {
    if (args.includes('--list')) {
      const rest = args.filter((a) => a !== '--list');
      if (rest.length < 1 || rest.length > 2) throw new CliError('sym: expected IMAGE --list [PATTERN]');
      const img = loadElf(rest[0]);
      requireSymbols(img);
      const lines = symbolListing(img, rest[1]);
      if (lines.length === 0) throw new ImageError(rest[0], `no symbol name contains '${rest[1]}'`);
      io.out(lines.join('\n') + '\n');
      return 0;
    }
    if (args.length !== 2) throw new CliError('sym: expected two arguments: IMAGE NAME|ADDR|NAME+OFF (or IMAGE --list [PATTERN])');
    const [path, what] = args;
    const img = loadElf(path);
    const symbols = requireSymbols(img);
    if (NUMBER.test(what.trim())) {
      const addr = BigInt(what.trim());
      if (addr >= LIMIT) throw new CliError(`sym: address ${what.trim()} does not fit in 64 bits`);
      if (!symbols.resolve(addr)) throw new ImageError(path, `no symbol contains address ${hex(addr)}`);
      io.out(symbols.format(addr) + '\n');
      return 0;
    }
    const plus = /^(.+?)\+(0x[0-9a-f]+|[0-9]+)$/i.exec(what);
    if (plus) {
      const s = symbols.lookup(plus[1]);
      if (!s) throw new ImageError(path, `no symbol named ${plus[1]}${symbolHint(symbols, plus[1])}`);
      const a = s.value + BigInt(plus[2]);
      if (a >= LIMIT) {
        throw new CliError(`sym: ${what}: ${plus[1]} (${hex(s.value)}) + offset ${plus[2]} does not fit in 64 bits`);
      }
      io.out(`${hex(a)} ${symbols.format(a)}\n`);
      return 0;
    }
    const best = symbols.lookup(what);
    if (!best) throw new ImageError(path, `no symbol named ${what}${symbolHint(symbols, what)}`);
    const others = symbols.all().filter((s) => s.name === what && s !== best);
    for (const s of [best, ...others]) io.out(describe(s) + '\n');
    return 0;
  },
});
