/**
 * The stack of a context inside a C probe handler, walked through the
 * handler-call boundary as Linux's unwinder walks through an exception
 * frame (the int3 / page-fault entry's struct pt_regs) into the code that
 * trapped.
 *
 * A C handler is called on the probed CPU (a nested call, or as ordinary
 * code on the CPU when the debugger has a breakpoint in it:
 * handlerOnCpu.ts) with its return address at an engine stub; each call
 * records the probed context it was made from (the registers, the pc a
 * stack shows for it: the probe address, the faulting instruction, the
 * trampoline of a kretprobe return handler). The walk takes the handler's
 * own frames up to its return stub, then goes on from the recorded
 * context, and so on outwards: handler_fault, kprobe_handler_return,
 * probe_kernel_read_long, handler_pre, kprobe_handler_return, do_fork,
 * worker_fn, ... (a fault of the single-stepped copy of a probed
 * instruction shows the probed function at the probed address). A handler running on the CPU has a known entry stack
 * pointer: its frames are walked within it (the walk cannot wander into
 * the probed frames when the handler keeps no frame record), and its stub
 * stands for the boundary even when the walk did not read it.
 *
 * The contexts are plain data (time travel captures them with the C API).
 */
import type { Cpu } from '../arch/types';
import type { KernelApi, Task } from '../kernel/types';
import { walkFrames } from '../kernel/stack';

/**
 * A probed context a C handler was called from (innermost last): the CPU's
 * registers when the engine called the handler, the pc a stack trace shows
 * for it (the probed address; the trampoline in a kretprobe return
 * handler, whose real return address is `returnTo`); `onCpu`: the handler
 * runs as ordinary code on the CPU (handlerOnCpu.ts), not as a nested call.
 */
export interface HandlerContext { cpu: number; regs: readonly bigint[]; pc: bigint; returnTo?: bigint; onCpu?: true }

/** One entry of a walk through handler calls. */
export interface HandlerStackFrame {
  addr: bigint;
  /** the first frame of a context: its pc is where it stopped (its line is the pc's own), not a return address */
  first: boolean;
  /** the context's registers, for the frames of a probed context (undefined: the CPU's own) */
  regs?: readonly bigint[];
  /** the index of the frame within its context's walk */
  depth: number;
  /** the pc that context's walk started from (its frame 0's) */
  from: bigint;
}

/** what the walk needs of the engine */
export interface HandlerStackEngine {
  readonly kernel: KernelApi;
  /** the handler calls' return stubs (0n: not made) */
  stubs(): bigint[];
  /** the return stub of a handler run on the CPU (0n: not made) */
  onCpuStub(): bigint;
  /** the entry stack pointers of the handlers running on a CPU as ordinary code, innermost last */
  onCpuEntrySps(cpu: number): bigint[];
  isTrampoline(addr: bigint): boolean;
  /** the probed address an instruction slot's address stands for (a fault of the single-stepped copy) */
  probedAddressOfSlot(addr: bigint): bigint | undefined;
  readCode(addr: bigint, len: number): Uint8Array;
}

export class HandlerContexts {
  private readonly list: HandlerContext[] = [];

  /** the probed context of a call on `cpu` (its registers now) */
  push(cpu: Cpu, regsCount: number, pc: bigint, returnTo?: bigint, onCpu?: true): void {
    const regs = Array.from({ length: regsCount }, (_, i) => cpu.getReg(i));
    this.list.push(onCpu ? { cpu: cpu.id, regs, pc, returnTo, onCpu } : { cpu: cpu.id, regs, pc, returnTo });
  }

  /** the innermost context (a nested call returned) */
  pop(): void { this.list.pop(); }

  /** the innermost context of `cpu` (a handler run on it returned) */
  popOf(cpu: number): void {
    for (let i = this.list.length - 1; i >= 0; i--) if (this.list[i].cpu === cpu) { this.list.splice(i, 1); return; }
  }

  /** how many handler calls are in progress on `cpu` (preempt_count) */
  depthOf(cpu: number): number { return this.list.filter(c => c.cpu === cpu).length; }

  /** whether a handler call is in progress on `cpu` */
  any(cpu: number): boolean { return this.list.some(c => c.cpu === cpu); }

  /**
   * The walk from a context of `cpu` (registers `now`, pc `pc`) through the
   * handler calls in progress there, innermost first; the kretprobe
   * trampoline entries are left for fixupStackTrace.
   */
  walk(e: HandlerStackEngine, cpu: Cpu, task: Task | undefined, now: readonly bigint[] | undefined, pc: bigint): HandlerStackFrame[] {
    const k = e.kernel;
    const ptr = BigInt(k.arch.abi.pointerSize);
    const stubs = e.stubs();
    const outer = this.list.filter(c => c.cpu === cpu.id);
    const sps = e.onCpuEntrySps(cpu.id);
    // the on-CPU contexts and their calls' entry stack pointers pair up innermost last
    const entrySp = new Map<HandlerContext, bigint>();
    const onCpu = outer.filter(c => c.onCpu);
    if (onCpu.length === sps.length) onCpu.forEach((c, i) => entrySp.set(c, sps[i]));
    const out: HandlerStackFrame[] = [];
    let at: { regs?: readonly bigint[]; pc: bigint; returnTo?: bigint } | undefined = { regs: now, pc };
    while (at) {
      const next = outer.pop();
      const sp = next && entrySp.get(next);
      // a handler's frames lie below its entry stack pointer
      const t = sp !== undefined ? boundedTask(task, sp + ptr) : task;
      const view = at.regs ? cpuWith(cpu, k.arch.abi.pcReg, at.regs, at.pc) : cpu;
      const frames = walkFrames(k, view, t, { pc: at.pc, readCode: (a, n) => e.readCode(a, n) });
      // a fault of the probed instruction's copy in its slot: the probed function's frame at the probed address
      let from = at.pc;
      if (at.regs) {
        const probed = e.probedAddressOfSlot(frames[0]);
        if (probed !== undefined) {
          const rest = walkFrames(k, cpuWith(cpu, k.arch.abi.pcReg, at.regs, probed), t, { pc: probed, readCode: (a, n) => e.readCode(a, n) });
          frames.splice(0, frames.length, ...rest);
          from = probed;
        }
      }
      // a return handler's context: the trampoline stands for the instance being handled (no longer on the task's list)
      // (a return address: its line is the call's, as a caller's)
      const returned = at.returnTo !== undefined && e.isTrampoline(frames[0]);
      if (returned) frames[0] = at.returnTo as bigint;
      const end = frames.findIndex(f => stubs.includes(f));
      const regs = at.regs;
      const take = (list: bigint[]): void => list.forEach((addr, depth) => out.push({ addr, first: depth === 0 && !returned, regs, depth, from }));
      if (next && end >= 0) take(frames.slice(0, end + 1));
      else if (next && sp !== undefined && e.onCpuStub() !== 0n) {
        take(frames);
        out.push({ addr: e.onCpuStub(), first: false, regs, depth: frames.length, from });
      } else {
        take(frames);
        break;
      }
      at = next;
    }
    return out;
  }
}

/** the CPU as a stack walk reads it, with other registers */
export function cpuWith(cpu: Cpu, pcReg: number, regs: readonly bigint[], pc: bigint): Cpu {
  const view = Object.create(cpu) as Cpu;
  view.getReg = (i: number): bigint => (i === pcReg ? pc : regs[i] ?? 0n);
  view.getPc = (): bigint => pc;
  return view;
}

/** the task as a walk bounds it: its stack ends at `top` */
function boundedTask(task: Task | undefined, top: bigint): Task {
  const t = Object.create(task ?? null) as Task;
  Object.defineProperty(t, 'stackTop', { value: top });
  if (!task) Object.defineProperty(t, 'stackBase', { value: 0n });
  return t;
}
