/**
 * The aarch64 plug-in table (ArchOps): CPU factory, register file in Linux
 * arm64 pt_regs order, ABI facts, decoder / disassembler entry points,
 * thread and user-process entry set-up.
 */
import { ArchOps, Cpu, DecodedInsn } from '../types';
import { Memory } from '../../memory/memory';
import { toVAddr, mustVAddr } from '../../memory/address';
import { A64Cpu } from './cpu';
import { decodeWord } from './decoder';
import { toDecoded } from './disasm';
import { A64_REGS, a64Reg as R } from './regs';

/** ELF e_machine EM_AARCH64 */
export const EM_AARCH64 = 183;

/** brk #imm16 little-endian */
function brkBytes(imm: number): Uint8Array {
  const w = (0xd4200000 | (imm << 5)) >>> 0;
  return Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24);
}
/** KPROBES_BRK_IMM (arch/arm64/include/asm/brk-imm.h) */
export const KPROBES_BRK_IMM = 0x004;

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
  name: 'aarch64',
  elfMachines: [EM_AARCH64],
  regs: A64_REGS,
  abi: {
    argRegs: [0, 1, 2, 3, 4, 5, 6, 7].map(X),
    retReg: X(0),
    spReg: R('sp'),
    pcReg: R('pc'),
    fpReg: X(29),
    returnAddress: { kind: 'reg', reg: X(30) },
    flagsReg: R('pstate'),
    hypercall: { nr: X(8), args: [X(0), X(1), X(2), X(3)], ret: X(0) },
    syscall: { nr: X(8), args: [0, 1, 2, 3, 4, 5].map(X), ret: X(0) },
    pointerSize: 8,
    charSigned: false,
    // ESR_ELx exception classes reported as the trap number (EC_BRK64 0x3c, EC_UNKNOWN 0, EC_DABT 0x25)
    trapNumbers: { breakpoint: 0x3c, undefined: 0, pageFault: 0x25 },
  },
  breakpointInsn: brkBytes(KPROBES_BRK_IMM),
  breakpointPcOffset: 0,
  maxInsnLength: 4,
  minInsnLength: 4,
  returnInsn: Uint8Array.of(0xc0, 0x03, 0x5f, 0xd6),
  frameRecord: { savedFpOffset: 0, returnAddressOffset: 8 },
  // AArch64 DWARF numbers 0-30: x0..x30, 31: sp
  dwarfRegs: [...Array.from({ length: 31 }, (_, n) => X(n)), R('sp')],

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
