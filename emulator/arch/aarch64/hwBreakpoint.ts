/**
 * The arm64 half of hardware breakpoints (Linux arch/arm64/kernel/
 * hw_breakpoint.c): six breakpoint register pairs DBGBVR<n>/DBGBCR<n>_EL1
 * for execute breakpoints, four watchpoint pairs DBGWVR<n>/DBGWCR<n>_EL1
 * for data, as ID_AA64DFR0_EL1 advertises (debugRegs.ts). install and
 * uninstall write them through the MSR path (a64WriteSysreg), so the CPU
 * decodes them into its match unit exactly as for a guest's own MSRs.
 *
 * Requests, as hw_breakpoint_arch_parse / arch_build_bp_info accept them:
 *  - data ('r', 'w', 'rw'; loads only ARE expressible: LSC = 01): 1..8
 *    bytes inside one aligned doubleword. DBGWVR holds the doubleword and
 *    BAS the bytes (Linux aligns the address down to 8 and shifts the
 *    length mask by the offset; a span that would leave the doubleword is
 *    refused here with -EINVAL, where Linux's 8-bit BAS field would drop
 *    the bytes past it).
 *  - execute ('x'): one A64 instruction, BAS = 0b1111. Length 4 is the
 *    A64 rule; like Linux (its "perf assumes sizeof(long)" fix-up) any
 *    length 1..8 is accepted and programmed as the 4-byte instruction. The
 *    address must be 4-byte aligned (-EINVAL otherwise: no A64 instruction
 *    starts there; Linux would program a BAS that cannot match).
 *  - privilege as Linux's arch_check_bp_in_kernelspace: a kernel address
 *    (the upper, TTBR1 half) gets PMC = 01 (EL1) and enables MDSCR_EL1.KDE
 *    and MDE (enable_debug_monitors(DBG_ACTIVE_EL1)); a user address PMC =
 *    10 (EL0) and MDE only. Combined EL0/EL1 pairs are never programmed.
 * uninstall clears the pair's E bit and leaves MDSCR_EL1 as it is (Linux
 * counts users of MDE/KDE; with no pair enabled they have no effect here).
 * acknowledge has nothing to clear: an arm64 debug exception reports
 * through ESR_EL1 / FAR_EL1, written anew by each exception (x86 DR6's
 * sticky status bits have no counterpart).
 */
import type { Cpu } from '../types';
import type { HwBpRequest, HwDebugArchHooks } from '../../hwbp/archHooks';
import { Errno } from '../../kernel/abi';
import { toVAddr } from '../../memory/address';
import { A64Cpu } from './cpu';
import { A64_BRPS, A64_WRPS, DBGCR_E, MDSCR_KDE, MDSCR_MDE } from './debugRegs';
import { a64ReadSysreg, a64WriteSysreg } from './exec/system';

/** DBGxCR.PMC: privilege of the match */
const PMC_EL1 = 1, PMC_EL0 = 2;
/** DBGWCR.LSC by request type */
const LSC: Record<string, number> = { r: 1, w: 2, rw: 3 };
/** A64 instruction: DBGBCR.BAS selects all four bytes */
const BAS_A64 = 0xf;

function asA64(cpu: Cpu): A64Cpu {
  if (!(cpu instanceof A64Cpu)) throw new Error(`aarch64: cpu ${cpu.id} is not an aarch64 cpu`);
  return cpu;
}

function regName(pool: 'exec' | 'data', index: number, reg: 'V' | 'C'): string {
  const max = pool === 'exec' ? A64_BRPS : A64_WRPS;
  if (!Number.isInteger(index) || index < 0 || index >= max) throw new RangeError(`aarch64: no ${pool === 'exec' ? 'breakpoint' : 'watchpoint'} register pair ${index} (there are ${max})`);
  return `DBG${pool === 'exec' ? 'B' : 'W'}${reg}R${index}_EL1`;
}

/** MSR at EL1 (the hooks are the kernel's code) */
function msr(c: A64Cpu, name: string, v: bigint): void {
  if (!a64WriteSysreg(c, name, v)) throw new Error(`aarch64: ${name} is not writable`);
}

function validate(req: HwBpRequest): { errno: number; reason: string } | null {
  const einval = (reason: string): { errno: number; reason: string } => ({ errno: -Errno.EINVAL, reason });
  if (toVAddr(req.addr) === null) return einval(`address 0x${BigInt.asUintN(64, req.addr).toString(16)} is not a canonical 48-bit address`);
  if (!Number.isInteger(req.len) || req.len < 1 || req.len > 8) return einval(`arm64 breakpoint and watchpoint lengths are 1..8 bytes, not ${req.len}`);
  if (req.type === 'x') {
    return (req.addr & 3n) === 0n ? null : einval('an execute breakpoint needs a 4-byte aligned address (A64 instructions are 4 bytes, 4-aligned)');
  }
  if (LSC[req.type] === undefined) return einval(`unknown breakpoint type ${String(req.type)}`);
  const off = Number(req.addr & 7n);
  if (off + req.len > 8) return einval(`a watchpoint covers bytes of one aligned doubleword (DBGWVR holds it, BAS selects its bytes): ${req.len} bytes at offset ${off} cross into the next`);
  return null;
}

export const aarch64HwDebugHooks: HwDebugArchHooks = {
  pools: { exec: A64_BRPS, data: A64_WRPS },

  registerName(pool: 'exec' | 'data', index: number): string { return regName(pool, index, 'V'); },

  validate,

  install(cpu: Cpu, pool: 'exec' | 'data', index: number, req: HwBpRequest): void {
    const vr = regName(pool, index, 'V'), cr = regName(pool, index, 'C');
    const bad = validate(req);
    if (bad !== null) throw new RangeError(`aarch64: ${vr} cannot hold ${req.type} len ${req.len}: ${bad.reason} (validate first)`);
    if ((pool === 'exec') !== (req.type === 'x')) throw new RangeError(`aarch64: a ${req.type} request goes to the ${req.type === 'x' ? 'exec' : 'data'} pool, not ${pool}`);
    const c = asA64(cpu);
    const kernel = (toVAddr(req.addr) ?? 0) < 0;
    const pmc = kernel ? PMC_EL1 : PMC_EL0;
    // enable_debug_monitors: MDE, and KDE for EL1 pairs
    const mdscr = a64ReadSysreg(c, 'MDSCR_EL1') | BigInt(MDSCR_MDE | (kernel ? MDSCR_KDE : 0));
    msr(c, 'MDSCR_EL1', mdscr);
    let ctrl: number;
    if (req.type === 'x') {
      msr(c, vr, BigInt.asUintN(64, req.addr) & ~3n);
      ctrl = (BAS_A64 << 5) | (pmc << 1) | DBGCR_E;
    } else {
      const off = Number(req.addr & 7n);
      msr(c, vr, BigInt.asUintN(64, req.addr) & ~7n);
      ctrl = ((((1 << req.len) - 1) << off) << 5) | (LSC[req.type] << 3) | (pmc << 1) | DBGCR_E;
    }
    msr(c, cr, BigInt(ctrl));
  },

  uninstall(cpu: Cpu, pool: 'exec' | 'data', index: number): void {
    const cr = regName(pool, index, 'C');
    const c = asA64(cpu);
    msr(c, cr, a64ReadSysreg(c, cr) & ~BigInt(DBGCR_E));
  },

  acknowledge(cpu: Cpu): void {
    asA64(cpu); // nothing to clear on arm64 (ESR/FAR are per exception)
  },

  snapshot(cpu: Cpu): { name: string; value: bigint }[] { return asA64(cpu).dbg.snapshot(); },
};
