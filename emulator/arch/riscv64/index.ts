/**
 * The riscv64 port's implementation part: ArchOps (info.ts plus the CPU
 * factory, decoder / disassembler entry points, kernel-thread and user
 * process set-up, the block translator's front end: jit.ts). No kprobes
 * hooks yet.
 */
import type { ArchOps, Cpu, DecodedInsn } from '../types';
import type { FrontEnd } from '../../jit/ir';
import type { ArchPort } from '../portTypes';
import { riscv64UprobesHooks } from './uprobes';
import { riscv64ModuleRelocs } from './modules';
import { Memory, MemoryFault } from '../../memory/memory';
import { VAddr, mustVAddr, toVAddr } from '../../memory/address';
import { riscv64Info } from './info';
import { riscv64KprobesHooks } from './kprobes';
import { RvCpu } from './cpu';
import { decodeUnits } from './decoder';
import { toDecoded } from './disasm';
import { riscv64FrontEnd } from './jit';
import { riscv64SignalFrames } from './signal';

function asRv(cpu: Cpu): RvCpu {
  if (!(cpu instanceof RvCpu)) throw new Error(`riscv64: cpu ${cpu.id} is not a riscv64 cpu`);
  return cpu;
}

/** Decode from a byte source; null when undecodable, unreadable or misaligned. */
function decodeWith(byte: (k: number) => number, addr: bigint, sym?: (a: bigint) => string | undefined): DecodedInsn | null {
  const v: VAddr | null = toVAddr(addr);
  if (v === null || (v & 1) !== 0) return null;
  try {
    const insn = decodeUnits(k => byte(2 * k) | (byte(2 * k + 1) << 8), v);
    const bytes = Uint8Array.from({ length: insn.len }, (_, k) => byte(k));
    return toDecoded(insn, bytes, sym);
  } catch (e) {
    if (e instanceof MemoryFault || e instanceof RangeError) return null;
    throw e;
  }
}
const fromBytes = (bytes: Uint8Array) => (k: number): number => {
  if (k >= bytes.length) throw new RangeError('instruction runs past the supplied bytes');
  return bytes[k];
};

export const riscv64: ArchOps = {
  ...riscv64Info,
  hasCpu: true,
  jit: riscv64FrontEnd as unknown as FrontEnd<never, never>,

  createCpu(id: number, mem: Memory): Cpu { return new RvCpu(id, mem); },

  decode(mem: Memory, addr: bigint): DecodedInsn | null {
    const v = toVAddr(addr);
    if (v === null || !mem.isMapped(v, 2)) return null;
    try {
      // 2 bytes tell the length; a 4-byte instruction whose second half is unmapped is undecodable (null)
      return decodeWith(fromBytes(mem.readBytes(v, mem.isMapped(v, 4) ? 4 : 2)), addr);
    } catch (e) {
      if (e instanceof MemoryFault) return null; // device memory
      throw e;
    }
  },

  decodeBytes(bytes: Uint8Array, addr: bigint): DecodedInsn | null {
    return decodeWith(fromBytes(bytes), addr);
  },

  disassemble(bytes: Uint8Array, addr: bigint, symbolize?: (addr: bigint) => string | undefined): DecodedInsn | null {
    return decodeWith(fromBytes(bytes), addr, symbolize);
  },

  initThread(cpu: Cpu, entry: bigint, stackTop: bigint, arg: bigint, returnTo: bigint): void {
    const c = asRv(cpu);
    const top = mustVAddr(stackTop);
    c.userMode = false;
    c.setAddr(2, Math.floor(top / 16) * 16); // sp 16-byte aligned, as the psABI requires at a call
    c.setX(10, arg);
    c.setX(1, returnTo);
    c.setPc(entry);
  },

  initUser(cpu: Cpu, entry: bigint, sp: bigint): void {
    const c = asRv(cpu);
    c.userMode = true;
    c.setX(2, sp);
    c.setX(10, 0n); // a0: no rtld_fini
    c.setPc(entry);
  },

  signalFrames: riscv64SignalFrames,
};

export const port: ArchPort = { ops: riscv64, kprobes: riscv64KprobesHooks, uprobes: riscv64UprobesHooks, modules: riscv64ModuleRelocs };
