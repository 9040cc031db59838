/**
 * pt_regs field names per architecture (from the arch registry), for
 * register diagnostics and completion after `regs->`.
 */
import { archByName } from '../../emulator/arch/registry';
import { DEFAULT_ARCH } from './constants';

export interface ArchRegs {
  arch: string;
  regNames: string[];
  /** false when the architecture has no register table (registers are then not checked) */
  known: boolean;
}

export function regsForArch(arch: string | undefined): ArchRegs {
  const name = arch ?? DEFAULT_ARCH;
  const ops = archByName(name);
  return ops ? { arch: ops.name, regNames: ops.regs.map(r => r.name), known: true } : { arch: name, regNames: [], known: false };
}
