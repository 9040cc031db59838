/**
 * The call stack of a stopped Linux kernel through its ORC tables (Debian's
 * kernel is built with CONFIG_UNWINDER_ORC and without frame pointers): the
 * vmlinux's `.orc_unwind_ip` (sorted 32-bit offsets, each relative to its
 * own place) and `.orc_unwind` (6-byte entries: sp_offset, bp_offset, then
 * sp_reg:4 bp_reg:4 and type:2 end:1, as Linux 6.1's asm/orc_types.h lays
 * them out). The walk follows Linux's own unwind_next_frame
 * (arch/x86/kernel/unwind_orc.c): the previous frame's stack pointer from
 * SP or BP (or through them), the return address below it for a call
 * frame, a full pt_regs (an interrupt or exception entry) or an iret frame
 * for the two register types, BP from the stack when the entry says so.
 * The stack is read through the guest's page tables; a frame it cannot
 * read ends the walk.
 */
import type { ElfImage } from '../elf/types';

export interface LinuxFrame {
  /** the frame's program counter (a return address for the outer frames) */
  pc: bigint;
  /** the stack pointer in that frame */
  sp: bigint;
  /** the frame was entered by an interrupt or exception (pt_regs on the stack) */
  signal?: boolean;
  /** the frame's canonical frame address (its caller's stack pointer before the call), when ORC gives it */
  cfa?: bigint;
  /** rbp in that frame, when known */
  bp?: bigint;
}

const REG_UNDEFINED = 0, REG_PREV_SP = 1, REG_BP = 4, REG_SP = 5, REG_BP_INDIRECT = 8, REG_SP_INDIRECT = 9;
const TYPE_CALL = 0, TYPE_REGS = 1, TYPE_REGS_PARTIAL = 2;
/** struct pt_regs offsets (x86_64) */
const PT_BP = 32, PT_IP = 128, PT_SP = 152;
/** IRET frame: ip, cs, flags, sp, ss */
const IRET_SP = 24;
const MAX_FRAMES = 64;

interface OrcTable {
  /** each entry's ip as an offset from the .orc_unwind_ip section's address */
  ips: Float64Array;
  base: bigint;
  entries: DataView;
}

const tables = new WeakMap<ElfImage, OrcTable | null>();

function orcTable(image: ElfImage): OrcTable | null {
  if (tables.has(image)) return tables.get(image)!;
  const ipSec = image.section('.orc_unwind_ip'), orcSec = image.section('.orc_unwind');
  let t: OrcTable | null = null;
  if (ipSec && orcSec && ipSec.data.length > 0) {
    const n = Math.floor(ipSec.data.length / 4);
    const dv = new DataView(ipSec.data.buffer, ipSec.data.byteOffset, ipSec.data.length);
    const ips = new Float64Array(n);
    for (let i = 0; i < n; i++) ips[i] = 4 * i + dv.getInt32(4 * i, true);
    t = { ips, base: ipSec.addr, entries: new DataView(orcSec.data.buffer, orcSec.data.byteOffset, orcSec.data.length) };
  }
  tables.set(image, t);
  return t;
}

interface OrcEntry { spOffset: number; bpOffset: number; spReg: number; bpReg: number; type: number; end: boolean }

function orcFind(t: OrcTable, ip: bigint): OrcEntry | undefined {
  const rel = Number(ip - t.base);
  const ips = t.ips;
  let lo = 0, hi = ips.length - 1, at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ips[mid] <= rel) { at = mid; lo = mid + 1; } else hi = mid - 1;
  }
  if (at < 0 || 6 * at + 6 > t.entries.byteLength) return undefined;
  const e = t.entries, o = 6 * at;
  const regs = e.getUint8(o + 4), flags = e.getUint8(o + 5);
  return { spOffset: e.getInt16(o, true), bpOffset: e.getInt16(o + 2, true), spReg: regs & 0xf, bpReg: regs >> 4, type: flags & 3, end: (flags & 4) !== 0 };
}

/**
 * Frames from the registers of a stopped CPU (the innermost first). Without
 * ORC tables in the image: the top frame only.
 */
export function orcFrames(image: ElfImage, regs: { rip: bigint; rsp: bigint; rbp: bigint }, read64: (a: bigint) => bigint | undefined): LinuxFrame[] {
  const frames: LinuxFrame[] = [{ pc: regs.rip, sp: regs.rsp, signal: true, bp: regs.rbp }];
  const t = orcTable(image);
  if (!t) return frames;
  let ip = regs.rip, sp = regs.rsp, bp = regs.rbp, signal = true;
  /** the last pt_regs seen (BP of an UNDEFINED bp_reg comes from it) */
  let ptRegs: bigint | null = null;
  const u = (v: bigint): bigint => BigInt.asUintN(64, v);
  for (let k = 0; k < MAX_FRAMES; k++) {
    const orc = orcFind(t, signal ? ip : ip - 1n);
    if (!orc || orc.end || orc.spReg === REG_UNDEFINED) break;
    let cfa: bigint | undefined;
    switch (orc.spReg) {
      case REG_SP: cfa = u(sp + BigInt(orc.spOffset)); break;
      case REG_BP: cfa = u(bp + BigInt(orc.spOffset)); break;
      case REG_SP_INDIRECT: cfa = read64(sp); if (cfa !== undefined) cfa = u(cfa + BigInt(orc.spOffset)); break;
      case REG_BP_INDIRECT: cfa = read64(u(bp + BigInt(orc.spOffset))); break;
      default: cfa = undefined; // R10 / R13 / DI / DX bases need the full registers of an entry path: not followed
    }
    if (cfa === undefined) break;
    let nextIp: bigint | undefined, nextSp: bigint | undefined;
    const prevRegs = ptRegs;
    ptRegs = null;
    if (orc.type === TYPE_CALL) {
      nextIp = read64(cfa - 8n);
      nextSp = cfa;
      signal = false;
    } else if (orc.type === TYPE_REGS) {
      nextIp = read64(cfa + BigInt(PT_IP));
      nextSp = read64(cfa + BigInt(PT_SP));
      ptRegs = cfa;
      signal = true;
    } else if (orc.type === TYPE_REGS_PARTIAL) {
      nextIp = read64(cfa);
      nextSp = read64(cfa + BigInt(IRET_SP));
      signal = true;
    } else break;
    if (nextIp === undefined || nextSp === undefined) break;
    if (orc.type === TYPE_CALL) frames[frames.length - 1].cfa = cfa;
    let nextBp: bigint | undefined = bp;
    if (orc.bpReg === REG_PREV_SP) nextBp = read64(u(cfa + BigInt(orc.bpOffset)));
    else if (orc.bpReg === REG_BP) nextBp = read64(u(bp + BigInt(orc.bpOffset)));
    else if (orc.bpReg === REG_UNDEFINED && ptRegs !== null) nextBp = read64(ptRegs + BigInt(PT_BP));
    else if (orc.bpReg === REG_UNDEFINED && prevRegs !== null) nextBp = bp;
    if (nextBp === undefined) break;
    // a user-space return (the syscall / interrupt came from user mode) ends the kernel's stack
    if (nextIp < 0xffff800000000000n) break;
    if (nextSp <= sp && orc.type === TYPE_CALL) break; // the stack grows down: an outer frame is above
    ip = nextIp; sp = nextSp; bp = nextBp;
    frames.push({ pc: ip, sp, signal, bp });
  }
  return frames;
}
