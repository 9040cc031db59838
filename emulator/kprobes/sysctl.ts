/**
 * The kprobes sysctl (/proc/sys/debug/kprobes-optimization, `sysctl -w
 * debug.kprobes_optimization=0|1`) and the per-kernel engine lookup it
 * needs: a sysctl can be written before any probe (and so before the
 * engine) exists; the value is kept for the kernel and applied when its
 * engine is created, or at once to the engine already attached.
 */
import type { KernelApi } from '../kernel/types';
import type { KprobesEngine } from './core';

/** sysctl names the kprobes engine answers (Linux spelling) */
export const SYSCTL_KPROBES_OPTIMIZATION = 'debug.kprobes_optimization';
export const KPROBES_SYSCTLS: readonly string[] = [SYSCTL_KPROBES_OPTIMIZATION];

const engines = new WeakMap<KernelApi, KprobesEngine>();
const pending = new WeakMap<KernelApi, Map<string, 0 | 1>>();

/** @internal called by the KprobesEngine constructor */
export function attachEngine(kernel: KernelApi, engine: KprobesEngine): void {
  if (!engines.has(kernel)) engines.set(kernel, engine);
  const p = pending.get(kernel);
  if (p && engines.get(kernel) === engine) {
    const v = p.get(SYSCTL_KPROBES_OPTIMIZATION);
    if (v !== undefined) engine.setOptimization(v);
  }
}

/** the kprobes engine attached to a kernel (the first one created for it), if any */
export function kprobesEngineOf(kernel: KernelApi): KprobesEngine | undefined {
  return engines.get(kernel);
}

/** Parse a sysctl value for name; a message naming what is wrong when bad. */
export function parseKprobesSysctl(name: string, value: string): 0 | 1 | string {
  if (!KPROBES_SYSCTLS.includes(name)) return `unknown sysctl '${name}' (known: ${KPROBES_SYSCTLS.join(', ')})`;
  const v = value.trim();
  if (v !== '0' && v !== '1') return `${name}: expected 0 or 1, got '${value}'`;
  return v === '1' ? 1 : 0;
}

/**
 * sysctl -w name=value for a kernel: applied to its engine now, and kept
 * for an engine created later. Returns 0, or -22 (EINVAL) for an unknown
 * name or a bad value.
 */
export function writeKprobesSysctl(kernel: KernelApi, name: string, value: string): number {
  const v = parseKprobesSysctl(name, value);
  if (typeof v === 'string') return -22;
  let p = pending.get(kernel);
  if (!p) { p = new Map(); pending.set(kernel, p); }
  p.set(name, v);
  engines.get(kernel)?.setOptimization(v);
  return 0;
}

/** /proc/sys/debug/kprobes-optimization contents for an engine: "1\n" or "0\n" */
export function readKprobesOptimization(engine: KprobesEngine): string {
  return engine.optimization ? '1\n' : '0\n';
}

/** Writing /proc/sys/debug/kprobes-optimization: "0" or "1"; other input -EINVAL (-22). */
export function writeKprobesOptimization(engine: KprobesEngine, text: string): number {
  const v = parseKprobesSysctl(SYSCTL_KPROBES_OPTIMIZATION, text);
  if (typeof v === 'string') return -22;
  engine.setOptimization(v);
  return 0;
}
