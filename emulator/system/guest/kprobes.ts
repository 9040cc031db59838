/**
 * The guest kernel's registered kprobes, read from its `kprobe_table` hash
 * lists as Linux 6.1's /sys/kernel/debug/kprobes/list walks them
 * (kernel/kprobes.c show_kprobe_addr + report_probe): bucket by bucket,
 * each hlist in order; an aggregated probe (pre_handler ==
 * aggr_pre_handler) stands for the probes on its `list`, each reported
 * with the aggregate's [OPTIMIZED] / [FTRACE] state and its own [GONE] /
 * [DISABLED]. A kretprobe's kprobe (pre_handler == pre_handler_kretprobe)
 * is reported 'r', with the containing struct kretprobe's maxactive and
 * nmissed. renderKprobesList() prints the rows as the debugfs file does.
 */
import type { ElfImage } from '../../elf/types';
import type { GuestMemory, KernelSymbols } from './guestMemory';
import type { KernelLayout } from './kernelLayout';
import type { GuestModule } from './modules';
import { kallsymsLookup, moduleAt } from './kallsyms';

/** include/linux/kprobes.h */
export const KPROBE_FLAG_GONE = 1, KPROBE_FLAG_DISABLED = 2, KPROBE_FLAG_OPTIMIZED = 4, KPROBE_FLAG_FTRACE = 8;

export interface GuestKprobe {
  /** the struct kprobe's guest address */
  readonly kp: bigint;
  readonly addr: bigint;
  readonly type: 'k' | 'r';
  /** kallsyms_lookup(addr): the symbol, offset and module of the probed address (null: none) */
  readonly symbol: string | null;
  readonly offset: bigint;
  readonly module: string | null;
  /** this probe's flags; the state shown for [OPTIMIZED]/[FTRACE] is the aggregate's (`aggrFlags`) */
  readonly flags: number;
  readonly aggrFlags: number;
  /** the aggregate's struct kprobe when this probe is one of several on the address */
  readonly aggregate: bigint | null;
  readonly nmissed: bigint;
  /** the module that registered it (whose text holds its handler), null for the kernel's own */
  readonly owner: string | null;
  /** the pre-handler (the kretprobe's return handler for 'r') by symbol */
  readonly handler: string;
  /** for a kretprobe: the struct kretprobe and its counters */
  readonly kretprobe?: { readonly addr: bigint; readonly maxactive: number; readonly nmissed: number };
  readonly gone: boolean;
  readonly disabled: boolean;
  readonly optimized: boolean;
  readonly ftrace: boolean;
}

export function readKprobes(mem: GuestMemory, L: KernelLayout, syms: KernelSymbols, vmlinux: ElfImage, mods: readonly GuestModule[]): GuestKprobe[] {
  const table = vmlinux.symbols.lookup('kprobe_table');
  if (!table) throw new Error('the vmlinux has no kprobe_table (a kernel without CONFIG_KPROBES)');
  const aggr = syms.addressOf('aggr_pre_handler');
  const kretPre = syms.addressOf('pre_handler_kretprobe');
  const buckets = Number(table.size) / L.size('hlist_head');
  const hnext = L.off('hlist_node', 'next');
  const oHlist = L.off('kprobe', 'hlist'), oList = L.off('kprobe', 'list'), oPre = L.off('kprobe', 'pre_handler');
  const oAddr = L.off('kprobe', 'addr'), oFlags = L.off('kprobe', 'flags'), oMissed = L.off('kprobe', 'nmissed');
  const oKp = L.off('kretprobe', 'kp');
  const name = (a: bigint): string => {
    if (a === 0n) return '';
    const h = kallsymsLookup(vmlinux, mods, a);
    return h ? `${h.name}${h.offset ? `+0x${h.offset.toString(16)}` : ''}${h.module ? ` [${h.module}]` : ''}` : `0x${a.toString(16)}`;
  };
  const out: GuestKprobe[] = [];
  const report = (p: bigint, sym: ReturnType<typeof kallsymsLookup>, pp: bigint | null, ppFlags: number): void => {
    const flags = mem.u32(p + oFlags);
    const pre = mem.u64(p + oPre);
    const isRet = kretPre !== undefined && pre === kretPre;
    let kret: GuestKprobe['kretprobe'];
    let handler = pre;
    if (isRet) {
      const rp = p - oKp;
      kret = { addr: rp, maxactive: mem.i32(rp + L.off('kretprobe', 'maxactive')), nmissed: mem.i32(rp + L.off('kretprobe', 'nmissed')) };
      handler = mem.u64(rp + L.off('kretprobe', 'handler'));
    }
    const gone = (flags & KPROBE_FLAG_GONE) !== 0;
    out.push({
      kp: p, addr: mem.u64(p + oAddr), type: isRet ? 'r' : 'k',
      symbol: sym?.name ?? null, offset: sym?.offset ?? 0n, module: sym?.module ?? null,
      flags, aggrFlags: ppFlags, aggregate: pp, nmissed: mem.u64(p + oMissed),
      owner: moduleAt(mods, handler)?.name ?? moduleAt(mods, p)?.name ?? null,
      handler: name(handler), kretprobe: kret,
      gone, disabled: (flags & KPROBE_FLAG_DISABLED) !== 0 && !gone,
      optimized: (ppFlags & KPROBE_FLAG_OPTIMIZED) !== 0, ftrace: (ppFlags & KPROBE_FLAG_FTRACE) !== 0,
    });
  };
  const head0 = table.value;
  for (let i = 0; i < buckets; i++) {
    let node = mem.u64(head0 + BigInt(i) * 8n);
    let guard = 0;
    while (node !== 0n) {
      if (++guard > 100000) throw new Error(`kprobe_table[${i}] does not end`);
      const p = node - oHlist;
      const sym = kallsymsLookup(vmlinux, mods, mem.u64(p + oAddr));
      const pFlags = mem.u32(p + oFlags);
      if (aggr !== undefined && mem.u64(p + oPre) === aggr) {
        const head = p + oList;
        let l = mem.u64(head);
        let n = 0;
        while (l !== head && l !== 0n) {
          if (++n > 100000) throw new Error(`the aggregated kprobe at 0x${p.toString(16)} lists no end`);
          report(l - oList, sym, p, pFlags);
          l = mem.u64(l);
        }
      } else report(p, sym, null, pFlags);
      node = mem.u64(node + hnext);
    }
  }
  return out;
}

const px = (a: bigint): string => a.toString(16).padStart(16, '0');

/** one row as report_probe() prints it (root reading: addresses shown) */
export function kprobeListLine(k: GuestKprobe): string {
  const head = k.symbol !== null
    ? `${px(k.addr)}  ${k.type}  ${k.symbol}+0x${k.offset.toString(16)}  ${k.module ?? ' '} `
    : `${px(k.addr)}  ${k.type}  0x${k.addr.toString(16)} `; // %pS of an address kallsyms does not know
  return `${head}${k.gone ? '[GONE]' : ''}${k.disabled ? '[DISABLED]' : ''}${k.optimized ? '[OPTIMIZED]' : ''}${k.ftrace ? '[FTRACE]' : ''}`;
}

/** the guest's /sys/kernel/debug/kprobes/list */
export function renderKprobesList(list: readonly GuestKprobe[]): string {
  return list.map(k => `${kprobeListLine(k)}\n`).join('');
}
