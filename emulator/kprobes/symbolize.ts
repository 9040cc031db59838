/**
 * Synthetic symbol names for the engine's own code in the emulated kernel
 * (the image's symbol table knows nothing of it), so that stack traces and
 * disassembly show what Linux shows (%pS of kretprobe_trampoline, ...):
 *   kretprobe_trampoline+0x0             the kretprobe trampoline (the classic
 *                                         breakpoint one and the booster's)
 *   optprobe_detour[do_fork]+0x10         the detour buffer of the probe at do_fork
 *                                         ([do_fork+0x4] for a probe inside it)
 *   kprobe_insn_slot[do_fork]+0x0         the instruction slot of that probe
 *   kprobe_insn_slot+0x0                  a slot no registered probe uses now
 *   ftrace_trampoline+0x2a                the ftrace trampoline (kprobes on ftrace)
 *   kprobe_nested_call_return+0x0         the return stub of callKernelFunction
 *   optprobe_detour+0x..                  a kept detour buffer no probe uses now
 * undefined: not the engine's code.
 */
import type { KernelApi } from '../kernel/types';
import type { EngineCodeRegistry } from './codeRegistry';

/** "fn" for a function's first byte, else "fn+0xoff" (or the hex address) */
export function probeName(kernel: Pick<KernelApi, 'image'>, probe: bigint): string {
  const r = kernel.image.symbols.resolve(probe);
  if (!r) return `0x${BigInt.asUintN(64, probe).toString(16)}`;
  return r.offset === 0n ? r.sym.name : `${r.sym.name}+0x${r.offset.toString(16)}`;
}

/** a lookup in the engine's code registry (codeRegistry.ts): each range names its own addresses */
export function symbolizeEngineAddress(engine: { readonly code: Pick<EngineCodeRegistry, 'symbolize'> }, addr: bigint): string | undefined {
  return engine.code.symbolize(addr);
}
