/**
 * What the Linux machine's two handler-language environments share
 * (linuxAgentEnv.ts for gutter-probe snippets at a guest kprobe's hit,
 * linuxEvalEnv.ts for the debugger's evaluate at a stop): guest memory read
 * and written through one CPU's page tables, C strings, `current`, the
 * vmlinux's symbols for `symbol()` and `%pS`, the CPU's number. Each says
 * in its messages whose page tables were used (`where`).
 */
import type { ElfImage } from '../elf/types';
import type { SymbolizedAddress } from '../handlers';
import type { GuestPages } from './linuxPages';

export abstract class GuestMemoryEnv {
  readonly current: { pid: number; comm: string; mm: bigint };

  constructor(
    protected readonly vmlinux: ElfImage,
    protected readonly pages: GuestPages,
    protected readonly cpu: number,
    task: { pid: number; comm: string } | undefined,
    /** whose page tables, for messages: "the guest's page tables", "CPU 0's page tables" */
    private readonly where: string,
    /** the write of guest memory (false: not mapped RAM) */
    private readonly write: (addr: bigint, data: Uint8Array) => boolean,
  ) {
    this.current = { pid: task?.pid ?? 0, comm: task?.comm ?? '', mm: 0n };
  }

  abstract getReg(name: string): bigint;

  readMem(addr: bigint, size: 1 | 2 | 4 | 8): bigint {
    const b = this.pages.read(addr, size);
    if (b.length !== size) throw new Error(`${hex(addr)} is not mapped in ${this.where}`);
    let v = 0n;
    for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]);
    return v;
  }

  writeMem(addr: bigint, size: 1 | 2 | 4 | 8, value: bigint): void {
    const b = new Uint8Array(size);
    for (let i = 0; i < size; i++) b[i] = Number((value >> BigInt(8 * i)) & 0xffn);
    if (!this.write(addr, b)) throw new Error(`${hex(addr)} is not mapped RAM in ${this.where}`);
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

  smpProcessorId(): number { return this.cpu; }
  symbol(name: string): bigint | undefined { return this.vmlinux.symbols.lookup(name)?.value; }
  regsReturnValue(): bigint { return this.getReg('ax'); }

  addrToSymbol(addr: bigint): SymbolizedAddress | undefined {
    const r = this.vmlinux.symbols.resolve(addr);
    return r ? { name: r.sym.name, offset: r.offset, size: r.sym.size } : undefined;
  }

  /** the address of the guest's jiffies counter (jiffies_64, or the jiffies alias), undefined without one */
  protected jiffiesAddr(): bigint | undefined {
    return (this.vmlinux.symbols.lookup('jiffies_64') ?? this.vmlinux.symbols.lookup('jiffies'))?.value;
  }
}

const hex = (a: bigint): string => `0x${BigInt.asUintN(64, a).toString(16)}`;
