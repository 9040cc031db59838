/**
 * Loads the decoder bundle (emulator/arch/decoders.ts) at run time, on the
 * first probe that needs it: dist/decoders.js next to the server's bundle,
 * or the compiled module in the tsc output tree (tests). The require path is
 * computed so that esbuild does not pull the decoders into the server's own
 * bundle. Unavailable (neither file found): the check is skipped.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ElfImage } from '../../emulator/elf';

type Decoders = typeof import('../../emulator/arch/decoders');

let loaded: Decoders | null | undefined;

function load(): Decoders | null {
  if (loaded !== undefined) return loaded;
  const candidates = [join(__dirname, 'decoders.js'), join(__dirname, '..', '..', 'emulator', 'arch', 'decoders.js')];
  loaded = null;
  for (const file of candidates) {
    if (!existsSync(file)) continue;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      loaded = (module.require as (id: string) => unknown)(file) as Decoders;
      break;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

/** The "inside an instruction" message for addr in the image, undefined when addr is a boundary or it cannot be told. */
export function instructionSplit(image: ElfImage, addr: bigint): string | undefined {
  return load()?.instructionSplitMessage(image, addr);
}
