/**
 * What the client inspects while the machine is stopped: stack traces
 * (frame-pointer walk + DWARF lines, kretprobe trampoline frames fixed up
 * and marked), scopes (Probe at a breakpoint stop, Registers) and their
 * variables, setVariable on registers. Also remembers, per CPU, what the
 * last stop said about it (the pc to show, the probe it stopped at) while
 * the CPU has not moved since.
 *
 *   frameId / variablesReference = (cpu + 1) * FRAME_STRIDE + frame index
 *   Probe scope                  = PROBE_SCOPE_BASE + cpu
 *   Arguments / Locals / Globals = their base + frameId
 */
import * as path from 'node:path';
import { Scope, Source, StackFrame } from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { formatAddress, IDLE_FRAME, THREAD_RETURN_FRAME } from '../emulator/debug/index';
import type {
  BreakpointHit, DebugTarget, ElfImage, SourceMap, EmulatorCodeKind, Expandable, FrameState, FrameVariable, FrameVariables, ProbeStop, WalkedFrame,
} from '../emulator/debug/index';
import { PROBE_SCOPE_NAME, probeScopeVariables } from './probeScope';
import { registerVariables } from './registers';

export const FRAME_STRIDE = 1000;
export const PROBE_SCOPE_BASE = 1_000_000;
/** Arguments / Locals scopes of frame 0 (DWARF): base + frameId */
export const ARGS_SCOPE_BASE = 2_000_000;
export const LOCALS_SCOPE_BASE = 3_000_000;
/** Globals scope of a frame (its compilation unit's globals and statics): base + frameId */
export const GLOBALS_SCOPE_BASE = 4_000_000;
/** struct / union / array values (their members on demand): handed out per stop from here */
export const VALUE_REF_BASE = 10_000_000;

/**
 * Frames in code the emulator owns have no file: they get one of these
 * sources (a name, an origin and a sourceReference whose text says what the
 * code is: sourceText), so the Call Stack never shows "Unknown Source" for
 * them. Frames in the image without line information keep no source.
 */
export type EmulatorSourceKind = EmulatorCodeKind | 'idle';
export const EMULATOR_SOURCES: Readonly<Record<EmulatorSourceKind, { ref: number; name: string; origin: string }>> = {
  'thread-return': { ref: 1, name: 'kernel thread entry', origin: 'emulated kernel: the kernel-thread return page' },
  kprobes: { ref: 2, name: 'kprobes engine', origin: 'kprobes engine code: instruction slots, trampolines, detour buffers' },
  idle: { ref: 3, name: 'idle task', origin: 'emulated kernel: idle CPU (swapper)' },
};

/** The session's debugger -> client conversions (line/column bases, paths). */
export interface ClientConversions {
  path(p: string): string;
  line(n: number): number;
  column(n: number): number;
}

export type { WalkedFrame };

export class StopInspector {
  /** per CPU: the pc to show for frame 0 while the CPU has not moved since a breakpoint stop */
  private readonly reportPc = new Map<number, { cpuPc: bigint; pc: bigint }>();
  /** per CPU: the breakpoint probe it stopped at, valid while the CPU has not moved */
  private readonly probeStops = new Map<number, { cpuPc: bigint; stop: ProbeStop }>();

  /** reasons already logged (each once per session) */
  private readonly logged = new Set<string>();

  constructor(private readonly target: DebugTarget,
    private readonly sources: SourceMap, private readonly client: ClientConversions,
    private readonly log: (line: string) => void = () => {}) {}

  /** A stop of a CPU: the pc the stop reports (a probe address) and the breakpoint hit behind it. */
  recordStop(cpuIndex: number, reportPc: bigint | undefined, hit: BreakpointHit | undefined): void {
    const cpu = this.target.cpu(cpuIndex);
    if (!cpu) return;
    if (reportPc !== undefined) this.reportPc.set(cpuIndex, { cpuPc: cpu.getPc(), pc: reportPc });
    const stop = hit ? this.target.probeStop(hit) : undefined;
    if (stop) this.probeStops.set(cpuIndex, { cpuPc: cpu.getPc(), stop });
  }

  /** The machine runs or steps: what the stops said is stale. */
  forget(): void {
    this.reportPc.clear();
    this.probeStops.clear();
    this.valueRefs.clear();
    this.nextValueRef = VALUE_REF_BASE;
  }

  /** expandable values handed out since the last stop: reference -> what and on which CPU */
  private readonly valueRefs = new Map<number, { x: Expandable; cpuIndex: number; frameId: number; evalName?: string; viaPointer: boolean }>();
  private nextValueRef = VALUE_REF_BASE;

  /** A reference for an expandable value of a frame; its children's evaluateName start from evalName. */
  expandRef(cpuIndex: number, frameId: number, x: Expandable, evalName?: string, viaPointer = false): number {
    const ref = this.nextValueRef++;
    this.valueRefs.set(ref, { x, cpuIndex, frameId, evalName, viaPointer });
    return ref;
  }

  /**
   * A DWARF variable as DAP shows it: gdb's text, expandable, and an
   * evaluateName (`file->name`, `table[2]`, `origin.x`) that evaluate,
   * watches and setVariable use in its frame.
   */
  private dapVariable(v: FrameVariable, cpuIndex: number, frameId: number, parent?: { evalName?: string; viaPointer: boolean }): DebugProtocol.Variable {
    let evalName: string | undefined = v.name;
    if (parent) {
      const p = parent.evalName;
      const base = p === undefined ? undefined : /^[\w.\[\]>-]+$/.test(p) && !p.startsWith('*') ? p : `(${p})`;
      evalName = base === undefined || v.name === '<anonymous>' ? undefined : v.name.startsWith('[') ? `${base}${v.name}` : `${base}${parent.viaPointer ? '->' : '.'}${v.name}`;
    }
    const ref = v.expand ? this.expandRef(cpuIndex, frameId, v.expand, evalName, / \*$/.test(v.type)) : 0;
    const out: DebugProtocol.Variable = { name: v.name, value: v.value, type: v.type, variablesReference: ref };
    if (evalName !== undefined) out.evaluateName = evalName;
    return out;
  }

  /**
   * The frame a variables reference belongs to (a scope of the frame, a
   * value expanded from one): where its variables' C names mean what they
   * show. Undefined for an unknown reference or one from an earlier stop.
   */
  frameOfRef(ref: number): { cpuIndex: number; frameId: number } | undefined {
    if (ref >= VALUE_REF_BASE) {
      const e = this.valueRefs.get(ref);
      return e ? { cpuIndex: e.cpuIndex, frameId: e.frameId } : undefined;
    }
    const frameId = ref >= ARGS_SCOPE_BASE ? ref % 1_000_000 : ref >= PROBE_SCOPE_BASE ? (ref - PROBE_SCOPE_BASE + 1) * FRAME_STRIDE : ref;
    const cpuIndex = Math.floor(frameId / FRAME_STRIDE) - 1;
    return this.target.cpu(cpuIndex) && this.frames(cpuIndex)[frameId % FRAME_STRIDE] ? { cpuIndex, frameId } : undefined;
  }

  /** The Globals scope of a frame: its unit's globals and statics (undefined: no debug info covers its pc). */
  frameGlobals(cpuIndex: number, frameIdx: number): FrameVariable[] | undefined {
    const shown = this.target.cpu(cpuIndex) ? this.frames(cpuIndex)[frameIdx] : undefined;
    return shown ? this.target.frameGlobals(cpuIndex, shown) : undefined;
  }

  /** What setVariable on a DWARF variable assigns: the frame and the C lvalue (undefined: not a DWARF variable). */
  dwarfTarget(ref: number, name: string): { cpuIndex: number; frameId: number; lvalue: string } | undefined {
    const list = ref >= ARGS_SCOPE_BASE ? this.variables(ref) : undefined;
    const v = list?.find(x => x.name === name);
    if (!v) return undefined;
    if (v.evaluateName === undefined) throw new Error(`'${name}' cannot be assigned: it has no C name`);
    const e = ref >= VALUE_REF_BASE ? this.valueRefs.get(ref) : undefined;
    const frameId = e ? e.frameId : ref % 1_000_000;
    const cpuIndex = e ? e.cpuIndex : Math.floor(frameId / FRAME_STRIDE) - 1;
    return { cpuIndex, frameId, lvalue: v.evaluateName };
  }

  /** The registers of a CPU's frame as the CFI recovers them (the frame the stack trace shows), or undefined. */
  frameState(cpuIndex: number, frameIdx: number): FrameState | undefined {
    if (!this.target.cpu(cpuIndex)) return undefined;
    const shown = this.frames(cpuIndex)[frameIdx];
    return shown ? this.target.frameState(cpuIndex, shown, this.pcOf(cpuIndex)) : undefined;
  }

  /** The program a frame is in when not the kernel image (a user task's frame). */
  frameImage(cpuIndex: number, frameIdx: number): ElfImage | undefined {
    return this.frames(cpuIndex)[frameIdx]?.image;
  }

  /** The pc to show for a CPU (the probe address at a breakpoint stop, else the CPU's pc). */
  pcOf(cpuIndex: number): bigint {
    const cpu = this.target.cpu(cpuIndex) as NonNullable<ReturnType<DebugTarget['cpu']>>;
    const rep = this.reportPc.get(cpuIndex);
    return rep && rep.cpuPc === cpu.getPc() ? rep.pc : cpu.getPc();
  }

  /** The probe stop of a CPU while it has not moved since. */
  probeStopFor(cpuIndex: number): ProbeStop | undefined {
    const cpu = this.target.cpu(cpuIndex);
    const p = this.probeStops.get(cpuIndex);
    return cpu && p && p.cpuPc === cpu.getPc() ? p.stop : undefined;
  }

  /** Frames of a CPU: frame 0 = the pc (the probe address at a breakpoint stop), callers from the target's stack walk. */
  frames(cpuIndex: number): WalkedFrame[] {
    return this.target.frames(cpuIndex, this.pcOf(cpuIndex), this.stopShowsInlineEntry(cpuIndex));
  }

  /**
   * A stop at a line or instruction breakpoint at an inlined call's first
   * instruction is in the inlined function (gdb: the breakpoint's location
   * is that function's); a function breakpoint, a step or a pause there
   * shows the caller (gdb's skip_inline_frames).
   */
  private stopShowsInlineEntry(cpuIndex: number): boolean {
    const stop = this.probeStopFor(cpuIndex);
    if (!stop || stop.mode !== 'kprobe') return false;
    const k = this.target.probes.get(stop.breakpointId)?.targetKind;
    return k === 'line' || k === 'address';
  }

  stackTrace(args: DebugProtocol.StackTraceArguments): NonNullable<DebugProtocol.StackTraceResponse['body']> {
    const t = this.target;
    const cpuIndex = args.threadId - 1;
    if (!t.cpu(cpuIndex)) throw new Error(`no CPU for thread ${args.threadId}`);
    const walked = this.frames(cpuIndex);
    const start = args.startFrame ?? 0;
    const levels = args.levels && args.levels > 0 ? args.levels : walked.length;
    const frames = walked.slice(start, start + levels).map((f, i) => {
      const idx = start + i;
      if (f.idle) {
        const sf = new StackFrame((cpuIndex + 1) * FRAME_STRIDE + idx, IDLE_FRAME, this.emulatorSource('idle'), this.client.line(1), 0);
        sf.presentationHint = 'subtle';
        return sf;
      }
      const img = f.image ?? t.image;
      const own = t.symbolAt(f.pc, img) === undefined && !f.image ? t.emulatorCode(f.pc) : undefined;
      // an inline frame's caller is at the inlined call (its DW_AT_call_file / call_line)
      const line = own ? undefined : f.inlineDepth > 0 && f.fn?.call
        ? { file: f.fn.call.file ?? img.lines?.lineForAddress(f.lookupPc)?.file ?? '', line: f.fn.call.line, column: f.fn.call.column }
        : img.lines?.lineForAddress(f.lookupPc);
      // a frame with a source line is named by its function, as a C debugger's
      // call stack (the exact address is its instructionPointerReference);
      // code without one keeps sym+0xoff, the only hint where in it the pc is;
      // a return address a kretprobe replaced: show the real one, say so
      const name = (line ? this.functionName(f, img) : t.symbolAt(f.pc, img) ?? own?.name ?? formatAddress(f.pc))
        + (f.viaTrampoline !== undefined ? ` [kretprobe: stack holds trampoline ${formatAddress(f.viaTrampoline)}]` : '');
      if (own) {
        const sf = new StackFrame((cpuIndex + 1) * FRAME_STRIDE + idx, name, this.emulatorSource(own.kind), this.client.line(1), 0);
        sf.instructionPointerReference = formatAddress(f.pc);
        sf.presentationHint = f.viaTrampoline !== undefined ? 'label' : 'subtle';
        return sf;
      }
      const local = line?.file ? this.sources.toLocal(line.file) : undefined;
      const sf = new StackFrame((cpuIndex + 1) * FRAME_STRIDE + idx, name,
        local ? new Source(path.basename(local), this.client.path(local)) : undefined,
        line ? this.client.line(line.line) : 0, line?.column ? this.client.column(line.column) : 0);
      sf.instructionPointerReference = formatAddress(f.pc);
      if (!local) sf.presentationHint = 'subtle';
      if (f.viaTrampoline !== undefined) sf.presentationHint = 'label';
      return sf;
    });
    return { stackFrames: frames, totalFrames: walked.length };
  }

  /**
   * A frame's function: its DWARF name (a module's module_init function is
   * its C name, not the init_module alias), else its symbol without the
   * offset; ` [module]` after code of a loaded module.
   */
  private functionName(f: WalkedFrame, img: ElfImage): string {
    const mod = f.image ? undefined : this.target.moduleAt(f.pc);
    const dwarf = f.fn && f.fn.function !== '?' ? f.fn.function : undefined;
    const fn = dwarf ?? img.symbols.resolve(f.pc)?.sym.name ?? formatAddress(f.pc);
    return mod ? `${fn} [${mod.name}]` : fn;
  }

  private emulatorSource(kind: EmulatorSourceKind): Source {
    const d = EMULATOR_SOURCES[kind];
    const src = new Source(d.name, undefined, d.ref, d.origin) as DebugProtocol.Source;
    src.presentationHint = 'deemphasize';
    return src as Source;
  }

  /** The text of an emulator source (DAP `source` request), undefined for an unknown reference. */
  sourceText(ref: number): string | undefined {
    const page = this.target.threadReturnPage;
    switch (ref) {
      case EMULATOR_SOURCES['thread-return'].ref:
        return [
          `${THREAD_RETURN_FRAME}: the kernel-thread return page of the emulated kernel, ${formatAddress(page)} (one page, mapped with no permission: no code).`,
          'Every kernel thread starts with its return address here, as Linux kthreads start from ret_from_fork;',
          'returning from the thread function fetches here and the kernel ends the thread (exit code 0).',
        ].join('\n') + '\n';
      case EMULATOR_SOURCES.kprobes.ref:
        return [
          'Code of the kprobes engine in the exec area: kretprobe_trampoline, kprobe_insn_slot[...] (the probed',
          'instruction copied out of line), optprobe_detour[...] (optimized probes), ftrace_trampoline,',
          'kprobe_nested_call_return. The frame name says which; the Disassembly view shows its instructions.',
        ].join('\n') + '\n';
      case EMULATOR_SOURCES.idle.ref:
        return [
          `${IDLE_FRAME}: the CPU is idle, running Linux's idle task (swapper/N, pid 0; kernel/sched/idle.c do_idle).`,
          'No task is runnable on it: the emulator runs no code there until a task is woken on this CPU,',
          "so there is no stack to walk (the registers still hold the last task's values).",
        ].join('\n') + '\n';
      default:
        return undefined;
    }
  }

  /**
   * The DWARF variables of one of a CPU's frames (the Variables view's
   * Arguments and Locals): parameters and locals in scope at its pc, with the
   * registers the call frame information recovers for that frame (callers:
   * callee-saved registers restored, the others unknown, so their variables may
   * be `<optimized out>`). Undefined when the CPU does not exist or the CFI
   * walk does not reach that frame at the frame the stack trace shows.
   */
  frameVariables(cpuIndex: number, frameIdx = 0): FrameVariables | undefined {
    if (!this.target.cpu(cpuIndex)) return undefined;
    const shown = this.frames(cpuIndex)[frameIdx];
    if (!shown || shown.idle) return undefined;
    const st = this.frameState(cpuIndex, frameIdx);
    return st ? this.target.frameVariables(cpuIndex, shown, st) : undefined;
  }

  scopes(frameId: number): DebugProtocol.Scope[] {
    const regs: DebugProtocol.Scope = new Scope('Registers', frameId, false);
    regs.presentationHint = 'registers';
    const scopes = [regs];
    const cpuIndex = Math.floor(frameId / FRAME_STRIDE) - 1;
    {
      const v = this.frameVariables(cpuIndex, frameId % FRAME_STRIDE);
      if (v && !v.ok && v.broken && !this.logged.has(v.reason)) {
        // the frame shows registers only; why is in the Debug Console, once
        this.logged.add(v.reason);
        const f = this.frames(cpuIndex)[frameId % FRAME_STRIDE];
        this.log(`kprobe: no debug info for this frame${f ? ` (${this.target.symbolAt(f.pc) ?? formatAddress(f.pc)})` : ''}: ${v.reason}`);
      }
      if (v?.ok) {
        const args = new Scope('Arguments', ARGS_SCOPE_BASE + frameId, false) as DebugProtocol.Scope;
        args.presentationHint = 'arguments';
        const locals = new Scope('Locals', LOCALS_SCOPE_BASE + frameId, false) as DebugProtocol.Scope;
        locals.presentationHint = 'locals';
        scopes.unshift(args, locals);
      }
      if (this.frameGlobals(cpuIndex, frameId % FRAME_STRIDE)?.length) {
        // after the frame's own names: a global's Break on Value Change starts here
        scopes.splice(v?.ok ? 2 : 0, 0, new Scope('Globals', GLOBALS_SCOPE_BASE + frameId, false));
      }
    }
    // the program's names first (VS Code opens the first scope, as a C debugger shows arguments at a stop),
    // then the probe the CPU stopped at, then the registers
    if (frameId % FRAME_STRIDE === 0 && this.probeStopFor(cpuIndex)) {
      scopes.splice(scopes.length - 1, 0, new Scope(PROBE_SCOPE_NAME, PROBE_SCOPE_BASE + cpuIndex, false));
    }
    return scopes;
  }

  variables(ref: number): DebugProtocol.Variable[] {
    const t = this.target;
    if (ref >= VALUE_REF_BASE) {
      const e = this.valueRefs.get(ref);
      if (!e) throw new Error('this value is from an earlier stop: expand it again from its scope');
      return t.children(e.x, e.cpuIndex).map(v => this.dapVariable(v, e.cpuIndex, e.frameId, e));
    }
    if (ref >= GLOBALS_SCOPE_BASE) {
      const frameId = ref % 1_000_000;
      const cpuIndex = Math.floor(frameId / FRAME_STRIDE) - 1;
      return (this.frameGlobals(cpuIndex, frameId % FRAME_STRIDE) ?? []).map(x => this.dapVariable(x, cpuIndex, frameId));
    }
    if (ref >= ARGS_SCOPE_BASE) {
      const frameId = ref % 1_000_000;
      const cpuIndex = Math.floor(frameId / FRAME_STRIDE) - 1;
      const v = this.frameVariables(cpuIndex, frameId % FRAME_STRIDE);
      if (!v?.ok) return [];
      const list = ref >= LOCALS_SCOPE_BASE ? v.locals : v.params;
      return list.map(x => this.dapVariable(x, cpuIndex, frameId));
    }
    if (ref >= PROBE_SCOPE_BASE) return this.probeVariables(ref - PROBE_SCOPE_BASE);
    const cpuIndex = Math.floor(ref / FRAME_STRIDE) - 1;
    const frame = ref % FRAME_STRIDE;
    if (!t.cpu(cpuIndex)) throw new Error('unknown variables reference');
    if (frame === 0) return registerVariables(t.registers(cpuIndex));
    // Callers: only what the frame-pointer walk recovers.
    const f = this.frames(cpuIndex)[frame];
    return f ? [{ name: 'pc', value: formatAddress(f.pc), variablesReference: 0, presentationHint: { attributes: ['readOnly'] } }] : [];
  }

  private probeVariables(cpuIndex: number): DebugProtocol.Variable[] {
    const t = this.target;
    const stop = this.probeStopFor(cpuIndex);
    if (!stop) return [];
    return probeScopeVariables({
      stop, entry: t.probes.get(stop.breakpointId),
      where: a => t.symbolAt(a),
      task: t.currentTask(cpuIndex),
      // as the engine registered it (breakpoints leave it 0: register_kretprobe's default)
      maxactive: stop.maxactive,
    });
  }

  /** Writes a register of a frame-0 Registers scope; the value as shown. Throws a clear error otherwise. */
  setVariable(ref: number, name: string, value: string): string {
    const cpuIndex = Math.floor(ref / FRAME_STRIDE) - 1;
    if (!this.target.cpu(cpuIndex) || ref % FRAME_STRIDE !== 0 || ref >= PROBE_SCOPE_BASE) throw new Error('only the registers of the innermost frame can be changed');
    return this.target.setRegister(cpuIndex, name, value);
  }
}
