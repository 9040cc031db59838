/**
 * The contract of a port's implementation part: what emulator/arch/<name>/
 * index.ts exports as `port` and arch/registry.ts loads. It sits with the
 * ports (the layering test ranks it with them), below the registry.
 */
import type { ArchOps } from './types';
import type { KprobesArchHooks } from '../kprobes/archHooks';
import type { UprobesArchHooks } from '../uprobes/archHooks';
import type { ArchModuleRelocs } from '../kernel/modules/relocations';
import type { HwDebugArchHooks } from '../hwbp/archHooks';

/** What emulator/arch/<name>/index.ts exports as `port`. */
export interface ArchPort {
  readonly ops: ArchOps;
  /** the arch half of kprobes (Linux arch/<arch>/kernel/probes); absent: kprobes not ported there */
  readonly kprobes?: KprobesArchHooks;
  /** the arch half of uprobes (Linux arch/<arch>/kernel/uprobes.c); absent: uprobes not ported there */
  readonly uprobes?: UprobesArchHooks;
  /** module relocations (Linux arch/<arch>/kernel/module.c apply_relocate_add); absent: no loadable modules */
  readonly modules?: ArchModuleRelocs;
  /** debug registers (Linux arch/<arch>/kernel/hw_breakpoint.c); absent: no hardware breakpoints there */
  readonly hwDebug?: HwDebugArchHooks;
}
