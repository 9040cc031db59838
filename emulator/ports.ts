/**
 * The ports: the only list of architectures. Each entry is the info part of
 * a port (emulator/arch/<name>/info.ts), which loads without a CPU; a port
 * with `hasCpu` also has an implementation part, emulator/arch/<name>/index.ts
 * (CPU, decoder, disassembler, kprobes hooks), loaded by
 * emulator/arch/registry.ts only where a machine is built, so the language
 * server and the checkers never bundle an interpreter.
 *
 * Adding an architecture: see the checklist in emulator/README.md.
 */
import type { ArchInfo } from './arch/types';
import { x86_64Info } from './arch/x86_64/info';
import { aarch64Info } from './arch/aarch64/info';
import { riscv64Info } from './arch/riscv64/info';

export const PORTS: readonly ArchInfo[] = [x86_64Info, aarch64Info, riscv64Info];

/** The port of an architecture name or one of its aliases (case-insensitive), undefined when there is none. */
export function portByName(name: string): ArchInfo | undefined {
  const n = name.trim().toLowerCase();
  return PORTS.find(p => p.name === n || p.aliases.includes(n));
}

/** The port handling an ELF e_machine value. */
export function portForElfMachine(eMachine: number): ArchInfo | undefined {
  return PORTS.find(p => p.elfMachines.includes(eMachine));
}

/** Names of every port (with or without a CPU). */
export function portNames(): string[] {
  return PORTS.map(p => p.name);
}
