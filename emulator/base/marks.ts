/**
 * How the time-travel snapshotter (timetravel/snapshot.ts) treats an object
 * reachable from the Machine. By default every reachable object is machine
 * state: its own properties (and a typed array's bytes) are captured and put
 * back on restore. Three kinds are different:
 *
 * - host-owned: belongs to the front ends, not to the machine (listener
 *   lists, the probe-hit log the timeline draws, the Debug Console's
 *   position): neither captured nor restored, so going back in time keeps
 *   what the user already saw and the listeners registered since.
 * - immutable: never changes once built (the ELF image, its symbols and
 *   DWARF, arch tables): not walked, which keeps snapshots small.
 * - derived: a cache computed from machine state (decode caches, translated
 *   code): not captured; `reset` is called after a restore.
 */
const host = new WeakSet<object>();
const fixed = new WeakSet<object>();
const derived = new WeakMap<object, () => void>();
const hooks = new WeakMap<object, RestoreHook>();

/** Bytes a restore changed: [start, end) offsets in `buf`. */
export interface ChangedBytes { buf: ArrayBufferLike; start: number; end: number }

/**
 * What an object needs around a restore that puts it back: `before` runs
 * first (the object still as it is now), `after` once everything is back,
 * with the byte ranges the restore actually changed.
 */
export interface RestoreHook {
  before?(): void;
  after(changed: readonly ChangedBytes[]): void;
}

/** Mark `o` host-owned (see above); returns it. */
export function hostOwned<T extends object>(o: T): T { host.add(o); return o; }
/** Mark `o` immutable (see above); returns it. */
export function immutableState<T extends object>(o: T): T { fixed.add(o); return o; }
/** Mark `o` a cache of machine state, emptied by `reset` after a restore; returns it. */
export function derivedState<T extends object>(o: T, reset: () => void): T { derived.set(o, reset); return o; }

/** Call `fn` after a restore that put `o` back (`o` is captured as usual; e.g. Memory drops the caches of its code). */
export function onRestore<T extends object>(o: T, hook: RestoreHook): T { hooks.set(o, hook); return o; }

export function isHostOwned(o: object): boolean { return host.has(o); }
export function isImmutable(o: object): boolean { return fixed.has(o); }
export function derivedReset(o: object): (() => void) | undefined { return derived.get(o); }
export function restoreHook(o: object): RestoreHook | undefined { return hooks.get(o); }
