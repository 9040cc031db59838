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
 *   kprobes_code+0x..                     any other engine-owned code
 * undefined: not the engine's code.
 */
import type { KprobesEngine } from './core';

function off(a: bigint, start: bigint): string {
  return `+0x${(a - start).toString(16)}`;
}

/** "fn" for a function's first byte, else "fn+0xoff" (or the hex address) */
function probeName(engine: KprobesEngine, probe: bigint): string {
  const r = engine.kernel.image.symbols.resolve(probe);
  if (!r) return `0x${BigInt.asUintN(64, probe).toString(16)}`;
  return r.offset === 0n ? r.sym.name : `${r.sym.name}+0x${r.offset.toString(16)}`;
}

export function symbolizeEngineAddress(engine: KprobesEngine, addr: bigint): string | undefined {
  const slots = engine.slots;
  const range = slots.rangeContaining(addr);
  if (!range) return undefined;
  const kr = engine.kretprobes;
  const hooks = engine.hooks;
  const int3Len = BigInt(Math.max(hooks.kretprobeTrampolineCode.length, engine.kernel.arch.breakpointInsn.length));
  if (addr >= kr.int3Trampoline && addr < kr.int3Trampoline + int3Len) return `kretprobe_trampoline${off(addr, kr.int3Trampoline)}`;
  const boostLen = BigInt(hooks.optprobes?.kretprobeBoostTrampoline.code.length ?? 0);
  if (kr.boostTrampoline !== 0n && addr >= kr.boostTrampoline && addr < kr.boostTrampoline + boostLen) {
    return `kretprobe_trampoline${off(addr, kr.boostTrampoline)}`;
  }
  if (engine.ftrace.owns(addr)) return `ftrace_trampoline${off(addr, engine.ftrace.trampoline)}`;
  const stub = engine.nestedReturnStub();
  if (stub !== 0n && addr >= stub && addr < stub + 16n) return `kprobe_nested_call_return${off(addr, stub)}`;
  const detour = engine.optimizer.detourContaining(addr);
  if (detour) return `optprobe_detour[${probeName(engine, detour.probe)}]${off(addr, detour.start)}`;
  const slot = slots.slotContaining(addr);
  if (slot !== undefined) {
    const p = engine.probeBySlot(slot);
    return p?.addr !== undefined ? `kprobe_insn_slot[${probeName(engine, p.addr)}]${off(addr, slot)}` : `kprobe_insn_slot${off(addr, slot)}`;
  }
  return `kprobes_code${off(addr, range.start)}`;
}
