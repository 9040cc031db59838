/**
 * The stack walker lives in the kernel layer (kernel/stack.ts). What is left
 * here is the form adapter/inspector.ts still imports; delete this file once
 * it imports kernel/stack.ts (or the debug facade) instead.
 */
import type { KernelApi } from '../kernel/types';
import { emulatorCodeAt as kernelEmulatorCodeAt, EmulatorCodeKind } from '../kernel/stack';

export { IDLE_FRAME, THREAD_RETURN_FRAME } from '../kernel/stack';
export type { EmulatorCodeKind } from '../kernel/stack';

/** kernel/stack.ts emulatorCodeAt; the engine argument is not used (the kernel holds the engine's unwind hooks). */
export function emulatorCodeAt(kernel: KernelApi, _engine: unknown, addr: bigint): { name: string; kind: EmulatorCodeKind } | undefined {
  return kernelEmulatorCodeAt(kernel, addr);
}
