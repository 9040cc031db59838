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
 *
 * From a stop at a hit of a kprobe the guest registered (the CPU stands in
 * the agent's handler; the stop shows the probed context out of pt_regs)
 * every step acts on the probed context: first the CPU runs the rest of
 * Linux's kprobe machinery until the probed context goes on, then the step
 * goes on as from an ordinary stop there:
 *   kprobe     single instructions until the CPU is back in the probed
 *              function past the probed instruction (after Linux's
 *              out-of-line single step or emulation, the post handler, the
 *              ftrace trampoline's or int3's return), or at the probed
 *              frame's return address (the probed instruction returned);
 *   kretprobe  to the return address the probed context shows, on its stack
 *              (a debugger breakpoint: the rethook trampoline returns there);
 *   out        to the probed context's caller (ORC's frame 1 of the probed
 *              context), as from an ordinary stop.
 * A step of one instruction ends once the probed context went on (its
 * probed instruction run, or the return done). A step in from a probed
 * direct call of the vmlinux's code (decoded from the vmlinux: in guest
 * memory the probe has replaced its bytes) also ends its kprobe part at the callee's entry (the return
 * address pushed on the probed context's stack), and the step goes on from
 * there as from an ordinary stop, which stops at once on the callee's line.
 */
import type { LinuxTarget, ProbeContext } from './linuxTarget';
import type { DecodedInsn } from '../arch/types';

const BATCH = 2000;
const STEP_BUDGET = 5_000_000;
/** an interrupt frame (ss, rsp, rflags, cs, rip) is at least this many bytes */
const IRQ_FRAME = 40n;

/** the rethook trampoline's pt_regs sp may lie above the stack pointer the return leaves (x86: by one slot) */
const RETHOOK_SP_SLACK = 16n;

export class LinuxLineStep {
  private readonly startLine: string | undefined;
  private readonly startSp: bigint;
  private readonly startFn: string;
  private left = STEP_BUDGET;
  /** a stop at a guest kprobe's hit: the probed context the step starts from */
  private readonly ctx: ProbeContext | null;

  constructor(private readonly t: LinuxTarget, private readonly cpu: number, private readonly kind: 'in' | 'over' | 'out' | 'instruction') {
    this.ctx = t.probeContext(cpu);
    const pc = this.ctx?.pc ?? t.pc(cpu);
    this.startLine = this.lineKey(pc);
    this.startSp = this.ctx?.regs.get('sp') ?? t.reg(cpu, 4);
    this.startFn = this.fnOf(pc);
  }

  private lineKey(pc: bigint): string | undefined {
    const l = this.t.sourceLine(pc);
    return l && l.line > 0 ? `${l.file}:${l.line}` : undefined;
  }

  private fnOf(pc: bigint): string { return this.t.where(pc).replace(/\+0x[0-9a-f]+$/, ''); }

  start(): void {
    const t = this.t, cpu = this.cpu;
    if (this.kind === 'out') {
      // frames() shows the probed context at a guest kprobe's stop: its frame 1 is the probed context's caller
      const ret = t.frames(cpu)[1];
      if (!ret) return this.ctx ? this.leaveProbe(() => this.stepped()) : t.stepInstruction(cpu);
      return this.runToReturn(ret.pc, ret.sp, () => t.stepDone(cpu, `Stepped out to ${t.where(ret.pc)}`));
    }
    if (this.ctx) return this.leaveProbe(() => (this.kind === 'instruction' || this.startLine === undefined || this.arrived(t.pc(cpu)) ? this.stepped() : this.more()));
    if (this.kind === 'instruction' || this.startLine === undefined) return t.stepInstruction(cpu);
    this.more();
  }

  private stepped(): void { this.t.stepDone(this.cpu, `Stepped to ${this.t.where(this.t.pc(this.cpu))}`); }

  /** the guest's kprobe machinery runs until the probed context goes on (see the head comment), then `then` */
  private leaveProbe(then: () => void): void {
    const t = this.t, cpu = this.cpu, ctx = this.ctx!;
    if (ctx.hit.kind === 'return') return this.runToReturn(ctx.pc, this.startSp - RETHOOK_SP_SLACK, then);
    const fn = t.vmlinux?.symbols.resolve(ctx.pc);
    const lo = fn ? ctx.pc - fn.offset : ctx.pc, hi = fn && fn.sym.size > 0n ? lo + fn.sym.size : ctx.pc + 1n;
    const caller = t.frames(cpu)[1];
    // step in from a probed direct call: the probed context goes on in the callee (Linux emulated the call, or ran it out of line)
    const probed = this.kind === 'in' ? this.linkedInstruction(ctx.pc) : undefined;
    const callee = probed?.flow === 'call' ? probed.target : undefined;
    const back = (pc: bigint, sp: bigint): boolean =>
      (pc >= lo && pc < hi && pc !== ctx.pc && sp + 8n >= this.startSp) || (caller !== undefined && pc === caller.pc && sp >= caller.sp)
      || (callee !== undefined && pc === callee && sp + 8n === this.startSp);
    const singles = (): void => {
      for (let n = 0; n < BATCH; n++) {
        if (this.left-- <= 0) return t.stepDone(cpu, `Step ended after ${STEP_BUDGET} instructions in the guest's kprobe handling of ${t.where(ctx.pc)}`);
        const stop = t.singleStep();
        if (stop) return t.stepDone(cpu, '', stop);
        if (back(t.pc(cpu), t.reg(cpu, 4))) return then();
      }
      setImmediate(singles);
    };
    singles();
  }

  /**
   * The instruction at `pc` as the vmlinux holds it: in guest memory Linux's
   * kprobe has replaced its first bytes (int3, or an optimized probe's jmp).
   */
  private linkedInstruction(pc: bigint): DecodedInsn | undefined {
    const s = this.t.vmlinux?.sections.find(x => x.name === '.text' && pc >= x.addr && pc < x.addr + BigInt(x.data.length));
    if (!s) return undefined;
    const off = Number(pc - s.addr);
    try { return this.t.arch.decodeBytes(s.data.subarray(off, off + this.t.arch.maxInsnLength), pc) ?? undefined; } catch { return undefined; }
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
