/**
 * Architecture registry: ELF e_machine / arch name -> ArchOps table.
 * Other architectures register here as they are added.
 */
import { ArchOps } from './types';
import { x86_64 } from './x86_64/index';
import { aarch64 } from './aarch64/index';

const ARCHES: ArchOps[] = [x86_64, aarch64];

export function archForElfMachine(eMachine: number): ArchOps | undefined {
  return ARCHES.find(a => a.elfMachines.includes(eMachine));
}

export function archByName(name: string): ArchOps | undefined {
  const n = name.toLowerCase() === 'x86-64' || name.toLowerCase() === 'amd64' ? 'x86_64' : name.toLowerCase();
  return ARCHES.find(a => a.name === n);
}

export function supportedArchNames(): string[] {
  return ARCHES.map(a => a.name);
}
