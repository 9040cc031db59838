/**
 * Arming and disarming (Linux kernel/kprobes.c arm_kprobe / disarm_kprobe,
 * arm_all_kprobes / disarm_all_kprobes behind the debugfs `enabled` knob):
 * breakpoints written through the arch hooks (textPoke), ftrace-based
 * probes through the ftrace call site, optimized probes unoptimized first;
 * and the code bytes as the debugger shows them (every armed probe's
 * original bytes put back).
 */
import { defaultArmKprobe, defaultDisarmKprobe } from './archHooks';
import { Kprobe, KPROBE_FLAG_FTRACE, kprobeDisabled } from './kprobe';
import { mustVAddr } from '../memory/address';
import type { KprobesFtrace } from './ftrace';
import type { Optimizer } from './optprobes';
import type { KprobesShared } from './parts';
import type { ProbeTable } from './probeTable';

export class KprobeArming {
  constructor(
    private readonly shared: Pick<KprobesShared, 'kernel' | 'hooks' | 'ctx' | 'events'>, private readonly t: ProbeTable,
    private readonly optimizer: Pick<Optimizer, 'overlay' | 'unoptimizeAt' | 'reconsider'>,
    private readonly ftrace: Pick<KprobesFtrace, 'arm' | 'disarm' | 'overlay'>,
  ) {}

  /**
   * Read code bytes as the debugger should show them: every armed probe's
   * original bytes put back (default), or the bytes really in memory
   * (patched = true: the breakpoints are visible).
   */
  readTextWithoutProbes(mem = this.shared.kernel.mem, addr: bigint, len: number, opts?: { patched?: boolean }): Uint8Array {
    const out = mem.readBytes(mustVAddr(addr), len);
    if (opts?.patched) return out;
    const end = addr + BigInt(len);
    // the probes whose saved opcode can overlap the read: those starting up to maxInsnLength-1 bytes before it
    const reach = BigInt(this.shared.kernel.arch.maxInsnLength - 1);
    const armed = this.t.armed;
    for (let k = armed.lowerBound(addr - reach); k < armed.size; k++) {
      const a = armed.at(k);
      if (a >= end) break;
      const op = this.t.table.get(a)?.opcode;
      if (!op) continue;
      // a starts at most maxInsnLength bytes before addr: the offset fits a number
      const off = Number(a - addr);
      for (let i = Math.max(0, -off); i < op.length && off + i < len; i++) out[off + i] = op[i];
    }
    this.optimizer.overlay(out, addr, len);
    this.ftrace.overlay(out, addr, len);
    return out;
  }

  armKprobe(ap: Kprobe): void {
    const a = ap.addr as bigint;
    if (this.t.armed.has(a)) return;
    if ((ap.flags ?? 0) & KPROBE_FLAG_FTRACE) this.ftrace.arm(ap);
    else (this.shared.hooks.armKprobe ?? defaultArmKprobe)(this.shared.ctx, ap);
    this.t.armed.add(a);
  }

  disarmKprobe(ap: Kprobe): void {
    const a = ap.addr as bigint;
    if (!this.t.armed.has(a)) return;
    this.optimizer.unoptimizeAt(a); // __disarm_kprobe: unoptimize first
    if ((ap.flags ?? 0) & KPROBE_FLAG_FTRACE) this.ftrace.disarm(ap);
    else (this.shared.hooks.disarmKprobe ?? defaultDisarmKprobe)(this.shared.ctx, ap);
    this.t.armed.delete(a);
  }

  isArmed(addr: bigint): boolean { return this.t.armed.has(addr); }

  /** debugfs `enabled` knob: false disarms everything (probe states untouched), true re-arms all but [DISABLED] */
  setEnabled(on: boolean): void {
    if (on === !this.t.allDisarmed) return;
    if (on) {
      this.t.allDisarmed = false;
      for (const ap of this.t.table.values()) if (!kprobeDisabled(ap)) this.armKprobe(ap);
    } else {
      this.t.allDisarmed = true;
      for (const ap of this.t.table.values()) this.disarmKprobe(ap);
    }
    this.optimizer.reconsider();
    this.shared.events.emit({ type: 'enabledChanged', enabled: on });
  }
}
