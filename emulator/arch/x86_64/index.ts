/**
 * The x86_64 port's implementation part: ArchOps (the info part,
 * info.ts, plus the CPU factory, decoder / disassembler entry points, thread
 * and user-process entry set-up) and the kprobes arch hooks.
 */
import type { FrontEnd } from '../../jit/ir';
import { x86SignalFrames } from './signal';
import { x86FrontEnd } from './jit';
import { ArchOps, Cpu, DecodedInsn } from '../types';
import type { ArchPort } from '../portTypes';
import { x86_64UprobesHooks } from './uprobes';
import { x86_64ModuleRelocs } from './modules';
import { Memory, MemoryFault } from '../../memory/memory';
import { toVAddr, mustVAddr } from '../../memory/address';
import { X86Cpu } from './cpu';
import { decodeBytes, decodeInsn } from './decoder';
import { disassembleBytes, toDecoded } from './disasm';
import { X86_REGS } from './regs';
import { x86_64Info } from './info';
import { x86_64KprobesHooks } from './kprobes';
import { x86_64HwDebugHooks } from './hwBreakpoint';

export { EM_X86_64 } from './info';

const R = (name: string): number => {
  const i = X86_REGS.findIndex(r => r.name === name);
  if (i < 0) throw new Error(`x86_64: no register ${name}`);
  return i;
};

function asX86(cpu: Cpu): X86Cpu {
  if (!(cpu instanceof X86Cpu)) throw new Error(`x86_64: cpu ${cpu.id} is not an x86_64 cpu`);
  return cpu;
}

/** Decode from an arbitrary byte source; null when undecodable or unreadable. */
function decodeWith(fetch: (k: number) => number, addr: bigint): DecodedInsn | null {
  const v = toVAddr(addr);
  if (v === null) return null;
  try {
    const insn = decodeInsn(fetch, v);
    return insn ? toDecoded(insn) : null;
  } catch (e) {
    if (e instanceof MemoryFault || e instanceof RangeError) return null;
    throw e;
  }
}

export const x86_64: ArchOps = {
  ...x86_64Info,
  jit: x86FrontEnd as unknown as FrontEnd<never, never>,

  createCpu(id: number, mem: Memory): Cpu { return new X86Cpu(id, mem); },

  decode(mem: Memory, addr: bigint): DecodedInsn | null {
    const base = toVAddr(addr);
    if (base === null) return null;
    return decodeWith(k => {
      const r = mem.regionAt(base + k);
      if (!r || r.device) throw new MemoryFault(base + k, 'read', !!r, false);
      return r.bytes[base + k - r.base];
    }, addr);
  },

  decodeBytes(bytes: Uint8Array, addr: bigint): DecodedInsn | null {
    const v = toVAddr(addr);
    if (v === null) return null;
    try {
      const insn = decodeBytes(bytes, v);
      return insn ? toDecoded(insn) : null;
    } catch (e) {
      if (e instanceof MemoryFault || e instanceof RangeError) return null;
      throw e;
    }
  },

  insnLength(bytes: Uint8Array, addr: bigint): number | null {
    const v = toVAddr(addr);
    if (v === null) return null;
    try {
      return decodeBytes(bytes, v)?.len ?? null;
    } catch (e) {
      if (e instanceof MemoryFault || e instanceof RangeError) return null;
      throw e;
    }
  },

  disassemble(bytes: Uint8Array, addr: bigint, symbolize?: (addr: bigint) => string | undefined): DecodedInsn | null {
    try {
      return disassembleBytes(bytes, addr, { symbolize });
    } catch (e) {
      if (e instanceof RangeError) return null;
      throw e;
    }
  },

  initThread(cpu: Cpu, entry: bigint, stackTop: bigint, arg: bigint, returnTo: bigint): void {
    const c = asX86(cpu);
    const top = mustVAddr(stackTop);
    const sp = Math.floor(top / 16) * 16 - 8; // after the push: rsp = 8 (mod 16), as after a call
    c.userMode = false;
    c.setRegAddr(4, sp);
    const ret = BigInt.asUintN(64, returnTo);
    c.mem.write32(sp, Number(ret & 0xffffffffn));
    c.mem.write32(sp + 4, Number(ret >> 32n));
    c.setReg(R('di'), arg);
    c.setPc(entry);
    c.setRflags(0x2);
  },

  signalFrames: x86SignalFrames,

  initUser(cpu: Cpu, entry: bigint, sp: bigint): void {
    const c = asX86(cpu);
    c.userMode = true;
    c.setReg(R('sp'), sp);
    c.setReg(R('dx'), 0n);
    c.setPc(entry);
    c.setRflags(0x202);
  },
};

export const port: ArchPort = {
  ops: x86_64, kprobes: x86_64KprobesHooks, uprobes: x86_64UprobesHooks, modules: x86_64ModuleRelocs, hwDebug: x86_64HwDebugHooks,
};
