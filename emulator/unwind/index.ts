/** Stack unwinding from DWARF call frame information (.debug_frame / .eh_frame). */
export { parseFrameSection, readEncoded } from './cfi';
export type { Cie, Fde, FrameSection, FrameSectionKind, FrameSectionOptions } from './cfi';
export { decodeCfaProgram, initialRow, rowAt, unwindRows, CfaProgramError } from './cfaProgram';
export type { CfaInsn, CfaRule, RegRule, UnwindRow } from './cfaProgram';
export { CfiUnwinder, cfiError, cfiFor, loadCfi } from './unwinder';
export type { CfiStep, DwarfRegs } from './unwinder';
export { formatCfaInsn, formatRow } from './format';
export type { RegName } from './format';
