/**
 * The handler language's HandlerEnv over the machine at a probe hit: the
 * registers of the CPU that hit (through the engine's pt_regs view), kernel
 * memory (a MemoryFault becomes the snippet's 'memory' HandlerFault), the
 * probe / kretprobe instance fields, `current`, printk into the kernel log
 * (source 'probe', in order with the console) and dump_stack().
 *
 * One env per handler invocation. Text printed by the handler is collected
 * and written to the kernel log by flush() when the invocation ends (also
 * after a fault), so a printk without a trailing newline still forms a line
 * and dump_stack() lines stay in order with it.
 */
import type { Cpu } from '../arch/types';
import type { HandlerEnv, HandlerProbeInfo, HandlerRetInstanceInfo, HandlerWatchInfo, ProbeControlOp, SymbolizedAddress } from '../handlers';
import type { KernelApi } from '../kernel/types';
import type { Kprobe, KprobesEngine, KretprobeInstance, PtRegs } from '../kprobes';
import type { Memory } from '../memory/memory';
import { mustVAddr, toVAddr } from '../memory/address';
import { dumpStackLines, userStackLines } from '../kernel/stack';
import { mmAddress, taskAddress } from '../kernel/task';

/**
 * What one handler step (a statement or a loop iteration) costs the CPU
 * that runs the handler: one instruction slot, i.e. 1 ns of its virtual
 * time (kernel/clock.ts) and one instruction of the machine's
 * maxInstructions limit.
 */
export const HANDLER_STEP_SLOTS = 1;

export interface EnvInput {
  kernel: KernelApi;
  /** the kprobes engine (absent for uprobe handlers on a machine without one: no calls into the image) */
  engine?: KprobesEngine;
  regs: PtRegs;
  /** the probe (`p`) */
  kp?: Kprobe;
  /** the kretprobe instance (`ri`) */
  ri?: KretprobeInstance;
  trapnr?: number;
  postFlags?: bigint;
  /** a watchpoint hit (kwatch handlers, data breakpoint conditions): debugreg, addr, access, old, new */
  watch?: HandlerWatchInfo;
  /** the probed instruction has not run yet (pre / entry / jprobe handlers): dump_stack starts at the probe address */
  beforeInsn?: boolean;
  /** charge a run's handler steps to a CPU (the machine: virtual clock + instruction limit); absent = free */
  charge?: (cpu: number, steps: number) => void;
  /** unregister / disable / enable the probe this handler belongs to (queued as deferred work); absent: not offered */
  control?: (op: ProbeControlOp, kind: 'kprobe' | 'kretprobe') => number;
}

export class ProbeHandlerEnv implements HandlerEnv {
  readonly trapnr?: number;
  readonly postFlags?: bigint;
  readonly watch?: HandlerWatchInfo;
  // what the handler printed, in pieces joined once by flush(): appending stays linear however much is printed
  // (made at the first print: one env is made per hit, and most handlers print nothing)
  private out: string[] | null = null;
  private outEndsLine = true;
  private readonly cpu: Cpu;
  private readonly kernel: KernelApi;
  // built on first use: most handlers read neither `p`, `ri` nor `current`, and one env is made per hit
  private probeInfo?: HandlerProbeInfo;
  private riInfo?: HandlerRetInstanceInfo;
  private currentInfo?: { pid: number; comm: string; mm: bigint };

  constructor(private readonly input: EnvInput) {
    this.kernel = input.kernel;
    this.cpu = input.regs.cpu;
    this.trapnr = input.trapnr;
    this.postFlags = input.postFlags;
    this.watch = input.watch;
  }

  get probe(): HandlerProbeInfo | undefined {
    const kp = this.input.kp;
    if (!kp) return undefined;
    return this.probeInfo ??= {
      addr: kp.addr ?? 0n,
      symbol_name: kp.symbol_name ?? '',
      offset: kp.offset ?? 0n,
      nmissed: BigInt(kp.nmissed ?? 0),
      flags: BigInt(kp.flags ?? 0),
    };
  }

  get ri(): HandlerRetInstanceInfo | undefined {
    const ri = this.input.ri;
    if (!ri) return undefined;
    return this.riInfo ??= {
      ret_addr: ri.ret_addr, task: taskAddress(ri.task), data: ri.data,
      rp: { maxactive: BigInt(ri.rp.maxactive ?? 0), nmissed: BigInt(ri.rp.nmissed ?? 0) },
    };
  }

  /** HandlerEnv.probeControl: queued by the probe's owner (the probe manager runs it at the next tick) */
  probeControl(op: ProbeControlOp, kind: 'kprobe' | 'kretprobe'): number {
    const ctl = this.input.control;
    if (!ctl) throw new Error('probe control is not available for this probe');
    return ctl(op, kind);
  }

  /**
   * HandlerEnv.callFunction: the image function on the probed CPU through the
   * engine's nested call (a probe hit inside is a reentry: its nmissed
   * counts). What the handler printed so far goes to the log first, so the
   * lines keep their order with what the function prints.
   */
  callFunction(name: string, args: readonly bigint[]): { value: bigint; instructions: number } {
    const sym = this.kernel.image.symbols.lookup(name);
    if (!sym || sym.type !== 'func') throw new Error(`the image has no function '${name}'`);
    const max = this.kernel.arch.abi.argRegs.length;
    if (args.length > max) throw new Error(`${this.kernel.arch.name} passes at most ${max} arguments in registers, ${args.length} given`);
    const engine = this.input.engine;
    if (!engine || this.cpu.userMode) throw new Error(`cannot call '${name}' from a handler running on a user task (a uprobe)`);
    this.flush();
    const before = this.cpu.instret;
    const value = engine.nested.call(this.cpu, sym.value, args);
    return { value, instructions: this.cpu.instret - before };
  }

  get current(): { pid: number; comm: string; mm: bigint } {
    if (this.currentInfo) return this.currentInfo;
    const t = this.kernel.current(this.cpu.id);
    return this.currentInfo = t
      ? { pid: t.pid, comm: t.comm, mm: mmAddress(t) }
      : { pid: 0, comm: `swapper/${this.cpu.id}`, mm: 0n };
  }

  /** kernel memory, or the CPU's address space (a user process) when the kernel does not map addr */
  private memFor(addr: bigint, size: number): { mem: Memory; v: number } {
    const v = mustVAddr(addr);
    const k = this.kernel.mem;
    if (k.isMapped(v, size) || this.cpu.mem === k) return { mem: k, v };
    return { mem: this.cpu.mem, v };
  }

  readMem(addr: bigint, size: 1 | 2 | 4 | 8): bigint {
    const { mem, v } = this.memFor(addr, size);
    switch (size) {
      case 1: return BigInt(mem.read8(v));
      case 2: return BigInt(mem.read16(v));
      case 4: return BigInt(mem.read32(v) >>> 0);
      case 8: return BigInt.asUintN(64, mem.read64(v));
    }
  }

  writeMem(addr: bigint, size: 1 | 2 | 4 | 8, value: bigint): void {
    const { mem, v } = this.memFor(addr, size);
    switch (size) {
      case 1: mem.write8(v, Number(value & 0xffn)); return;
      case 2: mem.write16(v, Number(value & 0xffffn)); return;
      case 4: mem.write32(v, Number(value & 0xffffffffn)); return;
      case 8: mem.write64(v, BigInt.asUintN(64, value)); return;
    }
  }

  readCString(addr: bigint, max: number): string {
    const { mem, v } = this.memFor(addr, 1);
    return mem.readCString(v, max);
  }

  getReg(name: string): bigint { return this.input.regs.get(name); }
  setReg(name: string, value: bigint): void { this.input.regs.set(name, value); }

  printk(text: string): void {
    if (!text) return;
    (this.out ??= []).push(text);
    this.outEndsLine = text.endsWith('\n');
  }

  /** HandlerEnv.dumpStack: the trace goes on a line of its own; returns the length of the text printed. */
  dumpStack(): number {
    const { ri, kp, beforeInsn, engine } = this.input;
    const lines = !engine || this.cpu.userMode
      ? userStackLines(this.kernel, this.cpu, beforeInsn && kp?.addr !== undefined ? kp.addr : this.cpu.getPc())
      : dumpStackLines(this.kernel, this.cpu, {
        returnTo: ri && !beforeInsn ? ri.ret_addr : undefined,
        pc: beforeInsn && kp?.addr !== undefined ? kp.addr : undefined,
      });
    const text = (this.outEndsLine ? '' : '\n') + lines.join('\n') + '\n';
    this.printk(text);
    return text.length;
  }

  ktimeGet(): bigint { return this.kernel.timeNs(); }
  smpProcessorId(): number { return this.cpu.id; }
  jiffies(): bigint { return this.kernel.jiffies(); }
  symbol(name: string): bigint | undefined { return this.kernel.image.symbols.lookup(name)?.value; }
  regsReturnValue(): bigint { return this.input.regs.returnValue; }

  addrToSymbol(addr: bigint): SymbolizedAddress | undefined {
    if (toVAddr(addr) === null) return undefined;
    const r = this.kernel.image.symbols.resolve(addr);
    return r ? { name: r.sym.name, offset: r.offset, size: r.sym.size > 0n ? r.sym.size : undefined } : undefined;
  }

  /** HandlerEnv.spent: the run's steps, charged to the probed CPU (HANDLER_STEP_SLOTS instruction slots each). */
  spent(steps: number): void {
    if (steps > 0) this.input.charge?.(this.cpu.id, steps * HANDLER_STEP_SLOTS);
  }

  /** Write what the handler printed to the kernel log (source 'probe'). */
  flush(): void {
    if (this.out === null || !this.out.length) return;
    const text = this.out.join('');
    this.out = null;
    this.outEndsLine = true;
    this.kernel.printk(this.cpu.id, text, 'probe');
  }
}
