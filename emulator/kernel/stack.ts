/**
 * Stack walking and dump_stack(): a kernel-style "Call Trace:" of a CPU's
 * context, kretprobe trampoline entries replaced by the real return
 * addresses. What only the kprobes engine knows (its trampoline, the live
 * kretprobe instances, the original bytes under its breakpoints, the names
 * of its own code) comes through the hooks the kernel holds
 * (KernelApi.unwindHooks, types.ts), installed by whoever composes the
 * machine: Linux's unwinders likewise ask kprobes for the real return
 * address of a kretprobe trampoline entry (kretprobe_find_ret_addr).
 *
 * Each frame is unwound on its own: from DWARF call frame information
 * (.debug_frame / .eh_frame, emulator/unwind) when an FDE covers its pc, from
 * the arch's frame-pointer record (ArchOps.frameRecord) otherwise, so a
 * trace can pass from code with CFI into code without and back. At a
 * function's first instruction the frame is not set up yet: the return
 * address is where the ABI puts it (AbiInfo.returnAddress) and fp still is
 * the caller's; the same holds right after the record's one-instruction
 * "push fp" (x86 push rbp). Registers are carried by DWARF number
 * (ArchOps.dwarfRegs).
 */
import type { ArchOps, Cpu } from '../arch/types';
import type { KernelApi, Task } from './types';
import { PAGE_SIZE } from '../memory/backing';
import { mustVAddr, toVAddr } from '../memory/address';
import { cfiFor, CfiUnwinder, DwarfRegs } from '../unwind';
import type { ElfImage } from '../elf/types';

export interface WalkOptions {
  /** pc of frame 0 instead of the CPU's (a pre handler: the probe address, the instruction has not run) */
  pc?: bigint;
  /** code bytes as they are without breakpoints (UnwindHooks.readCode) */
  readCode?: (addr: bigint, len: number) => Uint8Array;
  /**
   * 'auto' (default): call frame information where an FDE covers the pc,
   * the frame-pointer record elsewhere; 'cfi': call frame information only
   * (the walk ends at the first pc without it); 'fp': frame pointers only.
   */
  unwind?: 'auto' | 'cfi' | 'fp';
}

/**
 * The frame an idle CPU shows. Linux's idle task (swapper/N, pid 0) spends
 * its time in do_idle() (kernel/sched/idle.c, the generic idle loop since
 * 4.x; cpu_idle() was the pre-3.10 per-arch name, gone from today's
 * kernels), so an idle CPU here shows one `do_idle` frame: the emulator runs
 * no code on it (its registers still hold the last task's values).
 */
export const IDLE_FRAME = 'do_idle';

/**
 * The kernel-thread return page (emulator/kernel/kernel.ts 'thread-return':
 * the first page of the exec area, mapped with no permission) is every
 * kernel thread's first return address, as Linux's ret_from_fork is the
 * bottom frame of every kthread; named so.
 */
export const THREAD_RETURN_FRAME = 'ret_from_fork';

/** Which code the emulator owns an address belongs to: the thread-return page, the kprobes engine's code, or neither. */
export type EmulatorCodeKind = 'thread-return' | 'kprobes';

/**
 * %pS-style name of code the emulator owns, which the image's symbol table
 * does not know: `ret_from_fork+0x0` for the kernel-thread return page,
 * the kprobes engine's names (kretprobe_trampoline+0x0,
 * kprobe_insn_slot[do_fork]+0x0, ...: UnwindHooks.symbolize);
 * undefined elsewhere.
 */
export function emulatorCodeAt(kernel: KernelApi, addr: bigint): { name: string; kind: EmulatorCodeKind } | undefined {
  const page = kernel.layout.execArea;
  if (addr >= page && addr < page + BigInt(PAGE_SIZE)) return { name: `${THREAD_RETURN_FRAME}+0x${(addr - page).toString(16)}`, kind: 'thread-return' };
  const name = kernel.unwindHooks?.symbolize(addr);
  return name !== undefined ? { name, kind: 'kprobes' } : undefined;
}

/** Most frames printed. */
export const MAX_STACK_FRAMES = 32;

function readPtr(cpu: Cpu, addr: bigint, size: 4 | 8): bigint | undefined {
  const v = toVAddr(addr);
  if (v === null || !cpu.mem.isMapped(v, size)) return undefined;
  return size === 8 ? cpu.mem.read64(v) : BigInt(cpu.mem.read32(v) >>> 0);
}

function isText(kernel: KernelApi, addr: bigint): boolean {
  return addr !== 0n && kernel.image.symbols.resolve(addr) !== undefined;
}

/** One frame of the walk: its pc and what is known of its registers (DWARF numbers). */
interface Frame {
  pc: bigint;
  regs: DwarfRegs;
  /** frame 0: the pc is where the context stopped, not a return address */
  first: boolean;
  /** the frame pointer may be followed (it grew from the previous record's) */
  fpUsable: boolean;
}

interface WalkCtx {
  kernel: KernelApi;
  cpu: Cpu;
  arch: ArchOps;
  ptr: 4 | 8;
  /** DWARF numbers of sp, fp and the pc (-1 when the arch has no such mapping) */
  spD: number;
  fpD: number;
  pcD: number;
  inStack: (a: bigint) => boolean;
  read: (a: bigint) => bigint | undefined;
  readCode: (addr: bigint, len: number) => Uint8Array;
}

/**
 * Return addresses of the probed context, innermost first, starting with the
 * pc itself (frame 0).
 */
export function walkFrames(kernel: KernelApi, cpu: Cpu, task: Task | undefined, opts: WalkOptions = {}): bigint[] {
  const arch = kernel.arch;
  const abi = arch.abi;
  const ptr = abi.pointerSize;
  const pc = opts.pc ?? cpu.getPc();
  const out: bigint[] = [pc];
  const mode = opts.unwind ?? 'auto';
  const dwarf = arch.dwarfRegs;
  // without a DWARF mapping, the frame-pointer walk still carries sp/fp/pc under these keys
  const key = (idx: number): number => (dwarf ? dwarf.indexOf(idx) : idx);
  const ctx: WalkCtx = {
    kernel, cpu, arch, ptr,
    spD: key(abi.spReg),
    fpD: abi.fpReg >= 0 ? key(abi.fpReg) : -1,
    pcD: key(abi.pcReg),
    inStack: (a) => !task || (a >= task.stackBase && a + BigInt(ptr) <= task.stackTop),
    read: (a) => readPtr(cpu, a, ptr),
    readCode: opts.readCode ?? ((a, n) => cpu.mem.readBytes(mustVAddr(a), n)),
  };
  const cfi = mode !== 'fp' && dwarf ? cfiFor(kernel.image) : null;
  const regs: DwarfRegs = new Map();
  if (dwarf) {
    dwarf.forEach((idx, d) => { if (idx >= 0) regs.set(d, BigInt.asUintN(ptr * 8, cpu.getReg(idx))); });
  } else {
    regs.set(ctx.spD, cpu.getReg(abi.spReg));
    if (ctx.fpD >= 0) regs.set(ctx.fpD, cpu.getReg(abi.fpReg));
  }
  if (ctx.pcD >= 0) regs.set(ctx.pcD, pc);
  let frame: Frame = { pc, regs, first: true, fpUsable: true };
  while (out.length < MAX_STACK_FRAMES) {
    let next: Frame | null | undefined;
    if (cfi) next = cfiStep(ctx, cfi, frame);
    if (next === undefined && mode !== 'cfi') next = fpStep(ctx, frame);
    if (!next) break;
    out.push(next.pc);
    frame = next;
  }
  return out;
}

/** A frame from call frame information; undefined when no FDE covers the pc or the step fails, null at the outermost frame. */
function cfiStep(ctx: WalkCtx, cfi: CfiUnwinder, f: Frame): Frame | null | undefined {
  const lookup = f.first ? f.pc : f.pc - 1n;
  const s = cfi.step(lookup, f.regs, ctx.read, ctx.spD);
  if (s.kind !== 'ok') return undefined;
  if (s.ra === undefined || s.ra === 0n) return null;
  const sp = f.regs.get(ctx.spD);
  // the caller's frame is above this one on the stack
  if (!ctx.inStack(s.cfa - BigInt(ctx.ptr)) || (sp !== undefined && s.cfa < sp)) return undefined;
  const regs = s.regs;
  if (ctx.pcD >= 0) regs.set(ctx.pcD, s.ra);
  return { pc: s.ra, regs, first: false, fpUsable: true };
}

/** A frame from the frame-pointer record; null when the chain ends. */
function fpStep(ctx: WalkCtx, f: Frame): Frame | null {
  const rec = ctx.arch.frameRecord;
  if (!rec || ctx.fpD < 0) return null;
  const { ptr } = ctx;
  const abi = ctx.arch.abi;
  const sp = f.regs.get(ctx.spD);
  const fp = f.regs.get(ctx.fpD);
  const frame = (ra: bigint, callerSp: bigint | undefined, callerFp: bigint | undefined, fpUsable: boolean): Frame => {
    const regs: DwarfRegs = new Map();
    if (callerSp !== undefined) regs.set(ctx.spD, callerSp);
    if (callerFp !== undefined) regs.set(ctx.fpD, callerFp);
    if (ctx.pcD >= 0) regs.set(ctx.pcD, ra);
    return { pc: ra, regs, first: false, fpUsable };
  };
  // frame 0 before its record is set up
  const at = f.first ? ctx.kernel.image.symbols.resolve(f.pc) : undefined;
  if (at && sp !== undefined) {
    const loc = abi.returnAddress;
    if (at.offset === 0n) {
      const ra = loc.kind === 'reg' ? ctx.cpu.getReg(loc.reg) : ctx.read(sp + BigInt(loc.offset));
      if (ra !== undefined && ra !== 0n) return frame(ra, loc.kind === 'stack' ? sp + BigInt(loc.offset + ptr) : sp, fp, true);
    } else if (rec.pushFp && loc.kind === 'stack' && at.offset === BigInt(rec.pushFp.bytes.length)) {
      let code: Uint8Array | undefined;
      try { code = ctx.readCode(at.sym.value, rec.pushFp.bytes.length); } catch { code = undefined; }
      if (code && code.every((b, i) => b === rec.pushFp!.bytes[i])) {
        const raAt = sp + BigInt(rec.pushFp.spAdjust + loc.offset);
        const ra = ctx.read(raAt);
        if (ra !== undefined && ra !== 0n) return frame(ra, raAt + BigInt(ptr), fp, true);
      }
    }
  }
  if (fp === undefined || fp === 0n || !f.fpUsable) return null;
  const raAddr = fp + BigInt(rec.returnAddressOffset);
  const fpAddr = fp + BigInt(rec.savedFpOffset);
  if (!ctx.inStack(raAddr) || !ctx.inStack(fpAddr)) return null;
  const ra = ctx.read(raAddr);
  const next = ctx.read(fpAddr);
  if (ra === undefined || next === undefined || ra === 0n) return null;
  return frame(ra, rec.callerSpOffset !== undefined ? fp + BigInt(rec.callerSpOffset) : undefined, next, next > fp);
}

/**
 * The lines dump_stack() prints for the probed context:
 *   CPU: 1 PID: 3 Comm: kworker/1:1 Not tainted
 *   Call Trace:
 *    do_fork+0x0/0x9b
 *    worker_fn+0x8c/0x3d0
 * Kretprobe trampoline entries show the real return address; the thread
 * entry / return page ends the trace as ` ret_from_fork+0x0/0x1000`, other
 * addresses outside any symbol end it unnamed. `pc`: the
 * pc of frame 0 when not the CPU's (pre handlers: the probe address);
 * `returnTo`: the real return address in a kretprobe return handler.
 */
export function dumpStackLines(kernel: KernelApi, cpu: Cpu, opts: { returnTo?: bigint; pc?: bigint } = {}): string[] {
  const task = kernel.current(cpu.id);
  const lines = [
    `CPU: ${cpu.id} PID: ${task ? task.pid : 0} Comm: ${task ? task.comm : `swapper/${cpu.id}`} Not tainted`,
    'Call Trace:',
  ];
  const hooks = kernel.unwindHooks;
  const raw = walkFrames(kernel, cpu, task, { pc: opts.pc, readCode: hooks?.readCode });
  const trampoline = hooks?.kretprobeTrampoline();
  // in a kretprobe return handler the pc is the trampoline and the instance is no longer listed
  const first = trampoline !== undefined && raw[0] === trampoline && opts.returnTo !== undefined ? [{ addr: opts.returnTo, raw: raw[0], replaced: true }] : [];
  const rest = raw.slice(first.length);
  const fixed = [...first, ...(hooks ? hooks.fixupStackTrace(task, rest, cpu.id) : rest.map(a => ({ addr: a, raw: a, replaced: false })))];
  for (const f of fixed) {
    const a = f.addr;
    if (!isText(kernel, a)) {
      if (trampoline !== undefined && a === trampoline) { lines.push(' kretprobe_trampoline+0x0/0x1'); continue; }
      // the bottom of a kernel thread, as Linux's traces end in ret_from_fork
      if (emulatorCodeAt(kernel, a)?.kind === 'thread-return') lines.push(` ${THREAD_RETURN_FRAME}+0x${(a - kernel.layout.execArea).toString(16)}/0x${PAGE_SIZE.toString(16)}`);
      break;
    }
    lines.push(` ${kernel.image.symbols.format(a, true)}`);
  }
  return lines;
}

/**
 * dump_stack() from a uprobe handler (a user task): the header and the
 * user pc symbolized by the process's own program (its frames are not
 * walked: user code has no kernel CFI here).
 */
export function userStackLines(kernel: KernelApi, cpu: Cpu, pc: bigint): string[] {
  const task = kernel.current(cpu.id);
  const procs = (kernel as { processes?: ReadonlyMap<number, { image: ElfImage }> }).processes;
  const image = task ? procs?.get(task.pid)?.image : undefined;
  return [
    `CPU: ${cpu.id} PID: ${task ? task.pid : 0} Comm: ${task ? task.comm : `swapper/${cpu.id}`} Not tainted`,
    'Call Trace (user):',
    ` ${image && image.symbols.resolve(pc) ? image.symbols.format(pc, true) : `0x${pc.toString(16)}`}`,
  ];
}
