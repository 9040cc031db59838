/** ELF + DWARF loader: the one import for users of the image. */
export * from './types';
export { loadElf, parseElf, assertSupportedArch, requireSymbols, requireLines, PT_LOAD } from './elfFile';
export { machineName } from './machines';
export { normalizeSourcePath } from './dwarf/lineTable';
export { nearestNames, similarSymbols, didYouMean } from './nearNames';
