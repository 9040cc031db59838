/**
 * The uprobes engine (Linux kernel/events/uprobes.c, and the early
 * user-space probes interface of reference 004 on the same table): probes
 * by (inode, offset) in executables of the machine's filesystem.
 *
 * Today's interface: uprobeRegister(inode, offset, consumer) adds a
 * consumer to the pair's uprobe and inserts the breakpoint in every
 * process that maps that file page executable now (register_for_each_vma)
 * and, through the address-space observer, at every later exec
 * (uprobe_mmap); fork copies inserted breakpoints with the memory
 * (dup_mmap); exec and exit drop the process's state (uprobe_clear_state).
 * uprobeUnregister removes the consumer and, with the last one, every
 * breakpoint. register with a ref_ctr_offset (uprobe_register_refctr) also
 * counts the breakpoints in the file's counter in each process (refCtr.ts);
 * one (inode, offset) has one counter: another is -EINVAL, as Linux's
 * ref_ctr_mismatch_warn says.
 *
 * The early interface (early.ts) registers a struct kprobe with its `user`
 * fields on the same pair; its breakpoints are inserted per page by the
 * caller (insert_kprobe_userspace) and, once registered, in pages read in
 * later (a new exec mapping the file).
 *
 * A breakpoint is written into the process's private copy of the file page
 * (pages.ts), never into the page cache: read(2) and a new exec see the
 * file's bytes. Instruction analysis, the out-of-line step and return
 * hijacking are the arch's (archHooks.ts); the trap side is traps.ts.
 */
import type { Kernel } from '../kernel/kernel';
import type { UserProcess } from '../kernel/user/process';
import type { UserMmObserver } from '../kernel/user/mmObserver';
import { parsedImage } from '../kernel/user/process';
import { Errno } from '../kernel/abi';
import type { Inode } from '../kernel/fs/vfs';
import { PERM_X, type Memory } from '../memory/memory';
import { PAGE_SIZE } from '../memory/backing';
import { hex } from '../memory/address';
import type { ElfImage } from '../elf/types';
import type { UprobesArchHooks } from './archHooks';
import { UprobePages } from './pages';
import { UprobeTraps } from './traps';
import { XolArea, addXolArea } from './xol';
import { RefCtrs } from './refCtr';
import { Insertion, Uprobe, UprobeConsumer, UprobeProcess, UprobeTask } from './uprobe';

const PT_LOAD = 1;
const PF_X = 1;

/** A registration's result: 0, or -errno with the reason. */
export interface UprobeResult { errno: number; reason?: string }

export class UprobesEngine implements UserMmObserver {
  /** every uprobe, by "ino:offset" */
  private readonly table = new Map<string, Uprobe>();
  /** the breakpoints of each address space, by address */
  private readonly byAddr = new Map<Memory, Map<bigint, Uprobe>>();
  private readonly xolAreas = new Map<Memory, XolArea>();
  private readonly utasks = new Map<number, UprobeTask>();
  readonly pages: UprobePages;
  readonly traps: UprobeTraps;
  /** the reference counters of uprobes registered with one, and their delayed increments */
  readonly refCtrs: RefCtrs;
  /** counters for the bench and the tests */
  readonly stats = { hits: 0, xolSteps: 0, simulated: 0, retHits: 0, removedByHandler: 0 };
  /** listeners told when the table or an insertion changes (the debugger's Uprobes view) */
  private readonly changeListeners: (() => void)[] = [];

  constructor(readonly kernel: Kernel, readonly hooks: UprobesArchHooks) {
    this.pages = new UprobePages(kernel.mapOrigins);
    this.traps = new UprobeTraps(this);
    this.refCtrs = new RefCtrs(kernel);
    kernel.addTrapHook((cpu, trap) => this.traps.onTrap(cpu, trap));
    kernel.mmObservers.push(this);
    kernel.signalDeferrers.push(pid => this.utasks.get(pid)?.state === 'sstep');
  }

  onChange(l: () => void): () => void {
    this.changeListeners.push(l);
    return () => { const i = this.changeListeners.indexOf(l); if (i >= 0) this.changeListeners.splice(i, 1); };
  }
  /** @internal */
  changed(): void { for (const l of this.changeListeners) l(); }

  // ------------------------------------------------------------ today's interface

  /** uprobe_register: 0 or -errno */
  uprobeRegister(inode: Inode, offset: bigint, uc: UprobeConsumer): number {
    return this.register(inode, offset, uc).errno;
  }

  /**
   * uprobe_register_refctr (refCtrOffset 0: uprobe_register), with the
   * reason of a failure
   */
  register(inode: Inode, offset: bigint, uc: UprobeConsumer, refCtrOffset = 0n): UprobeResult {
    const u = this.lookupOrPrepare(inode, offset, refCtrOffset);
    if ('errno' in u) return u;
    if (u.consumers.includes(uc)) return { errno: -Errno.EINVAL, reason: 'this consumer is already registered on the probe' };
    u.consumers.push(uc);
    // register_for_each_vma: every process mapping the page now
    for (const proc of this.liveProcesses()) {
      if (!this.wantsModern(u, proc)) continue;
      for (const vaddr of this.vaddrsOf(u, proc.mm)) this.install(u, proc, vaddr, 'modern');
    }
    this.changed();
    return { errno: 0 };
  }

  /** uprobe_unregister: 0, or -ENOENT when the consumer is not on that probe */
  uprobeUnregister(inode: Inode, offset: bigint, uc: UprobeConsumer): number {
    const u = this.table.get(key(inode, offset));
    const i = u ? u.consumers.indexOf(uc) : -1;
    if (!u || i < 0) return -Errno.ENOENT;
    u.consumers.splice(i, 1);
    // breakpoints of processes no consumer wants any more go
    for (const [mm, byVaddr] of [...u.insertions]) {
      const proc = this.processOf(mm);
      for (const ins of [...byVaddr.values()]) {
        if (!ins.modern) continue;
        if (proc && this.wantsModern(u, proc)) continue;
        this.uninstall(u, ins, 'modern');
      }
    }
    this.dropIfUnused(u);
    this.changed();
    return 0;
  }

  // ----------------------------------------------------------------- table

  /** Every uprobe, in registration order. */
  list(): readonly Uprobe[] { return [...this.table.values()]; }

  /** The uprobe of a pair, if registered. */
  get(inode: Inode, offset: bigint): Uprobe | undefined { return this.table.get(key(inode, offset)); }

  /** The uprobe inserted at vaddr in an address space. */
  at(mm: Memory, vaddr: bigint): Uprobe | undefined { return this.byAddr.get(mm)?.get(vaddr); }

  /**
   * @internal (early.ts) the uprobe of a pair, made (analysed) when new
   * (alloc_uprobe); an existing one with another reference counter is
   * -EINVAL (the early interface's probes have none: they take the pair's)
   */
  lookupOrPrepare(inode: Inode, offset: bigint, refCtrOffset?: bigint): Uprobe | UprobeResult {
    const k = key(inode, offset);
    const have = this.table.get(k);
    const path = this.kernel.fs.pathOf(inode);
    const bad = (reason: string): UprobeResult => ({ errno: -Errno.EINVAL, reason: `${path}:0x${offset.toString(16)}: ${reason}` });
    // __uprobe_register: the counter is a short, never across a page
    if (refCtrOffset !== undefined && (refCtrOffset < 0n || refCtrOffset % 2n !== 0n)) return bad(`ref_ctr_offset 0x${refCtrOffset.toString(16)} is not 2-byte aligned`);
    if (have) {
      if (refCtrOffset === undefined || have.refCtrOffset === refCtrOffset) return have;
      const msg = `ref_ctr_offset mismatch. inode: 0x${inode.ino.toString(16)} offset: 0x${offset.toString(16)} `
        + `ref_ctr_offset(old): 0x${have.refCtrOffset.toString(16)} ref_ctr_offset(new): 0x${refCtrOffset.toString(16)}`;
      this.kernel.warn(-1, msg);
      return { errno: -Errno.EINVAL, reason: msg };
    }
    if (!inode.isReg) return bad('not a regular file');
    if (offset < 0n || offset >= BigInt(inode.size)) return bad(`offset is outside the file (${inode.size} bytes)`);
    let image: ElfImage;
    try { image = parsedImage(inode, path); } catch (e) { return bad(`not an ELF executable (${e instanceof Error ? e.message : String(e)})`); }
    const seg = image.segments.find(s => s.type === PT_LOAD && (s.flags & PF_X) !== 0 && offset >= s.offset && offset < s.offset + s.filesz);
    if (!seg) return bad('the offset is in no executable segment (PT_LOAD with PF_X)');
    const vaddr = seg.vaddr + (offset - seg.offset);
    const align = BigInt(this.hooks.insnAlign);
    if (offset % align !== 0n) return bad(`not on an instruction boundary: ${this.kernel.arch.name} instructions are ${align}-byte aligned`);
    const boundary = this.checkBoundary(image, vaddr);
    if (boundary) return bad(boundary);
    const n = Math.min(this.hooks.maxInsnLength, inode.size - Number(offset));
    const bytes = inode.data().slice(Number(offset), Number(offset) + n);
    const au = this.hooks.analyzeInsn(this.kernel.arch, bytes, vaddr);
    if (typeof au === 'string') return bad(au);
    const u: Uprobe = {
      inode, offset, path, refCtrOffset: refCtrOffset ?? 0n, consumers: [], early: null, arch: au, insertions: new Map(), hits: 0, nmissed: 0, disabled: false,
    };
    this.table.set(k, u);
    return u;
  }

  /**
   * Where the arch has variable-length instructions: decode the symbol
   * holding vaddr from its start; a probe that falls inside an
   * instruction is refused (the text of what it splits). Without a symbol
   * (a stripped file) nothing can be checked.
   */
  private checkBoundary(image: ElfImage, vaddr: bigint): string | undefined {
    if (this.hooks.insnAlign >= this.kernel.arch.maxInsnLength) return undefined;
    const r = image.symbols.resolve(vaddr);
    if (!r || r.sym.type !== 'func') return undefined;
    const seg = image.segments.find(s => s.type === PT_LOAD && r.sym.value >= s.vaddr && r.sym.value < s.vaddr + s.filesz);
    if (!seg) return undefined;
    let at = r.sym.value;
    while (at < vaddr) {
      const off = Number(at - seg.vaddr);
      const insn = this.kernel.arch.decodeBytes(seg.data.subarray(off, off + this.kernel.arch.maxInsnLength), at);
      if (!insn) return undefined; // data in the function: no claim either way
      if (at + BigInt(insn.length) > vaddr) {
        return `not on an instruction boundary: ${hex(vaddr)} is inside ${insn.mnemonic} at ${r.sym.name}+0x${(at - r.sym.value).toString(16)} (${insn.length} bytes)`;
      }
      at += BigInt(insn.length);
    }
    return undefined;
  }

  /** @internal the pair has no owner left: forget it */
  dropIfUnused(u: Uprobe): void {
    if (u.consumers.length || u.early) return;
    for (const byVaddr of u.insertions.values()) if (byVaddr.size) return;
    this.table.delete(key(u.inode, u.offset));
    this.refCtrs.forget(u, undefined); // put_uprobe: increments still waiting go with it
  }

  // --------------------------------------------------------- insertions

  /** the addresses at which an address space shows the probed file byte, executable */
  vaddrsOf(u: Uprobe, mm: Memory): bigint[] {
    const out: bigint[] = [];
    const pc = u.inode.pages();
    const off = Number(u.offset);
    for (const r of mm.allRegions()) {
      const c = this.pages.copyAt(mm, BigInt(r.base));
      const file = c ? c.file : r.backing;
      const base = c ? c.fileOffset : r.offset;
      if (file !== pc || off < base || off >= base + r.size) continue;
      if ((r.perms & PERM_X) === 0) continue; // valid_vma: executable mappings only
      out.push(BigInt(r.base + (off - base)));
    }
    return out;
  }

  /** @internal install_breakpoint: the breakpoint at vaddr in proc's space, for `who` */
  install(u: Uprobe, proc: UprobeProcess, vaddr: bigint, who: 'early' | 'modern'): number {
    const mm = proc.mm;
    let byVaddr = u.insertions.get(mm);
    const have = byVaddr?.get(vaddr);
    if (have) {
      if (have[who]) return -Errno.EEXIST;
      have[who] = true;
      return 0;
    }
    const other = this.at(mm, vaddr);
    if (other) return -Errno.EEXIST; // another pair at the same address: impossible for one file byte
    try {
      this.pages.write(mm, vaddr, this.hooks.swbpInsn);
    } catch (e) {
      this.kernel.warn(-1, `uprobes: ${u.path}:0x${u.offset.toString(16)}: cannot insert in ${proc.comm}[${proc.pid}] at ${hex(vaddr)}: ${e instanceof Error ? e.message : String(e)}`);
      return -Errno.EFAULT;
    }
    const ins: Insertion = { mm, vaddr, pid: proc.pid, comm: proc.comm, early: who === 'early', modern: who === 'modern', hits: 0 };
    if (!byVaddr) u.insertions.set(mm, byVaddr = new Map());
    byVaddr.set(vaddr, ins);
    let m = this.byAddr.get(mm);
    if (!m) this.byAddr.set(mm, m = new Map());
    m.set(vaddr, u);
    // uprobe_write_opcode: the instruction replaced, the counter follows
    const owner = this.processOf(mm);
    if (owner) this.refCtrs.update(u, owner, 1);
    return 0;
  }

  /** @internal remove_breakpoint for `who`; the original bytes come back when nobody else wants it */
  uninstall(u: Uprobe, ins: Insertion, who: 'early' | 'modern' | 'all'): void {
    if (who === 'all') ins.early = ins.modern = false;
    else ins[who] = false;
    if (ins.early || ins.modern) return;
    const mm = ins.mm;
    u.insertions.get(mm)?.delete(ins.vaddr);
    if (u.insertions.get(mm)?.size === 0) u.insertions.delete(mm);
    this.byAddr.get(mm)?.delete(ins.vaddr);
    const owner = this.processOf(mm);
    if (owner === undefined) return; // the space is gone with its pages
    try {
      this.pages.write(mm, ins.vaddr, u.arch.insn.subarray(0, this.hooks.swbpInsn.length));
      this.pages.restore(mm, ins.vaddr);
    } catch { /* unmapped since: nothing to put back */ }
    this.refCtrs.update(u, owner, -1);
  }

  /** whether today's consumers want the breakpoint in proc (their filters) */
  wantsModern(u: Uprobe, proc: UprobeProcess): boolean {
    return u.consumers.some(uc => !uc.filter || uc.filter(uc, proc));
  }

  // ------------------------------------------------------------- processes

  /** @internal live user processes (not zombies), by pid */
  liveProcesses(): UserProcess[] {
    return [...this.kernel.processes.values()].filter(p => p.waitStatus === null).sort((a, b) => a.pid - b.pid);
  }

  /** @internal the live process of an address space */
  processOf(mm: Memory): UserProcess | undefined {
    for (const p of this.kernel.processes.values()) if (p.mm === mm && p.waitStatus === null) return p;
    return undefined;
  }

  /** @internal the uprobe_task of a pid, if it has one (never made here: the trap path's cheap test) */
  peekUtask(pid: number): UprobeTask | undefined {
    return this.utasks.get(pid);
  }

  /** @internal the uprobe_task of a pid (made on first use) */
  utask(pid: number): UprobeTask {
    let t = this.utasks.get(pid);
    if (!t) this.utasks.set(pid, t = { state: 'running', active: null, vaddr: 0n, slot: 0n, saved: {}, earlyHit: false, returns: [] });
    return t;
  }

  /** @internal the XOL area of a process (mapped on first use; null when no page is free) */
  xolArea(proc: UserProcess): XolArea | null {
    let a = this.xolAreas.get(proc.mm);
    if (a) return a;
    a = addXolArea(proc.mm, () => proc.placeMapping(0, PAGE_SIZE, false), this.hooks.swbpInsn, this.hooks.xolSlotBytes) ?? undefined;
    if (!a) return null;
    this.xolAreas.set(proc.mm, a);
    return a;
  }

  /** @internal the XOL area of an address space, if mapped */
  xolOf(mm: Memory): XolArea | undefined { return this.xolAreas.get(mm); }

  // ------------------------------------------- address-space observer (kernel)

  /** uprobe_mmap: a new image mapped (exec, first process): insert what is registered on its file pages */
  imageMapped(proc: UserProcess): void {
    let any = false;
    this.refCtrs.mapped(proc);
    for (const u of this.table.values()) {
      const modern = this.wantsModern(u, proc);
      if (!modern && !u.early) continue;
      for (const vaddr of this.vaddrsOf(u, proc.mm)) {
        if (modern) any = this.install(u, proc, vaddr, 'modern') === 0 || any;
        if (u.early) any = this.install(u, proc, vaddr, 'early') === 0 || any; // a page read in after register_kprobe_user
      }
    }
    if (any) this.changed();
  }

  /** uprobe_mmap of a file mapping made by mmap(2): reference-counter increments waiting for it are made (delayed_ref_ctr_inc) */
  fileMapped(proc: UserProcess): void { this.refCtrs.mapped(proc); }

  /** uprobe_dup_mmap / uprobe_copy_process: the child's copied pages carry the breakpoints; its return instances too */
  forked(parent: UserProcess, child: UserProcess): void {
    this.pages.forked(parent.mm, child.mm);
    const xol = this.xolAreas.get(parent.mm);
    if (xol) {
      const r = child.mm.regionAt(xol.region.base);
      if (r) this.xolAreas.set(child.mm, new XolArea(r, this.hooks.xolSlotBytes));
    }
    let any = false;
    for (const u of this.table.values()) {
      const byVaddr = u.insertions.get(parent.mm);
      if (!byVaddr?.size) continue;
      const cm = new Map<bigint, Insertion>();
      for (const ins of byVaddr.values()) {
        cm.set(ins.vaddr, { ...ins, mm: child.mm, pid: child.pid, comm: child.task.comm, hits: 0 });
        let m = this.byAddr.get(child.mm);
        if (!m) this.byAddr.set(child.mm, m = new Map());
        m.set(ins.vaddr, u);
      }
      u.insertions.set(child.mm, cm);
      any = true;
    }
    const pt = this.utasks.get(parent.pid);
    if (pt?.returns.length) this.utask(child.pid).returns.push(...pt.returns);
    if (any) this.changed();
  }

  /** uprobe_clear_state (exec replaced the space, or exit): its breakpoints, XOL area and copies are gone */
  mmReleased(proc: UserProcess, mm: Memory): void {
    let any = false;
    for (const u of [...this.table.values()]) {
      if (u.insertions.delete(mm)) any = true;
      this.dropIfUnused(u);
    }
    this.byAddr.delete(mm);
    this.refCtrs.forget(undefined, mm);
    this.xolAreas.delete(mm);
    this.pages.forget(mm);
    this.utasks.delete(proc.pid);
    if (any) this.changed();
  }
}

const key = (inode: Inode, offset: bigint): string => `${inode.ino}:${offset}`;
