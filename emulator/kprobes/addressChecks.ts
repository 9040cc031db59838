/**
 * The address rules of registration (Linux kernel/kprobes.c): kprobe_addr()
 * (symbol_name+offset or addr, not both), check_kprobe_address_safe()
 * (kernel text, not the engine's own code, not in the blacklist),
 * within_kprobe_blacklist(), the function-entry rule of kretprobes and
 * jprobes, and the reason given for each refusal (regResult.ts).
 */
import { Errno } from '../kernel/abi';
import { hex, mustVAddr, toVAddr } from '../memory/address';
import { PERM_X } from '../memory/memory';
import type { KprobesShared } from './parts';
import type { Kprobe } from './kprobe';
import { addrFailure, KprobeRegError, KprobeRegResult, regFailed } from './regResult';

/** what the address rules read: the kernel (symbols, text, blacklist), the arch hooks, the engine's own code */
export type AddressCheckDeps = Pick<KprobesShared, 'kernel' | 'hooks' | 'ctx' | 'code'>;

/** kprobe_addr(): resolve symbol_name+offset or addr+offset; -EINVAL / -ENOENT */
export function resolveAddr(e: AddressCheckDeps, p: Kprobe): bigint | number {
  const hasSym = p.symbol_name !== undefined && p.symbol_name !== '';
  const hasAddr = p.addr !== undefined && p.addr !== 0n;
  if (hasSym === hasAddr) return -Errno.EINVAL;
  let base: bigint;
  if (hasSym) {
    const s = e.kernel.image.symbols.lookup(p.symbol_name as string);
    if (!s) return -Errno.ENOENT;
    base = s.value;
  } else base = p.addr as bigint;
  return BigInt.asUintN(64, base + (p.offset ?? 0n));
}

/**
 * kprobe_addr() and the function-entry rule of kretprobes (arch_kprobe_on_func_entry)
 * and jprobes: the address, or the refusal.
 */
export function funcEntryAddr(e: AddressCheckDeps, p: Kprobe, kind: 'kretprobe' | 'jprobe', onEntry: (offset: bigint) => boolean): bigint | KprobeRegError {
  const addr = resolveAddr(e, p);
  if (typeof addr === 'number') return addrFailure(p, addr);
  const at = e.kernel.image.symbols.resolve(addr);
  if (!at || !onEntry(at.offset)) return regFailed(-Errno.EINVAL, `a ${kind} must be placed at a function entry, not ${symbolic(e, addr)}`);
  return addr;
}

/** within_kprobe_blacklist(): arch hook, then the image's NOKPROBE_SYMBOL list */
export function withinKprobeBlacklist(e: AddressCheckDeps, addr: bigint): boolean {
  if (e.hooks.withinKprobeBlacklist?.(e.ctx, addr)) return true;
  for (const b of e.kernel.blacklist()) if (addr >= b.start && addr < b.end) return true;
  return false;
}

/** kernel_text_address(): inside an executable segment of the image */
export function kernelTextAddress(e: AddressCheckDeps, addr: bigint): boolean {
  for (const s of e.kernel.image.segments) {
    if (s.type === 1 && (s.flags & 1) && addr >= s.vaddr && addr < s.vaddr + s.memsz) return true;
  }
  const v = mustVAddrOrNull(addr);
  if (v === null) return false;
  const r = e.kernel.mem.regionAt(v);
  return !!r && (r.perms & PERM_X) !== 0 && !e.code.owns(addr);
}

/** check_kprobe_address_safe() */
export function checkAddressSafe(e: AddressCheckDeps, addr: bigint): KprobeRegResult {
  // the engine's code by VAddr: outside the span of its ranges (kernel text, most of the time) without a search
  const v = toVAddr(addr);
  if (v === null || e.code.ownsV(v)) {
    const own = e.code.symbolize(addr);
    if (own !== undefined) return regFailed(-Errno.EINVAL, `${hex(addr)} is inside the kprobes code ${own}`);
  }
  if (!kernelTextAddress(e, addr)) return regFailed(-Errno.EINVAL, `${symbolic(e, addr)} is not in kernel text`);
  if (withinKprobeBlacklist(e, addr)) return regFailed(-Errno.EINVAL, 'address is inside the kprobe blacklist');
  return 0;
}

/** addr as symbol+0xoff (or hex) for a refusal's reason */
export function symbolic(e: AddressCheckDeps, addr: bigint): string { return e.kernel.image.symbols.format(addr, false); }

/** why arch_prepare_kprobe (or the ftrace preparation) refused the probe at addr with `errno` */
export function prepareFailure(e: AddressCheckDeps, addr: bigint, errno: number, ftrace: boolean): KprobeRegError {
  const where = symbolic(e, addr);
  if (errno === -Errno.ENOMEM) return regFailed(errno, 'no room left for an instruction slot');
  if (ftrace) return regFailed(errno, `the ftrace trampoline is out of reach of the call site at ${where}`);
  if (errno === -Errno.EILSEQ) return regFailed(errno, `${where} is not at an instruction boundary`);
  let insn = null;
  try { insn = e.kernel.arch.decode(e.kernel.mem, addr); } catch { insn = null; }
  if (!insn) return regFailed(errno, `the instruction at ${where} does not decode`);
  if (e.hooks.decodeProbeInsn(e.ctx, addr, insn) === 'reject') return regFailed(errno, `'${insn.mnemonic}' at ${where} cannot be probed`);
  return regFailed(errno, `${where} cannot be probed`);
}

function mustVAddrOrNull(a: bigint): number | null {
  try { return mustVAddr(a); } catch { return null; }
}
