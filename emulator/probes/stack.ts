/**
 * dump_stack() for probe handlers: a kernel-style "Call Trace:" of the probed
 * context from a frame-pointer walk, kretprobe trampoline entries replaced by
 * the real return addresses (the engine's fixupStackTrace).
 *
 * Frame records per architecture (looked up by ArchOps.name; core code never
 * switches on the architecture):
 *   x86_64:  push rbp; mov rbp,rsp          -> [fp] = caller fp, [fp+8] = return address
 *   aarch64: stp x29,x30,[sp,#-N]!; mov x29,sp -> [fp] = caller fp, [fp+8] = lr
 *   riscv64: s0 = sp at entry               -> [fp-16] = caller fp, [fp-8] = ra
 * At a function's first instruction the frame is not set up yet: the return
 * address is where the ABI puts it (AbiInfo.returnAddress) and fp still is
 * the caller's. On x86_64 the same holds right after `push rbp`.
 */
import type { Cpu } from '../arch/types';
import type { KernelApi, Task } from '../kernel/types';
import { fixupStackTrace, KprobesEngine } from '../kprobes';
import { mustVAddr, toVAddr } from '../memory/address';

interface FrameRecord {
  savedFp: number;
  returnAddress: number;
  /** first byte of a one-byte "push fp" prologue, after which the return address is at sp+pointerSize */
  pushFpByte?: number;
}

const FRAME_RECORDS: Readonly<Record<string, FrameRecord>> = {
  x86_64: { savedFp: 0, returnAddress: 8, pushFpByte: 0x55 },
  aarch64: { savedFp: 0, returnAddress: 8 },
  riscv64: { savedFp: -16, returnAddress: -8 },
};

export interface WalkOptions {
  /** pc of frame 0 instead of the CPU's (a pre handler: the probe address, the instruction has not run) */
  pc?: bigint;
  /** code bytes as they are without breakpoints (KprobesEngine.readTextWithoutProbes) */
  readCode?: (addr: bigint, len: number) => Uint8Array;
}

/** Most frames printed. */
export const MAX_STACK_FRAMES = 32;

function readPtr(cpu: Cpu, addr: bigint, size: 4 | 8): bigint | undefined {
  const v = toVAddr(addr);
  if (v === null || !cpu.mem.isMapped(v, size)) return undefined;
  return size === 8 ? cpu.mem.read64(v) : BigInt(cpu.mem.read32(v) >>> 0);
}

function isText(kernel: KernelApi, addr: bigint): boolean {
  return addr !== 0n && kernel.image.symbols.resolve(addr) !== undefined;
}

/**
 * Return addresses of the probed context, innermost first, starting with the
 * pc itself (frame 0).
 */
export function walkFrames(kernel: KernelApi, cpu: Cpu, task: Task | undefined, opts: WalkOptions = {}): bigint[] {
  const arch = kernel.arch;
  const abi = arch.abi;
  const ptr = abi.pointerSize;
  const pc = opts.pc ?? cpu.getPc();
  const out: bigint[] = [pc];
  const rec = FRAME_RECORDS[arch.name];
  if (!rec || abi.fpReg < 0) return out;
  const inStack = (a: bigint): boolean => !task || (a >= task.stackBase && a + BigInt(ptr) <= task.stackTop);
  const sp = cpu.getReg(abi.spReg);
  let fp = cpu.getReg(abi.fpReg);
  // a frame that is not set up yet: its return address comes from the ABI location
  const at = kernel.image.symbols.resolve(pc);
  if (at) {
    let ra: bigint | undefined;
    if (at.offset === 0n) {
      const loc = abi.returnAddress;
      ra = loc.kind === 'reg' ? cpu.getReg(loc.reg) : readPtr(cpu, sp + BigInt(loc.offset), ptr);
    } else if (rec.pushFpByte !== undefined && at.offset === 1n && abi.returnAddress.kind === 'stack') {
      let b = -1;
      try { b = (opts.readCode ?? ((a, n) => cpu.mem.readBytes(mustVAddr(a), n)))(at.sym.value, 1)[0]; } catch { b = -1; }
      if (b === rec.pushFpByte) ra = readPtr(cpu, sp + BigInt(ptr + abi.returnAddress.offset), ptr);
    }
    if (ra !== undefined && ra !== 0n) out.push(ra);
  }
  while (out.length < MAX_STACK_FRAMES) {
    const raAddr = fp + BigInt(rec.returnAddress);
    const fpAddr = fp + BigInt(rec.savedFp);
    if (fp === 0n || !inStack(raAddr) || !inStack(fpAddr)) break;
    const ra = readPtr(cpu, raAddr, ptr);
    const next = readPtr(cpu, fpAddr, ptr);
    if (ra === undefined || next === undefined || ra === 0n) break;
    out.push(ra);
    if (next <= fp) break;
    fp = next;
  }
  return out;
}

/**
 * The lines dump_stack() prints for the probed context:
 *   CPU: 1 PID: 3 Comm: kworker/1:1 Not tainted
 *   Call Trace:
 *    do_fork+0x0/0x9b
 *    worker_fn+0x8c/0x3d0
 * Kretprobe trampoline entries show the real return address; addresses
 * outside any symbol end the trace (thread entry / return page). `pc`: the
 * pc of frame 0 when not the CPU's (pre handlers: the probe address);
 * `returnTo`: the real return address in a kretprobe return handler.
 */
export function dumpStackLines(kernel: KernelApi, engine: KprobesEngine, cpu: Cpu, opts: { returnTo?: bigint; pc?: bigint } = {}): string[] {
  const task = kernel.current(cpu.id);
  const lines = [
    `CPU: ${cpu.id} PID: ${task ? task.pid : 0} Comm: ${task ? task.comm : `swapper/${cpu.id}`} Not tainted`,
    'Call Trace:',
  ];
  const raw = walkFrames(kernel, cpu, task, {
    pc: opts.pc,
    readCode: (a, n) => engine.readTextWithoutProbes(kernel.mem, a, n),
  });
  // in a kretprobe return handler the pc is the trampoline and the instance is no longer listed
  const first = raw[0] === engine.kretprobeTrampoline && opts.returnTo !== undefined ? [{ addr: opts.returnTo, raw: raw[0], replaced: true }] : [];
  const fixed = [...first, ...fixupStackTrace(engine, task, raw.slice(first.length), cpu.id)];
  for (const f of fixed) {
    const a = f.addr;
    if (!isText(kernel, a)) {
      if (a === engine.kretprobeTrampoline) { lines.push(' kretprobe_trampoline+0x0/0x1'); continue; }
      break;
    }
    lines.push(` ${kernel.image.symbols.format(a, true)}`);
  }
  return lines;
}
