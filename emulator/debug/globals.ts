/**
 * The Globals scope of a stopped frame: the global and file-static
 * variables its compilation unit defines or declares (an `extern` the unit
 * uses shows the definition another unit holds), by name, with their values
 * as gdb prints them. Function-level statics are the frame's locals.
 */
import type { ElfImage } from '../elf/types';
import { debugInfoOf } from '../elf/dwarf/info';
import { DW_AT } from '../elf/dwarf/dies';
import { globalVariable } from './variables';
import { TAG } from '../elf/dwarf/dies';
import type { FrameVariable, MemReader } from './variables';

/** The unit's globals at pc, sorted by name; undefined when no debug info covers pc. */
export function unitGlobals(image: ElfImage, pc: bigint, read: MemReader): FrameVariable[] | undefined {
  let names: string[];
  try {
    const di = debugInfoOf(image);
    const u = di.unitFor(pc);
    const root = u && !u.error ? di.root(u) : null;
    if (!root) return undefined;
    const seen = new Set<string>();
    for (const c of root.children) {
      if (c.tag !== TAG.variable || c.attrs.has(DW_AT.specification)) continue;
      const n = di.name(c);
      if (n) seen.add(n);
    }
    names = [...seen].sort();
  } catch {
    return undefined;
  }
  const out: FrameVariable[] = [];
  for (const n of names) {
    const v = globalVariable(image, n, read, pc);
    // a declaration of something no unit defines (a symbol of the linker script, an asm label) has no value to show
    if (v && !(v.value === '<optimized out>' && !image.symbols.lookup(n))) out.push(v);
  }
  return out;
}
