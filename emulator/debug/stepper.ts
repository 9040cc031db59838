/**
 * Source-line and instruction stepping of ONE CPU (the selected thread):
 * the other CPUs stay stopped while it steps (machine.stepCpu), so a step
 * over code that waits for another CPU ends at the instruction budget.
 *
 *   instruction  one instruction (DAP granularity 'instruction', the
 *                Disassembly view); a probed instruction's out-of-line
 *                step (slot and step breakpoint) counts as one
 *   in           until the DWARF line (file:line) differs from the start
 *                line, entering calls; code without line info (instruction
 *                slots, trampolines, assembly) is stepped through
 *   over         the same, but a call executed from the stepping frame is
 *                run to its return address (same task, stack pointer back at
 *                or above its value before the call: recursion-safe)
 *   out          until the current function returns to its caller: pc =
 *                the caller's return address from the frame walk (frame 1),
 *                same task, stack pointer above the current one
 *
 * Steps run in chunks of STEP_CHUNK instructions (the run controller,
 * runControl.ts, yields to the event loop between chunks, so pause works) and never more than BUDGET in total:
 * then the step ends with a stop saying so. A stop request on the way (a
 * breakpoint probe, an oops) or the end of the machine ends the step with
 * that outcome instead.
 */
import type { DecodedInsn } from '../arch/types';
import type { Task } from '../kernel/types';
import type { Machine, SliceResult } from '../machine';

export type StepKind = 'instruction' | 'in' | 'over' | 'out';

/** Instructions per synchronous chunk. */
export const STEP_CHUNK = 20_000;
/** Instructions one step may take in total. */
export const STEP_BUDGET = 2_000_000;

export type StepOutcome =
  | { kind: 'done'; description: string }
  | { kind: 'slice'; result: Exclude<SliceResult, { kind: 'running' }> }
  | { kind: 'budget'; description: string };

export interface StepOptions {
  /** the pc the CPU is logically at (a kprobe stop's probe address while the CPU sits in the slot) */
  pc: bigint;
  /** original code bytes (without armed probes) */
  readCode: (addr: bigint, len: number) => Uint8Array;
  /** return address of the current frame (frame 1 of the stack walk), for 'out' */
  returnAddress?: bigint;
  /** symbolizer for descriptions ("do_fork+0x12") */
  where: (addr: bigint) => string;
  budget?: number;
}

interface Until { pc: bigint; sp: bigint; task: Task | undefined; strict: boolean }

type LineKey = { file: string; line: number } | undefined;

export class Stepper {
  private steps = 0;
  private until: Until | undefined;
  private readonly task0: Task | undefined;
  private readonly line0: LineKey;
  private readonly budget: number;
  private first = true;

  constructor(private readonly machine: Machine, readonly cpu: number, readonly kind: StepKind, private readonly opts: StepOptions) {
    this.task0 = machine.kernel.current(cpu);
    this.line0 = this.lineAt(opts.pc);
    this.budget = opts.budget ?? STEP_BUDGET;
    if (kind === 'out' && opts.returnAddress !== undefined) {
      // x86: `ret` pops the return address, so sp ends above the current sp; with a link register sp may be equal (leaf)
      this.until = { pc: opts.returnAddress, sp: this.sp(), task: this.task0, strict: machine.arch.abi.returnAddress.kind === 'stack' };
    }
  }

  /** How the step really runs: no line info at the start (or nothing to step out to) degrades to one instruction. */
  get effectiveKind(): StepKind {
    if (this.kind === 'out') return this.until ? 'out' : 'instruction';
    if ((this.kind === 'in' || this.kind === 'over') && !this.line0) return 'instruction';
    return this.kind;
  }

  /** Runs up to STEP_CHUNK instructions; undefined = not finished yet (call again). */
  runChunk(): StepOutcome | undefined {
    const kind = this.effectiveKind;
    const m = this.machine;
    for (let n = 0; n < STEP_CHUNK; n++) {
      if (this.steps >= this.budget) {
        const pc = m.cpus[this.cpu].getPc();
        return { kind: 'budget', description: `Step ${kind} did not finish within ${this.budget} instructions; stopped at ${this.opts.where(pc)}` };
      }
      const pcBefore = this.first ? this.opts.pc : m.cpus[this.cpu].getPc();
      this.first = false;
      if (kind === 'over' && !this.until) {
        const insn = this.decode(pcBefore);
        if (insn && (insn.flow === 'call' || insn.flow === 'indirectCall')) {
          this.until = { pc: pcBefore + BigInt(insn.length), sp: this.sp(), task: m.kernel.current(this.cpu), strict: false };
        }
      }
      const r = m.stepCpu(this.cpu, 1);
      this.steps++;
      if (r.kind !== 'running') return { kind: 'slice', result: r };
      const pc = m.cpus[this.cpu].getPc();
      // a probed instruction runs from the engine's code: arm64/riscv end its out-of-line step on the slot's
      // step breakpoint (one more instruction), a hijacked return goes through the kretprobe trampoline
      if (kind === 'instruction') {
        if (this.inEngineCode(pc)) continue;
        return { kind: 'done', description: 'Stepped one instruction' };
      }
      const task = m.kernel.current(this.cpu);
      if (this.until) {
        const u = this.until;
        const sp = this.sp();
        if (task !== u.task || pc !== u.pc || (u.strict ? sp <= u.sp : sp < u.sp)) continue;
        this.until = undefined;
        if (kind === 'out') return { kind: 'done', description: `Stepped out to ${this.opts.where(pc)}` };
      }
      if (task !== this.task0) continue;
      const line = this.lineAt(pc);
      if (!line) continue;
      if (this.line0 && line.file === this.line0.file && line.line === this.line0.line) continue;
      return { kind: 'done', description: `Stepped to ${line.file.split(/[\\/]/).pop()}:${line.line}` };
    }
    return undefined;
  }

  get instructions(): number { return this.steps; }

  /** pc is in code the kprobes engine owns (instruction slots, trampolines, detour buffers) */
  private inEngineCode(pc: bigint): boolean {
    return this.machine.hasKprobes && this.machine.kprobes.code.owns(pc);
  }

  private sp(): bigint {
    return BigInt.asUintN(64, this.machine.cpus[this.cpu].getReg(this.machine.arch.abi.spReg));
  }

  private lineAt(pc: bigint): LineKey {
    const l = this.machine.image.lines?.lineForAddress(pc);
    return l && l.line > 0 ? { file: l.file, line: l.line } : undefined;
  }

  private decode(pc: bigint): DecodedInsn | null {
    const arch = this.machine.arch;
    try {
      return arch.decodeBytes(this.opts.readCode(pc, arch.maxInsnLength), pc);
    } catch {
      try { return arch.decode(this.machine.kernel.mem, pc); } catch { return null; }
    }
  }
}
