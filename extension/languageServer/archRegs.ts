/**
 * pt_regs field names per architecture (from its port's info part), for
 * register diagnostics and completion after `regs->`, and the arch's ABI
 * facts (emulator/arch/abiFacts.ts: argument, return, pc and stack
 * registers) for hover and completion details — known from the static
 * table even for arches whose CPU is not emulated yet.
 */
import { abiFactsFor, type AbiFacts } from '../../emulator/arch/abiFacts';
import { portByName } from '../../emulator/ports';
import { DEFAULT_ARCH } from './constants';

export interface ArchRegs {
  arch: string;
  regNames: string[];
  /** false when the architecture has no register table (registers are then not checked) */
  known: boolean;
  /** ABI facts of the arch, undefined when neither the registry nor the table knows it */
  abi?: AbiFacts;
}

export function regsForArch(arch: string | undefined): ArchRegs {
  const name = arch ?? DEFAULT_ARCH;
  const ops = portByName(name);
  const abi = abiFactsFor(name);
  return ops ? { arch: ops.name, regNames: ops.regs.map(r => r.name), known: true, abi } : { arch: name, regNames: [], known: false, abi };
}

/** What a register is for in the ABI ("program counter", "argument 0 (arg0)"...), '' when nothing special. */
export function registerRole(abi: AbiFacts | undefined, reg: string): string {
  if (!abi) return '';
  const roles: string[] = [];
  if (reg === abi.pcReg) roles.push('program counter');
  if (reg === abi.spReg) roles.push('stack pointer');
  if (reg === abi.retReg) roles.push('return value');
  const i = abi.argRegs.indexOf(reg);
  if (i >= 0) roles.push(i < 6 ? `argument ${i} (arg${i})` : `argument ${i}`);
  return roles.join(', ');
}
