/** Hardware breakpoints and watchpoints: the kernel half (allocator, handler dispatch, register_kwatch). */
export type { HwBpRequest, HwBpType, HwDebugArchHooks } from './archHooks';
export { DebugRegAllocator, OWNER_PRIORITY } from './allocator';
export type { HwBpOwner, HwBpPool } from './allocator';
export { HwBp, HwBreakpoints } from './hwBreakpoints';
export type { HwBpCallbacks, HwBpHit, HwBpRefusal } from './hwBreakpoints';
export { Kwatches, KWATCH_TYPE_CODES } from './kwatch';
export type { KwatchContext, KwatchHandler } from './kwatch';
