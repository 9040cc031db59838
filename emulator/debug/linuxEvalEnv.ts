/**
 * The handler language's environment (handlers/types.ts HandlerEnv) over a
 * stopped CPU of the Linux machine, for the debugger's evaluate: memory
 * read and written through that CPU's page tables (user pointers of the
 * task on it included), the registers of the frame asked for by their
 * pt_regs names (the innermost frame: the CPU's, or at a guest kprobe's
 * hit the probed context's; a caller frame: what the unwinder recovered,
 * its stack pointer, rbp and pc), `jiffies` the guest's own counter,
 * `symbol()` and `%pS` the vmlinux's symbols. A value is a read of a
 * stopped machine: no clock, no printing, no stack dumps; the registers
 * are changed in the Registers view, not by an expression.
 */
import type { ElfImage } from '../elf/types';
import type { HandlerEnv } from '../handlers';
import type { GuestPages } from './linuxPages';
import { GuestMemoryEnv } from './linuxGuestEnv';

/** what the environment needs of the stopped CPU and the frame asked for */
export interface EvalEnvContext {
  readonly vmlinux: ElfImage;
  readonly pages: GuestPages;
  readonly cpu: number;
  /** the frame's registers by pt_regs name (ip, sp, bp, ax...): those known there */
  readonly regs: ReadonlyMap<string, bigint>;
  /** which frame, for messages: "frame 2 (vfs_open)" */
  readonly frame: string;
  readonly task: { pid: number; comm: string } | undefined;
  /** the debugger's own write of guest memory (false: not mapped RAM) */
  write(addr: bigint, data: Uint8Array): boolean;
}

export class LinuxEvalEnv extends GuestMemoryEnv implements HandlerEnv {
  constructor(private readonly c: EvalEnvContext) {
    super(c.vmlinux, c.pages, c.cpu, c.task, `CPU ${c.cpu}'s page tables`, (a, d) => c.write(a, d));
  }

  getReg(name: string): bigint {
    const v = this.c.regs.get(name);
    if (v === undefined) throw new Error(`register ${name} is not known in ${this.c.frame} (a caller frame keeps only sp, bp and ip)`);
    return v;
  }

  setReg(name: string): void {
    throw new Error(`an expression does not change register ${name}: change it in the Registers view`);
  }

  printk(): void { throw new Error('printk() prints from a probe handler, not from the debugger\'s evaluate'); }
  dumpStack(): number { throw new Error('dump_stack(): the Call Stack view shows this CPU\'s stack'); }
  ktimeGet(): bigint { throw new Error('ktime_get() is not available in the debugger\'s evaluate (read jiffies, or the guest\'s timekeeper globals)'); }

  jiffies(): bigint {
    const at = this.jiffiesAddr();
    if (at === undefined) throw new Error(`${this.c.vmlinux.path} has no jiffies symbol`);
    return this.readMem(at, 8);
  }
}
