/**
 * What the kprobes engine's parts share (Linux kernel/kprobes.c's
 * file-scope state: the arch hooks, the engine's own code and slot pages,
 * the per-CPU control blocks, the event listeners, the path counters).
 * The engine (core.ts) makes one and hands each part only the members it
 * uses (Pick<KprobesShared, ...>), with its collaborators as narrow
 * interfaces of the other parts: the parts call each other directly, never
 * through the engine.
 */
import type { KernelApi } from '../kernel/types';
import type { KprobesArchContext, KprobesArchHooks } from './archHooks';
import type { EngineCodeRegistry } from './codeRegistry';
import type { KprobeStats } from './engineTypes';
import type { KprobeEvents } from './events';
import type { InsnSlots } from './insnSlots';
import type { KprobeCpus } from './perCpu';

export interface KprobesShared {
  readonly kernel: KernelApi;
  readonly hooks: KprobesArchHooks;
  /** what the arch hooks are handed */
  readonly ctx: KprobesArchContext;
  /** the engine's own code: slot pages, detour buffers, trampolines, stubs */
  readonly code: EngineCodeRegistry;
  readonly slots: InsnSlots;
  readonly events: KprobeEvents;
  readonly stats: KprobeStats;
  /** per-CPU kprobe_ctlblk and pt_regs views */
  readonly percpu: KprobeCpus;
}
