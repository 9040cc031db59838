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
import type { HandlerEnv, SymbolizedAddress } from '../handlers';
import type { GuestPages } from './linuxPages';

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

const hex = (a: bigint): string => `0x${BigInt.asUintN(64, a).toString(16)}`;

export class LinuxEvalEnv implements HandlerEnv {
  readonly current: { pid: number; comm: string; mm: bigint };

  constructor(private readonly c: EvalEnvContext) {
    this.current = { pid: c.task?.pid ?? 0, comm: c.task?.comm ?? '', mm: 0n };
  }

  readMem(addr: bigint, size: 1 | 2 | 4 | 8): bigint {
    const b = this.c.pages.read(addr, size);
    if (b.length !== size) throw new Error(`${hex(addr)} is not mapped in CPU ${this.c.cpu}'s page tables`);
    let v = 0n;
    for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]);
    return v;
  }

  writeMem(addr: bigint, size: 1 | 2 | 4 | 8, value: bigint): void {
    const b = new Uint8Array(size);
    for (let i = 0; i < size; i++) b[i] = Number((value >> BigInt(8 * i)) & 0xffn);
    if (!this.c.write(addr, b)) throw new Error(`${hex(addr)} is not mapped RAM in CPU ${this.c.cpu}'s page tables`);
  }

  readCString(addr: bigint, max: number): string {
    let out = '';
    for (let i = 0; i < max; i++) {
      const ch = Number(this.readMem(addr + BigInt(i), 1));
      if (ch === 0) break;
      out += String.fromCharCode(ch);
    }
    return out;
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
  smpProcessorId(): number { return this.c.cpu; }

  jiffies(): bigint {
    const s = this.c.vmlinux.symbols.lookup('jiffies_64') ?? this.c.vmlinux.symbols.lookup('jiffies');
    if (!s) throw new Error(`${this.c.vmlinux.path} has no jiffies symbol`);
    return this.readMem(s.value, 8);
  }

  symbol(name: string): bigint | undefined { return this.c.vmlinux.symbols.lookup(name)?.value; }
  regsReturnValue(): bigint { return this.getReg('ax'); }

  addrToSymbol(addr: bigint): SymbolizedAddress | undefined {
    const r = this.c.vmlinux.symbols.resolve(addr);
    return r ? { name: r.sym.name, offset: r.offset, size: r.sym.size } : undefined;
  }
}
