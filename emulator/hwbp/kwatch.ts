/**
 * Kernel watchpoint probes: the interface of the early kprobes text
 * (reference 004, "Kernel Watchpoint Probes Interface"):
 *
 *   int register_kwatch(unsigned long addr, u8 length, u8 type, kwatch_handler_t handler)
 *       returns the debug register number allocated for the watch point
 *   void unregister_kwatch(int debugreg)
 *
 * A kwatch is a global, lowest-priority user of the shared debug-register
 * allocator (allocator.ts): it is set on every CPU and gives its register
 * up to a more demanding user (the debugger), getting it back later.
 *
 * Return values (negative errno, Linux's names):
 *   -EINVAL  a length, alignment or type the debug registers cannot hold
 *            (x86: 1, 2, 4, 8 bytes aligned to the length; no read-only)
 *   -EFAULT  the address is not kernel memory (unmapped, or user memory)
 *   -ENOSPC  every debug register is held by a user that does not yield
 *   -ENODEV  the architecture's CPU has no debug registers here
 * `lastError` keeps the reason of the last refusal for the one-line report.
 *
 * The type argument: the x86 DR7 R/W encodings the original patch used
 * (0 execute, 1 write, 3 read/write) or the letters 'x' / 'w' / 'rw' ('r' on
 * arm64, which can watch reads only).
 */
import type { Kernel } from '../kernel/kernel';
import { Errno, errnoName } from '../kernel/abi';
import { PERM_U } from '../memory/memory';
import { hex, toVAddr } from '../memory/address';
import type { HwBpType } from './archHooks';
import { HwBp, HwBpHit, HwBreakpoints } from './hwBreakpoints';

/** What a kwatch handler gets: regs, the debug register number, the address accessed, the access kind. */
export interface KwatchContext {
  readonly hit: HwBpHit;
  readonly debugreg: number;
  readonly addr: bigint;
  readonly access: 'read' | 'write' | 'exec';
}

export type KwatchHandler = (ctx: KwatchContext) => void;

/** DR7 R/W field values of the original kwatch patch */
export const KWATCH_TYPE_CODES: Readonly<Record<number, HwBpType>> = { 0: 'x', 1: 'w', 3: 'rw' };

export class Kwatches {
  /** why the last register_kwatch failed ("-EINVAL: ...") */
  lastError = '';
  private readonly byReg = new Map<number, HwBp>();

  constructor(private readonly kernel: Kernel, private readonly hw: HwBreakpoints) {}

  /**
   * register_kwatch: the debug register number (>= 0) or a negative errno;
   * `fault`: a handler fault was raised (true: handled, else the CPU oopses).
   */
  register_kwatch(addr: bigint, length: number, type: HwBpType | number, handler: KwatchHandler, fault?: (hit: HwBpHit, err: unknown) => boolean): number {
    const t = typeof type === 'number' ? KWATCH_TYPE_CODES[type] : type;
    if (t === undefined) return this.refuse(-Errno.EINVAL, `type ${type} is not a watch type (0 execute, 1 write, 3 read/write)`);
    const bad = this.hw.validate({ addr, len: length, type: t });
    if (bad) return this.refuse(bad.errno, bad.reason);
    const notKernel = this.notKernelMemory(addr, Math.max(1, length));
    if (notKernel) return this.refuse(-Errno.EFAULT, notKernel);
    const r = this.hw.register('kwatch', { addr, len: length, type: t }, {
      handler: hit => handler({ hit, debugreg: hit.register, addr: hit.addr, access: hit.access }),
      fault,
    });
    if (!(r instanceof HwBp)) return this.refuse(r.errno, r.reason);
    this.byReg.set(r.index, r);
    this.lastError = '';
    return r.index;
  }

  /** unregister_kwatch(debugreg): a number register_kwatch did not return is ignored (void, as the interface has it) */
  unregister_kwatch(debugreg: number): void {
    const bp = this.byReg.get(debugreg);
    if (!bp) return;
    this.byReg.delete(debugreg);
    this.hw.unregister(bp);
  }

  /** the registration behind a debug register number register_kwatch returned */
  get(debugreg: number): HwBp | undefined { return this.byReg.get(debugreg); }

  private refuse(errno: number, reason: string): number {
    this.lastError = `-${errnoName(-errno)}: ${reason}`;
    return errno;
  }

  /** why [addr, addr+len) is not kernel memory, or undefined when it is */
  private notKernelMemory(addr: bigint, len: number): string | undefined {
    const v = toVAddr(addr);
    if (v === null) return `${hex(addr)} is not a canonical address`;
    const mem = this.kernel.mem;
    for (let i = 0; i < len; i++) {
      const r = mem.regionAt(v + i);
      if (!r) return `${hex(addr + BigInt(i))} is not mapped kernel memory`;
      if (r.perms & PERM_U) return `${hex(addr)} is user memory (${r.name})`;
    }
    return undefined;
  }
}
