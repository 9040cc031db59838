/**
 * Running a compiled handler snippet inside an engine callback, and the
 * bridge from the language's HandlerFault to the engine's fault path.
 *
 * The engine treats a MemoryFault thrown by a handler as a fault in the
 * handler (KprobesEngine.guarded: nmissed++, then the probe's fault_handler;
 * handled -> the handler counts as having returned its default; not handled
 * -> oops). So a HandlerFault (step budget exceeded, bad memory access,
 * divide by zero, NULL dereference) is recorded in the probe's FaultGate and
 * rethrown as a MemoryFault; the probe's fault_handler (always installed,
 * fileProbes.ts) finds it in the gate and applies the HandlerFaultPolicy:
 *
 *   'oops' (default, Linux): the user's `fault` snippet decides; when it
 *     returns 0 or there is none, nothing else can fix the fault up (handler
 *     code has no __ex_table entry), so the CPU oopses: oopsForHandlerFault()
 *     reports the fault's trap with the handler's file:line:col, the engine's
 *     own report that follows is a no-op (the CPU is already dead);
 *   'report': a diagnostic line (source 'emulator'), the fault snippet runs,
 *     the fault counts as handled: the probe goes on.
 *
 * A 'budget' fault is the emulator's watchdog, not a CPU exception (Linux's
 * soft-lockup report is the nearest thing): under both policies it is
 * reported and handled, and RunawayWatch disables a probe that keeps
 * running away.
 */
import type { CompiledHandler, HandlerFault as HandlerFaultT, HandlerFaultKind, HandlerKind } from '../handlers';
import { HandlerFault } from '../handlers';
import type { Cpu, Trap } from '../arch/types';
import type { KernelApi } from '../kernel/types';
import { MemoryFault } from '../memory/memory';
import { toVAddr } from '../memory/address';
import type { ProbeHandlerEnv } from './env';

/** A fault raised by one of a probe's handlers, waiting for the probe's fault_handler. */
export interface PendingFault {
  fault: HandlerFaultT;
  handler: HandlerKind;
}

/**
 * What a handler fault that the probe's `fault` snippet does not handle does:
 * 'oops' (Linux: the CPU oopses) or 'report' (a diagnostic, the probe goes on).
 */
export type HandlerFaultPolicy = 'oops' | 'report';
export const HANDLER_FAULT_POLICIES: readonly HandlerFaultPolicy[] = ['oops', 'report'];
export const DEFAULT_HANDLER_FAULTS: HandlerFaultPolicy = 'oops';

/** Per-probe mailbox between the throwing handler and the probe's fault_handler. */
export class FaultGate {
  pending: PendingFault | null = null;

  take(): PendingFault | null {
    const p = this.pending;
    this.pending = null;
    return p;
  }
}

/** Linux trap number shown to a fault handler for a handler fault of this kind. */
export function trapnrForFault(kernel: KernelApi, kind: HandlerFaultKind): number {
  const t = kernel.arch.abi.trapNumbers;
  switch (kind) {
    case 'memory': case 'null': return t.pageFault ?? 14;
    case 'divide': return t.divide ?? 0;
    case 'budget': case 'context': return t.generalProtection ?? 13;
  }
}

/** The trap an unhandled handler fault stands for in the oops report (the pc is the probed CPU's). */
export function trapForFault(pc: bigint, f: HandlerFaultT): Trap {
  switch (f.kind) {
    case 'memory': case 'null':
      return { kind: 'pageFault', pc, addr: f.addr ?? 0n, access: f.access ?? 'read', present: false, user: false };
    case 'divide': return { kind: 'divide', pc };
    case 'budget': case 'context': return { kind: 'generalProtection', pc, reason: f.message };
  }
}

/**
 * Oops the CPU for a handler fault nobody handled: the trap's headline
 * (e.g. "BUG: kernel NULL pointer dereference, address: ..."), then `where`
 * ("x.kprobe:3:21: pre handler of kprobe kprobe_target faulted at
 * kprobe_target+0x0: <what>"), then the usual CPU / pc / registers. The CPU
 * stops as after any oops.
 */
export function oopsForHandlerFault(kernel: KernelApi, cpu: Cpu, f: HandlerFaultT, where: string): void {
  kernel.oops(cpu, trapForFault(cpu.getPc(), f), '', [where]);
}

/** The MemoryFault handed to the engine for a handler fault (address 0 when the fault has none). */
function asMemoryFault(f: HandlerFaultT): MemoryFault {
  const v = f.addr !== undefined ? toVAddr(f.addr) : null;
  return new MemoryFault(v ?? 0, 'read', false, false);
}

/**
 * Run `h` with `env`; what it printed goes to the kernel log in any case. A
 * HandlerFault is parked in `gate` and rethrown as a MemoryFault (see above).
 */
export function runInProbe(h: CompiledHandler, env: ProbeHandlerEnv, gate: FaultGate): bigint {
  try {
    return h.run(env);
  } catch (e) {
    if (e instanceof HandlerFault) {
      gate.pending = { fault: e, handler: h.kind };
      throw asMemoryFault(e);
    }
    throw e;
  } finally {
    env.flush();
  }
}

/** Run `h` outside the engine's fault path (breakpoint conditions / log messages): faults are returned. */
export function runCaught(h: CompiledHandler, env: ProbeHandlerEnv): { value: bigint } | { fault: HandlerFaultT } {
  try {
    return { value: h.run(env) };
  } catch (e) {
    if (e instanceof HandlerFault) return { fault: e };
    throw e;
  } finally {
    env.flush();
  }
}

/** C int conversion of a handler's return value (pre/entry handlers return int). */
export function asInt(v: bigint): number {
  return Number(BigInt.asIntN(32, v));
}
