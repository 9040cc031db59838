/**
 * The aarch64 port's implementation part: ArchOps (the info part, info.ts,
 * plus the CPU factory, decoder / disassembler entry points, thread and
 * user-process entry set-up). The arm64 kprobes hooks are not ported yet.
 */
import { a64SignalFrames } from './signal';
import { aarch64KprobesHooks } from './kprobes';
import { ArchOps, Cpu, DecodedInsn } from '../types';
import { Memory } from '../../memory/memory';
import { toVAddr, mustVAddr } from '../../memory/address';
import { A64Cpu } from './cpu';
import { decodeWord } from './decoder';
import { toDecoded } from './disasm';
import type { ArchPort } from '../portTypes';
import { aarch64UprobesHooks } from './uprobes';
import { aarch64ModuleRelocs } from './modules';
import { aarch64HwDebugHooks } from './hwBreakpoint';
import { a64Reg as R } from './regs';
import { aarch64Info } from './info';
import { aarch64FrontEnd } from './jit';
import type { FrontEnd } from '../../jit/ir';

export { EM_AARCH64 } from './info';

function asA64(cpu: Cpu): A64Cpu {
  if (!(cpu instanceof A64Cpu)) throw new Error(`aarch64: cpu ${cpu.id} is not an aarch64 cpu`);
  return cpu;
}

function decodeFromBytes(b: Uint8Array, addr: bigint): DecodedInsn | null {
  const v = toVAddr(addr);
  if (v === null || b.length < 4 || (v & 3) !== 0) return null;
  const insn = decodeWord(b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24), v);
  return insn ? toDecoded(insn) : null;
}

const X = (n: number): number => R(`x${n}`);

export const aarch64: ArchOps = {
  ...aarch64Info,
  jit: aarch64FrontEnd as unknown as FrontEnd<never, never>,

  createCpu(id: number, mem: Memory): Cpu { return new A64Cpu(id, mem); },

  decode(mem: Memory, addr: bigint): DecodedInsn | null {
    const v = toVAddr(addr);
    if (v === null || !mem.isMapped(v, 4)) return null;
    return decodeFromBytes(mem.readBytes(v, 4), addr);
  },

  decodeBytes(bytes: Uint8Array, addr: bigint): DecodedInsn | null { return decodeFromBytes(bytes, addr); },

  initThread(cpu: Cpu, entry: bigint, stackTop: bigint, arg: bigint, returnTo: bigint): void {
    const c = asA64(cpu);
    const top = mustVAddr(stackTop);
    c.userMode = false;
    c.setAddr(31, Math.floor(top / 16) * 16);
    c.setReg(X(0), arg);
    c.setReg(X(30), returnTo);
    c.setReg(X(29), 0n);
    c.setPc(entry);
    c.setPstate(0);
    c.daif = 0;
  },

  signalFrames: a64SignalFrames,

  initUser(cpu: Cpu, entry: bigint, sp: bigint): void {
    const c = asA64(cpu);
    c.userMode = true;
    c.setReg(R('sp'), sp);
    c.setReg(X(0), 0n);
    c.setPc(entry);
    c.setPstate(0);
    c.daif = 0;
  },
};

/** The aarch64 port's implementation: the CPU and the arm64 halves of kprobes, uprobes, module relocations and hw_breakpoint. */
export const port: ArchPort = { ops: aarch64, kprobes: aarch64KprobesHooks, uprobes: aarch64UprobesHooks, modules: aarch64ModuleRelocs, hwDebug: aarch64HwDebugHooks };
