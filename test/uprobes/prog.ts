/**
 * The uprobed test program on a machine, for the uprobes engine tests
 * (engine.test.ts, early.test.ts): its file, inode and executable segment,
 * symbol offsets, checks made inside handlers (kept and rethrown after the
 * run: the engine reports and swallows handler throws), and the run
 * against qemu's golden.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadElf } from '../../emulator/elf/elfFile';
import type { ElfImage, ElfSegment } from '../../emulator/elf/types';
import { Machine, MachineExit } from '../../emulator/machine';
import type { Inode } from '../../emulator/kernel/fs/vfs';
import type { UserProcess } from '../../emulator/kernel/user/process';
import type { UserMmObserver } from '../../emulator/kernel/user/mmObserver';
import type { PtRegs } from '../../emulator/kprobes/ptRegs';
import { PAGE_SIZE } from '../../emulator/memory/backing';
import type { Uprobe, UprobeConsumer, UserKprobe } from '../../emulator/uprobes';
import { repoPath } from '../util/paths';

export const ARCHES = ['x86_64', 'aarch64', 'riscv64'] as const;
export const BIN = (arch: string, opt: string): string => repoPath('test', 'uprobes', 'bin', `uprobed-${arch}-gcc-${opt}.elf`);
/** qemu cannot exec a foreign binary here: every arch is compared with the x86_64 golden of its -O level */
export const GOLDEN = (opt: string): string => readFileSync(repoPath('test', 'uprobes', 'golden', `uprobed-x86_64-gcc-${opt}.out`), 'utf8');

export class Prog {
  readonly m: Machine;
  readonly img: ElfImage;
  readonly inode: Inode;
  readonly seg: ElfSegment;
  /** the ELF as on disk */
  readonly file: Uint8Array;
  out = '';
  private readonly failures: unknown[] = [];

  constructor(readonly arch: string, readonly opt: string, opts: { rootfs?: string } = {}) {
    const path = BIN(arch, opt);
    this.file = new Uint8Array(readFileSync(path));
    this.img = loadElf(path);
    const io = { stdout: (b: Uint8Array) => { this.out += Buffer.from(b).toString(); }, stderr: (b: Uint8Array) => { this.out += `ERR:${Buffer.from(b).toString()}`; } };
    this.m = opts.rootfs
      ? Machine.forUserProgram(this.img, ['/prog'], io, { cpus: 2, rootfs: opts.rootfs, execPath: '/prog' })
      : Machine.forUserProgram(this.img, [path], io, { cpus: 2 });
    this.inode = this.init.exe!;
    const seg = this.img.segments.find(s => s.type === 1 && (s.flags & 1));
    assert.ok(seg, 'an executable PT_LOAD');
    this.seg = seg;
  }

  get init(): UserProcess { return this.m.kernel.processes.get(1)!; }
  get swbp(): Uint8Array { return this.m.uprobes.hooks.swbpInsn; }
  vaddr(name: string): bigint {
    const s = this.img.symbols.lookup(name);
    assert.ok(s, `symbol ${name}`);
    return s.value;
  }
  off(name: string): bigint { return this.vaddr(name) - this.seg.vaddr + this.seg.offset; }
  /** the file's bytes at a probe's offset, as on disk */
  orig(name: string, n = this.swbp.length): Uint8Array { const o = Number(this.off(name)); return this.file.slice(o, o + n); }
  pidOf(regs: PtRegs): number { return this.m.kernel.currentTask(regs.cpu.id)!.pid; }
  uprobe(name: string): Uprobe { const u = this.m.uprobes.get(this.inode, this.off(name)); assert.ok(u, `uprobe on ${name}`); return u; }
  /** the function holding a code address */
  fn(addr: bigint): string | undefined { return this.img.symbols.resolve(addr)?.sym.name; }

  register(name: string, uc: UprobeConsumer): void {
    const r = this.m.uprobes.register(this.inode, this.off(name), uc);
    assert.deepEqual(r, { errno: 0 }, `register ${name}`);
  }
  /** a check made inside a handler or an observer: kept and rethrown after the run */
  check(fn: () => void): void {
    try { fn(); } catch (e) { this.failures.push(e); }
  }
  observe(o: UserMmObserver): void { this.m.kernel.mmObservers.push(o); }
  run(): MachineExit {
    const e = this.m.run();
    if (this.failures.length) throw this.failures[0];
    return e;
  }
  /** run, and the program must print what qemu printed and exit 0; no handler failed */
  runGolden(): MachineExit {
    const e = this.run();
    assert.equal(this.out, GOLDEN(this.opt));
    assert.equal(e.reason, 'poweroff');
    assert.equal(e.code, 0);
    for (const u of this.m.uprobes.list()) assert.equal(u.nmissed, 0, `${u.path}:0x${u.offset.toString(16)} missed`);
    return e;
  }
  /** the uprobe of `name`'s offset, if registered */
  maybeUprobe(name: string): Uprobe | undefined { return this.m.uprobes.get(this.inode, this.off(name)); }
  /** the process running on the CPU of a handler's regs */
  proc(regs: PtRegs): UserProcess { return this.m.kernel.processes.get(this.pidOf(regs))!; }
  /** a struct kprobe for (inode, offset of `name`) (the early interface) */
  kp(name: string, h: Partial<UserKprobe> = {}): UserKprobe { return { ...h, user: { inode: this.inode, offset: this.off(name) } }; }
  /** user->addr, vma, page of `name` in proc's space now */
  at(p: UserKprobe, proc: UserProcess, name: string): UserKprobe {
    const addr = this.vaddr(name);
    const vma = proc.mm.regionAt(Number(addr));
    assert.ok(vma);
    p.user.addr = addr;
    p.user.vma = vma;
    p.user.page = addr & ~BigInt(PAGE_SIZE - 1);
    return p;
  }
  /** proc's bytes at `name` */
  mem(proc: UserProcess, name: string, n = this.swbp.length): Uint8Array { return proc.mm.readBytes(Number(this.vaddr(name)), n); }
  /** proc maps `name` from the file's page cache (not a private copy) */
  isCacheWindow(proc: UserProcess, name: string): boolean { return proc.mm.regionAt(Number(this.vaddr(name)))!.backing === this.inode.pages(); }
  warnings(re: RegExp): string[] { return this.m.printkRecords.map(r => r.text).filter(t => re.test(t)); }
}
