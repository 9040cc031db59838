/**
 * x86_64 half of kprobes (Linux arch/x86/kernel/kprobes/core.c): the
 * probed instruction is copied into an instruction slot (RIP-relative
 * displacement re-targeted for the slot), int3 is written over the first
 * byte, the copy is single-stepped with TF, and resume_execution fixes ip
 * and the pushed return address afterwards. The kprobe booster
 * (boost.ts): a boostable copy gets a jmp back appended after its first
 * single-step, and later hits of a probe without a post_handler jump into
 * the slot without the single-step trap. Jump optimization is in opt.ts,
 * kprobes on ftrace call sites (KPROBE_FLAG_FTRACE) in ftrace.ts.
 *
 * Like Linux 2.6 on CISC machines, nothing checks that a probe address is an
 * instruction boundary: a probe in the middle of an instruction copies
 * whatever decodes there, and the int3 byte corrupts the real instruction
 * (tested in test/kprobes/rules.test.ts, 'x86: no instruction-boundary
 * check').
 */
import type { DecodedInsn } from '../../types';
import { Errno } from '../../../kernel/abi';
import { hi32, lo32, mustVAddr, toVAddr, type VAddr } from '../../../memory/address';
import { MemoryFault } from '../../../memory/memory';
import type {
  InlineBreakpointCpu, InlineBreakpointHandler, KprobesArchContext, KprobesArchHooks, ProbeInsnDecision,
} from '../../../kprobes/archHooks';
import type { Cpu } from '../../types';
import { X86Cpu } from '../cpu';
import type { Kprobe, KprobeCtlblk, KretprobeInstanceRec } from '../../../kprobes/kprobe';
import type { PtRegs } from '../../../kprobes/ptRegs';
import { decodeBytes } from '../decoder';
import type { Insn } from '../insn';
import { relocate } from '../relocate';
import { CheckedInsn } from '../disasm';
import { canBoost } from './boost';
import { jmpTo, NATIVE_ENTRY_SAVE, x86_64Optprobes } from './opt';
import { x86_64Ftrace } from './ftrace';

const TF = 0x100n;
const IF = 0x200n;
const TF_N = 0x100;
const IF_N = 0x200;
const TF_IF = TF | IF;
/** canonical VAddrs are [-2^47, 2^47) */
const CANON_V = 2 ** 47;

/** the TF|IF bits of a kcb flags value as a number (the values setupSinglestep stores compare without a BigInt operation) */
function tfIfBits(b: bigint): number {
  return b === 0n ? 0 : b === TF ? TF_N : b === IF ? IF_N : b === TF_IF ? TF_N | IF_N : Number(b & TF_IF);
}
const MAX_INSN_SIZE = 15;
/** MAX_INSN_SIZE + a 5-byte jmp back, rounded up */
export const X86_SLOT_SIZE = 32;

/** Instructions whose single-step from a slot would not come back as a #DB on the copy. */
const REJECT_MNEMONICS = new Set([
  'int3', 'int', 'int1', 'into', 'hlt', 'vmcall', 'syscall', 'sysret', 'sysretq', 'iret', 'iretq', 'ud2',
  'sysenter', 'sysexit', 'popf', 'popfq', 'mov ss', 'pop ss',
]);

export interface X86InsnInfo {
  flow: DecodedInsn['flow'] | 'unknown';
  /** first opcode byte (0x0f for two-byte opcodes); -1 when the copy was not decoded */
  opcode: number;
  /** ModRM.reg; -1 without a ModRM byte or when the copy was not decoded */
  modrmReg: number;
  /** the bytes copied to the slot were decoded (false: raw MAX_INSN_SIZE bytes, 2.6 style) */
  decoded: boolean;
  /** the slot and the probe address as VAddrs (the hit path moves rip without BigInts) */
  slotV: VAddr;
  addrV: VAddr;
}

function readUpTo(ctx: KprobesArchContext, addr: bigint, len: number): Uint8Array {
  for (let n = len; n > 0; n--) {
    try { return ctx.readOriginal(addr, n); } catch { /* shorter */ }
  }
  return new Uint8Array(0);
}

function info(p: Kprobe): X86InsnInfo {
  return (p.ainsn?.arch ?? {}) as unknown as X86InsnInfo;
}

/** `raw`: insn as the decoder gave it, when the caller has it (else decoded again from its bytes) */
function decodeProbeInsn(_ctx: KprobesArchContext, _addr: bigint, insn: DecodedInsn | null, raw?: Insn): ProbeInsnDecision {
  if (!insn) return 'slot'; // 2.6 x86 copies MAX_INSN_SIZE raw bytes without validation
  if (insn.flow === 'trap' || insn.flow === 'halt') return 'reject';
  if (REJECT_MNEMONICS.has(insn.mnemonic)) return 'reject';
  const x = raw ?? decodeBytes(insn.bytes, mustVAddr(insn.addr));
  if (x && x.bytes[x.layout.opcodeOff] === 0xcc) return 'reject';
  return 'slot';
}

/** the instruction at the start of `bytes` (the arch's decodeBytes: null where it does not decode), and the decoder's own record of it */
function decodeOnce(bytes: Uint8Array, addr: bigint): { insn: DecodedInsn; raw: Insn } | null {
  const v = toVAddr(addr);
  if (v === null) return null;
  try {
    const raw = decodeBytes(bytes, v);
    return raw ? { insn: new CheckedInsn(raw), raw } : null;
  } catch (e) {
    if (e instanceof MemoryFault || e instanceof RangeError) return null;
    throw e;
  }
}

/**
 * The saved opcode of a probe: the byte int3 covers. One shared array per
 * byte value (nothing writes a saved opcode: arming and disarming only read
 * it), so 10,000 probes keep no array and buffer of their own for it.
 */
const SAVED_OPCODES: (Uint8Array | undefined)[] = [];
function savedOpcode(orig: Uint8Array, n: number): Uint8Array {
  if (n !== 1) return orig.slice(0, n);
  return (SAVED_OPCODES[orig[0]] ??= orig.slice(0, 1));
}

function prepareKprobe(ctx: KprobesArchContext, p: Kprobe): number {
  const addr = p.addr as bigint;
  const orig = readUpTo(ctx, addr, MAX_INSN_SIZE);
  if (orig.length === 0) return -Errno.EINVAL;
  // decoded once: the decision below looks at the decoder's record, not at a second decode of the same bytes
  const d = decodeOnce(orig, addr);
  const insn = d ? d.insn : null;
  const decision = decodeProbeInsn(ctx, addr, insn, d?.raw);
  if (decision === 'reject') return -Errno.EINVAL;
  let copy: Uint8Array = insn ? orig.slice(0, insn.length) : orig.slice();
  const slot = ctx.slots.get();
  // __copy_instruction: a RIP-relative operand re-targeted for the slot; relative branches are
  // copied as they are (resume_execution moves ip back from the slot after the single-step)
  let x86: Insn | undefined;
  if (d !== null && d.raw.layout.ripRel) {
    const moved = relocate(copy, addr, slot, { branches: 'keep' });
    if (!moved.ok) { ctx.slots.put(slot); return moved.kind === 'decode' ? -Errno.EILSEQ : -Errno.EINVAL; }
    copy = moved.bytes;
    x86 = moved.insns[0];
  } else if (d !== null) {
    // no RIP-relative operand: relocate would decode the copy again only to hand it back as it is (branches are kept)
    x86 = d.raw;
  }
  // the copy, then int3 padding: the kprobe booster appends the jmp back after
  // the first single-step shows where the copy ends (paper, section 6.3)
  const code = new Uint8Array(X86_SLOT_SIZE).fill(0xcc);
  code.set(copy);
  ctx.slots.write(slot, code);
  p.opcode = savedOpcode(orig, ctx.arch.breakpointInsn.length);
  const l = x86?.layout;
  const arch: X86InsnInfo = {
    flow: insn ? insn.flow : 'unknown',
    opcode: l ? copy[l.opcodeOff] : -1,
    modrmReg: l && l.modrmOff >= 0 ? (copy[l.modrmOff] >> 3) & 7 : -1,
    decoded: insn !== null,
    slotV: mustVAddr(slot),
    addrV: mustVAddr(addr),
  };
  const boostable = insn !== null && canBoost(insn) && ctx.searchExceptionTables(addr) === undefined ? 0 : -1;
  const length = insn ? insn.length : copy.length;
  p.ainsn = {
    insn: slot, length, mode: 'slot', arch: arch as unknown as Record<string, unknown>, boostable, insnV: arch.slotV, nextV: arch.addrV + length,
  };
  return 0;
}

function removeKprobe(ctx: KprobesArchContext, p: Kprobe): void {
  if (p.ainsn && p.ainsn.mode === 'slot' && p.ainsn.insn !== 0n) ctx.slots.put(p.ainsn.insn);
}

function prepareKretprobe(_ctx: KprobesArchContext, ri: KretprobeInstanceRec, regs: PtRegs, trampoline: bigint, trampolineV: VAddr): void {
  const ra = regs.arch.abi.returnAddress;
  if (ra.kind !== 'stack') throw new Error('x86_64 kretprobe expects the return address on the stack');
  // the same with the addresses as numbers (no BigInt per call): read the return address, put the trampoline there
  const slotV = regs.spV() + ra.offset;
  if (slotV >= -CANON_V && slotV < CANON_V) {
    const mem = regs.cpu.mem;
    const lo = mem.read64Lo(slotV);
    ri.setRetHalves(lo, mem.readHi);
    ri.stackV = slotV;
    mem.write64Halves(slotV, lo32(trampolineV), hi32(trampolineV));
    return;
  }
  const slot = regs.sp + BigInt(ra.offset);
  const mem = regs.cpu.mem;
  ri.ret_addr = mem.read64(mustVAddr(slot));
  ri.stack = slot;
  mem.write64(mustVAddr(slot), trampoline);
}

/** TF|IF subsets as bigints (kcb.oldFlags / savedFlags), by (bits >> 8) */
const TF_IF_BITS: readonly bigint[] = [0n, TF, IF, TF_IF];

function setupSinglestep(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void {
  const cpu = regs.cpu;
  if (cpu instanceof X86Cpu) {
    // the same as below on the CPU's own fields (no BigInt per hit)
    kcb.oldFlags = kcb.savedFlags = TF_IF_BITS[((cpu.tf ? TF_N : 0) | (cpu.otherFlags & IF_N)) >> 8];
    cpu.tf = true;
    cpu.otherFlags &= ~IF_N;
    cpu.rip = info(p).slotV;
    return;
  }
  const fl = regs.flags;
  kcb.oldFlags = kcb.savedFlags = fl & (TF | IF);
  regs.flags = (fl | TF) & ~IF;
  regs.ip = (p.ainsn as { insn: bigint }).insn;
}

function resumeExecution(ctx: KprobesArchContext, p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void {
  const ainsn = p.ainsn as NonNullable<Kprobe['ainsn']>;
  const cpu = regs.cpu;
  const x0 = info(p);
  // the common case on the CPU's own fields (no BigInt per hit): no fix-up on the stack, the booster's jmp already appended
  if (cpu instanceof X86Cpu && x0.opcode !== 0x9c && x0.flow !== 'call' && x0.flow !== 'indirectCall' && ainsn.boostable !== 0) {
    const adjust = x0.flow !== 'ret' && x0.flow !== 'indirectJump';
    const ip = adjust ? cpu.rip + (x0.addrV - x0.slotV) : cpu.rip;
    if (ip >= -CANON_V && ip < CANON_V) {
      const saved = tfIfBits(kcb.savedFlags);
      cpu.tf = (saved & TF_N) !== 0;
      cpu.otherFlags |= saved & IF_N;
      cpu.rip = ip;
      return;
    }
  }
  const copyIp = ainsn.insn;
  const origIp = p.addr as bigint;
  const x = info(p);
  const mem = regs.cpu.mem;
  const sp = mustVAddr(regs.sp);
  regs.flags = regs.flags & ~TF;
  let adjust = true;
  let boostTo: -1 | 0 | 1 = ainsn.boostable ?? -1;
  if (x.opcode === 0x9c) {
    // pushf: the copy pushed our TF/IF; push the task's own bits
    mem.write64(sp, (mem.read64(sp) & ~(TF | IF)) | kcb.oldFlags);
  } else if (x.flow === 'ret') {
    adjust = false;
    if (boostTo === 0) boostTo = 1; // ip is already right: nothing to append
  } else if (x.flow === 'call') {
    mem.write64(sp, origIp + (mem.read64(sp) - copyIp));
  } else if (x.flow === 'indirectCall') {
    mem.write64(sp, origIp + (mem.read64(sp) - copyIp));
    adjust = false;
  } else if (x.flow === 'indirectJump') {
    adjust = false;
    if (boostTo === 0) boostTo = 1;
  }
  if (boostTo === 0) {
    // first single-step of a boostable copy: ip is where the copy ends; append the jmp back there
    const next = regs.ip;
    const end = copyIp + BigInt(ainsn.length);
    const back = next === end ? jmpTo(next, origIp + BigInt(ainsn.length)) : null;
    if (back && next + 5n <= copyIp + BigInt(X86_SLOT_SIZE)) {
      ctx.slots.write(next, back);
      boostTo = 1;
    } else boostTo = -1;
  }
  ainsn.boostable = boostTo;
  if (adjust) regs.ip = BigInt.asUintN(64, regs.ip + (origIp - copyIp));
  regs.flags = regs.flags | kcb.savedFlags;
}

function singlestepFault(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void {
  regs.ip = p.addr as bigint;
  regs.flags = (regs.flags & ~TF) | kcb.oldFlags;
}

/**
 * X86Cpu.inlineBreakpoint: int3 calls the engine's handler before it would
 * trap; with it the layout of the native entries' save, which the block
 * translator writes itself at an entry the engine's route names
 * (X86Cpu.nativeSave, InterpCpu.nativeEntryAt)
 */
function installInlineBreakpoint(cpu: Cpu, handler: InlineBreakpointHandler | null): InlineBreakpointCpu | null {
  if (!(cpu instanceof X86Cpu)) return null;
  if (handler === null) { cpu.inlineBreakpoint = null; cpu.nativeSave = null; return null; }
  if (cpu.inlineBreakpoint !== null) return null;
  cpu.inlineBreakpoint = handler;
  cpu.nativeSave = NATIVE_ENTRY_SAVE;
  return cpu;
}

/** X86Cpu.inlineSingleStep: the TF trap after the slot's instruction, handled without ending the run */
function installInlineSingleStep(cpu: Cpu, handler: ((cpu: Cpu) => boolean) | null): void {
  if (cpu instanceof X86Cpu) cpu.inlineSingleStep = handler;
}

export const x86_64KprobesHooks: KprobesArchHooks = {
  arch: 'x86_64',
  slotSize: X86_SLOT_SIZE,
  decodeProbeInsn,
  prepareKprobe,
  removeKprobe,
  prepareKretprobe,
  setupSinglestep,
  // kprobe_debug_handler: the TF trap after the slot's instruction ends the single-step
  singlestepDone: (_p, kind) => kind === 'singleStep',
  resumeExecution,
  singlestepFault,
  taskSinglestepping: (regs: PtRegs) => (regs.cpu instanceof X86Cpu ? regs.cpu.tf : (regs.flags & TF) !== 0n),
  canBoost,
  optprobes: x86_64Optprobes,
  ftrace: x86_64Ftrace,
  // kretprobe_trampoline: a nop carrying the trampoline kprobe, int3 padding after it
  kretprobeTrampolineCode: new Uint8Array([0x90, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc]),
  installInlineBreakpoint,
  installInlineSingleStep,
};


