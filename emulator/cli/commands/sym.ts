/**
 * `kprobe-run sym IMAGE NAME|ADDR|NAME+OFF`:
 *   NAME      -> "0xADDR NAME size 0xN TYPE" (every symbol of that name, preferred first)
 *   ADDR      -> "symbol+0xoff/0xsize" (kernel %pS style)
 *   NAME+OFF  -> "0xADDR symbol+0xoff/0xsize"
 */
import { ElfSymbol, ImageError, loadElf, requireSymbols } from '../../elf';
import { hex } from '../../memory/address';
import { CliError, CliIo, registerCommand } from '../io';

const NUMBER = /^(0x[0-9a-f]+|[0-9]+)$/i;
const LIMIT = 2n ** 64n;

function describe(s: ElfSymbol): string {
  return `${hex(s.value)} ${s.name} size ${hex(s.size)} ${s.type}${s.bind === 'global' ? '' : ` (${s.bind})`}`;
}

registerCommand('sym', {
  summary: 'look up a symbol by name, or name the symbol containing an address',
  usage: 'IMAGE NAME|ADDR|NAME+OFF',
  async run(args: string[], io: CliIo): Promise<number> {
    if (args.length !== 2) throw new CliError('sym: expected two arguments: IMAGE NAME|ADDR|NAME+OFF');
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
      if (!s) throw new ImageError(path, `no symbol named ${plus[1]}`);
      const a = s.value + BigInt(plus[2]);
      if (a >= LIMIT) {
        throw new CliError(`sym: ${what}: ${plus[1]} (${hex(s.value)}) + offset ${plus[2]} does not fit in 64 bits`);
      }
      io.out(`${hex(a)} ${symbols.format(a)}\n`);
      return 0;
    }
    const best = symbols.lookup(what);
    if (!best) {
      const near = symbols.all().filter((s) => s.name.includes(what)).map((s) => s.name);
      const hint = near.length ? ` (similar: ${[...new Set(near)].sort().slice(0, 5).join(', ')})` : '';
      throw new ImageError(path, `no symbol named ${what}${hint}`);
    }
    const others = symbols.all().filter((s) => s.name === what && s !== best);
    for (const s of [best, ...others]) io.out(describe(s) + '\n');
    return 0;
  },
});
