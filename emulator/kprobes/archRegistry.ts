/**
 * Registry of kprobes arch hook tables by ArchOps name. Arch ports add
 * themselves with registerKprobesArch(); the tables shipped in the tree are
 * listed once here (no switch on the architecture anywhere in the core).
 */
import type { KprobesArchHooks } from './archHooks';
import { x86_64KprobesHooks } from '../arch/x86_64/kprobes';

const tables = new Map<string, KprobesArchHooks>();

export function registerKprobesArch(hooks: KprobesArchHooks): void {
  tables.set(hooks.arch, hooks);
}

/** The hook table for an arch name, or undefined when kprobes is not ported there. */
export function kprobesArchFor(arch: string): KprobesArchHooks | undefined {
  return tables.get(arch);
}

export function kprobesArches(): string[] {
  return [...tables.keys()].sort();
}

for (const t of [x86_64KprobesHooks]) registerKprobesArch(t);
