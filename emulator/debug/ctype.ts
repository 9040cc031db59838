/**
 * The program's DWARF types as C types moved to emulator/elf/dwarf/ctype.ts;
 * these names stay here for importers outside this change
 * (adapter/evaluateRequest.ts, test/unit/dwarf-bad-input.test.ts) until they
 * import elf/dwarf (or the debug facade) themselves.
 */
export { dwarfCType } from '../elf/dwarf/ctype';
export type { DwarfOrigin } from '../elf/dwarf/ctype';
