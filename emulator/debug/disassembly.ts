/**
 * Disassembly for the debugger: rows of decoded instructions around an
 * address, decoded by the arch table (the same decoder the CPU and the
 * kprobes engine use), labelled `symbol+0xoff`, with source lines from
 * DWARF. Instructions are the original ones (probe breakpoints hidden,
 * through readCode); what a probe wrote over them comes as notes, and a row
 * whose bytes the probes changed carries the patched bytes as well.
 *
 * `count` rows are returned, and the instruction at `base` is at index
 * -insnOffset (a front end places the program counter by index).
 * Instructions before the reference come from known instruction starts only
 * (function symbols, DWARF line-table addresses, the entry point), decoded
 * forward: variable-length code (x86) cannot be decoded backwards. Before
 * the earliest known start, or where memory is unmapped or undecodable, rows
 * are invalid, one minimum instruction length apart, so addresses keep
 * ascending. Fixed-width arches step back directly.
 */
import type { ArchOps, DecodedInsn } from '../arch/types';
import type { ElfImage } from '../elf/types';
import { PERM_X } from '../memory/memory';
import type { Memory } from '../memory/memory';
import { toVAddr } from '../memory/address';

export interface DisassemblyContext {
  arch: ArchOps;
  mem: Memory;
  image: ElfImage;
  /** code bytes as the user wrote them (probe breakpoints hidden); default: memory as is */
  readCode?(addr: bigint, len: number): Uint8Array;
  /** notes for the instruction at [addr, addr+len) (what a probe wrote there) */
  notes?(addr: bigint, len: number): string[];
  /** names for addresses outside the image's symbols (the kprobes engine's slots, trampolines, detour buffers) */
  extraSymbol?(addr: bigint): string | undefined;
}

/** One row of a disassembly. */
export interface DisassemblyRow {
  /** null: outside the 64-bit address space */
  address: bigint | null;
  /** false: no instruction here (unmapped, not executable, undecodable, before any known start) */
  valid: boolean;
  /** the instruction as objdump prints it (mnemonic column, operands, `<symbol>` of a branch target); `(bad)` when not valid */
  text: string;
  /** the original bytes of the instruction */
  bytes?: Uint8Array;
  /** the bytes memory holds now, when a probe changed them */
  patchedBytes?: Uint8Array;
  /** what the probes (and execute debug registers) did to this instruction */
  notes: string[];
  /** `symbol` or `symbol+0xoff` */
  symbol?: string;
  /** the DWARF source line of the address */
  source?: { file: string; line: number; column?: number };
}

/** Largest count / |insnOffset| served. */
export const MAX_DISASSEMBLY_ROWS = 65536;

/** Width of the mnemonic column ("mov     rsi, 0xffffffff81005140 <nr_forks>"). */
const MNEMONIC_COLUMN = 7;

/** symbol+0xoff of an address: the image's symbols, then the engine's own code; undefined when neither knows it. */
function symbolName(ctx: DisassemblyContext, a: bigint): string | undefined {
  return ctx.image.symbols.resolve(a) ? ctx.image.symbols.format(a) : ctx.extraSymbol?.(a);
}

/** The instruction at addr, or null where there is no code: unmapped, not executable, a device, undecodable. */
function decodeAt(ctx: DisassemblyContext, addr: bigint): DecodedInsn | null {
  const v = toVAddr(addr);
  const region = v === null ? undefined : ctx.mem.regionAt(v, 1);
  if (v === null || !region || region.device || (region.perms & PERM_X) === 0) return null;
  try {
    let len = ctx.arch.maxInsnLength;
    while (len > 1 && !ctx.mem.isMapped(v, len)) len--;
    const bytes = ctx.readCode ? ctx.readCode(addr, len) : ctx.mem.readBytes(v, len);
    if (ctx.arch.disassemble) return ctx.arch.disassemble(bytes, addr, a => symbolName(ctx, a));
    return ctx.arch.decodeBytes(bytes, addr);
  } catch {
    return null;
  }
}

/** How far back from an address a known instruction start is looked for (bytes). */
const ANCHOR_WINDOW = 64n * 1024n;
const ADDRESS_LIMIT = 1n << 64n;

/** One row of the reply: an address (null: outside the 64-bit space) and what decodes there. */
interface Slot {
  addr: bigint | null;
  insn: DecodedInsn | null;
}

/** ELF section flag: the section holds instructions */
const SHF_EXECINSTR = 4n;

/**
 * Known instruction starts of an image, ascending: function symbols, code
 * labels (untyped symbols in executable sections, e.g. assembler entry
 * stubs), line-table rows, the entry point.
 */
const anchorCache = new WeakMap<ElfImage, bigint[]>();

function anchorsOf(image: ElfImage): bigint[] {
  let a = anchorCache.get(image);
  if (a) return a;
  const set = new Set<bigint>([image.entry]);
  for (const f of image.symbols.functions()) set.add(f.value);
  for (const s of image.symbols.all()) {
    const sec = s.type === 'notype' ? image.sections[s.shndx] : undefined;
    if (sec && (sec.flags & SHF_EXECINSTR) !== 0n && s.value >= sec.addr && s.value < sec.addr + sec.size) set.add(s.value);
  }
  for (const r of image.lines?.rows() ?? []) if (!r.endSequence) set.add(r.address);
  a = [...set].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  anchorCache.set(image, a);
  return a;
}

/** The greatest known instruction start below `addr` and within ANCHOR_WINDOW of it. */
function anchorBelow(image: ElfImage, addr: bigint): bigint | undefined {
  const a = anchorsOf(image);
  let lo = 0, hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < addr) lo = mid + 1; else hi = mid;
  }
  const found = lo > 0 ? a[lo - 1] : undefined;
  return found !== undefined && addr - found <= ANCHOR_WINDOW ? found : undefined;
}

function slotAt(ctx: DisassemblyContext, addr: bigint): Slot {
  return addr >= 0n && addr < ADDRESS_LIMIT ? { addr, insn: decodeAt(ctx, addr) } : { addr: null, insn: null };
}

function slotLength(ctx: DisassemblyContext, s: Slot): bigint {
  return BigInt(s.insn ? s.insn.length : ctx.arch.minInsnLength);
}

/** `count` slots from `addr` on. */
function slotsFrom(ctx: DisassemblyContext, addr: bigint, count: number): Slot[] {
  const out: Slot[] = [];
  let a = addr;
  while (out.length < count) {
    const s = slotAt(ctx, a);
    out.push(s);
    a += slotLength(ctx, s);
  }
  return out;
}

/**
 * The `count` slots just before `addr`, ascending. Each stretch is decoded
 * forward from the nearest known start below it; instructions starting
 * before `addr` are kept even if the last one runs past it (addr inside an
 * instruction). Without a known start, invalid one-step slots.
 */
function slotsBefore(ctx: DisassemblyContext, addr: bigint, count: number): Slot[] {
  const step = BigInt(ctx.arch.minInsnLength);
  const fixedWidth = ctx.arch.minInsnLength === ctx.arch.maxInsnLength;
  const reversed: Slot[] = [];
  let cur = addr;
  while (reversed.length < count) {
    const anchor = fixedWidth ? undefined : anchorBelow(ctx.image, cur);
    if (anchor === undefined) {
      // fixed width: the previous instruction is one step back; variable width with no known start: padding
      cur -= step;
      reversed.push(fixedWidth ? slotAt(ctx, cur) : { addr: cur >= 0n ? cur : null, insn: null });
      continue;
    }
    const stretch: Slot[] = [];
    for (let a = anchor; a < cur;) {
      const s = slotAt(ctx, a);
      stretch.push(s);
      a += slotLength(ctx, s);
    }
    for (let i = stretch.length - 1; i >= 0 && reversed.length < count; i--) reversed.push(stretch[i]);
    cur = anchor;
  }
  return reversed.reverse();
}

/** One row from a slot: its text, bytes (original, and patched when a probe changed them), notes, symbol and line. */
function rowOf(ctx: DisassemblyContext, s: Slot): DisassemblyRow {
  if (s.addr === null) return { address: null, valid: false, text: '(bad)', notes: [] };
  const addr = s.addr;
  const d = s.insn;
  const row: DisassemblyRow = { address: addr, valid: d !== null, text: '(bad)', notes: [] };
  if (d) {
    // mnemonic in its own column, as llvm-objdump aligns it
    row.text = d.operands ? `${d.mnemonic.padEnd(MNEMONIC_COLUMN)} ${d.operands}` : d.mnemonic;
    row.bytes = d.bytes;
    // an arch without its own symbolizing disassembler: name the branch target here
    if (!ctx.arch.disassemble && d.target !== undefined) {
      const name = symbolName(ctx, d.target);
      if (name) row.text += ` <${name}>`;
    }
    row.notes = ctx.notes?.(addr, d.length) ?? [];
    if (ctx.readCode) {
      const v = toVAddr(addr);
      try {
        const now = v === null ? undefined : ctx.mem.readBytes(v, d.length);
        if (now && now.some((b, i) => b !== d.bytes[i])) row.patchedBytes = now;
      } catch { /* the original bytes decoded: memory as is cannot differ in a way worth a row */ }
    }
  }
  const sym = ctx.image.symbols.resolve(addr);
  if (sym) row.symbol = sym.offset === 0n ? sym.sym.name : `${sym.sym.name}+0x${sym.offset.toString(16)}`;
  else {
    const extra = ctx.extraSymbol?.(addr);
    if (extra) row.symbol = extra;
  }
  const line = ctx.image.lines?.lineForAddress(addr);
  if (line) row.source = { file: line.file, line: line.line, column: line.column || undefined };
  return row;
}

/**
 * `count` rows, the instruction at `base` at index -insnOffset (insnOffset
 * <= 0) or the rows from the insnOffset-th instruction after base on.
 * Throws when base is outside the 64-bit space or the counts are out of range.
 */
export function disassemblyRows(ctx: DisassemblyContext, base: bigint, insnOffset: number, count: number): DisassemblyRow[] {
  if (base < 0n || base >= ADDRESS_LIMIT) throw new Error(`address ${base} is outside the 64-bit address space`);
  if (!Number.isInteger(count) || count < 0 || count > MAX_DISASSEMBLY_ROWS) throw new Error(`count ${count} is not an integer in 0..${MAX_DISASSEMBLY_ROWS}`);
  if (!Number.isInteger(insnOffset) || Math.abs(insnOffset) > MAX_DISASSEMBLY_ROWS) throw new Error(`instruction offset ${insnOffset} is not an integer in ${-MAX_DISASSEMBLY_ROWS}..${MAX_DISASSEMBLY_ROWS}`);
  let slots: Slot[];
  if (insnOffset >= 0) {
    slots = slotsFrom(ctx, base, insnOffset + count).slice(insnOffset);
  } else {
    const before = slotsBefore(ctx, base, -insnOffset).slice(0, count);
    const after = count > before.length ? slotsFrom(ctx, base, count - before.length) : [];
    slots = [...before, ...after];
  }
  return slots.map(s => rowOf(ctx, s));
}
