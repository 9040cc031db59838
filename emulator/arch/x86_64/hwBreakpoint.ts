/**
 * The x86_64 half of hardware breakpoints (Linux arch/x86/kernel/
 * hw_breakpoint.c): four debug address registers DR0-DR3 shared by execute
 * and data breakpoints, DR7 holding each one's enable, condition and
 * length, DR6 the status the #DB handler reads. install/uninstall program
 * them as MOV to DRn would (X86Cpu.writeDr), so the CPU decodes them into
 * its match unit exactly as for a guest's own writes.
 *
 * Encoding as Linux's encode_dr7 does: the global enable Gn (kernel
 * breakpoints are per CPU, never per task) and GE, with R/W and LEN in
 * DR7's nibble for n. Requests: data lengths 1, 2, 4, 8 at an address
 * aligned to the length; execute with length 1 (Linux passes
 * X86_BREAKPOINT_LEN_X, sizeof(long), for execute and encodes it as LEN 00:
 * here the request states the instruction's first byte, length 1); reads
 * only are not expressible on x86 (R/W 10 is I/O).
 */
import type { Cpu } from '../types';
import type { HwBpRequest, HwDebugArchHooks } from '../../hwbp/archHooks';
import { Errno } from '../../kernel/abi';
import { toVAddr } from '../../memory/address';
import { X86Cpu, DR6_BS, DR6_TRAP_BITS, DR7_GE } from './cpu';

/** DR7 R/W encodings */
const RW_EXEC = 0, RW_WRITE = 1, RW_RW = 3;
/** DR7 LEN encoding by byte count */
const LEN_BITS: Record<number, number> = { 1: 0, 2: 1, 4: 3, 8: 2 };

function asX86(cpu: Cpu): X86Cpu {
  if (!(cpu instanceof X86Cpu)) throw new Error(`x86_64: cpu ${cpu.id} is not an x86_64 cpu`);
  return cpu;
}

/** DR7 bits of breakpoint n: Ln, Gn and its R/W + LEN nibble */
function dr7Mask(n: number): number {
  return ((3 << (2 * n)) | (0xf << (16 + 4 * n))) >>> 0;
}

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index > 3) throw new RangeError(`x86_64: no debug register DR${index}`);
}

export const x86_64HwDebugHooks: HwDebugArchHooks = {
  pools: { data: 4, exec: 'shared' },

  registerName(_pool: 'exec' | 'data', index: number): string {
    checkIndex(index);
    return `DR${index}`;
  },

  validate(req: HwBpRequest): { errno: number; reason: string } | null {
    const einval = (reason: string): { errno: number; reason: string } => ({ errno: -Errno.EINVAL, reason });
    if (toVAddr(req.addr) === null) return einval(`address 0x${BigInt.asUintN(64, req.addr).toString(16)} is not canonical`);
    if (req.type === 'r') return einval('x86 debug registers cannot watch reads only (use rw)');
    if (req.type === 'x') return req.len === 1 ? null : einval(`an execute breakpoint has length 1 (the instruction's first byte), not ${req.len}`);
    if (LEN_BITS[req.len] === undefined) return einval(`x86 debug registers watch 1, 2, 4 or 8 bytes, not ${req.len}`);
    if ((req.addr & BigInt(req.len - 1)) !== 0n) return einval(`a ${req.len}-byte watch needs an address aligned to ${req.len}`);
    return null;
  },

  install(cpu: Cpu, _pool: 'exec' | 'data', index: number, req: HwBpRequest): void {
    checkIndex(index);
    const c = asX86(cpu);
    const rw = req.type === 'x' ? RW_EXEC : req.type === 'w' ? RW_WRITE : RW_RW;
    const len = req.type === 'x' ? 0 : LEN_BITS[req.len];
    if (len === undefined || req.type === 'r') throw new RangeError(`x86_64: DR${index} cannot hold ${req.type} len ${req.len} (validate first)`);
    c.writeDr(index, req.addr);
    const dr7 = Number(c.readDr(7)) & ~dr7Mask(index);
    c.writeDr(7, BigInt((dr7 | (((len << 2) | rw) << (16 + 4 * index)) | (2 << (2 * index)) | DR7_GE) >>> 0));
  },

  uninstall(cpu: Cpu, _pool: 'exec' | 'data', index: number): void {
    checkIndex(index);
    const c = asX86(cpu);
    c.writeDr(7, BigInt((Number(c.readDr(7)) & ~dr7Mask(index)) >>> 0));
  },

  acknowledge(cpu: Cpu): void {
    const c = asX86(cpu);
    c.writeDr(6, BigInt((Number(c.readDr(6)) & ~(DR6_TRAP_BITS | DR6_BS)) >>> 0));
  },

  snapshot(cpu: Cpu): { name: string; value: bigint }[] {
    const c = asX86(cpu);
    return [0, 1, 2, 3, 6, 7].map(n => ({ name: `DR${n}`, value: c.readDr(n) }));
  },
};
