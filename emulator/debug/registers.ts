/**
 * A CPU's registers as the debugger shows them: one row per ArchOps
 * register (pt_regs order), hex values padded to the register's width;
 * writable (decimal, 0x hex, negative values wrap to the register width).
 */
import type { ArchOps, Cpu } from '../arch/types';

/** One register of a CPU as shown. */
export interface RegisterRow {
  name: string;
  /** `0x` + the value in hex, padded to the register's width */
  value: string;
  bits: number;
}

export function formatRegister(value: bigint, bits: number): string {
  return '0x' + BigInt.asUintN(bits, value).toString(16).padStart(Math.ceil(bits / 4), '0');
}

export function registerRows(arch: ArchOps, cpu: Cpu): RegisterRow[] {
  return arch.regs.map((r, i) => {
    const v = i === arch.abi.pcReg ? cpu.getPc() : cpu.getReg(i);
    return { name: r.name, value: formatRegister(v, r.bits), bits: r.bits };
  });
}

/** Parses a register value typed by the user; a clear error when it is not a number. */
export function parseRegisterValue(text: string, bits: number, name: string): bigint {
  const t = text.trim().replace(/_/g, '');
  let v: bigint;
  try {
    if (!/^-?(0x[0-9a-f]+|0b[01]+|0o[0-7]+|\d+)$/i.test(t)) throw new Error('syntax');
    v = t.startsWith('-') ? -BigInt(t.slice(1)) : BigInt(t);
  } catch {
    throw new Error(`register ${name}: "${text}" is not a number (use decimal or 0x hex)`);
  }
  const max = (1n << BigInt(bits)) - 1n;
  const min = -(1n << BigInt(bits - 1));
  if (v > max || v < min) throw new Error(`register ${name}: ${text} does not fit in ${bits} bits`);
  return BigInt.asUintN(bits, v);
}

/** Writes a register by name; returns the value as displayed afterwards. */
export function setRegister(arch: ArchOps, cpu: Cpu, name: string, text: string): string {
  const i = arch.regs.findIndex(r => r.name === name);
  if (i < 0) throw new Error(`no register named ${name} on ${arch.name}`);
  const bits = arch.regs[i].bits;
  const v = parseRegisterValue(text, bits, name);
  if (i === arch.abi.pcReg) cpu.setPc(v); else cpu.setReg(i, v);
  return formatRegister(i === arch.abi.pcReg ? cpu.getPc() : cpu.getReg(i), bits);
}
