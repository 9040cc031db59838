/**
 * The layers of the emulator, lowest first, as the layering test holds
 * them: a file's value imports point only to layers of a lower rank (or its
 * own layer: cycles inside one folder are fine); a type-only import may also
 * point up, but only into an interface file (what a lower layer declares for
 * a higher one to implement, as Linux's include/ does). The adapter's one
 * door and the language server's list are here too.
 */
import { PORTS } from '../../emulator/ports';
import type { ImportEdge } from './importGraph';

/** Layers, lowest first; one rank may hold several layers that do not import one another. */
export const RANKS: readonly (readonly string[])[] = [
  ['base'],
  ['memory'],
  ['cpu', 'elf'],
  ['arch-info'],
  ['unwind', 'jit'],
  ['trace'],
  ['kernel'],
  ['kprobes', 'tracing'],
  ['uprobes', 'hwbp', 'handlers'],
  ['arch-ports'],
  ['arch-registry'],
  ['machine', 'system'],
  ['probes'],
  ['timetravel'],
  ['debug'],
  ['cli', 'adapter'],
  ['extension'],
];

const portNames = PORTS.map(p => p.name);

/** The layer a repository path belongs to, or undefined for what is outside the layering (tests, scripts, packages). */
export function layerOf(path: string): string | undefined {
  const p = path.split('/');
  if (p[0] === 'adapter' || p[0] === 'extension') return p[0];
  if (p[0] !== 'emulator') return undefined;
  if (p.length === 2) {
    if (path === 'emulator/machine.ts') return 'machine';
    if (path === 'emulator/machineOptions.ts') return 'base';
    if (path === 'emulator/ports.ts') return 'arch-info';
    return undefined;
  }
  if (p[1] === 'arch') {
    if (p.length === 3) {
      if (p[2] === 'registry.ts' || p[2] === 'decoders.ts') return 'arch-registry';
      // the ports' contract sits with the ports, below the registry that loads them
      return p[2] === 'portTypes.ts' ? 'arch-ports' : 'arch-info';
    }
    if (portNames.includes(p[2]) && p.length === 4 && /^(info|regs)\.ts$/.test(p[3])) return 'arch-info';
    return 'arch-ports';
  }
  return p[1];
}

export function rankOf(layer: string): number {
  const r = RANKS.findIndex(rank => rank.includes(layer));
  if (r < 0) throw new Error(`layer ${layer} has no rank in test/structure/ranks.ts`);
  return r;
}

/** Files a type-only import may reach upwards: the interfaces a lower layer declares. */
export const isInterfaceFile = (path: string): boolean =>
  /(^|\/)(types|archHooks|engineTypes|ports)\.ts$/.test(path);

/** Imports that break the ranks, as `from -> to (layer -> layer)` lines. */
export function rankViolations(edges: readonly ImportEdge[]): string[] {
  const bad: string[] = [];
  for (const e of edges) {
    const a = layerOf(e.from), b = layerOf(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    if (rankOf(b) < rankOf(a)) continue;
    if (e.typeOnly && isInterfaceFile(e.to)) continue;
    bad.push(`${e.from} -> ${e.to} (${a} -> ${b}${e.typeOnly ? ', type-only' : ''})`);
  }
  return bad;
}
