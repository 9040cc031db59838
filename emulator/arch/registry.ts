/**
 * The implementation parts of the ports (emulator/ports.ts lists the
 * architectures): ELF e_machine / arch name -> ArchOps (CPU, decoder) and
 * kprobes hooks. A port with `hasCpu` keeps its implementation in
 * emulator/arch/<name>/index.ts, which exports `port: ArchPort`, loaded on
 * first use through LOADERS. Only the bundles that reach this file (the
 * adapter and the CLI) contain interpreters; the language server reads only
 * ports.ts. test/unit/ports.test.ts checks that LOADERS and the ports'
 * `hasCpu` agree.
 */
import type { ArchInfo, ArchOps } from './types';
import type { KprobesArchHooks } from '../kprobes/archHooks';
import type { UprobesArchHooks } from '../uprobes/archHooks';
import type { ArchModuleRelocs } from '../kernel/modules/relocations';
import type { HwDebugArchHooks } from '../hwbp/archHooks';
import type { ArchPort } from './portTypes';
import type { SystemCpuPort } from '../system/types';

export type { ArchPort } from './portTypes';
import { PORTS, portByName, portForElfMachine } from '../ports';

/** How each port with a CPU loads its implementation part (lazily: a require per port, run on first use). */
const LOADERS: Readonly<Record<string, () => ArchPort>> = {
  x86_64: () => (require('./x86_64/index') as typeof import('./x86_64/index')).port,
  aarch64: () => (require('./aarch64/index') as typeof import('./aarch64/index')).port,
  riscv64: () => (require('./riscv64/index') as typeof import('./riscv64/index')).port,
};

const loaded = new Map<string, ArchPort>();

/** Port names that have an implementation loader (tests check it against the ports' hasCpu). */
export function implementedPortNames(): string[] {
  return Object.keys(LOADERS);
}

/** The implementation of a port, undefined when it has no CPU. */
export function archPort(info: ArchInfo): ArchPort | undefined {
  if (!info.hasCpu) return undefined;
  let p = loaded.get(info.name);
  if (p === undefined) {
    const load = LOADERS[info.name];
    if (!load) throw new Error(`port ${info.name} says it has a CPU but emulator/arch/registry.ts has no loader for it`);
    p = load();
    loaded.set(info.name, p);
  }
  return p;
}

export function archForElfMachine(eMachine: number): ArchOps | undefined {
  const info = portForElfMachine(eMachine);
  return info && archPort(info)?.ops;
}

export function archByName(name: string): ArchOps | undefined {
  const info = portByName(name);
  return info && archPort(info)?.ops;
}

/** Names of the architectures with a CPU. */
export function supportedArchNames(): string[] {
  return PORTS.filter(p => p.hasCpu).map(p => p.name);
}

/** The kprobes arch hooks of an architecture, undefined when kprobes is not ported there. */
export function kprobesArchFor(name: string): KprobesArchHooks | undefined {
  const info = portByName(name);
  return info && archPort(info)?.kprobes;
}

/** Architectures with kprobes arch hooks. */
export function kprobesArches(): string[] {
  return PORTS.filter(p => p.hasCpu && archPort(p)?.kprobes).map(p => p.name).sort();
}

/** The uprobes arch hooks of an architecture, undefined when uprobes is not ported there. */
export function uprobesArchFor(name: string): UprobesArchHooks | undefined {
  const info = portByName(name);
  return info && archPort(info)?.uprobes;
}

/** The debug-register hooks of an architecture, undefined when its CPU has none emulated. */
export function hwDebugArchFor(name: string): HwDebugArchHooks | undefined {
  const info = portByName(name);
  return info && archPort(info)?.hwDebug;
}

/** The module relocations of an architecture, undefined when loadable modules are not ported there. */
export function moduleRelocsFor(name: string): ArchModuleRelocs | undefined {
  const info = portByName(name);
  return info && archPort(info)?.modules;
}

/** The full-system PC's CPU (x86_64's system half), loaded on first use: how emulator/system/ makes and runs its CPUs. */
export function systemCpuPort(): SystemCpuPort {
  return (require('./x86_64/sysmode/pcCpu') as typeof import('./x86_64/sysmode/pcCpu')).pcCpuPort;
}
