/**
 * The guest's uprobes (kernel/events/uprobes.c `uprobes_tree`, an rbtree
 * ordered by inode then offset), walked in order: each struct uprobe's
 * inode (number, and the path of its first dentry alias up to the root of
 * its file system), offset in the file, reference-counter offset, and its
 * consumers (the uprobe_consumer chain: their handlers by symbol; a
 * consumer that is a trace_uprobe's names its event), and the processes it
 * is installed in as far as cheaply known: those whose mm has had uprobes
 * installed (MMF_HAS_UPROBES) and whose program (mm->exe_file) is the
 * probed file; a uprobe in a shared library lists no process (that would
 * take a walk of every mm's VMAs).
 */
import type { ElfImage } from '../../elf/types';
import type { GuestMemory, KernelSymbols } from './guestMemory';
import type { KernelLayout } from './kernelLayout';
import type { GuestModule } from './modules';
import type { DynEvent } from './dynEvents';
import { kallsymsLookup } from './kallsyms';
import { tasksWithUprobes } from './tasks';

export interface GuestUprobeConsumer {
  readonly addr: bigint;
  readonly handler: string | null;
  readonly retHandler: string | null;
  /** the uprobe event (group/event) owning this consumer, when it is one */
  readonly event: string | null;
}

export interface GuestUprobe {
  readonly addr: bigint;
  readonly inode: bigint;
  readonly ino: bigint;
  /** the file's path inside its file system (null: no dentry names it) */
  readonly path: string | null;
  readonly offset: bigint;
  readonly refCtrOffset: bigint;
  readonly consumers: readonly GuestUprobeConsumer[];
  /** processes running the probed file with uprobes installed: pid and comm */
  readonly processes: readonly { readonly pid: number; readonly comm: string }[];
}

export function readUprobes(mem: GuestMemory, L: KernelLayout, syms: KernelSymbols, vmlinux: ElfImage, mods: readonly GuestModule[], events: readonly DynEvent[]): GuestUprobe[] {
  const root = syms.addressOf('uprobes_tree');
  if (root === undefined) throw new Error('the vmlinux has no uprobes_tree (a kernel without CONFIG_UPROBES)');
  const oLeft = L.off('rb_node', 'rb_left'), oRight = L.off('rb_node', 'rb_right');
  const nodes: bigint[] = [];
  const walk = (n: bigint, depth: number): void => {
    if (n === 0n) return;
    if (depth > 128) throw new Error('uprobes_tree is deeper than an rbtree can be');
    walk(mem.u64(n + oLeft), depth + 1);
    nodes.push(n);
    walk(mem.u64(n + oRight), depth + 1);
  };
  walk(mem.u64(root + L.off('rb_root', 'rb_node')), 0);
  const fn = (a: bigint): string | null => {
    if (a === 0n) return null;
    const h = kallsymsLookup(vmlinux, mods, a);
    return h ? `${h.name}${h.offset ? `+0x${h.offset.toString(16)}` : ''}` : `0x${a.toString(16)}`;
  };
  const withUprobes = nodes.length ? tasksWithUprobes(mem, L, syms) : [];
  const byConsumer = new Map<bigint, string>();
  for (const e of events) if (e.kind === 'uprobe') byConsumer.set(e.consumer, `${e.group}/${e.event}`);
  return nodes.map(n => {
    const u = n - L.off('uprobe', 'rb_node');
    const inode = mem.u64(u + L.off('uprobe', 'inode'));
    const consumers: GuestUprobeConsumer[] = [];
    for (let c = mem.u64(u + L.off('uprobe', 'consumers')); c !== 0n && consumers.length < 10000; c = mem.u64(c + L.off('uprobe_consumer', 'next'))) {
      consumers.push({ addr: c, handler: fn(mem.u64(c + L.off('uprobe_consumer', 'handler'))), retHandler: fn(mem.u64(c + L.off('uprobe_consumer', 'ret_handler'))), event: byConsumer.get(c) ?? null });
    }
    return {
      addr: u, inode, ino: mem.u64(inode + L.off('inode', 'i_ino')), path: inodePath(mem, L, inode),
      offset: mem.u64(u + L.off('uprobe', 'offset')), refCtrOffset: mem.u64(u + L.off('uprobe', 'ref_ctr_offset')), consumers,
      processes: withUprobes.filter(p => p.exeInode === inode).map(p => ({ pid: p.task.pid, comm: p.task.comm })),
    };
  });
}

/** the path of an inode's first dentry alias, from its file system's root */
export function inodePath(mem: GuestMemory, L: KernelLayout, inode: bigint): string | null {
  const first = mem.u64(inode + L.off('inode', 'i_dentry'));
  if (first === 0n) return null;
  let d = first - L.off('dentry', 'd_u.d_alias');
  const parts: string[] = [];
  for (let i = 0; i < 256; i++) {
    const parent = mem.u64(d + L.off('dentry', 'd_parent'));
    if (parent === d || parent === 0n) return `/${parts.reverse().join('/')}`;
    parts.push(mem.cstring(mem.u64(d + L.off('dentry', 'd_name.name')), 256));
    d = parent;
  }
  return null;
}
