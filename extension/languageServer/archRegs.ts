/**
 * pt_regs field names per architecture, for register diagnostics and
 * completion after `regs->`.
 */
import { DEFAULT_ARCH } from './constants';

/** x86_64 struct pt_regs fields as the handler language names them. */
const X86_64_REGS = [
  'ip', 'sp', 'flags', 'ax', 'bx', 'cx', 'dx', 'si', 'di', 'bp',
  'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'orig_ax', 'cs', 'ss',
];

const FALLBACK: Readonly<Record<string, readonly string[]>> = { x86_64: X86_64_REGS };

export interface ArchRegs {
  arch: string;
  regNames: string[];
  /** false when the architecture has no register table (registers are then not checked) */
  known: boolean;
}

export function regsForArch(arch: string | undefined): ArchRegs {
  const name = arch ?? DEFAULT_ARCH;
  const regs = FALLBACK[name];
  return regs ? { arch: name, regNames: [...regs], known: true } : { arch: name, regNames: [], known: false };
}
