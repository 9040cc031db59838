/**
 * Test harness for the riscv64 CPU units (riscv64-*.test.ts): a small address
 * space (code RWX, data, stack), registers by ABI name, bytes from hex.
 * Programs are llvm-mc encodings (the assembly is in each test's comment).
 */
import { Memory, PERM_R, PERM_W, PERM_X, PERM_U } from '../../../emulator/memory/memory';
import { riscv64 } from '../../../emulator/arch/riscv64/index';
import { RvCpu } from '../../../emulator/arch/riscv64/cpu';
import { Reservations } from '../../../emulator/arch/riscv64/reservation';
import { ABI } from '../../../emulator/arch/riscv64/disasm';
import type { RunResult } from '../../../emulator/arch/types';

export const CODE = 0x400000;
export const DATA = 0x600000;
export const STACK_TOP = 0x7ff000;

export interface RvMachine { mem: Memory; cpu: RvCpu }

export function hexBytes(s: string): Uint8Array {
  const clean = s.replace(/[^0-9a-fA-F]/g, '');
  return Uint8Array.from({ length: clean.length / 2 }, (_, k) => parseInt(clean.slice(2 * k, 2 * k + 2), 16));
}

export function memory(user = false): Memory {
  const mem = new Memory('rv64-test');
  const u = user ? PERM_U : 0;
  mem.map(CODE, 0x10000, PERM_R | PERM_W | PERM_X | u, 'text');
  mem.map(DATA, 0x10000, PERM_R | PERM_W | u, 'data');
  mem.map(STACK_TOP - 0x10000, 0x10000, PERM_R | PERM_W | u, 'stack');
  return mem;
}

/** A CPU at CODE running `code` (hex bytes), sp = STACK_TOP, its own reservation set unless given. */
export function machine(code: string, opts: { user?: boolean; mem?: Memory; id?: number; reservations?: Reservations } = {}): RvMachine {
  const mem = opts.mem ?? memory(opts.user);
  if (!opts.mem) mem.writeBytes(CODE, hexBytes(code));
  const cpu = new RvCpu(opts.id ?? 0, mem, opts.reservations ?? new Reservations());
  cpu.userMode = !!opts.user;
  cpu.setPc(BigInt(CODE));
  set(cpu, 'sp', BigInt(STACK_TOP));
  return { mem, cpu };
}

function idx(name: string): number {
  const i = ABI.indexOf(name);
  if (i < 0) throw new Error(`no register ${name}`);
  return i;
}
/** x register by ABI name, unsigned */
export function get(cpu: RvCpu, name: string): bigint { return cpu.x(idx(name)); }
/** x register by ABI name, signed */
export function gets(cpu: RvCpu, name: string): bigint { return BigInt.asIntN(64, cpu.x(idx(name))); }
export function set(cpu: RvCpu, name: string, v: bigint): void { cpu.setX(idx(name), v); }

/** Run until a trap (programs end with ebreak). */
export function run(cpu: RvCpu, budget = 10000): RunResult { return cpu.run(budget); }
export { riscv64 };
