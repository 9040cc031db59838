/**
 * dataTarget(): what a data breakpoint on an expression watches (DAP
 * dataBreakpointInfo). The handler language finds the address and size of
 * an lvalue (handlers/addressOf.ts); a bare name the debug info does not
 * describe falls back to the ELF symbol table (its value and st_size). The
 * expression is evaluated over the stopped CPU's environment when the
 * debugger has one, else over kernel memory alone (no registers).
 */
import type { CompileOptions, HandlerEnv, SymbolizedAddress } from '../handlers';
import { addressOf, isIdentifier, noAddressMessage } from '../handlers';
import type { KernelApi } from '../kernel/types';
import { hex, mustVAddr } from '../memory/address';
import { whereOf } from './targets';

/** A data breakpoint's place: address, bytes, and a line for the user ("boot_counter: 8 bytes at 0x... <boot_counter>"). */
export interface DataTarget {
  addr: bigint;
  len: number;
  description: string;
}

/** The most bytes one debug register watches. */
const MAX_WATCH = 8;

export function resolveDataTarget(kernel: KernelApi, copts: CompileOptions, expression: string, env?: HandlerEnv): DataTarget | string {
  const text = expression.trim();
  const describe = (addr: bigint, len: number, type?: string): DataTarget | string => {
    if (len > MAX_WATCH) return `'${text}' is ${len} bytes: a debug register watches at most ${MAX_WATCH}; watch one of its members or elements`;
    if (len <= 0) return noAddressMessage(text);
    const sym = kernel.image.symbols.resolve(addr) ? ` <${whereOf(kernel.image, addr)}>` : '';
    return { addr, len, description: `${text}: ${len} byte${len === 1 ? '' : 's'}${type ? ` (${type})` : ''} at ${hex(addr)}${sym}` };
  };
  // a bare name without debug info: the symbol table's object (jiffies-like globals of images built without -g)
  if (isIdentifier(text) && !text.includes('.') && copts.programName?.(text) === undefined) {
    const s = kernel.image.symbols.lookup(text);
    if (s && s.type !== 'func') return describe(s.value, s.size > 0n ? Number(s.size) : 8);
  }
  const r = addressOf(text, env ?? memoryEnv(kernel), copts);
  if (!r.ok) return r.message;
  return describe(r.addr, r.size, r.typeName);
}

/** A handler environment with kernel memory and symbols only: no CPU is stopped. */
function memoryEnv(kernel: KernelApi): HandlerEnv {
  const mem = kernel.mem;
  const noCpu = (): never => { throw new Error('no stopped CPU: registers are not available (a data breakpoint expression is evaluated over memory only)'); };
  return {
    readMem(addr, size): bigint {
      const v = mustVAddr(addr);
      switch (size) {
        case 1: return BigInt(mem.read8(v));
        case 2: return BigInt(mem.read16(v));
        case 4: return BigInt(mem.read32(v) >>> 0);
        case 8: return BigInt.asUintN(64, mem.read64(v));
      }
    },
    writeMem(): void { throw new Error('a data breakpoint expression does not write memory'); },
    readCString(addr, max): string { return mem.readCString(mustVAddr(addr), max); },
    getReg: noCpu,
    setReg: noCpu,
    current: { pid: 0, comm: 'swapper/0', mm: 0n },
    printk(): void { /* nothing to print to */ },
    dumpStack(): void { /* no stack */ },
    ktimeGet: () => kernel.timeNs(),
    smpProcessorId: () => 0,
    jiffies: () => kernel.jiffies(),
    symbol: (name: string) => kernel.image.symbols.lookup(name)?.value,
    regsReturnValue: noCpu,
    addrToSymbol(addr: bigint): SymbolizedAddress | undefined {
      const r = kernel.image.symbols.resolve(addr);
      return r ? { name: r.sym.name, offset: r.offset } : undefined;
    },
  };
}
