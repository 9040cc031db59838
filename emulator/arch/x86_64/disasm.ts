/**
 * Intel-syntax disassembly of decoded instructions, formatted like
 * `llvm-objdump --x86-asm-syntax=intel -d` (mnemonic, `qword ptr [rbp - 0x8]`
 * memory operands, hex immediates, absolute branch targets), and the
 * DecodedInsn view the kprobes engine and the DAP disassembler use.
 *
 * Two styles. 'llvm' is exactly llvm-objdump's text (the goldens in
 * test/fixtures/x86/disasm). 'addresses' (the default) differs where llvm
 * shows an address as a number: a 32-bit immediate or displacement that the
 * CPU sign-extends into a kernel address (the -2 GiB kernel text / module
 * mapping) prints as the 64-bit address (`mov rsi, 0xffffffff81005140`,
 * not `-0x7effaec0`), an absolute [disp32] operand prints the 64-bit address
 * it reaches. An optional symbolizer names those addresses and branch
 * targets as llvm-objdump does (` <nr_forks>`), and the address a
 * RIP-relative operand reaches in llvm's comment (`  # 0x... <name>`).
 */
import type { DecodedInsn } from '../types';
import { fromVAddr, hex, toVAddr } from '../../memory/address';
import { decodeBytes } from './decoder';
import { Insn, REP_F2, REP_F3, SEG_FS, SEG_GS } from './insn';
import { CC_NAMES, Operand } from './table';

/** Names an address (`nr_forks`, `do_fork+0x1a`), or undefined when it has no name. */
export type Symbolizer = (addr: bigint) => string | undefined;

export interface DisasmOptions {
  /** 'addresses' (default) or 'llvm' (llvm-objdump's text exactly; see the file comment) */
  style?: 'addresses' | 'llvm';
  /** appends ` <name>` to an address operand and a branch target ('addresses' style only) */
  symbolize?: Symbolizer;
}

interface Fmt {
  addresses: boolean;
  symbolize?: Symbolizer;
}

const LLVM: Fmt = { addresses: false };
const ADDRESSES: Fmt = { addresses: true };

function fmtOf(o?: DisasmOptions): Fmt {
  if (!o) return ADDRESSES;
  if (o.style === 'llvm') return LLVM;
  return o.symbolize ? { addresses: true, symbolize: o.symbolize } : ADDRESSES;
}

/**
 * A 64-bit value in the kernel's upper mappings (Linux x86_64 mm.rst:
 * kernel text from 0xffffffff80000000, modules up to 0xffffffffff000000) or
 * anywhere in the canonical upper half above it: what a sign-extended
 * 32-bit immediate or displacement holds when it is an address, and no
 * small negative constant (-1, -EINVAL, a stack offset) is.
 */
const UPPER_HALF_MIN = -(2n ** 47n);
const ADDRESS_MAX = -0x1000000n;
function isUpperAddress(signed: bigint): boolean {
  return signed >= UPPER_HALF_MIN && signed <= ADDRESS_MAX;
}

/** `0xffffffff81005140 <nr_forks>` */
function addressText(a: bigint, f: Fmt): string {
  const name = f.symbolize?.(BigInt.asUintN(64, a));
  return name ? `${hex(a)} <${name}>` : hex(a);
}

const R64 = ['rax', 'rcx', 'rdx', 'rbx', 'rsp', 'rbp', 'rsi', 'rdi', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15'];
const R32 = ['eax', 'ecx', 'edx', 'ebx', 'esp', 'ebp', 'esi', 'edi', 'r8d', 'r9d', 'r10d', 'r11d', 'r12d', 'r13d', 'r14d', 'r15d'];
const R16 = ['ax', 'cx', 'dx', 'bx', 'sp', 'bp', 'si', 'di', 'r8w', 'r9w', 'r10w', 'r11w', 'r12w', 'r13w', 'r14w', 'r15w'];
const R8 = ['al', 'cl', 'dl', 'bl', 'spl', 'bpl', 'sil', 'dil', 'r8b', 'r9b', 'r10b', 'r11b', 'r12b', 'r13b', 'r14b', 'r15b',
  'ah', 'ch', 'dh', 'bh'];
const PTR: Record<number, string> = { 1: 'byte ptr ', 2: 'word ptr ', 4: 'dword ptr ', 8: 'qword ptr ', 16: 'xmmword ptr ' };
const STR_SUFFIX: Record<number, string> = { 1: 'b', 2: 'w', 4: 'd', 8: 'q' };

export function regName(size: number, r: number): string {
  switch (size) {
    case 1: return R8[r];
    case 2: return R16[r];
    case 4: return R32[r];
    default: return R64[r];
  }
}

function hexs(v: number | bigint): string {
  const b = BigInt(v);
  return b < 0n ? `-0x${(-b).toString(16)}` : `0x${b.toString(16)}`;
}

function opSize(o: Operand, i: Insn): number {
  switch (o.s) {
    case 'b': return 1;
    case 'w': return 2;
    case 'd': return 4;
    case 'q': return 8;
    case 'x': return 16;
    case 'p': return 0; // a far pointer: llvm shows no size
    case 'y': return i.size === 8 ? 8 : 4;
    default: return i.size;
  }
}

function memText(i: Insn, size: number, withPtr: boolean, f: Fmt): string {
  const seg = i.seg === SEG_FS ? 'fs:' : i.seg === SEG_GS ? 'gs:' : i.prefixes.includes(0x2e) ? 'cs:' : '';
  const regs = i.asize === 4 ? R32 : R64;
  let inner: string;
  if (i.ripRel) {
    inner = `${i.asize === 4 ? 'eip' : 'rip'} ${sdisp((i.disp - i.next) | 0, true)}`;
  } else {
    const parts: string[] = [];
    if (i.base >= 0) parts.push(regs[i.base]);
    if (i.index >= 0) parts.push(i.scale ? `${1 << i.scale}*${regs[i.index]}` : regs[i.index]);
    let s = parts.join(' + ');
    if (parts.length === 0) {
      // absolute [disp32]: sign-extended to 64 bits (zero-extended from 32 with the 67 prefix)
      s = f.addresses && i.asize === 8 ? addressText(BigInt(i.disp | 0), f) : hexs(i.disp >>> 0);
    } else if (f.addresses && i.asize === 8 && isUpperAddress(BigInt(i.disp | 0))) {
      s += ` + ${addressText(BigInt(i.disp | 0), f)}`; // a table or object base indexed by registers
    } else if (i.disp !== 0) s += ` ${sdisp(i.disp, true)}`;
    inner = s;
  }
  return `${withPtr ? PTR[size] ?? '' : ''}${seg}[${inner}]`;
}
function sdisp(d: number, spaced: boolean): string {
  const sep = spaced ? ' ' : '';
  return d < 0 ? `-${sep}0x${(-d).toString(16)}` : `+${sep}0x${d.toString(16)}`;
}

/** mov/push of a sign-extended imm32 (or movabs imm64) that is an upper-half address */
function immAddress(i: Insn, o: Operand, size: number): bigint | undefined {
  if (size !== 8 || (i.def.mnem !== 'mov' && i.def.mnem !== 'push')) return undefined;
  const v = o.s === 'v' ? BigInt.asIntN(64, (BigInt(i.immHi | 0) << 32n) | BigInt(i.imm >>> 0)) : BigInt(i.imm | 0);
  return isUpperAddress(v) ? v : undefined;
}

function immText(i: Insn, o: Operand, size: number, second: boolean, f: Fmt): string {
  if (second) return hexs(i.imm2 & 0xff);
  if (f.addresses) {
    const a = immAddress(i, o, size);
    if (a !== undefined) return addressText(a, f);
  }
  const raw = i.imm;
  if (i.def.mnem === 'ret' || i.def.mnem === 'enter') return hexs(raw & 0xffff);
  if (i.def.mnem === 'int' || /^(rol|ror|rcl|rcr|shl|shr|sar|shld|shrd|bt|bts|btr|btc)$/.test(i.def.mnem)) return hexs(raw & 0xff);
  // sign-extended immediates (imm8 into a wider operand, imm32 into 64 bits) print signed
  if (size === 8) {
    if (o.s === 'v') return hexs((BigInt(i.immHi | 0) << 32n) | BigInt(i.imm >>> 0));
    return hexs(i.imm | 0);
  }
  if (size === 1) return hexs((raw << 24) >> 24);
  if (o.s === 'b' && size > 1) {
    const s = size === 2 ? (raw << 16) >> 16 : raw | 0;
    return hexs(s);
  }
  return hexs(size === 4 ? raw >>> 0 : raw);
}

function operandText(i: Insn, o: Operand, idx: number, f: Fmt): string {
  const size = opSize(o, i);
  switch (o.k) {
    case 'G': return regName(size, i.reg);
    case 'E': case 'M':
      if (i.rm >= 0) return regName(size, i.rm);
      if (i.def.mnem === 'cmpxchg8b') return memText(i, i.size === 8 ? 16 : 8, true, f);
      return memText(i, size, i.def.mnem !== 'lea', f);
    case 'Z': return regName(size, i.rm);
    case 'V': return `xmm${i.reg}`;
    case 'U': return `xmm${i.rm}`;
    case 'W': return i.rm >= 0 ? `xmm${i.rm}` : memText(i, size, true, f);
    case 'B': return regName(size, i.vreg);
    case 'D': return `dr${i.reg}`;
    case 'C': return `cr${i.reg}`;
    case 'S': return ['es', 'cs', 'ss', 'ds', 'fs', 'gs'][i.reg] ?? `sreg${i.reg}`;
    case 'R':
      if (o.fixed === undefined) return regName(8, i.rm); // mov to/from DRn: ModRM.rm
      if (o.fixed === 'AL') return 'al';
      if (o.fixed === 'CL') return 'cl';
      if (o.fixed === 'DX') return 'dx';
      return regName(i.size, 0);
    case '1': return '1';
    case 'I': return immText(i, o, i.size, idx > 0 && i.def.ops[idx - 1].k === 'I', f);
    case 'J': return f.symbolize ? addressText(fromVAddr(i.target), f) : hexs(fromVAddr(i.target));
    case 'X': return `${PTR[size]}${i.seg === SEG_FS ? 'fs:' : i.seg === SEG_GS ? 'gs:' : ''}[${i.asize === 4 ? 'esi' : 'rsi'}]`;
    case 'Y': return `${PTR[size]}es:[${i.asize === 4 ? 'edi' : 'rdi'}]`;
    default: return '?';
  }
}

/** Mnemonic as llvm prints it (with rep/lock prefixes). */
export function mnemonicOf(i: Insn): string {
  const d = i.def;
  let m = d.mnem;
  if (d.sized) m = d.sized[i.size === 2 ? 0 : i.size === 4 ? 1 : 2];
  if (d.regMnem && i.rm >= 0) m = d.regMnem;
  const low = d.code.endsWith('+cc');
  if (low) m += CC_NAMES[i.cc];
  if (d.str) m += STR_SUFFIX[i.size];
  if (d.code === 'b8+r' && i.size === 8) m = 'movabs';
  if (i.def.mnem === 'jrcxz' && i.asize === 4) m = 'jecxz';
  let pre = '';
  if (i.lock) pre += 'lock ';
  if (d.str) {
    if (i.rep === REP_F3) pre += 'rep ';
    else if (i.rep === REP_F2) pre += 'repne ';
  }
  return pre + m;
}

/** Operands, in the style the options ask (default: 'addresses', no symbolizer). */
export function operandsOf(i: Insn, opts?: DisasmOptions): string {
  const f = fmtOf(opts);
  const ops = i.def.ops;
  // llvm omits the implicit "1" of shift-by-one
  const shown = ops.filter(o => o.k !== '1');
  // llvm prints register-register xchg as "xchg reg, rm"
  if (i.def.mnem === 'xchg' && i.rm >= 0 && shown.length === 2 && shown[0].k === 'E') shown.reverse();
  const text = shown.map(o => operandText(i, o, ops.indexOf(o), f)).join(', ');
  // llvm's comment with the address a RIP-relative operand reaches, when the symbolizer names it
  if (f.symbolize && i.ripRel) {
    const a = fromVAddr(i.disp);
    const name = f.symbolize(a);
    if (name) return `${text}  # ${hex(a)} <${name}>`;
  }
  return text;
}

export function toDecoded(i: Insn, opts?: DisasmOptions): DecodedInsn {
  // without options, the operands' text is formatted when first read: registering a probe decodes its instruction
  // for the length, flow and mnemonic only (an own enumerable property all the same: spread and JSON see the text);
  // a symbolizer is asked at once (what it names may change later)
  let operands: string | undefined = opts === undefined ? undefined : operandsOf(i, opts);
  const out: DecodedInsn = {
    addr: fromVAddr(i.addr),
    length: i.len,
    bytes: i.bytes,
    mnemonic: mnemonicOf(i),
    get operands(): string { return (operands ??= operandsOf(i, opts)); },
    set operands(v: string) { operands = v; },
    flow: i.def.flow,
    ipRelative: i.ripRel,
  };
  if (i.def.ops.some(o => o.k === 'J')) out.target = fromVAddr(i.target);
  return out;
}

/**
 * A decoded instruction as registration's checks read it (the
 * DecodedInsn toDecoded makes, but its operands' text is a getter of the
 * class, formatted only if read): no closures or accessor pair per
 * instruction. For the checks only (the decision on a probed instruction,
 * the relocation verdicts), which never spread it nor hand it on.
 */
export class CheckedInsn implements DecodedInsn {
  readonly addr: bigint;
  readonly length: number;
  readonly bytes: Uint8Array;
  readonly mnemonic: string;
  readonly flow: DecodedInsn['flow'];
  readonly ipRelative: boolean;
  readonly target?: bigint;

  /** `raw`: the decoder's instruction (the checks read its layout without decoding the bytes again) */
  constructor(readonly raw: Insn) {
    this.addr = fromVAddr(raw.addr);
    this.length = raw.len;
    this.bytes = raw.bytes;
    this.mnemonic = mnemonicOf(raw);
    this.flow = raw.def.flow;
    this.ipRelative = raw.ripRel;
    if (raw.def.ops.some(o => o.k === 'J')) this.target = fromVAddr(raw.target);
  }

  get operands(): string { return operandsOf(this.raw); }
}

/**
 * Disassemble the one instruction at the start of `bytes`, decoded at
 * `addr`; null when the bytes are not an instruction (or `addr` is not
 * canonical). The entry point for callers with a symbolizer (the DAP
 * disassembler): `disassembleBytes(bytes, addr, { symbolize })`.
 */
export function disassembleBytes(bytes: Uint8Array, addr: bigint, opts?: DisasmOptions): DecodedInsn | null {
  const v = toVAddr(addr);
  if (v === null) return null;
  const i = decodeBytes(bytes, v);
  return i ? toDecoded(i, opts) : null;
}
