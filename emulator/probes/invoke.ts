/**
 * Running a compiled handler snippet inside an engine callback, and the
 * bridge from the language's HandlerFault to the engine's fault path.
 *
 * The engine treats a MemoryFault thrown by a handler as a fault in the
 * handler (KprobesEngine.guarded: nmissed++, then the probe's fault_handler;
 * handled -> the handler counts as having returned its default). So a
 * HandlerFault (step budget exceeded, bad memory access, divide by zero,
 * NULL dereference) is recorded in the probe's FaultGate and rethrown as a
 * MemoryFault; the probe's fault_handler (always installed by this module)
 * finds it in the gate, reports it on the console, runs the user's `fault`
 * snippet if there is one, and returns 1: the probe goes on, the machine
 * continues.
 */
import type { CompiledHandler, HandlerFault as HandlerFaultT, HandlerFaultKind, HandlerKind } from '../handlers';
import { HandlerFault } from '../handlers';
import type { KernelApi } from '../kernel/types';
import { MemoryFault } from '../memory/memory';
import { toVAddr } from '../memory/address';
import type { ProbeHandlerEnv } from './env';

/** A fault raised by one of a probe's handlers, waiting for the probe's fault_handler. */
export interface PendingFault {
  fault: HandlerFaultT;
  handler: HandlerKind;
}

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
