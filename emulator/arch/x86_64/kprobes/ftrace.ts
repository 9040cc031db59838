/**
 * x86_64 kprobes on ftrace (Linux arch/x86/kernel/kprobes/ftrace.c with
 * the ftrace_regs_caller trampoline). The ftrace locations of an image are
 * its functions whose first instruction (after an optional endbr64) is
 * `call __fentry__` — what -mfentry emits and what the kernel's
 * __mcount_loc table records. An image without a `__fentry__` symbol has
 * none. Arming a probe there rewrites the call's rel32 to the ftrace
 * trampoline (opt.ts FTRACE_TRAMPOLINE, in the kernel's exec area);
 * disarming puts the original call back. __fentry__ itself is never called
 * while the probe is armed (it is a no-op return in the sample kernel, as
 * ftrace's stub is).
 */
import type { FtraceArchHooks, KprobesArchContext } from '../../../kprobes/archHooks';
import type { PtRegs } from '../../../kprobes/ptRegs';
import { toVAddr } from '../../../memory/address';
import { branchRel32, FTRACE_TRAMPOLINE } from './opt';
import { PT_SLOT } from './nativeFrame';

/** MCOUNT_INSN_SIZE: call rel32 */
const CALL_SIZE = 5;
const ENDBR64 = [0xf3, 0x0f, 0x1e, 0xfa];
/** the symbol -mfentry calls */
export const FENTRY_SYMBOL = '__fentry__';

function callTarget(b: Uint8Array, at: bigint): bigint | undefined {
  if (b.length < CALL_SIZE || b[0] !== 0xe8) return undefined;
  const rel = new DataView(b.buffer, b.byteOffset, CALL_SIZE).getInt32(1, true);
  return BigInt.asUintN(64, at + BigInt(CALL_SIZE) + BigInt(rel));
}

function ftraceLocation(ctx: KprobesArchContext, addr: bigint): bigint | undefined {
  const fentry = ctx.kernel.image.symbols.lookup(FENTRY_SYMBOL);
  const fn = ctx.kernel.image.symbols.resolve(addr);
  if (!fentry || !fn || fn.sym.value === fentry.value) return undefined;
  // the call site is the function's first instruction (after an endbr64): an address past it is none without a read
  if (fn.offset >= BigInt(ENDBR64.length + CALL_SIZE)) return undefined;
  let site = fn.sym.value;
  let code: Uint8Array;
  try { code = ctx.readOriginal(site, CALL_SIZE + ENDBR64.length); } catch { return undefined; }
  if (ENDBR64.every((b, i) => code[i] === b)) {
    site += BigInt(ENDBR64.length);
    code = code.subarray(ENDBR64.length);
  }
  if (callTarget(code, site) !== BigInt.asUintN(64, fentry.value)) return undefined;
  return addr >= site && addr < site + BigInt(CALL_SIZE) ? site : undefined;
}

function redirectCall(site: bigint, trampoline: bigint): Uint8Array | null {
  return branchRel32(0xe8, site, trampoline);
}

function callSiteOf(regs: PtRegs, atCallback: boolean): bigint | undefined {
  // at the native entry the call's return address is at sp; at the callback it is above the 20-slot frame
  const at = atCallback ? regs.sp + BigInt(PT_SLOT.ss * 8) : regs.sp;
  const v = toVAddr(at);
  if (v === null || !regs.cpu.mem.isMapped(v, 8)) return undefined;
  return BigInt.asUintN(64, regs.cpu.mem.read64(v) - BigInt(CALL_SIZE));
}

export const x86_64Ftrace: FtraceArchHooks = {
  callSize: CALL_SIZE,
  ftraceLocation,
  redirectCall,
  callSiteOf,
  trampoline: FTRACE_TRAMPOLINE,
};
