/**
 * /sys/kernel/debug/kprobes/{list,enabled} and the debugger-facing helpers
 * (code read without breakpoints, stack traces fixed up for kretprobes).
 */
import type { Task } from '../kernel/types';
import type { Memory } from '../memory/memory';
import { hex64 } from '../memory/address';
import type { KprobesEngine } from './core';
import type { FixedFrame } from '../kernel/types';
import { Kprobe, KPROBE_FLAG_FTRACE, KPROBE_FLAG_GONE, KPROBE_FLAG_OPTIMIZED, kprobeDisabled } from './kprobe';

/**
 * The `list` file, one line per registered probe in the modern kernel's
 * format: "%px  %s  %s+0x%x  %s " (address as 16 hex digits, type k/r/j,
 * symbol+offset, module name or a blank) followed by [GONE] [DISABLED]
 * [OPTIMIZED] [FTRACE] as they apply. Probes are listed by address; the
 * members of an aggregate in its list order. Lines end with "\n".
 */
export function formatKprobeList(engine: KprobesEngine): string {
  let out = '';
  const syms = engine.kernel.image.symbols;
  for (const { addr, probe, aggregate } of engine.probes.listEntries()) {
    const pp = aggregate ?? probe;
    const r = syms.resolve(addr);
    const type = engine.probes.kindOf(probe);
    if (r) out += `${hex64(addr)}  ${type}  ${r.sym.name}+0x${r.offset.toString(16)}  ${r.sym.module ?? ' '} `;
    else out += `${hex64(addr)}  ${type}  ${engine.describer.where(addr)} `; // %pS
    out += kprobeListFlags(probe, pp) + '\n';
  }
  return out;
}

/**
 * A list line's flags for one probe: [GONE] [DISABLED] from the probe,
 * [OPTIMIZED] [FTRACE] from the table entry at its address (`pp`: the
 * aggregate probe, or the probe itself).
 */
export function kprobeListFlags(probe: Kprobe, pp: Kprobe): string {
  const fl = probe.flags ?? 0;
  const gone = (fl & KPROBE_FLAG_GONE) !== 0;
  return (gone ? '[GONE]' : '')
    + (kprobeDisabled(probe) && !gone ? '[DISABLED]' : '')
    + (((pp.flags ?? 0) & KPROBE_FLAG_OPTIMIZED) ? '[OPTIMIZED]' : '')
    + (((pp.flags ?? 0) & KPROBE_FLAG_FTRACE) ? '[FTRACE]' : '');
}

/** The `enabled` file: "1\n" or "0\n". */
export function readKprobesEnabled(engine: KprobesEngine): string {
  return engine.enabled ? '1\n' : '0\n';
}

/** Writing the `enabled` file: "0"/"n"/"N" disarm all, "1"/"y"/"Y" re-arm; other input -EINVAL (-22). */
export function writeKprobesEnabled(engine: KprobesEngine, text: string): number {
  const c = text.trim()[0];
  if (c === '1' || c === 'y' || c === 'Y') engine.setEnabled(true);
  else if (c === '0' || c === 'n' || c === 'N') engine.setEnabled(false);
  else return -22;
  return 0;
}

/** Code bytes with the probes' original bytes back (default) or as patched in memory. */
export function readTextWithoutProbes(engine: KprobesEngine, mem: Memory, addr: bigint, len: number,
  opts: { patched?: boolean } = {}): Uint8Array {
  return engine.arming.readTextWithoutProbes(mem, addr, len, opts);
}

/**
 * A task's stack trace (return addresses, innermost first) with every
 * kretprobe trampoline entry replaced by the real return address of the
 * matching live instance (`replaced` marks those). `task` undefined = the
 * idle context of `cpu`. `opts.fromPc`: addrs[0] is the walked context's
 * pc (stack.ts walkFrames); in a return handler it is the trampoline and
 * becomes the return address of the instance being handled.
 */
export function fixupStackTrace(engine: KprobesEngine, task: Task | undefined, addrs: readonly bigint[], cpu = 0,
  opts: { fromPc?: boolean } = {}): FixedFrame[] {
  const rp = engine.kretprobes, key = task ?? `cpu${cpu}`;
  // the live instances innermost last; each trampoline entry of the trace (innermost first) takes the next one inwards
  const list = rp.instancesOf(key);
  let k = list.length - 1;
  const cur = opts.fromPc ? rp.runningOf(key) : undefined;
  return addrs.map((a, i) => {
    if (i === 0 && cur && rp.isTrampoline(a)) return { addr: cur.ret_addr, raw: a, replaced: true };
    if (!rp.isTrampoline(a)) return { addr: a, raw: a, replaced: false };
    while (k >= 0 && rp.isTrampoline(list[k].ret_addr)) k--;
    if (k < 0) return { addr: a, raw: a, replaced: false };
    return { addr: list[k--].ret_addr, raw: a, replaced: true };
  });
}
