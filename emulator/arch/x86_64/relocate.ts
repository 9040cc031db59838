/**
 * Moving copied x86_64 instructions to another address: the one place that
 * re-targets what a copy would otherwise get wrong, used by the kprobe
 * instruction slot (Linux arch/x86/kernel/kprobes/core.c __copy_instruction),
 * the optprobe detour buffer (opt.c copy_optimized_instructions: every
 * instruction of the detoured region goes through __copy_instruction) and,
 * later, the uprobes execute-out-of-line slot (any address space: addresses
 * are plain 64-bit values).
 *
 * What moves with the copy:
 *   - a RIP-relative memory operand (ModRM mod=00 rm=101): the disp32 is
 *     rewritten so that the copy addresses the same byte; when the new
 *     displacement does not fit in an int32 the copy is refused (Linux:
 *     "new displacement does not fit into s32"). With the 67 prefix the
 *     operand is eip-relative and truncated to 32 bits, so any displacement
 *     reaches (it is taken modulo 2^32);
 *   - a relative branch or call (rel8 / rel32: jmp, jcc, call, loop,
 *     jrcxz), by policy:
 *       'keep'     the displacement is copied unchanged. This is the kprobe
 *                  slot's way: the copy is single-stepped and
 *                  resume_execution moves ip back by (original - copy), which
 *                  lands a taken branch on its original target;
 *       'retarget' the displacement is rewritten to reach the original
 *                  target from the new place; a rel8 (or rel32) that no
 *                  longer reaches is refused. Like Linux, no instruction is
 *                  re-encoded (jcc rel8 is never widened to rel32): the copy
 *                  keeps the original's length, which the jump back and the
 *                  ip adjustment rely on.
 * Anything else is position-independent and copied as is. Refusals say
 * which instruction and why.
 */
import { fromVAddr, hex, toVAddr } from '../../memory/address';
import { decodeBytes } from './decoder';
import { mnemonicOf } from './disasm';
import type { Insn } from './insn';

export type BranchPolicy = 'keep' | 'retarget';

export interface RelocateOptions {
  /** what to do with a relative branch or call (see the file comment) */
  branches: BranchPolicy;
}

export interface Relocated {
  ok: true;
  /** the instructions as they must be written at the new address */
  bytes: Uint8Array;
  /** the instructions as decoded at their original address, in order */
  insns: Insn[];
}

export interface RelocationRefusal {
  ok: false;
  /** 'decode': the bytes are not whole instructions; 'reach': a target is out of reach from the new address */
  kind: 'decode' | 'reach';
  /** offset of the refused instruction in the copied bytes */
  offset: number;
  reason: string;
}

const INT32_MIN = -(2n ** 31n);
const INT32_LIMIT = 2n ** 31n;

function fits(v: bigint, bytes: number): boolean {
  if (bytes === 1) return v >= -128n && v < 128n;
  return v >= INT32_MIN && v < INT32_LIMIT;
}

function writeSigned(out: Uint8Array, off: number, bytes: number, v: bigint): void {
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  if (bytes === 1) dv.setInt8(off, Number(v));
  else dv.setInt32(off, Number(v), true);
}

/**
 * Relocate `code` (whole instructions decoded at `from`) so that it can run
 * at `to`. The input is not modified.
 */
export function relocate(code: Uint8Array, from: bigint, to: bigint, opts: RelocateOptions): Relocated | RelocationRefusal {
  const out = code.slice();
  const insns: Insn[] = [];
  for (let off = 0; off < code.length;) {
    const at = from + BigInt(off);
    const refuse = (kind: RelocationRefusal['kind'], why: string): RelocationRefusal =>
      ({ ok: false, kind, offset: off, reason: `${hex(at)}: ${why}` });
    const v = toVAddr(at);
    if (v === null) return refuse('decode', 'the address is not canonical');
    const insn = decodeBytes(code.subarray(off), v);
    if (!insn) {
      return refuse('decode', code.length - off < 15 ? 'the bytes are not a whole instruction' : 'the bytes do not decode as an instruction');
    }
    const l = insn.layout;
    const newNext = BigInt.asUintN(64, to + BigInt(off + insn.len));
    if (l.ripRel) {
      const target = fromVAddr(insn.disp);
      let nd = target - newNext;
      if (insn.asize === 4) nd = BigInt.asIntN(32, nd); // eip-relative: the address is taken modulo 2^32
      else nd = BigInt.asIntN(64, nd);
      if (!fits(nd, 4)) {
        return refuse('reach', `RIP-relative operand ${hex(target)} is out of rel32 reach of ${hex(to + BigInt(off))}`);
      }
      writeSigned(out, off + l.dispOff, 4, nd);
    } else if (opts.branches === 'retarget' && insn.def.ops.some(o => o.k === 'J')) {
      const target = fromVAddr(insn.target);
      const nd = BigInt.asIntN(64, target - newNext);
      const size = l.immLen;
      if (!fits(nd, size)) {
        return refuse('reach', `${mnemonicOf(insn)} rel${size * 8} to ${hex(target)} does not reach from `
          + `${hex(to + BigInt(off))} (a copied instruction is not re-encoded)`);
      }
      writeSigned(out, off + l.immOff, size, nd);
    }
    insns.push(insn);
    off += insn.len;
  }
  return { ok: true, bytes: out, insns };
}
