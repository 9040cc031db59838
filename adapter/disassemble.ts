/**
 * DAP `disassemble`: instructions around a memory reference, decoded by the
 * arch table (the same decoder the CPU and the kprobes engine use), labelled
 * `symbol+0xoff`, with source lines from DWARF. Instructions are the original
 * ones (probe breakpoints hidden, through readCode); what a probe wrote over
 * them comes as `; ...` notes.
 *
 * The reply holds exactly `instructionCount` entries, and the instruction at
 * memoryReference + offset is at index -instructionOffset (VS Code places
 * the program counter by index). Instructions before the reference come from
 * known instruction starts only (function symbols, DWARF line-table
 * addresses, the entry point), decoded forward: variable-length code (x86)
 * cannot be decoded backwards. Before the earliest known start, or where
 * memory is unmapped or undecodable, entries are `(bad)` with
 * presentationHint 'invalid', one minimum instruction length apart, so
 * addresses keep ascending. Fixed-width arches step back directly.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ArchOps, DecodedInsn } from '../emulator/arch/types';
import { ElfImage } from '../emulator/elf/types';
import { Memory, PERM_X } from '../emulator/memory/memory';
import { hex64, toVAddr } from '../emulator/memory/address';

export interface DisassembleContext {
  arch: ArchOps;
  mem: Memory;
  image: ElfImage;
  /** maps a source path as recorded in DWARF to the path shown to the client */
  sourcePath?(file: string): string;
  /** code bytes as the user wrote them (probe breakpoints hidden); default: memory as is */
  readCode?(addr: bigint, len: number): Uint8Array;
  /** notes for the instruction at [addr, addr+len) (what a probe wrote there), appended as `; note` */
  notes?(addr: bigint, len: number): string[];
  /** names for addresses outside the image's symbols (the kprobes engine's slots, trampolines, detour buffers) */
  extraSymbol?(addr: bigint): string | undefined;
}

export function parseAddress(ref: string, what = 'memoryReference'): bigint {
  const t = ref.trim();
  if (!/^(0x[0-9a-f]+|\d+)$/i.test(t)) throw new Error(`${what} "${ref}" is not an address (use 0x hex or decimal)`);
  const v = BigInt(t);
  if (v < 0n || v >= 1n << 64n) throw new Error(`${what} ${ref} is outside the 64-bit address space`);
  return v;
}

export function formatAddress(a: bigint): string {
  return '0x' + hex64(a);
}

/** Width of the mnemonic column ("mov     rsi, 0xffffffff81005140 <nr_forks>"). */
const MNEMONIC_COLUMN = 7;

/** symbol+0xoff of an address: the image's symbols, then the engine's own code; undefined when neither knows it. */
function symbolName(ctx: DisassembleContext, a: bigint): string | undefined {
  return ctx.image.symbols.resolve(a) ? ctx.image.symbols.format(a) : ctx.extraSymbol?.(a);
}

/** The instruction at addr, or null where there is no code: unmapped, not executable, a device, undecodable. */
function decodeAt(ctx: DisassembleContext, addr: bigint): DecodedInsn | null {
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

/** Largest instructionCount / |instructionOffset| served (VS Code asks for ~50-100). */
export const MAX_DISASSEMBLE_COUNT = 65536;
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

function slotAt(ctx: DisassembleContext, addr: bigint): Slot {
  return addr >= 0n && addr < ADDRESS_LIMIT ? { addr, insn: decodeAt(ctx, addr) } : { addr: null, insn: null };
}

function slotLength(ctx: DisassembleContext, s: Slot): bigint {
  return BigInt(s.insn ? s.insn.length : ctx.arch.minInsnLength);
}

/** `count` slots from `addr` on. */
function slotsFrom(ctx: DisassembleContext, addr: bigint, count: number): Slot[] {
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
function slotsBefore(ctx: DisassembleContext, addr: bigint, count: number): Slot[] {
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

function checkedInteger(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new Error(`${what} ${JSON.stringify(v)} is not an integer in ${min}..${max}`);
  }
  return v;
}

function entry(ctx: DisassembleContext, s: Slot): DebugProtocol.DisassembledInstruction {
  // an address outside the 64-bit space: VS Code skips entries at address -1
  if (s.addr === null) return { address: '-1', instruction: '(bad)', presentationHint: 'invalid' };
  const addr = s.addr;
  const d = s.insn;
  const insn: DebugProtocol.DisassembledInstruction = {
    address: formatAddress(addr),
    // mnemonic in its own column, as llvm-objdump aligns it
    instruction: d ? (d.operands ? `${d.mnemonic.padEnd(MNEMONIC_COLUMN)} ${d.operands}` : d.mnemonic) : '(bad)',
  };
  if (d) {
    insn.instructionBytes = [...d.bytes].map(b => b.toString(16).padStart(2, '0')).join(' ');
    // an arch without its own symbolizing disassembler: name the branch target here
    if (!ctx.arch.disassemble && d.target !== undefined) {
      const name = symbolName(ctx, d.target);
      if (name) insn.instruction += ` <${name}>`;
    }
    const notes = ctx.notes?.(addr, d.length) ?? [];
    if (notes.length) insn.instruction += `  ; ${notes.join('; ')}`;
  } else {
    insn.presentationHint = 'invalid';
  }
  const sym = ctx.image.symbols.resolve(addr);
  if (sym) insn.symbol = sym.offset === 0n ? sym.sym.name : `${sym.sym.name}+0x${sym.offset.toString(16)}`;
  else {
    const extra = ctx.extraSymbol?.(addr);
    if (extra) insn.symbol = extra;
  }
  return insn;
}

export function disassemble(ctx: DisassembleContext, args: DebugProtocol.DisassembleArguments): DebugProtocol.DisassembledInstruction[] {
  const byteOffset = checkedInteger(args.offset ?? 0, 'offset', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const base = parseAddress(args.memoryReference) + BigInt(byteOffset);
  if (base < 0n || base >= ADDRESS_LIMIT) throw new Error(`memoryReference ${args.memoryReference} + offset ${byteOffset} is outside the 64-bit address space`);
  const count = checkedInteger(args.instructionCount, 'instructionCount', 0, MAX_DISASSEMBLE_COUNT);
  const insnOffset = checkedInteger(args.instructionOffset ?? 0, 'instructionOffset', -MAX_DISASSEMBLE_COUNT, MAX_DISASSEMBLE_COUNT);
  let slots: Slot[];
  if (insnOffset >= 0) {
    slots = slotsFrom(ctx, base, insnOffset + count).slice(insnOffset);
  } else {
    const before = slotsBefore(ctx, base, -insnOffset).slice(0, count);
    const after = count > before.length ? slotsFrom(ctx, base, count - before.length) : [];
    slots = [...before, ...after];
  }
  const out: DebugProtocol.DisassembledInstruction[] = [];
  let lastLine: string | undefined;
  for (const s of slots) {
    const insn = entry(ctx, s);
    const line = s.addr !== null ? ctx.image.lines?.lineForAddress(s.addr) : undefined;
    if (line) {
      const key = `${line.file}:${line.line}`;
      if (key !== lastLine) {
        const path = ctx.sourcePath ? ctx.sourcePath(line.file) : line.file;
        insn.location = { name: path.split('/').pop(), path };
        insn.line = line.line;
        insn.column = line.column || undefined;
        lastLine = key;
      }
    }
    out.push(insn);
  }
  return out;
}
