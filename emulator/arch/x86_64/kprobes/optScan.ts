/**
 * The x86_64 optimizer's scan of a probed function (opt.ts's can_optimize
 * reads it): the function decoded once from its original bytes, kept per
 * machine while its bytes stay as they were, and the instructions a
 * verdict or a refusal names disassembled only then.
 */
import type { DecodedInsn } from '../../types';
import type { KprobesArchContext } from '../../../kprobes/archHooks';
import { decodeBytes } from '../decoder';
import type { Insn } from '../insn';
import { CheckedInsn } from '../disasm';
import { fromVAddr, toVAddr, VAddr } from '../../../memory/address';
import { MemoryFault } from '../../../memory/memory';
import type { BoostVerdict } from './boost';

const INT3 = 0xcc;

/** A branching instruction of a scanned function: what the JTPR and jump-table checks look at. */
interface ScannedBranch {
  /** offset from the function's start */
  readonly off: number;
  readonly flow: DecodedInsn['flow'];
  /** the absolute target of a relative branch */
  readonly target?: bigint;
}

/**
 * One function decoded from its original bytes, with what every probe in
 * it asks of the scan. Kept compact (a file may probe thousands of
 * functions): instruction lengths by offset, the branches, and the
 * relocation verdicts worked out so far; an instruction is disassembled
 * (mnemonic, operands) only when a verdict or a refusal's message needs it.
 */
export interface FunctionScan {
  readonly start: bigint;
  readonly end: bigint;
  /** the function's original bytes the scan decoded */
  readonly code: Uint8Array;
  /** the length of the instruction starting at each offset; 0: not an instruction start (or past the padding) */
  readonly lens: Uint8Array;
  /** the branching instructions (indirect jumps, jumps, conditional jumps, calls) in address order */
  readonly branches: readonly ScannedBranch[];
  /** index into branches of the first indirect jump, or -1 */
  readonly firstIndirect: number;
  /**
   * by offset from the function's start: 1 + the index into branches of the first branch whose target is
   * that byte, 0 when none is (the JTPR check looks at the few bytes of a region, not at every branch)
   */
  readonly targetedBy: Int32Array;
  /**
   * by offset: 1 where an instruction starts that a copy elsewhere must change (a RIP-relative operand, a
   * relative branch: relocate's work), 0 elsewhere; a region without one is copied as it is
   */
  readonly moves: Uint8Array;
  /** the relocation verdict of the instruction at an offset, worked out when a detoured region first holds it */
  readonly verdicts: Map<number, BoostVerdict>;
  /** the exception table the verdict below was taken from, and its first entry inside the function */
  exTable?: readonly { insn: bigint; fixup: bigint }[];
  exEntry?: { insn: bigint; fixup: bigint };
}

/**
 * The last scan of each function, with the original bytes it decoded:
 * registering many probes in one function decodes it once. A scan is
 * reused only while the function's original bytes (probes removed) are
 * the same, so a text change outside kprobes (the debugger's writeMemory,
 * a module's relocation, a store, time travel) is seen. Checked without
 * reading the function again while memory says nothing could have changed
 * them (its textWrites and tlbGeneration are those seen when the bytes were
 * last compared: the kprobes engine's own patches are textPokes, which do
 * not count); otherwise the original bytes are read and compared.
 */
interface CachedScan {
  readonly code: Uint8Array;
  readonly scan: FunctionScan | string;
  /** memory's textWrites and tlbGeneration when `code` was last found equal to the original bytes; NaN: always compare */
  textWrites: number;
  tlbGeneration: number;
}
const scans = new WeakMap<KprobesArchContext, Map<bigint, CachedScan>>();

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Decode the whole function holding addr from its original bytes; the reason when impossible. */
export function scanFunction(ctx: KprobesArchContext, addr: bigint): FunctionScan | string {
  const r = ctx.kernel.image.symbols.resolve(addr);
  if (!r || r.sym.size === 0n || r.offset >= r.sym.size) return 'the address is not inside a sized function symbol';
  const start = r.sym.value;
  const size = Number(r.sym.size);
  const mem = ctx.kernel.mem;
  let byStart = scans.get(ctx);
  if (!byStart) { byStart = new Map(); scans.set(ctx, byStart); }
  const hit = byStart.get(start);
  if (hit && hit.code.length === size && hit.textWrites === mem.textWrites && hit.tlbGeneration === mem.tlbGeneration) return hit.scan;
  let code: Uint8Array;
  try { code = ctx.readOriginal(start, size); } catch { return `${r.sym.name} cannot be read`; }
  // from here on every change to these bytes counts in textWrites (else: compare every time)
  const v = toVAddr(start);
  const watched = v !== null && mem.watchText(v, size);
  const stamp = (c: CachedScan): CachedScan => {
    c.textWrites = watched ? mem.textWrites : NaN;
    c.tlbGeneration = mem.tlbGeneration;
    return c;
  };
  if (hit && sameBytes(hit.code, code)) return stamp(hit).scan;
  const scan = decodeFunction(r.sym.name, start, code);
  byStart.set(start, stamp({ code, scan, textWrites: NaN, tlbGeneration: NaN }));
  return scan;
}

/** one instruction at `v` (the arch's decodeBytes without the disassembly text): null where it does not decode */
function decodeAt(bytes: Uint8Array, v: VAddr): Insn | null {
  try {
    return decodeBytes(bytes, v);
  } catch (e) {
    if (e instanceof MemoryFault || e instanceof RangeError) return null;
    throw e;
  }
}

const BRANCH_FLOWS: ReadonlySet<DecodedInsn['flow']> = new Set(['indirectJump', 'jump', 'condJump', 'call']);

function decodeFunction(name: string, start: bigint, code: Uint8Array): FunctionScan | string {
  const size = code.length;
  const startV = toVAddr(start);
  if (startV === null) return `${name}+0x0 does not decode`;
  const lens = new Uint8Array(size);
  const branches: ScannedBranch[] = [];
  const targetedBy = new Int32Array(size);
  const moves = new Uint8Array(size);
  let firstIndirect = -1;
  for (let off = 0; off < size;) {
    const d = decodeAt(code.subarray(off), startV + off);
    if (!d) return `${name}+0x${off.toString(16)} does not decode`;
    if (d.bytes[0] === INT3 && d.len === 1) {
      // padding int3 up to the end is fine; any other int3 is not ours to understand
      for (let k = off; k < size; k++) if (code[k] !== INT3) return `${name}+0x${off.toString(16)}: int3 in the function`;
      break;
    }
    const flow = d.def.flow;
    let relative = false;
    for (const o of d.def.ops) if (o.k === 'J') relative = true;
    if (relative || d.layout.ripRel) moves[off] = 1;
    if (BRANCH_FLOWS.has(flow)) {
      const target = relative ? d.target : undefined;
      if (flow === 'indirectJump' && firstIndirect < 0) firstIndirect = branches.length;
      // a target inside the function (a VAddr: startV + offset); the first branch to it is the one a refusal names
      if (target !== undefined && target >= startV && target < startV + size && targetedBy[target - startV] === 0) targetedBy[target - startV] = branches.length + 1;
      branches.push({ off, flow, target: target !== undefined ? fromVAddr(target) : undefined });
    }
    lens[off] = d.len;
    off += d.len;
  }
  return { start, end: start + BigInt(size), code, lens, branches, firstIndirect, targetedBy, moves, verdicts: new Map() };
}

/** the instruction at `off` of a scanned function, disassembled (as the arch's decodeBytes gives it, its operands' text when read) */
export function disassembled(fn: FunctionScan, off: number): DecodedInsn {
  const v = toVAddr(fn.start + BigInt(off));
  const d = v === null ? null : decodeAt(fn.code.subarray(off, off + fn.lens[off]), v);
  if (!d) throw new Error(`kprobes: ${hexAddr(fn.start + BigInt(off))} decoded in the scan but not again`);
  return new CheckedInsn(d);
}

/** an address as a refusal message prints it */
export function hexAddr(a: bigint): string {
  return `0x${BigInt.asUintN(64, a).toString(16)}`;
}

