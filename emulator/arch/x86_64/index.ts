/**
 * The x86_64 plug-in table (ArchOps): CPU factory, register file in Linux
 * pt_regs order, ABI facts, decoder / disassembler entry points, thread and
 * user-process entry set-up.
 */
import { ArchOps, Cpu, DecodedInsn } from '../types';
import { Memory, MemoryFault } from '../../memory/memory';
import { toVAddr, mustVAddr } from '../../memory/address';
import { X86Cpu } from './cpu';
import { decodeInsn, MAX_INSN_LEN } from './decoder';
import { toDecoded } from './disasm';
import { X86_REGS } from './regs';

/** ELF e_machine EM_X86_64 */
export const EM_X86_64 = 62;

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
  name: 'x86_64',
  elfMachines: [EM_X86_64],
  regs: X86_REGS,
  abi: {
    argRegs: [R('di'), R('si'), R('dx'), R('cx'), R('r8'), R('r9')],
    retReg: R('ax'),
    spReg: R('sp'),
    pcReg: R('ip'),
    fpReg: R('bp'),
    returnAddress: { kind: 'stack', offset: 0 },
    flagsReg: R('flags'),
    hypercall: { nr: R('ax'), args: [R('di'), R('si'), R('dx'), R('cx')], ret: R('ax') },
    syscall: { nr: R('ax'), args: [R('di'), R('si'), R('dx'), R('r10'), R('r8'), R('r9')], ret: R('ax') },
    pointerSize: 8,
    charSigned: true,
    trapNumbers: { divide: 0, singleStep: 1, breakpoint: 3, undefined: 6, generalProtection: 13, pageFault: 14 },
  },
  breakpointInsn: Uint8Array.of(0xcc),
  breakpointPcOffset: 1,
  maxInsnLength: MAX_INSN_LEN,
  minInsnLength: 1,
  returnInsn: Uint8Array.of(0xc3),
  frameRecord: { savedFpOffset: 0, returnAddressOffset: 8, callerSpOffset: 16, pushFp: { bytes: Uint8Array.of(0x55), spAdjust: 8 } },
  // x86_64 psABI DWARF numbers 0-16: rax rdx rcx rbx rsi rdi rbp rsp r8-r15, return address (rip)
  dwarfRegs: ['ax', 'dx', 'cx', 'bx', 'si', 'di', 'bp', 'sp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'ip'].map(R),

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
    return decodeWith(k => {
      if (k >= bytes.length) throw new RangeError('instruction runs past the supplied bytes');
      return bytes[k];
    }, addr);
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

  initUser(cpu: Cpu, entry: bigint, sp: bigint): void {
    const c = asX86(cpu);
    c.userMode = true;
    c.setReg(R('sp'), sp);
    c.setReg(R('dx'), 0n);
    c.setPc(entry);
    c.setRflags(0x202);
  },
};
