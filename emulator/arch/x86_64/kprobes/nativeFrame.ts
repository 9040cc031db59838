/**
 * The native entry of an x86_64 detour buffer / kretprobe booster
 * trampoline (see opt.ts): the register save and restore of the template
 * done by the engine instead of ~40 emulated instructions, with the same
 * effect on the stack and the registers.
 *
 * Save (the template's pushes, then enterCallback's slot writes):
 *   optprobe  frame = sp0 - 21*8: ss = __KERNEL_DS, sp = sp0 - 8, flags,
 *             cs/ip/orig_ax, r15..di
 *   kretprobe frame = sp0 - 20*8: sp = sp0, flags, cs/ip/orig_ax, r15..di
 *   ftrace    as kretprobe; sp0 holds the call site's return address (the
 *             slot above the frame); the handlers see sp = sp0 + 8, the
 *             probed function's sp at its call site
 *   flags as pushfq stores them (RF, VM read as 0); enterCallback reloads
 *   that value, so the live flags stay as they are; ip = the handlers' ip;
 *   sp stays sp0 (the probed sp).
 * Restore (leaveCallback's slot writes, then the template's pops/popfq):
 *   the GPR slots and flags get the live values (the handlers' changes);
 *   optprobe: the flags copied into the ss slot; kretprobe: the return
 *   address into the sp slot; ftrace: the resume address into the slot
 *   at sp0 (its `lea 8(%rsp),%rsp; ret` pops it); GPRs unchanged (the pops
 *   load what was just written); sp = sp0 (ftrace: sp0 + 8); popfq loads
 *   the live flags just stored (no change); rip = the resume address.
 *
 * The frame is written straight into the stack region's words after one
 * check that the whole frame is writable RAM executable through no mapping
 * (so no fault can happen half-way and no decoded instruction can be hit);
 * the address space's write observers then hear of each store run
 * (Memory.wroteInPlace, source 'engine': the template's pushes are CPU
 * stores, so data watchpoints see them). When the check fails the native
 * entry declines and the CPU runs the real template, whose pushes then
 * fault (or write) exactly as hardware would.
 */
import type { CallbackKind, NativeCallbackFrame, NativeHitBody } from '../../../kprobes/archHooks';
import type { NativeEntrySave } from '../cpu';
import { hi32, lo32, toVAddr, type VAddr } from '../../../memory/address';
import { PERM_U, PERM_W, Region } from '../../../memory/memory';
import { RF, X86Cpu } from '../cpu';
import { DF, TF } from '../flags';
import { PT_REGS, X86_REGS } from '../regs';
import { derivedState } from '../../../base/marks';

const TWO32 = 4294967296;

/** the pt_regs frame's slots: ArchOps.regs r15 .. ss (Linux struct pt_regs order; fs_base/gs_base are not in it) */
const PT_FRAME_SLOTS = 21;
/** pt_regs slot (x 8 bytes) of each field, by ArchOps.regs name */
export const PT_SLOT: Readonly<Record<string, number>> = Object.fromEntries(
  X86_REGS.slice(0, PT_FRAME_SLOTS).map((r, i) => [r.name, i]),
);
/** ArchOps.regs names of the general-register slots 0..14 (r15 ... di) */
export const PT_GPR_NAMES: readonly string[] = X86_REGS.slice(0, 15).map(r => r.name);
/** word offsets (x 4 bytes) of the slots written by name */
const S_ORIG_AX = 15 * 2, S_IP = 16 * 2, S_CS = 17 * 2, S_FLAGS = 18 * 2, S_SP = 19 * 2, S_SS = 20 * 2;

/** hardware GPR number of pt_regs slots 0..14 (r15 ... di) */
const SLOT_GPR: readonly number[] = PT_REGS.slice(0, 15);
/** bytes of the saved frame: 21 slots (optprobe pushes ss) or 20 (kretprobe booster) */
const FRAME_BYTES_OPT = 21 * 8, FRAME_BYTES_KRET = 20 * 8;
const KERNEL_DS = 0x18, KERNEL_CS = 0x10, USER_CS = 0x33;
/** rflags bits pushf reads as 0 (VM, RF) */
const PUSHF_CLEAR = 0x30000;
const INT3_LEN = 1;

/**
 * The save as the block translator writes it before it runs a native
 * entry's int3 (X86Cpu.nativeSave, X86Cpu.frameSaved), for an optprobe
 * detour buffer and for the kretprobe booster trampoline: the frame's
 * bytes below sp, each slot's byte offset from the frame and the
 * constants nativeEnter stores there (optprobe: ss, and sp - 8 in the sp
 * slot; kretprobe: sp itself and no ss slot). The flags slot is
 * nativeEnter's to write: translated code stores the arithmetic flags
 * there first when the lazy record is of a kind it evaluates cheaply
 * (jitEmitter.ts arithFlagsOrNot: high word 0), and nativeEnter adds the
 * plain bits (TF DF RF IF ...); otherwise nativeEnter evaluates the lazy
 * flags itself. `optResume`: the detour buffer's head, opt.ts's to give.
 */
export const NATIVE_SAVE: Omit<NativeEntrySave, 'optResume'> = {
  frameBytes: { optprobe: FRAME_BYTES_OPT, kretprobe: FRAME_BYTES_KRET },
  ss: S_SS * 4, sp: S_SP * 4, flags: S_FLAGS * 4, ip: S_IP * 4, origAx: S_ORIG_AX * 4, cs: S_CS * 4,
  gprs: SLOT_GPR,
  kernelDs: KERNEL_DS, kernelCs: KERNEL_CS,
};

/**
 * The native entry's frame: where the template's save went, and what its
 * restore needs. Kept per CPU and reused (a hit allocates none): entries
 * nest (a handler's call may hit another optimized probe), so each CPU has
 * a stack of them; one whose leave never came (the CPU oopsed in between)
 * stays taken.
 */
export class X86NativeFrame implements NativeCallbackFrame {
  kind: CallbackKind = 'optprobe';
  region: Region | null = null;
  /** the saved pt_regs (its lowest slot) */
  frame: VAddr = 0;
  /** word index of `frame` in the region's words */
  word = 0;
  /** sp at the entry (the probe's sp / the sp after the probed function's ret) */
  sp0: VAddr = 0;
  /** sp0's 32-bit halves, as rsp held them (the restore puts them back without splitting sp0 again) */
  spLo = 0;
  spHi = 0;
  /** address of the native entry's int3 */
  entry: VAddr = 0;
  /** between nativeEnter and nativeLeave */
  taken = false;
  presaved = false;
  constructor(readonly cpu: X86Cpu) {}
}

/**
 * A CPU's native-entry state (X86Cpu.nativeFrames, opaque there): its
 * frames (innermost entries last) and the stack region its last frame
 * went to. Kept on the CPU, not in this module, so that nothing here
 * holds a finished machine's CPU, memory or stack.
 */
class CpuFrames {
  readonly frames: X86NativeFrame[] = [];
  /** frameRegion's last answer, the address space and its mapping generation then (a hot probe's frames are on one stack) */
  region: Region | null = null;
  /** the region's words (wordsOf) */
  words: Int32Array | null = null;
  mem: X86Cpu['mem'] | null = null;
  gen = -1;
}

function cpuFrames(cpu: X86Cpu): CpuFrames {
  let s = cpu.nativeFrames as CpuFrames | null;
  if (s === null) {
    const made = new CpuFrames();
    // not machine state for time travel (frames live inside one instruction; the region is a cache): emptied after a restore
    cpu.nativeFrames = s = derivedState(made, () => { made.region = null; made.words = null; made.mem = null; made.gen = -1; });
  }
  return s;
}

/** a free frame of the CPU's */
function takeFrame(cpu: X86Cpu): X86NativeFrame {
  const fs = cpuFrames(cpu).frames;
  for (let i = 0; i < fs.length; i++) if (!fs[i].taken) { fs[i].taken = true; return fs[i]; }
  const f = new X86NativeFrame(cpu);
  f.taken = true;
  fs.push(f);
  return f;
}

/**
 * 32-bit words of a region's bytes (host order: every host node runs on is
 * little-endian, as the emulated machines are), cached per region; null
 * when its bytes do not start on a 4-byte boundary.
 */
const words = new WeakMap<Region, Int32Array | null>();
function wordsOf(r: Region): Int32Array | null {
  let w = words.get(r);
  if (w === undefined) {
    const b = r.bytes;
    w = LITTLE_ENDIAN_HOST && (b.byteOffset & 3) === 0 ? new Int32Array(b.buffer, b.byteOffset, b.byteLength >> 2) : null;
    words.set(r, w);
  }
  return w;
}
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** word index `i` of the frame: slot s is words i + 2s (lo) and i + 2s + 1 (hi) */
function put(w: Int32Array, i: number, lo: number, hi: number): void {
  w[i] = lo;
  w[i + 1] = hi;
}

function putAddr(w: Int32Array, i: number, a: VAddr): void {
  const h = Math.floor(a / TWO32);
  put(w, i, (a - h * TWO32) | 0, h);
}

/**
 * The frame [lo, lo+len) is word-aligned RAM the CPU may write now and not
 * executable: the native save cannot fault half-way nor hit decoded code.
 */
function frameRegion(cpu: X86Cpu, lo: VAddr, len: number): Region | null {
  const mem = cpu.mem, st = cpuFrames(cpu);
  // the last frame's region while the address space's mappings are as they were (a hot probe's frames are on one stack)
  let r = st.region;
  if (r === null || mem !== st.mem || mem.tlbGeneration !== st.gen || !(lo >= r.base && lo + len <= r.end)) {
    r = mem.regionAt(lo, len) ?? null;
    if (r === null) return null;
    st.region = r; st.words = wordsOf(r); st.mem = mem; st.gen = mem.tlbGeneration;
  }
  if (r.device || (r.perms & PERM_W) === 0 || r.codeMapped) return null;
  if (cpu.userMode && (r.perms & PERM_U) === 0) return null;
  if (((lo - r.base) & 3) !== 0 || st.words === null) return null;
  return r;
}

function writeGprSlots(cpu: X86Cpu, w: Int32Array, i: number): void {
  const lo = cpu.lo, hi = cpu.hi;
  w[i] = lo[15]; w[i + 1] = hi[15];
  w[i + 2] = lo[14]; w[i + 3] = hi[14];
  w[i + 4] = lo[13]; w[i + 5] = hi[13];
  w[i + 6] = lo[12]; w[i + 7] = hi[12];
  w[i + 8] = lo[5]; w[i + 9] = hi[5];
  w[i + 10] = lo[3]; w[i + 11] = hi[3];
  w[i + 12] = lo[11]; w[i + 13] = hi[11];
  w[i + 14] = lo[10]; w[i + 15] = hi[10];
  w[i + 16] = lo[9]; w[i + 17] = hi[9];
  w[i + 18] = lo[8]; w[i + 19] = hi[8];
  w[i + 20] = lo[0]; w[i + 21] = hi[0];
  w[i + 22] = lo[1]; w[i + 23] = hi[1];
  w[i + 24] = lo[2]; w[i + 25] = hi[2];
  w[i + 26] = lo[6]; w[i + 27] = hi[6];
  w[i + 28] = lo[7]; w[i + 29] = hi[7];
}

/**
 * pushfq into the frame's flags slot (words from `i`): the same flags,
 * held as plain bits from now on (what enterCallback's reload of the slot
 * does), so that the restore's read of the live flags costs no lazy-flag
 * evaluation. `saved`: translated code stored the slot (arithFlagsOrNot).
 */
function saveFlags(cpu: X86Cpu, w: Int32Array, i: number, saved: boolean): void {
  let full: number;
  if (saved && w[i + S_FLAGS + 1] === 0) {
    // translated code evaluated the arithmetic flags (jitEmitter.ts arithFlagsOrNot); the others are plain bits
    const arith = w[i + S_FLAGS];
    cpu.setEager(arith);
    full = arith | (cpu.tf ? TF : 0) | (cpu.df ? DF : 0) | (cpu.resumeFlag ? RF : 0) | cpu.otherFlags | 0x2;
  } else {
    full = cpu.getRflags();
    cpu.setRflags(full);
  }
  put(w, i + S_FLAGS, full & ~PUSHF_CLEAR, 0);
}

/**
 * A native entry (an optprobe detour buffer's, the kretprobe booster
 * trampoline's) hit from translated code that wrote the save
 * (X86Cpu.frameSaved), in one piece: nativeEnter's flags slot and the
 * handlers' ip, `body`, then nativeLeave's restore and resume (optprobe:
 * at the copied instructions, `headLen` bytes after the entry; kretprobe:
 * at body.returnTo, or on the `ret` `retLen - 1` bytes after the entry
 * when that is not canonical), with no frame record. false, with nothing
 * changed, when the save was not translated code's, anyone listens to
 * memory, or the frame is not writable RAM (frameRegion): nativeEnter
 * then decides. An optprobe body that throws leaves the frame restored (as
 * nativeLeave in a finally does); a kretprobe's leaves it as saved.
 */
export function nativeFusedHit(cpu: X86Cpu, kind: 'optprobe' | 'kretprobe', ip: VAddr, headLen: number, retLen: number, body: NativeHitBody): boolean {
  const mem = cpu.mem;
  if (!cpu.frameSaved || mem.isObserved || mem.watcher !== null) return false;
  const spLo = cpu.lo[4], spHi = cpu.hi[4];
  if (spHi > 0x7fff || spHi < -0x8000) return false;
  const sp0 = spHi * TWO32 + (spLo >>> 0);
  const opt = kind === 'optprobe';
  const bytes = opt ? FRAME_BYTES_OPT : FRAME_BYTES_KRET;
  const frame = sp0 - bytes;
  const r = frameRegion(cpu, frame, bytes);
  if (r === null) return false;
  const w = cpuFrames(cpu).words as Int32Array; // frameRegion's region's
  const i = (frame - r.base) >> 2;
  cpu.frameSaved = false;
  saveFlags(cpu, w, i, true);
  const entry = cpu.rip - INT3_LEN;
  cpu.rip = ip;
  if (opt) {
    try {
      body.runHandlers();
    } finally {
      restoreSlots(cpu, kind, r, i, spLo, spHi, 0, 0);
      // resumeAfter's work, here: it takes VAddrs, which a call would box
      cpu.lo[4] = spLo; cpu.hi[4] = spHi;
      cpu.rip = entry + headLen;
    }
    return true;
  }
  if (!body.runHandlers()) return true;
  const to = body.returnTo;
  if (typeof to === 'number') {
    restoreSlots(cpu, kind, r, i, spLo, spHi, lo32(to), hi32(to));
    cpu.lo[4] = spLo; cpu.hi[4] = spHi;
    cpu.rip = to;
    return true;
  }
  // a return address past what a VAddr holds (rare: no heap numbers to spare)
  restoreSlots(cpu, kind, r, i, spLo, spHi, Number(BigInt.asIntN(32, to)), Number(BigInt.asIntN(32, to >> 32n)));
  resumeAfter(cpu, kind, frame, sp0, spLo, spHi, toVAddr(to), entry + retLen - 1);
  return true;
}

/**
 * The native entry trapped (rip just past its int3): the template's save,
 * then ip = `ip` for the handlers. null (nothing changed, rip on the
 * template) when the frame cannot be written natively.
 */
export function nativeEnter(cpu: X86Cpu, ip: VAddr, kind: CallbackKind): X86NativeFrame | null {
  // translated code wrote the save (all but the flags slot) with the values below: X86Cpu.frameSaved
  const saved = cpu.frameSaved && kind !== 'ftrace';
  cpu.frameSaved = false;
  const sph = cpu.hi[4];
  if (sph > 0x7fff || sph < -0x8000) return null; // non-canonical rsp: the template's first push raises the #GP
  const sp0 = sph * TWO32 + (cpu.lo[4] >>> 0);
  const opt = kind === 'optprobe';
  const frame = sp0 - (opt ? FRAME_BYTES_OPT : FRAME_BYTES_KRET);
  const region = frameRegion(cpu, frame, opt ? FRAME_BYTES_OPT : FRAME_BYTES_KRET);
  if (!region) return null;
  const w = cpuFrames(cpu).words as Int32Array; // frameRegion's region's
  const i = (frame - region.base) >> 2;
  saveFlags(cpu, w, i, saved);
  if (!saved) {
    if (opt) {
      put(w, i + S_SS, KERNEL_DS, 0); // push $__KERNEL_DS
      putAddr(w, i + S_SP, sp0 - 8); // push %rsp (after the ss push)
    } else {
      put(w, i + S_SP, cpu.lo[4], sph); // push %rsp
    }
    writeGprSlots(cpu, w, i);
    // optimized_callback / trampoline_handler: regs->ip, orig_ax = -1, cs
    putAddr(w, i + S_IP, ip);
    put(w, i + S_ORIG_AX, -1, -1);
    put(w, i + S_CS, cpu.userMode ? USER_CS : KERNEL_CS, 0);
  }
  const mem = cpu.mem;
  if (mem.isObserved || mem.watcher !== null) mem.wroteInPlace(frame, opt ? FRAME_BYTES_OPT : FRAME_BYTES_KRET, 'engine');
  const f = takeFrame(cpu);
  f.kind = kind; f.region = region; f.frame = frame; f.word = i; f.sp0 = sp0; f.presaved = saved;
  f.spLo = cpu.lo[4]; f.spHi = sph;
  f.entry = cpu.rip - INT3_LEN;
  // enterCallback reloads the flags from the frame: the value just read, so they stay as they are
  cpu.rip = ip;
  if (kind === 'ftrace') cpu.setRegAddr(4, sp0 + 8); // the probed context: the call's return address popped
  return f;
}

/**
 * Back from the handlers: leaveCallback's writes (kretprobe: the return
 * address `rlo`/`rhi` (its 32-bit halves) into the return slot) and the
 * template's restore, then rip = resume.
 * `resume` null (kretprobe: a non-canonical return address) leaves the
 * CPU on the template's `ret` at `retInsn` with sp at the return slot, so
 * that the ret raises the #GP itself.
 */
export function nativeLeave(f: X86NativeFrame, resume: VAddr | null, rlo: number, rhi: number, retInsn: VAddr): void {
  f.taken = false;
  const cpu = f.cpu;
  restoreSlots(cpu, f.kind, f.region as Region, f.word, f.spLo, f.spHi, rlo, rhi);
  resumeAfter(cpu, f.kind, f.frame, f.sp0, f.spLo, f.spHi, resume, retInsn);
}

/**
 * nativeLeave's slot writes for a frame of `kind` (word `i` of region r's
 * words) saved at sp = spHi:spLo: the GPR slots and the flags slot get the
 * live values, then an optprobe's ss slot the flags too, a kretprobe's sp
 * slot rlo:rhi (the return address), an ftrace frame's slot above it
 * rlo:rhi (the resume address). No VAddr crosses this call (a hit would
 * box each into a heap number): the frame's address is made here, from
 * the halves, where a slow path needs it.
 */
function restoreSlots(cpu: X86Cpu, kind: CallbackKind, r: Region, i: number, spLo: number, spHi: number, rlo: number, rhi: number): void {
  const kret = kind === 'kretprobe';
  const ftrace = kind === 'ftrace';
  const fl = cpu.getRflags();
  // a handler may have changed the stack's mapping (unlikely): then write through the bus (faults, listeners)
  const mem0 = cpu.mem, st = cpuFrames(cpu);
  const same = mem0 === st.mem && mem0.tlbGeneration === st.gen && r === st.region ? true : mem0.regionAt(frameOf(kind, spLo, spHi)) === r;
  const w = same && (r.perms & PERM_W) !== 0 && !r.codeMapped ? (r === st.region ? st.words : wordsOf(r)) : null;
  if (w) {
    const mem = cpu.mem;
    writeGprSlots(cpu, w, i);
    put(w, i + S_FLAGS, fl, 0);
    if (kret) put(w, i + S_SP, rlo, rhi);
    else if (!ftrace) put(w, i + S_SS, fl, 0); // mov 18*8(%rsp),%rdx; mov %rdx,20*8(%rsp)
    if (mem.isObserved || mem.watcher !== null) {
      // the stores, in the template's order, to whoever listens
      const frame = frameOf(kind, spLo, spHi);
      mem.wroteInPlace(frame, 15 * 8, 'engine');
      mem.wroteInPlace(frame + S_FLAGS * 4, 8, 'engine');
      if (kret) mem.wroteInPlace(frame + S_SP * 4, 8, 'engine');
      else if (!ftrace) mem.wroteInPlace(frame + S_SS * 4, 8, 'engine');
    }
  } else {
    const mem = cpu.mem, frame = frameOf(kind, spLo, spHi);
    const put64 = (a: VAddr, lo: number, hi: number): void => { mem.write32(a, lo); mem.write32(a + 4, hi); };
    for (let s = 0; s < 15; s++) put64(frame + s * 8, cpu.lo[SLOT_GPR[s]], cpu.hi[SLOT_GPR[s]]);
    put64(frame + S_FLAGS * 4, fl, 0);
    if (kret) put64(frame + S_SP * 4, rlo, rhi);
    else if (!ftrace) put64(frame + S_SS * 4, fl, 0);
  }
  // ftrace: the slot at sp0 (above the 20-slot frame: where `ss` would be) gets the resume address
  if (ftrace) cpu.mem.write64Halves(spHi * TWO32 + (spLo >>> 0), rlo, rhi);
}

/** the lowest slot of a `kind` frame saved at sp = spHi:spLo */
function frameOf(kind: CallbackKind, spLo: number, spHi: number): VAddr {
  return spHi * TWO32 + (spLo >>> 0) - (kind === 'optprobe' ? FRAME_BYTES_OPT : FRAME_BYTES_KRET);
}

/**
 * After the slots: the template's pops and popfq (the flags value just
 * stored from the live flags: they stay as they are), then rip = resume
 * with sp back at sp0 (ftrace: sp0 + 8, past the resume address it pops);
 * `resume` null leaves the CPU on the `ret` at retInsn with sp at the
 * return slot.
 */
function resumeAfter(cpu: X86Cpu, kind: CallbackKind, frame: VAddr, sp0: VAddr, spLo: number, spHi: number, resume: VAddr | null, retInsn: VAddr): void {
  const ftrace = kind === 'ftrace';
  if (resume === null) {
    cpu.setRegAddr(4, ftrace ? sp0 : frame + S_SP * 4);
    cpu.rip = retInsn;
    return;
  }
  if (ftrace) cpu.setRegAddr(4, sp0 + 8);
  else { cpu.lo[4] = spLo; cpu.hi[4] = spHi; }
  cpu.rip = resume;
}
