/**
 * The probe table of the kprobes core (Linux kernel/kprobes.c
 * kprobe_table and its companions): address -> probe or aggregate probe,
 * the aggregates' member lists (ap->list), which structures are
 * registered and at which address, their kinds, the armed addresses, the
 * per-CPU kprobe_ctlblk, the removals deferred while a CPU is inside a
 * probe, and kprobes_all_disarmed. State only; registration.ts,
 * arming.ts and hitPath.ts change it.
 */
import { toVAddr, VAddr } from '../memory/address';
import type { Kprobe, KprobeCtlblk, ProbeKind } from './kprobe';

/**
 * ProbeMap's entries by VAddr, with the last probe found kept: a hot
 * probe is asked for hit after hit, and a kernel address is a number the
 * Map hashes as a heap number on every lookup.
 */
export class VAddrProbes {
  private readonly m = new Map<VAddr, Kprobe>();
  /** the last address get found a probe at (NaN: none; NaN equals nothing) and that probe */
  private lastAt: VAddr = NaN;
  private lastP: Kprobe | undefined = undefined;

  get(at: VAddr): Kprobe | undefined {
    if (at === this.lastAt) return this.lastP;
    const p = this.m.get(at);
    if (p !== undefined) { this.lastAt = at; this.lastP = p; }
    return p;
  }

  set(at: VAddr, p: Kprobe): void {
    this.m.set(at, p);
    if (at === this.lastAt) this.lastP = p;
  }

  delete(at: VAddr): void {
    if (at === this.lastAt) { this.lastAt = NaN; this.lastP = undefined; }
    this.m.delete(at);
  }

  clear(): void {
    this.lastAt = NaN;
    this.lastP = undefined;
    this.m.clear();
  }
}

/**
 * kprobe_table's map, also keyed by VAddr (`byV`): the CPU's inline
 * breakpoint asks with a number, and a bigint key costs a BigInt and a
 * bigint hash per hit.
 */
export class ProbeMap extends Map<bigint, Kprobe> {
  /** the same entries by VAddr (canonical addresses only) */
  readonly byV = new VAddrProbes();

  override set(addr: bigint, p: Kprobe): this {
    super.set(addr, p);
    // Map's constructor calls set before the field initialisers ran: byV is absent then (never with an argument here)
    const v = toVAddr(addr);
    if (v !== null && this.byV !== undefined) this.byV.set(v, p);
    return this;
  }

  override delete(addr: bigint): boolean {
    const v = toVAddr(addr);
    if (v !== null) this.byV.delete(v);
    return super.delete(addr);
  }

  override clear(): void {
    this.byV.clear();
    super.clear();
  }
}

/** what the debugger and debugfs read of the table (the engine's `probes`) */
export interface KprobeTableView {
  probesAt(addr: bigint): readonly Kprobe[];
  kindOf(p: Kprobe): ProbeKind;
  listEntries(): { addr: bigint; probe: Kprobe; aggregate: Kprobe | null }[];
  isArmed(addr: bigint): boolean;
  isRegistered(p: Kprobe): boolean;
}

export class ProbeTable implements KprobeTableView {
  /** kprobe_table: address -> probe (or aggregate probe) */
  readonly table = new ProbeMap();
  /** aggregate probe -> its member list (Linux ap->list) */
  readonly aggrList = new Map<Kprobe, Kprobe[]>();
  /** registered probe -> its address at registration (its keys: the registered user probes, isRegistered) */
  readonly regAddr = new Map<Kprobe, bigint>();
  readonly kinds = new Map<Kprobe, ProbeKind>();
  /** addresses whose breakpoint is currently written (ordered: a text read finds the probes it overlaps by range) */
  readonly armed = new AddressSet();
  /** per-CPU kprobe_ctlblk by CPU id */
  readonly ctlblks: KprobeCtlblk[] = [];
  /** probes unregistered while a CPU still referenced their slot (freed later) */
  pendingRemove: Kprobe[] = [];
  nextId = 1;
  /** kprobes_all_disarmed (debugfs `enabled` = !this) */
  allDisarmed = false;

  /** the probe's kind (a kprobe unless kretprobes / jprobes said otherwise) */
  kindOf(p: Kprobe): ProbeKind { return this.kinds.get(p) ?? 'k'; }

  /** user probes at addr (members of an aggregate, or the probe itself) */
  probesAt(addr: bigint): readonly Kprobe[] {
    const p = this.table.get(addr);
    if (!p) return [];
    return this.aggrList.get(p) ?? [p];
  }

  /** the breakpoint (or the ftrace call, or the jump) is written at addr */
  isArmed(addr: bigint): boolean { return this.armed.has(addr); }
  isRegistered(p: Kprobe): boolean { return this.regAddr.has(p); }

  /** the address a registered probe was registered at (p.addr may have been changed by its owner since) */
  addrOf(p: Kprobe): bigint {
    const a = this.regAddr.get(p) ?? (p.addr as bigint);
    p.addr = a; // a caller that changed p.addr after registration gets it back
    return a;
  }

  /** registered user probes, ascending by address then table order (debugfs list order) */
  listEntries(): { addr: bigint; probe: Kprobe; aggregate: Kprobe | null }[] {
    const out: { addr: bigint; probe: Kprobe; aggregate: Kprobe | null }[] = [];
    const addrs = [...this.table.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const a of addrs) {
      const p = this.table.get(a) as Kprobe;
      const list = this.aggrList.get(p);
      if (list) for (const kp of list) out.push({ addr: a, probe: kp, aggregate: p });
      else out.push({ addr: a, probe: p, aggregate: null });
    }
    return out;
  }

  /** the registered probe (table entry) whose instruction slot starts at `slot` */
  probeBySlot(slot: bigint): Kprobe | undefined {
    for (const p of this.table.values()) if (p.ainsn?.mode === 'slot' && p.ainsn.insn === slot) return p;
    return undefined;
  }
}

/**
 * A set of addresses kept in ascending order as well as hashed: `has` is a
 * hash lookup, `within(lo, hi)` a binary search (reading a function's
 * original text finds the few armed probes inside it without walking every
 * armed address or every byte). Insertions move the tail of the array
 * (a memmove: 10,000 ordered inserts cost milliseconds).
 */
export class AddressSet implements Iterable<bigint> {
  private readonly hashed = new Set<bigint>();
  private readonly sorted: bigint[] = [];

  get size(): number { return this.hashed.size; }
  has(a: bigint): boolean { return this.hashed.has(a); }

  add(a: bigint): void {
    // one hash of the key: the set grew or it was there already
    const before = this.hashed.size;
    this.hashed.add(a);
    if (this.hashed.size === before) return;
    // addresses mostly come in ascending order (a probe file, a function's instructions): an append needs no search
    const n = this.sorted.length;
    if (n === 0 || this.sorted[n - 1] < a) { this.sorted.push(a); return; }
    const i = this.lowerBound(a);
    if (i === this.sorted.length) this.sorted.push(a);
    else this.sorted.splice(i, 0, a);
  }

  delete(a: bigint): boolean {
    if (!this.hashed.delete(a)) return false;
    this.sorted.splice(this.lowerBound(a), 1);
    return true;
  }

  /** the members in [lo, hi), ascending */
  within(lo: bigint, hi: bigint): bigint[] {
    const out: bigint[] = [];
    for (let i = this.lowerBound(lo); i < this.sorted.length && this.sorted[i] < hi; i++) out.push(this.sorted[i]);
    return out;
  }

  [Symbol.iterator](): Iterator<bigint> { return this.sorted[Symbol.iterator](); }

  /** the k-th address in ascending order (0 <= k < size) */
  at(k: number): bigint { return this.sorted[k]; }

  /** the index (in ascending order) of the first address >= a: size when there is none */
  lowerBound(a: bigint): number {
    const s = this.sorted, n = s.length;
    // near the last answer first (registration asks about neighbouring addresses, probe after probe): a few BigInt
    // comparisons instead of a whole binary search; the hint is only where to start, the answer is checked
    let i = this.finger < n ? this.finger : n;
    if (i > 0 && !(s[i - 1] < a)) {
      for (let k = 0; k < 4 && i > 0 && !(s[i - 1] < a); k++) i--;
      if (i === 0 || s[i - 1] < a) return (this.finger = i);
    } else {
      for (let k = 0; k < 4 && i < n && s[i] < a; k++) i++;
      if (i === n || !(s[i] < a)) return (this.finger = i);
    }
    let lo = 0, hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (s[mid] < a) lo = mid + 1; else hi = mid;
    }
    return (this.finger = lo);
  }

  /** where lowerBound answered last (a hint: any value is safe) */
  private finger = 0;
}
