/**
 * The Linux machine's breakpoints and data breakpoints as the debugger
 * keeps them: source, function and instruction breakpoints (each a set of
 * addresses, grouped by the DAP request that set them) and data watches,
 * all in the CPUs' hardware debug slots above the guest's DR0-DR3, so no
 * guest byte is ever written (linuxTarget.ts says why).
 *
 * The slots are shared: breakpoint addresses, watches, and the addresses
 * the target adds for itself (a step's temporary breakpoint, the agent's
 * stop point) all go into every CPU's debug unit; an AP that starts later
 * gets them when it first appears.
 */
import type { ElfImage } from '../elf/types';
import { hex64, toVAddr } from '../memory/address';
import type { PcRun } from '../system/pcRun';
import { parseDataId, type LinuxWatch } from './linuxDataBreakpoints';
import type { LinuxSources } from './linuxSources';

export type LinuxBreakpointKind = 'function' | 'instruction' | 'source';
/** a breakpoint: its addresses (a source line may have several: inlined copies, split code) */
export interface LinuxBreakpoint { addresses: bigint[]; kind: LinuxBreakpointKind; label: string; group: string }

/** what the breakpoints need of the target */
export interface LinuxBreakpointHost {
  readonly run: PcRun;
  readonly vmlinux: ElfImage | undefined;
  readonly sources: LinuxSources;
  where(addr: bigint): string;
}

export class LinuxBreakpoints {
  private bps: LinuxBreakpoint[] = [];
  /** per armed address, the breakpoints there */
  private readonly armed = new Map<bigint, LinuxBreakpoint[]>();
  private watches: LinuxWatch[] = [];
  private armedCpus = 0;

  /** `extra`: the addresses the target arms for itself besides the user's breakpoints */
  constructor(private readonly t: LinuxBreakpointHost, private readonly extra: () => readonly bigint[]) {}

  /** a user breakpoint at `addr` (the first of them), if any */
  at(addr: bigint): LinuxBreakpoint | undefined { return this.armed.get(addr)?.[0]; }
  has(addr: bigint): boolean { return this.armed.has(addr); }

  /** the address of a function of the vmlinux, or of `function+offset` (as Linux's kprobes name a place: decimal or 0x hex, inside the function), or why not */
  functionAddress(name: string): bigint | string {
    const v = this.t.vmlinux;
    if (!v) return 'function breakpoints need the kernel\'s symbols: set "vmlinux" in launch.json';
    const m = /^\s*([^+\s]+)\s*\+\s*(0x[0-9a-f]+|[0-9]+)\s*$/i.exec(name);
    const s = v.symbols.lookup(m ? m[1] : name);
    if (!s) return `no function ${m ? m[1] : name} in ${v.path}`;
    if (!m) return s.value;
    const off = BigInt(m[2]);
    if (s.size > 0n && off >= s.size) return `${name}: ${m[1]} is 0x${s.size.toString(16)} bytes long`;
    return s.value + off;
  }

  /**
   * Replace the breakpoints of `group` (a kind, or a source file); returns
   * per request the breakpoint or why not. The addresses of all groups
   * share the CPUs' debugger slots.
   */
  setBreakpoints(kind: LinuxBreakpointKind, group: string, wanted: readonly { addresses: bigint[] | string; label: string }[]): (LinuxBreakpoint | string)[] {
    this.bps = this.bps.filter(b => b.group !== group);
    const max = this.t.run.cpus[0]!.debug.maxBreakpoints - this.watches.length;
    const out: (LinuxBreakpoint | string)[] = [];
    for (const w of wanted) {
      if (typeof w.addresses === 'string') { out.push(w.addresses); continue; }
      const bad = w.addresses.find(a => toVAddr(a) === null);
      if (bad !== undefined) { out.push(`0x${hex64(bad)} is not a canonical address`); continue; }
      const used = new Set(this.bps.flatMap(b => b.addresses));
      const more = w.addresses.filter(a => !used.has(a)).length;
      if (used.size + more > max) { out.push(`at most ${max} breakpoint addresses at once on this machine (${used.size} in use, this one needs ${more})`); continue; }
      const b: LinuxBreakpoint = { addresses: [...w.addresses], kind, label: w.label, group };
      this.bps.push(b);
      out.push(b);
    }
    this.armed.clear();
    for (const b of this.bps) for (const a of b.addresses) this.armed.set(a, [...(this.armed.get(a) ?? []), b]);
    this.arm(true);
    return out;
  }

  /** the addresses of a source line (DWARF line table; a line without code moves to the next with code), or why not */
  lineAddresses(clientPath: string, line: number): { addresses: bigint[]; line: number } | string {
    const lines = this.t.vmlinux?.lines;
    if (!lines) return 'source breakpoints need the kernel\'s DWARF: set "vmlinux" (Debian\'s -dbg vmlinux) in launch.json';
    for (const name of this.t.sources.dwarfCandidates(clientPath)) {
      let at = line;
      let addrs = lines.addressesForLine(name, at);
      if (addrs.length === 0) {
        const next = lines.nextLineWithCode(name, line);
        if (next === undefined) continue;
        at = next;
        addrs = lines.addressesForLine(name, at);
      }
      if (addrs.length > 0) return { addresses: addrs, line: at };
    }
    return `no code for ${clientPath}:${line} in ${this.t.vmlinux!.path}'s line table`;
  }

  /** replace the data breakpoints (dataIds from linuxDataInfo); per request the watch or why not; they share the CPUs' debugger slots with the breakpoints */
  setWatchpoints(wanted: readonly { dataId: string; accessType?: 'read' | 'write' | 'readWrite'; label?: string }[]): (LinuxWatch | string)[] {
    const max = this.t.run.cpus[0]!.debug.maxBreakpoints - this.armed.size;
    const out: (LinuxWatch | string)[] = [];
    const kept: LinuxWatch[] = [];
    for (const w of wanted) {
      const p = parseDataId(w.dataId);
      if (typeof p === 'string') { out.push(p); continue; }
      if (kept.length >= max) { out.push(`at most ${max} data breakpoints beside ${this.armed.size} breakpoint addresses on this machine`); continue; }
      const a = w.accessType ?? 'write';
      const watch: LinuxWatch = { ...p, read: a !== 'write', write: a !== 'read', label: w.label ?? this.t.where(p.addr) };
      kept.push(watch);
      out.push(watch);
    }
    this.watches = kept;
    this.arm(true);
    return out;
  }

  /** a watchpoint stop's description: the watch that matched and what the guest did there */
  watchHit(detail: string): string {
    const m = /(read|write) at (0x[0-9a-f]+)/.exec(detail);
    const at = m ? BigInt(m[2]) : undefined;
    const w = at === undefined ? undefined : this.watches.find(x => at >= x.addr && at < x.addr + BigInt(x.len)) ?? this.watches.find(x => at < x.addr + BigInt(x.len) && x.addr < at + 8n);
    return `Data breakpoint: ${m ? m[1] : 'access'} of ${w?.label ?? (at !== undefined ? this.t.where(at) : 'watched memory')}`;
  }

  /**
   * The kernel turned out to run away from the vmlinux's link addresses
   * (KASLR, linuxSlide.ts): every breakpoint and watch set before is moved
   * to where its code or data runs. Returns the labels of the breakpoints
   * for which `early` says their code ran before this could be known.
   */
  relocate(toRuntime: (link: bigint) => bigint, early: (link: bigint) => boolean): string[] {
    const missed = this.bps.filter(b => b.addresses.some(early)).map(b => b.label);
    for (const b of this.bps) b.addresses = b.addresses.map(toRuntime);
    this.watches = this.watches.map(w => ({ ...w, addr: toRuntime(w.addr) }));
    this.armed.clear();
    for (const b of this.bps) for (const a of b.addresses) this.armed.set(a, [...(this.armed.get(a) ?? []), b]);
    this.arm(true);
    return missed;
  }

  /** everything into every CPU's debug unit: `all`, or only when a CPU started since the last look */
  arm(all = false): void {
    const cpus = this.t.run.cpus;
    const live = cpus.filter(c => c !== null).length;
    if (!all && live === this.armedCpus) return;
    const addrs = [...this.armed.keys()];
    for (const a of this.extra()) if (!this.armed.has(a) && !addrs.includes(a)) addrs.push(a);
    for (const h of cpus) if (h !== null) { h.debug.setWatchpoints(this.watches); h.debug.setBreakpoints(addrs); }
    this.armedCpus = live;
  }
}
