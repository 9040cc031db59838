/**
 * DAP `disassemble`: instructions around a memory reference, decoded by the
 * arch table (the same decoder the CPU and the kprobes engine use), labelled
 * `symbol+0xoff`, with source lines from DWARF. Instructions before the
 * reference are found by decoding forward from the enclosing function's
 * start (x86 lengths vary: decoding backwards is ambiguous). Unreadable or
 * undecodable bytes give `(bad)` entries with presentationHint 'invalid', as
 * the protocol asks, so the result always has instructionCount entries.
 * Instructions are the original ones (probe breakpoints hidden, through
 * readCode); what a probe wrote over them comes as `; ...` notes.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ArchOps, DecodedInsn } from '../emulator/arch/types';
import { ElfImage } from '../emulator/elf/types';
import { Memory } from '../emulator/memory/memory';
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

function decodeAt(ctx: DisassembleContext, addr: bigint): DecodedInsn | null {
  const v = toVAddr(addr);
  if (v === null || !ctx.mem.isMapped(v, 1)) return null;
  try {
    if (!ctx.readCode) return ctx.arch.decode(ctx.mem, addr);
    let len = ctx.arch.maxInsnLength;
    while (len > 1 && !ctx.mem.isMapped(v, len)) len--;
    return ctx.arch.decodeBytes(ctx.readCode(addr, len), addr);
  } catch {
    return null;
  }
}

/** Minimum instruction alignment/step used for invalid entries. */
function step(arch: ArchOps): number {
  return arch.minInsnLength;
}

function instructionBefore(ctx: DisassembleContext, addr: bigint, count: number): bigint {
  // Start from the enclosing function (or a window before addr) and decode forward.
  const sym = ctx.image.symbols.resolve(addr);
  const window = BigInt(count * ctx.arch.maxInsnLength);
  let start = sym && addr - sym.offset >= addr - window * 4n ? addr - sym.offset : addr - window;
  if (start < 0n) start = 0n;
  const starts: bigint[] = [];
  let a = start;
  while (a < addr) {
    starts.push(a);
    const d = decodeAt(ctx, a);
    a += BigInt(d ? d.length : step(ctx.arch));
  }
  if (a !== addr || starts.length < count) {
    // Could not reach addr exactly (or not enough instructions): pad with fixed steps.
    const s = BigInt(step(ctx.arch));
    return addr - BigInt(count) * s;
  }
  return starts[starts.length - count];
}

export function disassemble(ctx: DisassembleContext, args: DebugProtocol.DisassembleArguments): DebugProtocol.DisassembledInstruction[] {
  const base = parseAddress(args.memoryReference) + BigInt(args.offset ?? 0);
  const count = Math.max(0, Math.min(args.instructionCount, 4096));
  const insnOffset = args.instructionOffset ?? 0;
  let addr = base;
  let skip = 0;
  if (insnOffset < 0) addr = instructionBefore(ctx, base, -insnOffset);
  else skip = insnOffset;
  const out: DebugProtocol.DisassembledInstruction[] = [];
  let lastLine: string | undefined;
  while (out.length < count) {
    const d = decodeAt(ctx, addr);
    const len = d ? d.length : step(ctx.arch);
    if (skip > 0) { skip--; addr += BigInt(len); continue; }
    const insn: DebugProtocol.DisassembledInstruction = {
      address: formatAddress(addr),
      instruction: d ? `${d.mnemonic}${d.operands ? ' ' + d.operands : ''}` : '(bad)',
    };
    if (d) {
      insn.instructionBytes = [...d.bytes].map(b => b.toString(16).padStart(2, '0')).join(' ');
      const target = d.target !== undefined ? ctx.image.symbols.resolve(d.target) : undefined;
      if (target && d.target !== undefined) insn.instruction += ` <${ctx.image.symbols.format(d.target)}>`;
      else if (d.target !== undefined) {
        const extra = ctx.extraSymbol?.(d.target);
        if (extra) insn.instruction += ` <${extra}>`;
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
    const line = ctx.image.lines?.lineForAddress(addr);
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
    addr += BigInt(len);
  }
  return out;
}
