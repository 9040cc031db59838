/**
 * The kprobes sysctl, debug.kprobes_optimization (/proc/sys/debug/
 * kprobes-optimization; kernel/kprobes.c's debug table entry): the engine
 * registers it in its kernel's sysctl table (emulator/kernel/sysctl.ts)
 * when it starts, and every front end writes it there.
 */
import type { SysctlEntry } from '../kernel/sysctl';
import type { KprobesEngine } from './core';

/** sysctl names the kprobes engine answers (Linux spelling) */
export const SYSCTL_KPROBES_OPTIMIZATION = 'debug.kprobes_optimization';
export const KPROBES_SYSCTLS: readonly string[] = [SYSCTL_KPROBES_OPTIMIZATION];

/** The debug.kprobes_optimization entry of an engine: "1\n" / "0\n"; writing 0 unoptimizes every probe. */
export function kprobesOptimizationSysctl(engine: KprobesEngine): SysctlEntry {
  return {
    name: SYSCTL_KPROBES_OPTIMIZATION,
    procPath: '/proc/sys/debug/kprobes-optimization',
    values: '0|1',
    read: () => (engine.optimization ? '1\n' : '0\n'),
    parse: text => {
      const v = text.trim();
      if (v !== '0' && v !== '1') return { ok: false, reason: `expected 0 or 1, got '${text}'` };
      return { ok: true, apply: () => engine.setOptimization(v === '1' ? 1 : 0) };
    },
  };
}
