/**
 * The x86_64 front end of the block translator (emulator/jit): decoded
 * instructions to IR. The hot integer instructions are emitted natively
 * (jitInsns.ts, through the block emitter of jitEmitter.ts: operand
 * access and the lazy flags):
 *
 *   mov (88 89 8a 8b c6 c7 b0+r b8+r), lea, movzx, movsx, movsxd,
 *   add or and sub xor cmp test (every form), inc dec neg not,
 *   imul G,E[,imm], shl/sal shr sar rol ror by 1 or imm8, shld/shrd by
 *   imm8 (32/64-bit), cmovcc, setcc,
 *   push r / imm, pop r, leave, cbw/cwde/cdqe, cwd/cdq/cqo, xchg r,r,
 *   nop / endbr64 / hints, jmp rel, jcc rel, call rel, and the indirect
 *   transfers ret (c3, c2 imm16), jmp r/m64 (ff /4), call r/m64 (ff /2);
 *
 * everything else (and any 67-prefixed form, or a LOCK form the decoder
 * made #UD) returns false and runs through the interpreter's executor as
 * a helper. A valid LOCK form (a lockable instruction with a memory
 * destination: Linux's atomics) is translated as the plain one: CPUs
 * interleave only between instructions, so every instruction is atomic.
 *
 * Memory accesses are plain ld/st: one the TLB cannot serve (not mapped,
 * not canonical, crossing a page) leaves before the instruction and the
 * interpreter runs it. Indirect transfers (ret, jmp/call r/m) leave through
 * exitIf before their first write when the target is not canonical (the
 * interpreter raises #GP there, with rsp unchanged), and push leaves when
 * rsp itself is not canonical (the interpreter's #GP).
 *
 * Here: the front end itself (blocks, the flags record's scratch in and
 * out) and native entries (a host-owned int3 whose register save the
 * translated code writes itself).
 */
import type { FrontEnd, Temp } from '../../jit/ir';
import type { NativeEntrySave, X86Cpu } from './cpu';
import { Insn } from './insn';
import type { NativeEntryRoute } from '../../cpu/interp';
import { STOP_BREAKPOINT } from '../../cpu/faults';
import type { B } from './jitEmitter';
import { arithFlagsOrNot, BlockEmitter, RSP, SCRATCH_BYTES } from './jitEmitter';
import { HANDLERS } from './jitInsns';
import * as sys from './exec/system';
import * as priv from './exec/privileged';

/**
 * A full-system CPU's system instructions (X86Cpu.sys set): they run in the
 * interpreter, never in a translated block (port and MSR accesses reach
 * devices, which lockstep could not replay; control registers, descriptor
 * tables, INVLPG and SWAPGS change what addresses mean; CLI/STI/POPF/IRETQ
 * /SYSRET/HLT change when interrupts are taken; INT n/INT3/UD/SYSCALL
 * trap; RDTSC/CPUID read the platform).
 */
const SYSTEM_EXECS: ReadonlySet<unknown> = new Set<unknown>([
  ...Object.values(priv),
  sys.int3, sys.intN, sys.ud, sys.hlt, sys.cliSti, sys.syscall, sys.vmcall, sys.rdtsc, sys.cpuid, sys.popf, sys.movFromDr, sys.movToDr,
]);

/**
 * int3 at a native entry its owner handles (it answers
 * InterpCpu.nativeEntryAt with the frame's kind and the handlers' ip, and
 * handed in the save's layout with its inline breakpoint:
 * X86Cpu.nativeSave): the template's register save is written here, as the
 * owner's native entry would write it (the same slots and values, the
 * flags slot excepted: it gets the arithmetic flags, or a mark that they
 * were not evaluated here, jitEmitter.ts arithFlagsOrNot, and the owner
 * writes the whole value, X86Cpu.frameSaved), and
 * the int3 then runs as a helper that knows it. The stores go through the TLB like any push: one the TLB
 * cannot serve (the stack not plain writable RAM, watched, observed, not
 * canonical) leaves before the int3 and the interpreter runs it whole (its
 * own save, or the template). One multi-store (IrBuilder.stm): all the
 * slots, or none when the frame is not in one page the TLB serves. After
 * an optprobe's handlers the CPU is on the buffer's copied instructions,
 * where the block goes on; after the booster's, on the real return
 * address (a jump the dispatcher follows).
 */
function nativeEntry(e: BlockEmitter, i: Insn, route: NativeEntryRoute<X86Cpu>, S: NativeEntrySave): void {
  const b = e.b, opt = route.kind === 'optprobe';
  const sp0 = b.get(RSP);
  e.guard(e.nonCanonical(sp0)); // the owner's entry declines a non-canonical rsp (the template's push raises #GP)
  const bytes = S.frameBytes[route.kind];
  const frame = e.bin('sub', sp0, e.c(bytes));
  // slot by slot from the frame's bottom (every slot is 8 bytes); the flags slot gets the arithmetic flags where they are
  // cheap here (the owner adds the others, and evaluates all of them when the high word says so: arithFlagsOrNot)
  const vs: Temp[] = [];
  for (let s = 0; s < 15; s++) vs.push(b.get(S.gprs[s]));
  const at: Record<number, Temp> = {
    [S.origAx]: e.c(-1), [S.ip]: e.c(route.ip), [S.cs]: e.c(S.kernelCs), [S.flags]: arithFlagsOrNot(e),
    // optprobe: push $__KERNEL_DS, then push %rsp; kretprobe: push %rsp
    [S.sp]: opt ? e.bin('sub', sp0, e.c(8)) : sp0, [S.ss]: e.c(S.kernelDs),
  };
  for (let off = 15 * 8; off < bytes; off += 8) vs.push(at[off]);
  e.stm(frame, vs);
  if (opt) {
    const resume = i.addr + S.optResume;
    b.helper(savedFrameInt3(i, route), resume);
    b.jmp(resume);
  } else {
    b.helper(savedFrameInt3(i, route));
    b.fall(); // declined: the template, from the entry on
  }
}

/**
 * the int3 as a helper that tells the engine the frame is saved, and takes the entry's route to its handler: a copy
 * of the decoded int3 (every one of these has one shape: an object made on the decoded instruction as its prototype
 * would have a hidden class of its own, and the helper's accesses to it would see a new one per native entry and
 * per machine)
 */
function savedFrameInt3(i: Insn, route: NativeEntryRoute<X86Cpu>): Insn {
  return Object.assign(new Insn(i.def, int3FrameSaved, i.bytes), i, { exec: int3FrameSaved, hot: 0, jit: null, route }) as SavedFrameInt3;
}
type SavedFrameInt3 = Insn & { route: NativeEntryRoute<X86Cpu> };
/** sys.int3, with the inline breakpoint handler's lookup of the entry done at translation (route.hit) while that handler is the CPU's */
function int3FrameSaved(cpu: X86Cpu, i: Insn): void {
  cpu.frameSaved = true;
  try {
    const hook = cpu.inlineBreakpoint, route = (i as SavedFrameInt3).route;
    if (hook !== null && !cpu.tf && (hook === route.handler ? route.hit(cpu) : hook(cpu, i.addr))) return;
    cpu.stop(STOP_BREAKPOINT);
  } finally {
    cpu.frameSaved = false;
  }
}

/** The x86_64 front end. */
class X86FrontEnd implements FrontEnd<X86Cpu, Insn> {
  readonly slots = 16;
  readonly scratchBytes = SCRATCH_BYTES;
  private em: BlockEmitter | null = null;
  private words: Int32Array | null = null;
  private wordsOf: DataView | null = null;

  emit(b: B, i: Insn, cpu: X86Cpu): boolean {
    if (this.em === null || this.em.b !== b) this.em = new BlockEmitter(b);
    const e = this.em;
    if (i.def.exec === sys.int3 && cpu.nativeEntryAt !== null && cpu.nativeSave !== null && !cpu.userMode) {
      const route = cpu.nativeEntryAt(i.addr);
      if (route !== null) {
        nativeEntry(e, i, route, cpu.nativeSave);
        this.em = new BlockEmitter(b); // after a helper, the flags are the scratch record's
        return true;
      }
    }
    const h = HANDLERS.get(i.def.exec);
    // 32-bit addressing: the interpreter (an FS / GS base is added to the address: BlockEmitter.ea). A valid
    // LOCK form (a lockable instruction with a memory destination; the decoder makes any other one #UD) is
    // translated as the plain one: CPUs interleave only between instructions, so every instruction is atomic
    const plain = (!i.lock || (i.def.lockable === true && i.hasMem)) && (!i.hasMem || i.asize === 8);
    if (h !== undefined && plain && h(e, i)) return true;
    // a helper: the flags are the scratch record's from now on, and it may leave the block
    this.em = new BlockEmitter(b);
    return false;
  }

  endsBlock(i: Insn): boolean { return i.def.flow !== 'none'; }

  interpretOnly(i: Insn, cpu: X86Cpu): boolean { return cpu.sys !== null && SYSTEM_EXECS.has(i.def.exec); }

  /** the arena as int32 words (made again only for another DataView) */
  private view(scratch: DataView): Int32Array {
    // the same DataView every time (the translator's, over the arena, which never grows): compare it, not the buffers (a slow accessor)
    if (this.words === null || this.wordsOf !== scratch) { this.words = new Int32Array(scratch.buffer); this.wordsOf = scratch; }
    return this.words;
  }

  syncIn(cpu: X86Cpu, scratch: DataView, off: number): void {
    const w = this.view(scratch), k = (scratch.byteOffset + off) >> 2;
    w[k] = cpu.fOp | cpu.fSz << 8 | cpu.fCin << 16; w[k + 1] = 0;
    w[k + 2] = cpu.fRl; w[k + 3] = cpu.fRh;
    w[k + 4] = cpu.fDl; w[k + 5] = cpu.fDh;
    w[k + 6] = cpu.fSl; w[k + 7] = cpu.fSh;
    w[k + 8] = cpu.fBits; w[k + 9] = 0;
    w[k + 10] = cpu.pOp | cpu.pSz << 8 | cpu.pCin << 16; w[k + 11] = 0;
    w[k + 12] = cpu.pRl; w[k + 13] = cpu.pRh;
    w[k + 14] = cpu.pDl; w[k + 15] = cpu.pDh;
    w[k + 16] = cpu.pSl; w[k + 17] = cpu.pSh;
    w[k + 18] = cpu.pBits; w[k + 19] = 0;
    const fs = cpu.fsBase, gs = cpu.gsBase;
    w[k + 20] = fs | 0; w[k + 21] = Math.floor(fs / 4294967296) | 0;
    w[k + 22] = gs | 0; w[k + 23] = Math.floor(gs / 4294967296) | 0;
  }

  syncOut(cpu: X86Cpu, scratch: DataView, off: number): void {
    const w = this.view(scratch), k = (scratch.byteOffset + off) >> 2;
    const kind = w[k];
    cpu.fOp = kind & 0xff; cpu.fSz = (kind >> 8) & 0xff; cpu.fCin = kind >>> 16;
    cpu.fRl = w[k + 2]; cpu.fRh = w[k + 3];
    cpu.fDl = w[k + 4]; cpu.fDh = w[k + 5];
    cpu.fSl = w[k + 6]; cpu.fSh = w[k + 7];
    const pk = w[k + 10];
    cpu.pOp = pk & 0xff; cpu.pSz = (pk >> 8) & 0xff; cpu.pCin = pk >>> 16;
    cpu.pRl = w[k + 12]; cpu.pRh = w[k + 13];
    cpu.pDl = w[k + 14]; cpu.pDh = w[k + 15];
    cpu.pSl = w[k + 16]; cpu.pSh = w[k + 17];
    cpu.pBits = w[k + 18];
  }
}

export const x86FrontEnd: FrontEnd<X86Cpu, Insn> = new X86FrontEnd();
