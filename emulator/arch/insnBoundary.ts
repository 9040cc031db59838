/**
 * Is an address an instruction boundary? The instructions are decoded with
 * the arch's decoder (ArchOps.decodeBytes) from the start of the function
 * containing the address, on the image's own bytes (the ELF's PT_LOAD
 * data), not on live memory where probes' breakpoint bytes would change the
 * lengths (x86 can_probe() decodes from the function's start the same way).
 * Used by probe registration (emulator/probes/insnBoundary.ts: what a probe
 * inside an instruction does) and by the language server's check
 * (arch/decoders.ts).
 */
import type { ArchOps } from './types';
import type { ElfImage } from '../elf/types';

/** Longest instruction any port decodes (x86: 15 bytes). */
const MAX_INSN_BYTES = 16;
/** Do not decode further than this into a function (a size-0 symbol, data). */
const MAX_SCAN = 1 << 20;

/** An instruction that a probe address falls strictly inside. */
export interface SplitInstruction {
  /** the probe address */
  addr: bigint;
  /** first byte of the instruction */
  start: bigint;
  length: number;
  /** "mov rbp, rsp" */
  text: string;
  /** 'do_fork+0x3 is inside "mov rbp, rsp" (do_fork+0x1..+0x4)' */
  message: string;
}

/** The image's file bytes at [addr, addr + len) from the executable PT_LOAD segment holding them (shorter at its end). */
function imageBytes(image: ElfImage, addr: bigint, len: number): Uint8Array | undefined {
  for (const s of image.segments) {
    if (s.type !== 1 || (s.flags & 1) === 0 || addr < s.vaddr || addr >= s.vaddr + s.filesz) continue;
    const off = Number(addr - s.vaddr);
    return s.data.subarray(off, Math.min(off + len, s.data.length));
  }
  return undefined;
}

/**
 * The instruction starts of a function decoded so far, from its first byte
 * up to `end` (decoding stopped at `end` for good when `stuck`). Kept per
 * image, so the probes of one function decode each of its instructions
 * once, not once per probe from the start.
 */
interface FnStarts { starts: bigint[]; end: bigint; stuck: boolean }
const decodedStarts = new WeakMap<ElfImage, Map<bigint, FnStarts>>();

type Decoder = Pick<ArchOps, 'decodeBytes' | 'insnLength'>;

function decodeAt(image: ElfImage, arch: Decoder, pc: bigint): ReturnType<ArchOps['decodeBytes']> {
  const bytes = imageBytes(image, pc, MAX_INSN_BYTES);
  if (!bytes || bytes.length === 0) return null;
  let insn;
  try { insn = arch.decodeBytes(bytes, pc); } catch { insn = null; }
  return insn && insn.length > 0 ? insn : null;
}

/** the length of the instruction at pc (decodeAt's, without its text where the arch can say it alone); 0: none */
function lengthAt(image: ElfImage, arch: Decoder, pc: bigint): number {
  if (arch.insnLength === undefined) return decodeAt(image, arch, pc)?.length ?? 0;
  const bytes = imageBytes(image, pc, MAX_INSN_BYTES);
  if (!bytes || bytes.length === 0) return 0;
  let len;
  try { len = arch.insnLength(bytes, pc); } catch { len = null; }
  return len !== null && len > 0 ? len : 0;
}

/**
 * The instruction `addr` is inside (not at its first byte), decoding from the
 * start of the function containing addr; undefined when addr is an
 * instruction boundary or when that cannot be worked out (no symbol, bytes
 * that do not decode on the way).
 */
export function splitInstruction(image: ElfImage, arch: Decoder, addr: bigint): SplitInstruction | undefined {
  const at = image.symbols.resolve(addr);
  if (!at || at.offset === 0n || at.offset > BigInt(MAX_SCAN)) return undefined;
  const fn = at.sym;
  let byFn = decodedStarts.get(image);
  if (!byFn) decodedStarts.set(image, byFn = new Map());
  let d = byFn.get(fn.value);
  if (!d) byFn.set(fn.value, d = { starts: [], end: fn.value, stuck: false });
  while (!d.stuck && d.end < addr) {
    const len = lengthAt(image, arch, d.end);
    if (len === 0) { d.stuck = true; break; }
    d.starts.push(d.end);
    d.end += BigInt(len);
  }
  if (d.end <= addr) return undefined;
  // the last instruction start below addr (starts ascend)
  let lo = 0, hi = d.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (d.starts[mid] <= addr) lo = mid; else hi = mid - 1;
  }
  const pc = d.starts[lo];
  if (pc === addr) return undefined;
  const insn = decodeAt(image, arch, pc);
  if (!insn) return undefined;
  const end = pc + BigInt(insn.length);
  const text = insn.operands ? `${insn.mnemonic} ${insn.operands}` : insn.mnemonic;
  const off = (a: bigint): string => `+0x${(a - fn.value).toString(16)}`;
  return {
    addr, start: pc, length: insn.length, text,
    message: `${fn.name}${off(addr)} is inside "${text}" (${fn.name}${off(pc)}..${off(end)})`,
  };
}
