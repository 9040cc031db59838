/**
 * The handler language's environment (handlers/types.ts HandlerEnv) over a
 * Linux guest at a hit of a kprobe its own engine registered for the
 * debugger (linuxAgentProbes.ts): the snippet's `regs` is the guest's
 * struct pt_regs in guest memory (reads and writes: a write changes what
 * the probed code resumes with, as a module's handler writing regs->di
 * does), memory is read and written through the hitting CPU's page tables
 * (user pointers of the current task included), `current` is the task on
 * that CPU, `p` the probe (addr, symbol_name, offset; nmissed and flags
 * read from the guest's struct kprobe), `symbol()` and `%pS` the vmlinux's
 * symbols, `jiffies` the guest's own counter, `ktime_get()` the machine's
 * clock, `dump_stack()` the probed context's stack through the kernel's ORC
 * tables. `unregister_kprobe(p)` / `disable_kprobe(p)` / `enable_kprobe(p)`
 * are queued to the agent, which carries them out in process context (the
 * quiescent point Linux needs), as on the sample kernel's deferred work.
 */
import type { ElfImage } from '../elf/types';
import type { HandlerEnv, HandlerProbeInfo, ProbeControlOp } from '../handlers';
import type { GuestPages } from './linuxPages';
import { orcFrames } from './linuxOrc';
import { GuestMemoryEnv } from './linuxGuestEnv';

/** what the environment needs of the machine at a hit */
export interface AgentEnvContext {
  readonly vmlinux: ElfImage;
  readonly pages: GuestPages;
  /** the guest's struct pt_regs of the hit */
  readonly regs: bigint;
  ptRegsOffset(member: string): bigint;
  readonly task: { comm: string; pid: number } | undefined;
  readonly cpu: number;
  nowNs(): bigint;
  /** the probe: its address, symbol+offset, and its struct kprobe in the guest */
  readonly probe: { addr: bigint; symbol: string; offset: bigint; kprobe: bigint };
  /** the member offsets of struct kprobe (nmissed, flags) */
  kprobeOffset(member: string): bigint;
  printk(text: string): void;
  control?(op: ProbeControlOp): number;
}

const SIZES = [1, 2, 4, 8] as const;

export class AgentHandlerEnv extends GuestMemoryEnv implements HandlerEnv {
  readonly probe: HandlerProbeInfo;
  /** registers the snippet changed, written back to pt_regs at once */
  readonly written = new Set<string>();

  constructor(private readonly c: AgentEnvContext) {
    super(c.vmlinux, c.pages, c.cpu, c.task, 'the guest\'s page tables', (a, d) => c.pages.write(a, d));
    const kp = c.probe.kprobe;
    const u = (m: string, size: 4 | 8): bigint => { try { return this.readMem(kp + c.kprobeOffset(m), size); } catch { return 0n; } };
    this.probe = { addr: c.probe.addr, symbol_name: c.probe.symbol, offset: c.probe.offset, nmissed: u('nmissed', 8), flags: u('flags', 4) };
  }

  override writeMem(addr: bigint, size: 1 | 2 | 4 | 8, value: bigint): void {
    if (!SIZES.includes(size)) throw new Error(`a write of ${size} bytes`);
    super.writeMem(addr, size, value);
  }

  private regAddr(name: string): bigint {
    let off: bigint;
    try { off = this.c.ptRegsOffset(name); } catch { throw new Error(`the guest's struct pt_regs has no member ${name}`); }
    return this.c.regs + off;
  }

  getReg(name: string): bigint { return this.readMem(this.regAddr(name), 8); }

  setReg(name: string, value: bigint): void {
    this.writeMem(this.regAddr(name), 8, BigInt.asUintN(64, value));
    this.written.add(name);
  }

  printk(text: string): void { this.c.printk(text); }

  dumpStack(): number {
    const read64 = (a: bigint): bigint | undefined => { try { return this.readMem(a, 8); } catch { return undefined; } };
    const frames = orcFrames(this.c.vmlinux, { rip: this.c.probe.addr, rsp: this.getReg('sp'), rbp: this.getReg('bp') }, read64);
    const text = `CPU: ${this.c.cpu} PID: ${this.current.pid} Comm: ${this.current.comm}\nCall Trace:\n${frames.map(f => ` ${this.c.vmlinux.symbols.format(f.pc, false)}\n`).join('')}`;
    this.c.printk(text);
    return text.length;
  }

  ktimeGet(): bigint { return this.c.nowNs(); }

  jiffies(): bigint {
    const at = this.jiffiesAddr();
    if (at === undefined) return 0n;
    try { return this.readMem(at, 8); } catch { return 0n; }
  }

  probeControl(op: ProbeControlOp): number { return this.c.control?.(op) ?? -95; }
}
