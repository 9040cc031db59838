/**
 * x86_64 jump optimization (Linux arch/x86/kernel/kprobes/opt.c).
 *
 * Safety checks (can_optimize), on the function that holds the probe
 * (symbol value .. value+size, decoded from its original bytes):
 *   - the probe is an instruction boundary and the detoured code region
 *     (DCR: whole instructions covering the 5-byte jmp) ends inside the
 *     function;
 *   - no instruction in the function is an indirect jump (jump tables:
 *     a table entry could point into the region);
 *   - no jump or call in the function targets the region other than its
 *     first byte (JTPR);
 *   - exception fixups: as Linux's can_optimize does, a function with
 *     any instruction listed in __ex_table is not optimized at all (its
 *     fixup code, possibly an out-of-line stub elsewhere, could jump back
 *     into the region; the table does not say where a fixup goes after
 *     it runs). An image declares its table with KP_EXTABLE(insn, fixup) from
 *     examples/include/kprobe_image.h: 16-byte (insn, fixup) pairs in the
 *     `__ex_table` section (emulator/kernel/abi.ts EXCEPTION_TABLE_SECTION);
 *   - every instruction of the region is relocatable (canBoost: no
 *     relative jump, no call, no trap, no hardware side effect, no
 *     address-size/CS prefix) and a RIP-relative operand still reaches its
 *     target from the buffer (rel32).
 * A padding int3 run at the end of the function stops the scan (Linux's
 * is_padding_int3); any other int3 refuses. The image must be built
 * without a red zone (-mno-red-zone, as the Linux kernel is): the detour
 * buffer pushes the registers below the probed function's stack pointer.
 *
 * Detour buffer (real x86_64 code in the kernel's exec area, within
 * +-2 GiB of the probe so that `jmp rel32` reaches it both ways):
 *
 *     int3                       ; NATIVE ENTRY (the probe's jmp lands here)
 *     push $__KERNEL_DS          ; pt_regs->ss           \
 *     push %rsp                  ; pt_regs->sp (sp - 8)   |
 *     pushfq                     ; pt_regs->flags         | the template:
 *     sub  $24, %rsp             ; cs, ip, orig_ax        | run as instructions
 *     push rdi rsi rdx rcx rax r8 r9 r10 r11 rbx rbp r12 r13 r14 r15
 *     int3                       ; CALLBACK               | only as the fallback
 *     mov  18*8(%rsp), %rdx      ; flags ...              | of the native entry
 *     mov  %rdx, 20*8(%rsp)      ; ... into the ss slot   |
 *     pop  r15 ... rdi           ; registers as the handlers left them
 *     add  $40, %rsp             ; skip orig_ax ip cs flags sp
 *     popfq                      ; flags (from the ss slot) /
 *     <the DCR's instructions, moved by relocate.ts (RIP-relative re-targeted)>
 *     jmp  <probe + DCR size>
 *
 * The NATIVE ENTRY stands for Linux's whole optprobe template including
 * `call optimized_callback`: the engine recognises the int3 there (it owns
 * the buffer), performs the template's register save on the stack exactly
 * as its instructions would (same pt_regs frame, same bytes), runs the
 * pre_handlers, performs the template's restore and resumes at the copied
 * instructions — one engine call per hit instead of ~40 emulated
 * instructions plus a callback (enterNative / leaveNative). The template
 * stays in the buffer as real code: when the frame cannot be written
 * natively (the stack below sp is not writable RAM), the entry simply
 * falls through into it, and its pushes fault exactly where hardware
 * would; its CALLBACK int3 then works as before (enterCallback /
 * leaveCallback). Either way the probed site itself no longer traps and
 * the saved registers form a real pt_regs on the stack. The kretprobe
 * booster trampoline has the same shape (native entry, then its template).
 * The engine takes a native entry's int3 inside the instruction through
 * X86Cpu.inlineBreakpoint (installInlineBreakpoint in index.ts) instead of
 * a trap that ends Cpu.run(): same handlers, frame and result, without the
 * return to the machine loop (see KprobesEngine.inlineBreakpoint).
 */
import { mustVAddr } from '../../../memory/address';
import { textPoke } from '../../../memory/textPoke';
import type {
  ArchOptimizedInsn, CallbackFrame, CallbackKind, KprobesArchContext, NativeCallbackFrame, NativeHitBody, OptprobesArchHooks,
} from '../../../kprobes/archHooks';
import type { PtRegs } from '../../../kprobes/ptRegs';
import { OPTPROBE_DETOUR_SYMBOL } from '../../../kprobes/archHooks';
import { type BoostVerdict, boostVerdict } from './boost';
import { relocate } from '../relocate';
import { disassembled, hexAddr, sameBytes, scanFunction } from './optScan';
import { NATIVE_SAVE, nativeEnter, nativeLeave, nativeFusedHit, PT_GPR_NAMES, PT_SLOT, X86NativeFrame } from './nativeFrame';
import { type NativeEntrySave, X86Cpu } from '../cpu';
import { hi32, lo32, toVAddr, VAddr } from '../../../memory/address';

const JMP32_SIZE = 5;
const INT3 = 0xcc;
const KERNEL_DS = 0x18;

/** push order of the general registers (pt_regs from di down to r15) as [opcode bytes] */
const PUSHES: number[][] = [
  [0x57], [0x56], [0x52], [0x51], [0x50], // rdi rsi rdx rcx rax
  [0x41, 0x50], [0x41, 0x51], [0x41, 0x52], [0x41, 0x53], // r8 r9 r10 r11
  [0x53], [0x55], // rbx rbp
  [0x41, 0x54], [0x41, 0x55], [0x41, 0x56], [0x41, 0x57], // r12 r13 r14 r15
];
const POPS: number[][] = [
  [0x41, 0x5f], [0x41, 0x5e], [0x41, 0x5d], [0x41, 0x5c], // r15 r14 r13 r12
  [0x5d], [0x5b], // rbp rbx
  [0x41, 0x5b], [0x41, 0x5a], [0x41, 0x59], [0x41, 0x58], // r11 r10 r9 r8
  [0x58], [0x59], [0x5a], [0x5e], [0x5f], // rax rcx rdx rsi rdi
];

function bytes(...parts: number[][]): number[] {
  return parts.flat();
}

/** the register-saving prologue (with or without the ss push) */
export function saveRegs(withSs: boolean): number[] {
  return bytes(
    withSs ? [0x6a, KERNEL_DS] : [], // push $__KERNEL_DS
    [0x54], // push %rsp
    [0x9c], // pushfq
    [0x48, 0x83, 0xec, 0x18], // sub $24, %rsp
    ...PUSHES,
  );
}

export function restoreRegs(): number[] {
  return bytes(...POPS);
}

/** Detour buffer head: native entry, then save, callback, restore (the copied region follows). */
let template: { code: Uint8Array; callbackOffset: number } | undefined;

/** the template, built once (bytes: every detour buffer starts with a copy) */
function optprobeTemplate(): { code: Uint8Array; callbackOffset: number } {
  if (template === undefined) {
    const t = buildOptprobeTemplate();
    template = { code: Uint8Array.from(t.code), callbackOffset: t.callbackOffset };
  }
  return template;
}

function buildOptprobeTemplate(): { code: readonly number[]; callbackOffset: number } {
  const head = bytes([INT3], saveRegs(true));
  const callbackOffset = head.length;
  const code = bytes(
    head,
    [INT3],
    [0x48, 0x8b, 0x94, 0x24, 18 * 8, 0, 0, 0], // mov 18*8(%rsp), %rdx
    [0x48, 0x89, 0x94, 0x24, 20 * 8, 0, 0, 0], // mov %rdx, 20*8(%rsp)
    restoreRegs(),
    [0x48, 0x83, 0xc4, 5 * 8], // add $40, %rsp
    [0x9d], // popfq
  );
  return { code, callbackOffset };
}

/**
 * A native-entry trampoline: native entry, then save (without the ss
 * push), callback, restore, drop orig_ax/ip/cs, popfq, then `tail`.
 */
function nativeTrampolineCode(tail: number[]): { code: Uint8Array; callbackOffset: number; nativeEntryOffset: number } {
  const head = bytes([INT3], saveRegs(false));
  const callbackOffset = head.length;
  const code = bytes(
    head,
    [INT3],
    restoreRegs(),
    [0x48, 0x83, 0xc4, 3 * 8], // add $24, %rsp (orig_ax ip cs)
    [0x9d], // popfq
    tail,
  );
  return { code: Uint8Array.from(code), callbackOffset, nativeEntryOffset: 0 };
}

/** kretprobe booster trampoline: `ret` pops the real return address the engine wrote into the sp slot */
const KRET_TRAMPOLINE = nativeTrampolineCode([0xc3]);

/**
 * ftrace trampoline (ftrace_regs_caller for kprobes): entered by the call
 * site's `call`, so the call's return address is at sp0. Native entry,
 * then save (as the kretprobe booster's), callback, restore, drop the sp
 * slot without touching the flags, and `ret` to the address the engine
 * left at sp0 (past the call site, or a pre_handler's new ip).
 */
export const FTRACE_TRAMPOLINE = nativeTrampolineCode([
  0x48, 0x8d, 0x64, 0x24, 0x08, // lea 8(%rsp), %rsp (the sp slot)
  0xc3, // ret: to the address at sp0
]);

const REL32_MIN = -(2n ** 31n);
const REL32_LIMIT = 2n ** 31n;

function rel32(from: bigint, to: bigint): number | null {
  const d = to - from;
  if (d < REL32_MIN || d >= REL32_LIMIT) return null;
  return Number(d);
}

/** a 5-byte `opcode rel32` (e8 call, e9 jmp) at `at` to `target`, or null out of reach */
export function branchRel32(opcode: 0xe8 | 0xe9, at: bigint, target: bigint): Uint8Array | null {
  const d = rel32(at + BigInt(JMP32_SIZE), target);
  if (d === null) return null;
  // rel32 little-endian (byte writes: a DataView would give every small array its own ArrayBuffer)
  const out = new Uint8Array(JMP32_SIZE);
  out[0] = opcode;
  out[1] = d & 0xff;
  out[2] = (d >> 8) & 0xff;
  out[3] = (d >> 16) & 0xff;
  out[4] = (d >> 24) & 0xff;
  return out;
}

/** jmp rel32 at `at` to `target`, or null out of reach */
export function jmpTo(at: bigint, target: bigint): Uint8Array | null {
  return branchRel32(0xe9, at, target);
}

function canOptimize(ctx: KprobesArchContext, addr: bigint): { size: number } | string {
  const r = optimizable(ctx, addr);
  return typeof r === 'string' ? r : { size: r.size };
}

/**
 * can_optimize, with the original bytes of the detoured region: the scan's copy of the function and the
 * region's offset in it; `moves`: some instruction of the region changes when copied (relocate's work)
 */
function optimizable(ctx: KprobesArchContext, addr: bigint): { size: number; code: Uint8Array; off: number; moves: boolean } | string {
  const fn = scanFunction(ctx, addr);
  if (typeof fn === 'string') return fn;
  const off = Number(addr - fn.start);
  if (fn.lens[off] === 0) return 'the probe is not on an instruction boundary';
  let size = 0;
  while (size < JMP32_SIZE) {
    const len = fn.lens[off + size];
    if (!len) return 'the detoured region crosses the end of the function';
    size += len;
  }
  const end = addr + BigInt(size);
  if (end > fn.end) return 'the detoured region crosses the end of the function';
  // the first branch (in address order) that is an indirect jump or a jump, conditional jump or call into the
  // region past its first byte (JTPR); the region lies inside the function, so only targets inside it can be in it
  let first = fn.firstIndirect < 0 ? fn.branches.length : fn.firstIndirect;
  for (let o = off + 1; o < off + size; o++) {
    const by = fn.targetedBy[o] - 1;
    if (by >= 0 && by < first) first = by;
  }
  if (first < fn.branches.length) {
    const b = fn.branches[first];
    if (b.flow === 'indirectJump') return `indirect jump at ${hexAddr(fn.start + BigInt(b.off))} (jump table)`;
    return `${disassembled(fn, b.off).mnemonic} at ${hexAddr(fn.start + BigInt(b.off))} jumps into the detoured region`;
  }
  // can_optimize: search_exception_tables() on every instruction of the function
  const table = ctx.exceptionTable();
  if (fn.exTable !== table) {
    fn.exTable = table;
    fn.exEntry = table.find(e => e.insn >= fn.start && e.insn < fn.end);
  }
  const e = fn.exEntry;
  if (e) {
    return `the function has an exception table entry (__ex_table: ${hexAddr(e.insn)} -> fixup ${hexAddr(e.fixup)}); `
      + 'its fixup code could jump into the detoured region';
  }
  for (let s = 0; s < size; s += fn.lens[off + s]) {
    let v = fn.verdicts.get(off + s);
    if (v === undefined) {
      v = boostVerdict(disassembled(fn, off + s), 'relocate');
      fn.verdicts.set(off + s, v.boostable ? RELOCATABLE : v);
    }
    if (!v.boostable) return `not relocatable: ${v.reason}`;
  }
  let moves = false;
  for (let s = 0; s < size; s++) if (fn.moves[off + s] !== 0) moves = true;
  return { size, code: fn.code, off, moves };
}

/** the verdict kept for every relocatable instruction: one object (a scan keeps a verdict per instruction it looked at) */
const RELOCATABLE: BoostVerdict = Object.freeze({ boostable: true });

/**
 * the addresses of the buffers already built, by probe address (identical buffers are reused: safe for a CPU still
 * inside). Not machine state (a WeakMap the time-travel snapshots do not see): a buffer is reused only while memory
 * still holds exactly the buffer the probe needs now, so after the machine went back to before it was built its
 * address (given out again since) is not.
 */
const built = new WeakMap<KprobesArchContext, Map<bigint, bigint | bigint[]>>();

/** memory at `at` holds `code` */
function holds(ctx: KprobesArchContext, at: bigint, code: Uint8Array): boolean {
  try {
    return sameBytes(ctx.kernel.mem.readBytes(mustVAddr(at), code.length), code);
  } catch {
    return false;
  }
}

/**
 * the detour buffer at `buf` for the region `orig` at `addr`: the template, the moved instructions, the jmp
 * back; `moves` false: no instruction of the region changes when copied (relocate would copy them as they are)
 */
function buildDetour(head: Uint8Array, orig: Uint8Array, addr: bigint, buf: bigint, moves: boolean): Uint8Array | string {
  const size = orig.length;
  const code = codeBytes(head.length + size + JMP32_SIZE);
  code.set(head);
  // copy_optimized_instructions: each instruction of the region through __copy_instruction
  if (moves) {
    const moved = relocate(orig, addr, buf + BigInt(head.length), { branches: 'retarget' });
    if (!moved.ok) return `${moved.reason} (detour buffer)`;
    code.set(moved.bytes, head.length);
  } else code.set(orig, head.length);
  const back = jmpTo(buf + BigInt(head.length + size), addr + BigInt(size));
  if (!back) return 'the detour buffer is out of jmp rel32 reach of the probe';
  code.set(back, head.length + size);
  return code;
}

/**
 * Zeroed bytes for a detour buffer's code, a view of a slab shared by many:
 * a buffer of ~90 bytes made on its own would be an ArrayBuffer with memory
 * outside the heap each (10,000 probes: 10,000 of them for the collector
 * to track). A slab's bytes are handed out once and never written again
 * here, so a view stays as it was built whoever keeps it.
 */
function codeBytes(n: number): Uint8Array {
  if (slabUsed + n > slab.length) {
    slab = new Uint8Array(Math.max(SLAB_SIZE, n));
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + n);
  slabUsed += n;
  return out;
}
const SLAB_SIZE = 16384;
let slab = new Uint8Array(0);
let slabUsed = 0;

function prepareOptimizedKprobe(ctx: KprobesArchContext, addr: bigint): ArchOptimizedInsn | string {
  const chk = optimizable(ctx, addr);
  if (typeof chk === 'string') return chk;
  const { size, code: fnCode, off, moves } = chk;
  const orig = fnCode.subarray(off, off + size);
  const tpl = optprobeTemplate();
  const total = tpl.code.length + size + JMP32_SIZE;
  // the buffer's address is needed to relocate: allocate, build, and reuse an identical earlier one
  let byAddr = built.get(ctx);
  if (!byAddr) { byAddr = new Map(); built.set(ctx, byAddr); }
  const cache = byAddr.get(addr);
  let buf: bigint | undefined;
  if (cache !== undefined) {
    for (const b of typeof cache === 'bigint' ? [cache] : cache) {
      const code = buildDetour(tpl.code, orig, addr, b, moves);
      if (typeof code !== 'string' && holds(ctx, b, code)) { buf = b; break; }
    }
  }
  if (buf === undefined) {
    buf = ctx.slots.allocCode(total, OPTPROBE_DETOUR_SYMBOL);
    const code = buildDetour(tpl.code, orig, addr, buf, moves);
    if (typeof code === 'string') return code;
    ctx.slots.write(buf, code);
    // the first buffer of an address as itself (most addresses get one: no array each)
    byAddr.set(addr, cache === undefined ? buf : typeof cache === 'bigint' ? [cache, buf] : [...cache, buf]);
  }
  if (rel32(addr + BigInt(JMP32_SIZE), buf) === null) return 'the detour buffer is out of jmp rel32 reach of the probe';
  return new X86OptimizedInsn(addr, buf, size, tpl.code.length, buf + BigInt(tpl.callbackOffset), fnCode, off, ctx.arch.breakpointInsn.length);
}

/**
 * struct arch_optimized_insn of a prepared probe. Its jump and saved bytes
 * are made when first asked for (the optimizer writes the jump, an
 * unoptimize or a text read wants the saved bytes): a file of thousands of
 * probes, most of them never optimized, keeps no arrays of its own for them.
 */
class X86OptimizedInsn implements ArchOptimizedInsn {
  private savedView: Uint8Array | undefined = undefined;

  constructor(
    readonly addr: bigint, readonly insn: bigint, readonly size: number, readonly copyOffset: number, readonly callback: bigint,
    /** the scan's copy of the function (never written), the region's offset in it and the breakpoint's length */
    private readonly fnCode: Uint8Array, private readonly off: number, private readonly bpLen: number,
  ) {}

  get nativeEntry(): bigint { return this.insn; }

  /** a view of the region's original bytes after the breakpoint's (no buffer of its own) */
  get saved(): Uint8Array { return (this.savedView ??= this.fnCode.subarray(this.off + this.bpLen, this.off + JMP32_SIZE)); }

  /** jmp rel32 to the buffer (in reach: prepareOptimizedKprobe checked it); a fresh array each time (textPoke copies it) */
  get jump(): Uint8Array { return jmpTo(this.addr, this.insn) as Uint8Array; }
}


function checkOptimizedKprobe(op: ArchOptimizedInsn, other: bigint): boolean {
  return other > op.addr && other < op.addr + BigInt(op.size);
}

function optimizeKprobes(ctx: KprobesArchContext, ops: readonly ArchOptimizedInsn[]): void {
  for (const op of ops) textPoke(ctx.kernel.mem, mustVAddr(op.addr), op.jump);
}

function unoptimizeKprobe(ctx: KprobesArchContext, op: ArchOptimizedInsn): void {
  const bp = ctx.arch.breakpointInsn;
  const b = new Uint8Array(JMP32_SIZE);
  b.set(bp, 0);
  b.set(op.saved, bp.length);
  textPoke(ctx.kernel.mem, mustVAddr(op.addr), b);
}

function setupDetourExecution(op: ArchOptimizedInsn, regs: PtRegs): void {
  regs.ip = op.insn + BigInt(op.copyOffset);
}

function slotAddr(frame: bigint, name: string): number {
  return mustVAddr(frame + BigInt(PT_SLOT[name] * 8));
}

function enterCallback(_ctx: KprobesArchContext, regs: PtRegs, ip: bigint, kind: CallbackKind): CallbackFrame {
  const mem = regs.cpu.mem;
  const frame = regs.sp;
  const resume = regs.ip;
  // optimized_callback / trampoline_handler: regs->ip, orig_ax = -1, cs = kernel cs
  mem.write64(slotAddr(frame, 'ip'), ip);
  mem.write64(slotAddr(frame, 'orig_ax'), 0xffffffffffffffffn);
  mem.write64(slotAddr(frame, 'cs'), regs.get('cs'));
  const savedSp = mem.read64(slotAddr(frame, 'sp'));
  // the detour pushed ss before rsp, so its saved rsp is one word below the probe's sp;
  // the ftrace trampoline's is the slot of the call's return address, one word below the call site's sp
  regs.sp = kind === 'kretprobe' ? savedSp : savedSp + 8n;
  regs.flags = mem.read64(slotAddr(frame, 'flags'));
  regs.ip = ip;
  return { resume, frame, kind };
}

function leaveCallback(_ctx: KprobesArchContext, regs: PtRegs, f: CallbackFrame, returnTo?: bigint): void {
  const mem = regs.cpu.mem;
  for (const n of PT_GPR_NAMES) mem.write64(slotAddr(f.frame, n), regs.get(n));
  mem.write64(slotAddr(f.frame, 'flags'), regs.flags);
  // the kretprobe booster's ret pops the sp slot; the ftrace trampoline's the slot above the frame
  if (returnTo !== undefined) mem.write64(slotAddr(f.frame, f.kind === 'ftrace' ? 'ss' : 'sp'), returnTo);
  regs.sp = f.frame;
  regs.ip = f.resume;
}

/** bytes of the optprobe detour buffer before the copied instructions (native entry + template): where a native entry resumes */
export const OPT_HEAD_LEN = optprobeTemplate().code.length;

/** the native entries' save as the block translator writes it (X86Cpu.nativeSave) */
export const NATIVE_ENTRY_SAVE: NativeEntrySave = { ...NATIVE_SAVE, optResume: OPT_HEAD_LEN };

function enterNative(_ctx: KprobesArchContext, regs: PtRegs, ip: VAddr, kind: CallbackKind): NativeCallbackFrame | null {
  const cpu = regs.cpu;
  return cpu instanceof X86Cpu ? nativeEnter(cpu, ip, kind) : null;
}

function nativeHit(regs: PtRegs, kind: 'optprobe' | 'kretprobe', ip: VAddr, body: NativeHitBody): boolean {
  const cpu = regs.cpu;
  return cpu instanceof X86Cpu && nativeFusedHit(cpu, kind, ip, OPT_HEAD_LEN, KRET_TRAMPOLINE.code.length, body);
}

function leaveNative(_ctx: KprobesArchContext, _regs: PtRegs, nf: NativeCallbackFrame, returnTo?: VAddr | bigint): void {
  const f = nf as X86NativeFrame;
  if (f.kind === 'optprobe') {
    nativeLeave(f, f.entry + OPT_HEAD_LEN, 0, 0, 0); // on to the copied instructions
    return;
  }
  const len = f.kind === 'ftrace' ? FTRACE_TRAMPOLINE.code.length : KRET_TRAMPOLINE.code.length;
  const retInsn = f.entry + len - 1;
  if (typeof returnTo === 'number') {
    // a VAddr (canonical by construction): its halves without a BigInt
    nativeLeave(f, returnTo, lo32(returnTo), hi32(returnTo), retInsn);
    return;
  }
  const to = returnTo ?? 0n;
  nativeLeave(f, toVAddr(to), Number(BigInt.asIntN(32, to)), Number(BigInt.asIntN(32, to >> 32n)), retInsn);
}

export const x86_64Optprobes: OptprobesArchHooks = {
  jumpSize: JMP32_SIZE,
  canOptimize,
  prepareOptimizedKprobe,
  checkOptimizedKprobe,
  optimizeKprobes,
  unoptimizeKprobe,
  setupDetourExecution,
  enterCallback,
  leaveCallback,
  enterNative,
  leaveNative,
  nativeHit,
  kretprobeBoostTrampoline: KRET_TRAMPOLINE,
  nativeTemplates: {
    optprobe: optprobeTemplate().code.slice(), kretprobe: KRET_TRAMPOLINE.code,
    ftrace: FTRACE_TRAMPOLINE.code,
  },
};
