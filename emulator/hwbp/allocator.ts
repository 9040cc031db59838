/**
 * The debug-register allocator shared by every user of hardware
 * breakpoints (the OLS paper's low-level facility, section 8.2): per CPU,
 * per register pool, which registration holds each register.
 *
 * Users have priorities. Kernel watchpoint probes (register_kwatch) are
 * global, lowest-priority users; the debugger's data and hardware
 * breakpoints, the person at the keyboard, rank above them. A request finds
 * a register free on every CPU it asks for; when there is none, it takes one
 * held by a lower-priority user, which is relinquished: uninstalled, kept
 * waiting on that very register (its number, the handle register_kwatch
 * returned, stays valid) and reinstalled when the taker lets it go. Equal
 * or higher priority holders are never displaced: the request fails
 * (-ENOSPC, as Linux's reserve_bp_slot).
 *
 * Every user is wide today (all CPUs, the same register number on each);
 * the table is kept per CPU so that per-task users (ptrace-style user
 * watchpoints) can hold a register on one CPU only.
 */
import type { HwBpRequest } from './archHooks';

export type HwBpPool = 'exec' | 'data';

/** Who holds a register, in increasing priority. */
export type HwBpOwner = 'kwatch' | 'debugger';
export const OWNER_PRIORITY: Readonly<Record<HwBpOwner, number>> = { kwatch: 0, debugger: 1 };

export interface HwBpHolder {
  readonly id: number;
  readonly owner: HwBpOwner;
  readonly req: HwBpRequest;
  readonly pool: HwBpPool;
}

/** The outcome of a request: the register, and the holder it displaced (now waiting), if any. */
export type Allocation<H> = { index: number; displaced?: H };

export class DebugRegAllocator<H extends HwBpHolder> {
  /** [cpu][pool][index]: the holders of a register, the active one last */
  private readonly table: Record<HwBpPool, H[][]>[] = [];

  constructor(cpus: number, private readonly sizes: Readonly<Record<HwBpPool, number>>, private readonly shared: boolean) {
    for (let c = 0; c < cpus; c++) {
      this.table.push({
        exec: Array.from({ length: sizes.exec }, () => []),
        data: Array.from({ length: sizes.data }, () => []),
      });
    }
  }

  /** the pool a request draws from (x86: execute and data share DR0-DR3) */
  poolOf(h: Pick<HwBpHolder, 'req'>): HwBpPool {
    return this.shared || h.req.type !== 'x' ? 'data' : 'exec';
  }

  size(pool: HwBpPool): number { return this.sizes[pool]; }

  /** The active holder of register `index` of `pool` on `cpu`. */
  active(cpu: number, pool: HwBpPool, index: number): H | undefined {
    const s = this.table[cpu]?.[pool][index];
    return s && s.length ? s[s.length - 1] : undefined;
  }

  /** Every holder of every register of a CPU, the waiting ones included. */
  holders(cpu: number, pool: HwBpPool): readonly (readonly H[])[] { return this.table[cpu][pool]; }

  /**
   * A wide request: a register free on every CPU, else one whose active
   * holders are all the same lower-priority registration (displaced).
   */
  reserve(h: H): Allocation<H> {
    const pool = h.pool;
    const n = this.sizes[pool];
    for (let i = 0; i < n; i++) {
      if (this.table.every(t => t[pool][i].length === 0)) {
        for (const t of this.table) t[pool][i].push(h);
        return { index: i };
      }
    }
    // none free: a register whose active holder ranks below ours: the lowest-ranked, the most recent of those
    const rank = (x: H): number => OWNER_PRIORITY[x.owner];
    let best = -1;
    let bestTop: H | undefined;
    for (let i = 0; i < n; i++) {
      const top = this.active(0, pool, i);
      if (!top || rank(top) >= rank(h) || !this.table.every(t => t[pool][i][t[pool][i].length - 1] === top)) continue;
      if (!bestTop || rank(top) < rank(bestTop) || (rank(top) === rank(bestTop) && top.id > bestTop.id)) { best = i; bestTop = top; }
    }
    if (best < 0) return { index: -1 };
    for (const t of this.table) t[pool][best].push(h);
    return { index: best, displaced: bestTop };
  }

  /**
   * Let a holder go (active or waiting); returns the holder that becomes
   * active on that register again (the one it had displaced), if any.
   */
  release(h: H, index: number): H | undefined {
    let resumed: H | undefined;
    for (const t of this.table) {
      const s = t[h.pool][index];
      const k = s.indexOf(h);
      if (k < 0) continue;
      const wasTop = k === s.length - 1;
      s.splice(k, 1);
      if (wasTop && s.length) resumed = s[s.length - 1];
    }
    return resumed;
  }
}
