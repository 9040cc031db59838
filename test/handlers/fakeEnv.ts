/** A HandlerEnv over a Map-backed byte memory, for handler-language tests. */
import { HandlerEnv, SymbolizedAddress } from '../../emulator/handlers';

export const X86_REGS = ['ip', 'sp', 'flags', 'ax', 'bx', 'cx', 'dx', 'si', 'di', 'bp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'orig_ax', 'cs', 'ss'];

export class FakeEnv implements HandlerEnv {
  /** mapped bytes; reading or writing an unmapped byte throws */
  readonly mem = new Map<bigint, number>();
  readonly regs = new Map<string, bigint>();
  readonly log: string[] = [];
  readonly symbols = new Map<string, bigint>();
  stacks = 0;
  time = 1000n;
  jif = 42n;
  cpu = 1;
  retval = 0n;
  probe?: HandlerEnv['probe'];
  ri?: HandlerEnv['ri'];
  trapnr?: number;
  postFlags?: bigint;
  current = { pid: 7, comm: 'init', mm: 0x1000n };
  readonly writes: { addr: bigint; size: number; value: bigint }[] = [];
  readonly regWrites: { name: string; value: bigint }[] = [];

  constructor() {
    for (const r of X86_REGS) this.regs.set(r, 0n);
  }

  /** map [addr, addr+len) as zeroed memory */
  map(addr: bigint, len: number): void {
    for (let i = 0n; i < BigInt(len); i++) if (!this.mem.has(addr + i)) this.mem.set(addr + i, 0);
  }

  putBytes(addr: bigint, bytes: number[] | string): void {
    const arr = typeof bytes === 'string' ? [...bytes].map(c => c.charCodeAt(0)) : bytes;
    arr.forEach((b, i) => this.mem.set(addr + BigInt(i), b & 0xff));
  }

  readMem(addr: bigint, size: 1 | 2 | 4 | 8): bigint {
    let v = 0n;
    for (let i = size - 1; i >= 0; i--) {
      const b = this.mem.get(addr + BigInt(i));
      if (b === undefined) throw new Error(`unmapped 0x${(addr + BigInt(i)).toString(16)}`);
      v = (v << 8n) | BigInt(b);
    }
    return v;
  }

  writeMem(addr: bigint, size: 1 | 2 | 4 | 8, value: bigint): void {
    for (let i = 0; i < size; i++) if (!this.mem.has(addr + BigInt(i))) throw new Error(`unmapped 0x${(addr + BigInt(i)).toString(16)}`);
    for (let i = 0; i < size; i++) this.mem.set(addr + BigInt(i), Number((value >> BigInt(8 * i)) & 0xffn));
    this.writes.push({ addr, size, value });
  }

  readCString(addr: bigint, max: number): string {
    let s = '';
    for (let i = 0n; s.length < max; i++) {
      const b = this.mem.get(addr + i);
      if (b === undefined) throw new Error(`unmapped 0x${(addr + i).toString(16)}`);
      if (b === 0) break;
      s += String.fromCharCode(b);
    }
    return s;
  }

  getReg(name: string): bigint {
    const v = this.regs.get(name);
    if (v === undefined) throw new Error(`no register ${name}`);
    return v;
  }

  setReg(name: string, value: bigint): void {
    this.regs.set(name, value);
    this.regWrites.push({ name, value });
  }

  printk(text: string): void { this.log.push(text); }
  dumpStack(): void { this.stacks++; }
  ktimeGet(): bigint { return this.time; }
  smpProcessorId(): number { return this.cpu; }
  jiffies(): bigint { return this.jif; }
  symbol(name: string): bigint | undefined { return this.symbols.get(name); }
  regsReturnValue(): bigint { return this.retval; }
  addrToSymbol(addr: bigint): SymbolizedAddress | undefined {
    for (const [name, a] of this.symbols) if (addr >= a && addr < a + 0x40n) return { name, offset: addr - a, size: 0x40n };
    return undefined;
  }

  get text(): string { return this.log.join(''); }
}
