export { UprobesEngine } from './core';
export type { UprobeResult } from './core';
export type { UprobesArchHooks, ArchUprobe } from './archHooks';
export * from './uprobe';
export { registerKprobeUser, insertKprobeUserspace, removeKprobeUser, unregisterKprobeUser } from './early';
export { XOL_AREA_NAME } from './xol';
