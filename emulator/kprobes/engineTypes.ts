/**
 * The kprobes engine's option bag, its path counters and the breakpoint
 * site kinds (re-exported by core.ts and index.ts).
 */
import type { KprobesArchHooks } from './archHooks';

export interface KprobesEngineOptions {
  /** the arch's hook table, handed in by whoever makes the engine (the Machine: the registry's; tests, new ports: their own); absent: the registry's for kernel.arch */
  hooks?: KprobesArchHooks;
  /** debug.kprobes_optimization at start (default true, as in Linux) */
  optimization?: boolean;
  /** emulated ns between queueing a probe for optimization and writing its jump (default OPTIMIZE_DELAY_NS) */
  optimizeDelayNs?: number;
  /** the kprobe booster (default true; an emulator knob: Linux x86 always boosts when it can) */
  kprobeBooster?: boolean;
  /** the kretprobe booster trampoline (default true when the arch has one) */
  kretprobeBooster?: boolean;
  /** CONFIG_KPROBES_ON_FTRACE: probes on ftrace call sites use the ftrace trampoline (default true when the arch has it) */
  kprobesOnFtrace?: boolean;
}

/** Per-engine counters of the probe paths taken (the overhead model's inputs). */
export interface KprobeStats {
  /** breakpoint traps at a probe (kprobe_int3_handler) */
  int3Hits: number;
  /** single-step traps handled (kprobe_debug_handler) */
  singleSteps: number;
  /** hits that jumped into a boosted slot (no single-step) */
  boostedHits: number;
  /** breakpoint hits of a queued/optimized probe resumed in the detour buffer */
  detourHits: number;
  /** optimized probe hits (the detour buffer's callback) */
  optCallbacks: number;
  /** returns through the breakpoint trampoline */
  kretTrampolineTraps: number;
  /** returns through the booster trampoline */
  kretBoostCallbacks: number;
  /** optimized hits whose detour template (save, restore) the arch ran natively (hooks.optprobes.enterNative) */
  nativeOptFrames: number;
  /** of nativeOptFrames, those whose save translated code had written (the block translator's route: X86Cpu.frameSaved) */
  presavedOptFrames: number;
  /** booster trampoline returns whose template the arch ran natively */
  nativeKretFrames: number;
  /** of nativeKretFrames, those whose save translated code had written */
  presavedKretFrames: number;
  /** native entries of detour buffers handled inside the CPU's int3 (no trap; see inlineBreakpoint) */
  inlineOptEntries: number;
  /** native entries of the kretprobe booster trampoline handled inside the CPU's int3 */
  inlineKretEntries: number;
  /** of the inline entries from translated code, those handled in one piece (save, handlers, restore: the route's fused hit) */
  fusedNativeHits: number;
  /** hits of ftrace-based probes' call sites (the ftrace trampoline entered) */
  ftraceHits: number;
  /** ftrace trampoline entries whose template the arch ran natively */
  nativeFtraceFrames: number;
  /** native entries of the ftrace trampoline handled inside the CPU's int3 */
  inlineFtraceEntries: number;
}

/** What an address that raised a breakpoint trap is, for the engine (cost model, debugger). */
export type BreakpointSite =
  | 'kprobe' | 'optprobeCallback' | 'kretprobeTrampoline' | 'kretprobeBoostCallback' | 'ftraceCallback' | 'nestedReturn' | 'none';
