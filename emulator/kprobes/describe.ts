/**
 * How the engine names and describes its probes: "symbol+0xoff" of an
 * address (%pS, the engine's own code by its registered names) and the
 * ProbeInfo the events and the debugger's views carry (kind, flags,
 * [OPTIMIZED], [FTRACE]).
 */
import type { KernelApi } from '../kernel/types';
import { hex } from '../memory/address';
import type { EngineCodeRegistry } from './codeRegistry';
import type { ProbeInfo } from './events';
import { Kprobe, KPROBE_FLAG_FTRACE, KPROBE_FLAG_GONE, kprobeDisabled } from './kprobe';
import type { ProbeTable } from './probeTable';

export class KprobeDescriber {
  /** `optimized(addr)`: the optimizer's answer whether the jump at addr is written */
  constructor(
    private readonly kernel: Pick<KernelApi, 'image'>, private readonly code: Pick<EngineCodeRegistry, 'symbolize'>,
    private readonly t: Pick<ProbeTable, 'isRegistered' | 'kindOf'>, private readonly optimized: (addr: bigint) => boolean,
  ) {}

  /**
   * "symbol+0xoff" for an address (%pS): the engine's own code by its
   * registered name (codeRegistry.ts: kretprobe_trampoline+0x0, ...),
   * else kallsyms, else its hex value.
   */
  where(addr: bigint): string {
    const own = this.code.symbolize(addr);
    if (own !== undefined) return own;
    const r = this.kernel.image.symbols.resolve(addr);
    return r ? `${r.sym.name}+0x${r.offset.toString(16)}` : hex(addr);
  }

  info(p: Kprobe): ProbeInfo {
    const addr = p.addr ?? 0n;
    return {
      id: p.id ?? 0, kind: this.t.kindOf(p), addr, where: this.where(addr),
      disabled: kprobeDisabled(p), gone: ((p.flags ?? 0) & KPROBE_FLAG_GONE) !== 0,
      optimized: p.addr !== undefined && this.t.isRegistered(p) && this.optimized(p.addr),
      ftrace: ((p.flags ?? 0) & KPROBE_FLAG_FTRACE) !== 0,
    };
  }
}
