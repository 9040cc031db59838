/**
 * The early user-space probes interface (reference 004), on the uprobes
 * table: a struct kprobe whose `user` fields name (inode, offset).
 *
 *   register_kprobe_user     once per (inode, offset): a second
 *                            registration of the pair is -EEXIST. The
 *                            instruction is analysed from the file then
 *                            (bad offsets: -EINVAL). From then on, pages of
 *                            the file read in later (a new exec mapping the
 *                            text) get the probe inserted, as the text says
 *                            of pages read through the inode's readpage.
 *   insert_kprobe_userspace  into one page: needs the pair registered
 *                            (-ENOENT otherwise), user->addr inside
 *                            user->vma (-EINVAL), the page present
 *                            (-EFAULT: user->page, when given, must be
 *                            addr's page and mapped), and the vma must show
 *                            (inode, offset) at addr executable (-EINVAL);
 *                            a second insert there is -EEXIST.
 *   remove_kprobe_user       from that one page (-ENOENT when not inserted
 *                            there).
 *   unregister_kprobe_user   -EBUSY while an inserted copy remains (a
 *                            process that ended took its copies with it),
 *                            -ENOENT for a probe that is not registered.
 *
 * Every page holds the probe in the process's private copy (pages.ts):
 * removing it from one page leaves the others and the file as they are.
 */
import { Errno } from '../kernel/abi';
import { PAGE_SIZE } from '../memory/backing';
import { mustVAddr } from '../memory/address';
import type { Memory } from '../memory/memory';
import type { UprobesEngine } from './core';
import type { Insertion, Uprobe, UserKprobe } from './uprobe';

/** register_kprobe_user: 0 or -errno */
export function registerKprobeUser(e: UprobesEngine, p: UserKprobe): number {
  const u = e.lookupOrPrepare(p.user.inode, p.user.offset);
  if ('errno' in u) return u.errno;
  if (u.early) return -Errno.EEXIST;
  u.early = p;
  p.hits = 0;
  p.nmissed = 0;
  e.changed();
  return 0;
}

/** Why register_kprobe_user failed (the same checks, the reason text) */
export function registerKprobeUserReason(e: UprobesEngine, p: UserKprobe): string | undefined {
  const had = e.get(p.user.inode, p.user.offset);
  const u = had ?? e.lookupOrPrepare(p.user.inode, p.user.offset);
  if ('errno' in u) return u.reason;
  if (!had) e.dropIfUnused(u); // only asked: nothing stays in the table
  return u.early && u.early !== p ? 'the pair (inode, offset) is already registered' : undefined;
}

/** the registered probe and the page the caller names; an errno when the call is wrong */
function place(e: UprobesEngine, p: UserKprobe): { u: Uprobe; mm: Memory; addr: bigint } | number {
  const u = e.get(p.user.inode, p.user.offset);
  if (!u || u.early !== p) return -Errno.ENOENT;
  const { addr, vma, page } = p.user;
  if (addr === undefined || !vma) return -Errno.EINVAL;
  const v = mustVAddr(addr);
  if (!vma.contains(v)) return -Errno.EINVAL;
  // the vma as the caller looked it up: its pages may since be our private copies (the mapping is the same)
  const mm = e.pages.spaceOf(vma);
  if (!mm || !e.pages.sameMapping(mm, vma, v)) return -Errno.EFAULT;
  const pageOf = BigInt(Math.floor(v / PAGE_SIZE) * PAGE_SIZE);
  if (page !== undefined && page !== pageOf) return -Errno.EFAULT;
  return { u, mm, addr };
}

/** insert_kprobe_userspace: 0 or -errno */
export function insertKprobeUserspace(e: UprobesEngine, p: UserKprobe): number {
  const at = place(e, p);
  if (typeof at === 'number') return at;
  const proc = e.processOf(at.mm);
  if (!proc) return -Errno.EFAULT;
  if (!e.vaddrsOf(at.u, at.mm).includes(at.addr)) return -Errno.EINVAL;
  const r = e.install(at.u, { pid: proc.pid, comm: proc.task.comm, mm: proc.mm }, at.addr, 'early');
  if (r === 0) e.changed();
  return r;
}

/** remove_kprobe_user: 0 or -errno */
export function removeKprobeUser(e: UprobesEngine, p: UserKprobe): number {
  const at = place(e, p);
  if (typeof at === 'number') return at;
  const ins: Insertion | undefined = at.u.insertions.get(at.mm)?.get(at.addr);
  if (!ins?.early) return -Errno.ENOENT;
  e.uninstall(at.u, ins, 'early');
  e.changed();
  return 0;
}

/** unregister_kprobe_user: 0 or -errno */
export function unregisterKprobeUser(e: UprobesEngine, p: UserKprobe): number {
  const u = e.get(p.user.inode, p.user.offset);
  if (!u || u.early !== p) return -Errno.ENOENT;
  for (const byVaddr of u.insertions.values()) for (const ins of byVaddr.values()) if (ins.early) return -Errno.EBUSY;
  u.early = null;
  e.dropIfUnused(u);
  e.changed();
  return 0;
}
