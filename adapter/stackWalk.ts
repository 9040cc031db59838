/**
 * Frame-pointer stack walk for the DAP stackTrace request. The first frame
 * is the pc; callers come from the frame-record chain while the frame
 * pointer stays inside the task's stack and keeps growing (a corrupt chain
 * ends the walk, it never throws).
 */
import { ArchOps, Cpu } from '../emulator/arch/types';
import { Memory } from '../emulator/memory/memory';
import { toVAddr } from '../emulator/memory/address';
import { frameLayout } from './frameLayout';

export interface WalkedFrame {
  /** pc of the frame (the return address for callers) */
  pc: bigint;
  /** address used for symbol/line lookup (inside the call instruction for callers) */
  lookupPc: bigint;
  /** frame pointer of this frame when known */
  fp?: bigint;
}

export interface StackBounds { low: bigint; high: bigint }

export const MAX_FRAMES = 64;

export function walkStack(arch: ArchOps, cpu: Cpu, mem: Memory, bounds: StackBounds | undefined, max = MAX_FRAMES): WalkedFrame[] {
  const pc = cpu.getPc();
  const frames: WalkedFrame[] = [{ pc, lookupPc: pc }];
  const layout = frameLayout(arch.name);
  if (!layout || arch.abi.fpReg < 0) return frames;
  const ptr = arch.abi.pointerSize;
  let fp = cpu.getReg(arch.abi.fpReg);
  frames[0].fp = fp;
  const inStack = (a: bigint) => !bounds || (a >= bounds.low && a + BigInt(ptr) <= bounds.high);
  while (frames.length < max) {
    const raAddr = fp + BigInt(layout.returnAddress);
    const fpAddr = fp + BigInt(layout.savedFp);
    if (fp === 0n || !inStack(raAddr) || !inStack(fpAddr)) break;
    const ra = readPtr(mem, raAddr, ptr);
    const next = readPtr(mem, fpAddr, ptr);
    if (ra === undefined || next === undefined || ra === 0n) break;
    frames.push({ pc: ra, lookupPc: ra - BigInt(layout.callSiteAdjust), fp: next });
    if (next <= fp) break;
    fp = next;
  }
  return frames;
}

function readPtr(mem: Memory, addr: bigint, size: 4 | 8): bigint | undefined {
  const v = toVAddr(addr);
  if (v === null || !mem.isMapped(v, size)) return undefined;
  const b = mem.readBytes(v, size);
  let x = 0n;
  for (let i = size - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[i]);
  return x;
}
