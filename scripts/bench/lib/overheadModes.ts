/**
 * The overhead section's probe modes (kprobes.rst's overhead table and the
 * 2.6 one) as probes registered on a machine: scripts/bench/overhead.ts and
 * scripts/bench/overheadParts.ts set a mode up the same way.
 *   k  = kprobe, no booster, no optimization       b  = kprobe booster
 *   o  = optimized kprobe                          r  = kretprobe, no boosters
 *   rb = kprobe + kretprobe boosters               ro = optimized entry + kretprobe booster
 *   kr = kprobe + kretprobe (2.6 style)            j  = jprobe      jr = jprobe + kretprobe
 *   rk = kretprobe, boosted entry, breakpoint-trampoline return
 *   rt = kretprobe, single-stepped entry, booster-trampoline return
 * Every handler is empty.
 */
import type { ElfImage } from '../../../emulator/elf/types';
import type { Machine } from '../../../emulator/machine';
import type { Jprobe, Kprobe, Kretprobe } from '../../../emulator/kprobes';

export type Mode = 'none' | 'k' | 'b' | 'o' | 'r' | 'rb' | 'ro' | 'kr' | 'j' | 'jr' | 'rk' | 'rt';

export interface ModeProbes { kp: Kprobe; rp: Kretprobe; jp: Jprobe; hasK: boolean; hasR: boolean; hasJ: boolean; hits: () => number }

/** Register `mode`'s probes on `target` of machine m (running image); throws when a registration or the optimization fails. */
export function registerMode(m: Machine, image: ElfImage, mode: Mode, target: string): ModeProbes {
  const e = m.kprobes;
  const optimized = mode === 'o' || mode === 'ro';
  e.setOptimization(optimized ? 1 : 0);
  e.traps.kprobeBooster = mode === 'b' || mode === 'rb' || mode === 'rk';
  e.kretprobes.setBoost(mode === 'rb' || mode === 'ro' || mode === 'rt');
  const kp: Kprobe = { symbol_name: target, pre_handler: () => 0 };
  const rp: Kretprobe = { kp: { symbol_name: target }, maxactive: 64, handler: () => 0 };
  // the entry handler ends by returning, which is jprobe_return() (engine.jprobeReturn() would
  // add a host-side JS throw per hit, ~0.5 us, that stands for nothing on the emulated machine)
  const jp: Jprobe = { kp: { symbol_name: target }, entry: () => undefined };
  const hasK = mode === 'k' || mode === 'b' || mode === 'o' || mode === 'kr';
  const hasR = mode === 'r' || mode === 'rb' || mode === 'ro' || mode === 'kr' || mode === 'jr' || mode === 'rk' || mode === 'rt';
  const hasJ = mode === 'j' || mode === 'jr';
  if (hasK && e.registerKprobe(kp) !== 0) throw new Error('register_kprobe failed');
  if (hasR && e.registerKretprobe(rp) !== 0) throw new Error('register_kretprobe failed');
  if (hasJ && e.registerJprobe(jp) !== 0) throw new Error('register_jprobe failed');
  if (optimized) {
    e.waitForOptimizer();
    if (!e.optimizer.isOptimized(image.symbols.lookup(target)?.value ?? 0n)) throw new Error(`${target} was not optimized`);
  }
  const hits = (): number => (hasK ? kp.hits ?? 0 : hasR ? rp.kp.hits ?? 0 : jp.kp.hits ?? 0);
  return { kp, rp, jp, hasK, hasR, hasJ, hits };
}
