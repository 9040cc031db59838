/**
 * Source-line steps on the full-system PC (all CPUs run along, as with gdb
 * on QEMU; nothing is written into the guest):
 *   in    single instructions until the pc is on another line that has line
 *         information (entering calls);
 *   over  the same, but a call from the stepping frame runs to its return
 *         (a temporary debugger breakpoint after the call, taken when the
 *         stack pointer is back at or above its value before the call);
 *   out   to the return address of the frame (ORC's frame 1).
 * An interrupt or exception taken during a single step is stepped over the
 * same way (its entry pushed a frame: the step runs until the interrupted
 * instruction is reached again on the same stack), as QEMU's gdbstub keeps
 * interrupts away from a single step. A step ends after STEP_BUDGET
 * instructions at the latest; single steps run in batches so a pause or a
 * terminate is answered.
 */
import type { LinuxTarget } from './linuxTarget';

const BATCH = 2000;
const STEP_BUDGET = 5_000_000;
/** an interrupt frame (ss, rsp, rflags, cs, rip) is at least this many bytes */
const IRQ_FRAME = 40n;

export class LinuxLineStep {
  private readonly startLine: string | undefined;
  private readonly startSp: bigint;
  private readonly startFn: string;
  private left = STEP_BUDGET;

  constructor(private readonly t: LinuxTarget, private readonly cpu: number, private readonly kind: 'in' | 'over' | 'out') {
    this.startLine = this.lineKey(t.pc(cpu));
    this.startSp = t.reg(cpu, 4);
    this.startFn = this.fnOf(t.pc(cpu));
  }

  private lineKey(pc: bigint): string | undefined {
    const l = this.t.sourceLine(pc);
    return l && l.line > 0 ? `${l.file}:${l.line}` : undefined;
  }

  private fnOf(pc: bigint): string { return this.t.where(pc).replace(/\+0x[0-9a-f]+$/, ''); }

  start(): void {
    const t = this.t, cpu = this.cpu;
    if (this.kind === 'out') {
      const ret = t.frames(cpu)[1];
      if (!ret) return t.stepInstruction(cpu);
      return this.runToReturn(ret.pc, ret.sp, () => t.stepDone(cpu, `Stepped out to ${t.where(ret.pc)}`));
    }
    if (this.startLine === undefined) return t.stepInstruction(cpu);
    this.more();
  }

  /** run to `pc` with the stack back at `sp` or above (a call returned, an interrupt ended), then `then` */
  private runToReturn(pc: bigint, sp: bigint, then: () => void): void {
    this.t.runTo(this.cpu, pc, () => {
      if (this.t.reg(this.cpu, 4) >= sp) then();
      else this.runToReturn(pc, sp, then); // a deeper (recursive) activation reached it first
    });
  }

  private readonly more = (): void => {
    const t = this.t, cpu = this.cpu;
    for (let n = 0; n < BATCH; n++) {
      if (this.left-- <= 0) return t.stepDone(cpu, `Step ended after ${STEP_BUDGET} instructions without reaching another line`);
      const pc = t.pc(cpu), sp = t.reg(cpu, 4);
      const insn = t.instructionAt(cpu, pc);
      const next = insn ? pc + BigInt(insn.length) : undefined;
      if (this.kind === 'over' && insn && next !== undefined && (insn.flow === 'call' || insn.flow === 'indirectCall') && sp <= this.startSp) {
        // run the call to its return (the return address is the next instruction; the stack back where it was)
        return this.runToReturn(next, sp, () => this.after());
      }
      const stop = t.singleStep();
      if (stop) return t.stepDone(cpu, '', stop);
      const now = t.pc(cpu), nowSp = t.reg(cpu, 4);
      const expected = insn && next !== undefined && (insn.flow === 'none' || insn.flow === 'condJump' || (insn.flow === 'jump' && insn.target !== undefined))
        ? [next, ...(insn.target !== undefined ? [insn.target] : [])] : undefined;
      if (expected && !expected.includes(now) && nowSp + IRQ_FRAME <= sp) {
        // an interrupt or exception entry came in before the instruction: run it back to the interrupted instruction
        return this.runToReturn(pc, sp, () => this.after());
      }
      if (this.arrived(now)) return t.stepDone(cpu, `Stepped to ${t.where(now)}`);
    }
    setImmediate(this.more);
  };

  private after(): void {
    if (this.arrived(this.t.pc(this.cpu))) this.t.stepDone(this.cpu, `Stepped to ${this.t.where(this.t.pc(this.cpu))}`);
    else setImmediate(this.more);
  }

  /** on another line with line information (for 'over': not deeper in a call the step did not run over) */
  private arrived(pc: bigint): boolean {
    const key = this.lineKey(pc);
    if (key === undefined || key === this.startLine) return false;
    if (this.kind === 'over' && this.t.reg(this.cpu, 4) < this.startSp && this.fnOf(pc) !== this.startFn) return false;
    return true;
  }
}
