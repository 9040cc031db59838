/**
 * The stack of a stopped CPU as the debugger shows it: frame 0 at the pc to
 * show (a probe address at a breakpoint stop), callers from the kernel's
 * frame-pointer walk with kretprobe trampolines fixed up and marked, each
 * frame's inlined calls first (gdb's inline frames); a user task's frames
 * from its program's CFI; the idle task's single frame. Per frame: the
 * registers the CFI recovers, its DWARF variables and its unit's globals.
 */
import type { ElfImage } from '../elf/types';
import type { Machine } from '../machine';
import type { KernelModule } from '../kernel/modules/modules';
import { emulatorCodeAt, walkFrames } from '../kernel/stack';
import { probesOf } from '../probes/attach';
import type { EmulatorCodeKind } from '../kernel/stack';
import { cpuWith, fixupStackTrace } from '../kprobes';
import { childrenOf, frameVariables, memReader, unwindStates } from './variables';
import type { Expandable, FrameState, FrameVariable, FrameVariables } from './variables';
import { inlineFrames } from '../elf/dwarf/scopes';
import type { InlineFrame } from '../elf/dwarf/scopes';
import { unitGlobals } from './globals';

export interface WalkedFrame {
  pc: bigint;
  /** where to look the source line up (a caller's pc is a return address: the byte before it) */
  lookupPc: bigint;
  /** the stack held the kretprobe trampoline here (the real return address is pc) */
  viaTrampoline?: bigint;
  /** the CPU is idle (no task): the one frame of Linux's idle task, not a walk of stale registers */
  idle?: true;
  /** the frame of the stack walk this is a function of (0 = the CPU's registers) */
  physical: number;
  /** which function of that frame: 0 = its innermost inlined call ... the real function last (gdb's inline frames) */
  inlineDepth: number;
  /** that function from DWARF (undefined without debug info) */
  fn?: InlineFrame;
  /** gdb's inline-entry rule for this frame's scope (frame 0 at a line / instruction breakpoint: false) */
  skipInlineEntry: boolean;
  /** the program the frame is in when not the kernel image (a user task's frames: its own ELF) */
  image?: ElfImage;
  /**
   * a frame below a C probe handler's call: the probed context the handler
   * was called from (its registers, the pc its walk starts from) and the
   * frame's index in that walk
   */
  context?: { regs: readonly bigint[]; pc: bigint; depth: number };
}

/** Code the emulator owns at an address (no file of the image holds it): what it is and its name. */
export interface EmulatorCode { kind: EmulatorCodeKind; name: string }

/** pc is in a module's code (core, or init while not freed) */
export function inModule(m: KernelModule, pc: bigint): boolean {
  return (pc >= m.core.lo && pc < m.core.hi) || (m.init !== null && !m.initFreed && pc >= m.init.lo && pc < m.init.hi);
}

export class MachineFrames {
  constructor(private readonly machine: Machine, private readonly userImageOf: (pid: number) => ElfImage | undefined) {}

  /**
   * Frames of a CPU: frame 0 = `pc`, callers from the frame-pointer walk.
   * showInlineEntry: a stop at a line or instruction breakpoint at an inlined
   * call's first instruction is in the inlined function (gdb: the
   * breakpoint's location is that function's); otherwise frame 0 shows the caller.
   */
  frames(cpuIndex: number, pc: bigint, showInlineEntry: boolean): WalkedFrame[] {
    const m = this.machine;
    const cpu = m.cpus[cpuIndex];
    const task = m.kernel.current(cpuIndex);
    if (!task) {
      const now = cpu.getPc();
      return [{ pc: now, lookupPc: now, idle: true, physical: 0, inlineDepth: 0, skipInlineEntry: true }];
    }
    const user = cpu.userMode ? this.userImageOf(task.pid) : undefined;
    if (user) return this.userFrames(cpuIndex, user, pc);
    const engine = probesOf(m).engine;
    // inside C probe handlers: through each handler call into the context it was called from
    const through = engine.onCpu.capi?.handlerStack(cpu, pc);
    const raw = through?.map(f => f.addr) ?? walkFrames(m.kernel, cpu, task, { pc, readCode: (a, n) => engine.arming.readTextWithoutProbes(m.kernel.mem, a, n) });
    const fixed = fixupStackTrace(engine, task, raw, cpuIndex);
    // a caller frame's pc is a return address: its source line is the call's,
    // so look up the byte before it (inside the call instruction on every arch),
    // except where a handler's probed context begins (its pc is where it stopped);
    // each frame shows the inlined calls holding its pc first, as gdb's backtrace
    const skip0 = !showInlineEntry;
    const out: WalkedFrame[] = [];
    fixed.forEach((f, i) => {
      const lookupPc = i === 0 || through?.[i].first ? f.addr : f.addr - 1n;
      const skipInlineEntry = i === 0 ? skip0 : false;
      const fns = inlineFrames(this.moduleDebugImageAt(lookupPc) ?? m.image, lookupPc, skipInlineEntry);
      const at = through?.[i];
      const context = at?.regs ? { regs: at.regs, pc: at.from, depth: at.depth } : undefined;
      const base = { pc: f.addr, lookupPc, viaTrampoline: f.replaced ? f.raw : undefined, physical: i, skipInlineEntry, context };
      if (!fns.length) out.push({ ...base, inlineDepth: 0 });
      else fns.forEach((fn, d) => out.push({ ...base, inlineDepth: d, fn, viaTrampoline: d === fns.length - 1 ? base.viaTrampoline : undefined }));
    });
    return out;
  }

  /**
   * A user task's frames (a uprobe stop, a step in user code): its
   * program's CFI (.debug_frame / .eh_frame) unwinds the user stack from the
   * pc to show; names and lines come from that program's ELF.
   */
  private userFrames(cpuIndex: number, image: ElfImage, pc: bigint): WalkedFrame[] {
    const m = this.machine;
    const cpu = m.cpus[cpuIndex];
    const states = unwindStates(image, m.arch, cpu, 64, pc);
    const out: WalkedFrame[] = [];
    for (const [i, st] of states.entries()) {
      if (i > 0 && (st.pc === 0n || !image.symbols.resolve(st.pc))) break;
      out.push({ pc: st.pc, lookupPc: i === 0 ? st.pc : st.pc - 1n, physical: i, inlineDepth: 0, skipInlineEntry: i === 0, image });
      if (st.cfa === undefined) break;
    }
    return out;
  }

  /** The registers of a shown frame as the CFI recovers them (undefined: the walk does not reach it there). */
  frameState(cpuIndex: number, shown: WalkedFrame, pc: bigint): FrameState | undefined {
    const m = this.machine;
    const cpu = m.cpus[cpuIndex];
    if (!cpu || shown.idle) return undefined;
    // below a handler's call: unwound from the probed context it was called from
    const c = shown.context;
    const st = c
      ? unwindStates(m.image, m.arch, cpuWith(cpu, m.arch.abi.pcReg, c.regs, c.pc), c.depth + 1, c.pc)[c.depth]
      : unwindStates(shown.image ?? m.image, m.arch, cpu, shown.physical + 1, pc)[shown.physical];
    return st && st.pc === shown.lookupPc ? { ...st, inlineDepth: shown.inlineDepth, skipInlineEntry: shown.skipInlineEntry } : undefined;
  }

  /**
   * The DWARF variables of a shown frame: parameters and locals in scope at
   * its pc, with the registers the CFI recovers for it (`st`). A user task's
   * frame reads its program's DWARF, a loaded module's code the module's.
   */
  frameVariables(cpuIndex: number, shown: WalkedFrame, st: FrameState): FrameVariables | undefined {
    const cpu = this.machine.cpus[cpuIndex];
    if (!cpu || shown.idle) return undefined;
    const mod = !shown.image ? this.moduleDebugImageAt(st.pc) : undefined;
    return frameVariables(shown.image ?? mod ?? this.machine.image, st, memReader(cpu));
  }

  /** The Globals of a shown frame: its unit's globals and statics (undefined: no debug info covers its pc). */
  frameGlobals(cpuIndex: number, shown: WalkedFrame): FrameVariable[] | undefined {
    const cpu = this.machine.cpus[cpuIndex];
    if (!cpu || shown.idle) return undefined;
    return unitGlobals(shown.image ?? this.machine.image, shown.lookupPc, memReader(cpu));
  }

  /** The members of an expandable value, read through a CPU's view of memory. */
  children(x: Expandable, cpuIndex: number): FrameVariable[] {
    return childrenOf(x, memReader(this.machine.cpus[cpuIndex]));
  }

  /** Code the emulator owns at a kernel address (thread-return page, kprobes slots...), undefined elsewhere. */
  emulatorCode(pc: bigint): EmulatorCode | undefined {
    return emulatorCodeAt(this.machine.kernel, pc);
  }

  /** The loaded module whose code holds pc. */
  moduleAt(pc: bigint): KernelModule | undefined {
    return this.machine.loadedModules()?.find(x => inModule(x, pc));
  }

  /** The debug image of the loaded module whose code holds pc (undefined: not module code, or no .debug_info). */
  moduleDebugImageAt(pc: bigint): ElfImage | undefined {
    return this.moduleAt(pc)?.debugImage?.();
  }
}
