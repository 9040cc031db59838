/**
 * The kernel log: PrintkRecords, one per line, delivered to listeners as
 * they are completed. Console writes from the image are byte streams,
 * line-buffered per CPU (a partial line waits for its newline or for power
 * off); text printed by the emulator or probe handlers is split into lines
 * at once.
 *
 * ORDER. Records are delivered in the order they are stored (Linux's
 * printk ring buffer order, by sequence number), which is the machine's
 * execution order: CPU 0's turn of a round, then CPU 1's, ... Each record
 * carries the virtual time of its CPU (emulator/kernel/clock.ts), and every
 * CPU's turn in a round starts at the round's start time, so a line CPU 1
 * prints can carry an earlier stamp than one CPU 0 printed in the same
 * round: less than one quantum earlier, never across rounds; each CPU's own
 * stamps never go back (a CPU the debugger single-steps past the end of its
 * turn is the exception: its clock runs on outside the round). The log is not re-sorted by time, on purpose:
 *   - Linux does the same: dmesg lists records in sequence order and
 *     their stamps come from each CPU's local_clock(), which is not
 *     monotonic across CPUs, so stamps going back between CPUs is what a
 *     real kernel log shows;
 *   - a merge by time would have to hold every record until the round
 *     ends (or until every CPU's clock passed it): a line would reach the
 *     console after later code already ran, a breakpoint stop mid-round
 *     would hide lines another CPU printed before the stop in execution
 *     order, and a CPU the debugger single-steps runs outside the round
 *     order, so "the round" would no longer bound the delay.
 * The CLI and the debugger take the same records from the same listeners
 * (Machine.onPrintk), so both print the same lines in the same order; the
 * Debug Console shows each record's stamp as it is.
 */
import { hostOwned } from '../base/marks';
import { KernelApi, PrintkRecord } from './types';
import { Memory, MemoryFault } from '../memory/memory';
import { toVAddr } from '../memory/address';

export type PrintkListener = (r: PrintkRecord) => void;

const decoder = new TextDecoder('utf-8');

export class PrintkLog {
  readonly records: PrintkRecord[] = [];
  private readonly listeners: PrintkListener[] = hostOwned([]);
  /** quiet: time travel is re-executing what the listeners already heard (records are still kept) */
  readonly replay = hostOwned({ quiet: false });
  /** pending bytes of an unfinished console line, per CPU */
  private readonly partial = new Map<number, number[]>();
  /** keep the last `keep` records in `records` (listeners see all); older ones are dropped in batches of keep/4, so at most keep * 5/4 are held */
  constructor(private readonly keep = 100_000) {}

  onRecord(l: PrintkListener): () => void {
    this.listeners.push(l);
    return () => {
      const i = this.listeners.indexOf(l);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Console bytes from the image on `cpu`. */
  consoleBytes(cpu: number, bytes: Uint8Array, timeNs: bigint): void {
    let buf = this.partial.get(cpu);
    for (const b of bytes) {
      if (b === 0x0a) {
        const line = buf ? decoder.decode(Uint8Array.from(buf)) : '';
        this.partial.delete(cpu);
        buf = undefined;
        this.emit({ timeNs, cpu, text: line, source: 'kernel' });
      } else {
        if (!buf) { buf = []; this.partial.set(cpu, buf); }
        buf.push(b);
      }
    }
  }

  /** Text from the emulator / a probe handler: every line is a record (a trailing newline adds none). */
  text(cpu: number, text: string, source: PrintkRecord['source'], timeNs: bigint): void {
    const lines = text.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    for (const line of lines) this.emit({ timeNs, cpu, text: line, source });
  }

  /**
   * printk() of a formatted message (Linux's vprintk_store): its
   * KERN_<LEVEL> prefixes ("\001" + level) are taken off; without
   * KERN_CONT a line the CPU left unfinished is ended first (it becomes
   * its own record); then the bytes go on as console bytes (each newline
   * ends a record).
   */
  printkBytes(cpu: number, bytes: Uint8Array, timeNs: bigint): void {
    let at = 0, cont = false;
    while (at + 1 < bytes.length && bytes[at] === 1 && ((bytes[at + 1] >= 0x30 && bytes[at + 1] <= 0x37) || bytes[at + 1] === 0x63)) {
      if (bytes[at + 1] === 0x63) cont = true;
      at += 2;
    }
    const buf = this.partial.get(cpu);
    if (!cont && buf) {
      this.partial.delete(cpu);
      this.emit({ timeNs, cpu, text: decoder.decode(Uint8Array.from(buf)), source: 'kernel' });
    }
    this.consoleBytes(cpu, bytes.subarray(at), timeNs);
  }

  /** Emit every unfinished console line (power off, end of run). */
  flush(timeNs: bigint): void {
    const cpus = [...this.partial.keys()].sort((a, b) => a - b);
    for (const cpu of cpus) {
      const buf = this.partial.get(cpu)!;
      this.partial.delete(cpu);
      this.emit({ timeNs, cpu, text: decoder.decode(Uint8Array.from(buf)), source: 'kernel' });
    }
  }

  private emit(r: PrintkRecord): void {
    this.records.push(r);
    // batched: dropping one record per line past `keep` moved the whole array every time
    if (this.records.length > this.keep + (this.keep >> 2)) this.records.splice(0, this.records.length - this.keep);
    if (!this.replay.quiet) for (const l of [...this.listeners]) l(r);
  }
}

// ------------------------------------------------------------------ printk's formatting (Linux's lib/vsprintf.c)

/**
 * What formatting reads besides the arguments: guest strings and buffers
 * (null: unreadable), the symbol of an address (kallsyms: the module's name
 * for a module symbol), and how %p prints (the kernel command line's
 * no_hash_pointers, the hashing key).
 */
export interface VsprintfEnv {
  readString(addr: bigint, max: number): Uint8Array | null;
  readBytes(addr: bigint, len: number): Uint8Array | null;
  symbol(addr: bigint): { name: string; offset: bigint; size: bigint; module?: string } | undefined;
  noHashPointers: boolean;
  ptrKey: readonly [bigint, bigint];
}

/** The arguments of a variadic call, in order: each a 64-bit register or stack slot. */
export interface VaArgs { next(): bigint }

const M64 = (1n << 64n) - 1n;
const rotl = (x: bigint, b: bigint): bigint => ((x << b) | (x >> (64n - b))) & M64;

/** Linux's siphash_1u64(first, key) (lib/siphash.c: SipHash-2-4 of the 8 bytes of `first`). */
export function siphash1u64(first: bigint, key: readonly [bigint, bigint]): bigint {
  let v0 = 0x736f6d6570736575n ^ key[0], v1 = 0x646f72616e646f6dn ^ key[1];
  let v2 = 0x6c7967656e657261n ^ key[0], v3 = 0x7465646279746573n ^ key[1];
  const round = (): void => {
    v0 = (v0 + v1) & M64; v1 = rotl(v1, 13n); v1 ^= v0; v0 = rotl(v0, 32n);
    v2 = (v2 + v3) & M64; v3 = rotl(v3, 16n); v3 ^= v2;
    v0 = (v0 + v3) & M64; v3 = rotl(v3, 21n); v3 ^= v0;
    v2 = (v2 + v1) & M64; v1 = rotl(v1, 17n); v1 ^= v2; v2 = rotl(v2, 32n);
  };
  const b = 8n << 56n;
  first &= M64;
  v3 ^= first; round(); round(); v0 ^= first;
  v3 ^= b; round(); round(); v0 ^= b;
  v2 ^= 0xffn; round(); round(); round(); round();
  return (v0 ^ v1 ^ v2 ^ v3) & M64;
}

/**
 * The key %p hashes with. Linux fills ptr_key with random bytes at boot;
 * this kernel's is deterministic (same machine, same lines): SipHash's
 * reference key (bytes 00..0f, the key of Linux's lib/test_siphash.c),
 * its first word XORed with the machine's random seed (0 unless the
 * randomSeed option says otherwise).
 */
export function ptrKey(randomSeed: bigint): [bigint, bigint] {
  return [0x0706050403020100n ^ (randomSeed & M64), 0x0f0e0d0c0b0a0908n];
}

/** ptr_to_id's value for a pointer (64-bit: the low 32 bits of siphash_1u64 of it) */
export function hashPointer(ptr: bigint, key: readonly [bigint, bigint]): bigint {
  return siphash1u64(ptr, key) & 0xffffffffn;
}

/** The kernel command line's switches printk reads (no_hash_pointers), per kernel. */
const cmdlines = new WeakMap<object, string>();
export function setKernelCmdline(kernel: object, cmdline: string): void { cmdlines.set(kernel, cmdline); }
export function kernelCmdline(kernel: object): string { return cmdlines.get(kernel) ?? ''; }
export function noHashPointers(kernel: object): boolean { return /(^|\s)no_hash_pointers(\s|$)/.test(kernelCmdline(kernel)); }

// struct printf_spec flags (lib/vsprintf.c)
const SIGN = 1, LEFT = 2, PLUS = 4, SPACE = 8, ZEROPAD = 16, SMALL = 32, SPECIAL = 64;

interface Spec { flags: number; width: number; precision: number; base: number }

const utf8 = new TextEncoder();

/**
 * vsnprintf() of Linux 6.1 into bytes: flags - + space # 0, width and
 * precision (digits or *; a negative * precision is 0, an omitted one
 * none), qualifiers hh h l ll L z Z t, conversions c s d i u o x X p %;
 * %n and unknown conversions end the output (Linux stops there: the
 * arguments would be out of step). %p: plain (hashed, or raw with
 * no_hash_pointers; NULL and error pointers raw), %px raw, %pK as %p
 * (kptr_restrict 0), %pS / %ps / %pB symbol(+0xoff/0xsize)( [module]),
 * %pe (an error pointer's -NNN; else as %p), %ph[CDN] a hex dump; other
 * extensions print as %p; the letters after %p are skipped.
 */
export function vsprintf(fmt: Uint8Array, args: VaArgs, env: VsprintfEnv): Uint8Array {
  const out: number[] = [];
  const emit = (s: string | Uint8Array): void => { for (const b of typeof s === 'string' ? utf8.encode(s) : s) out.push(b); };
  let i = 0;
  const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39;
  const atoi = (): number => { let n = 0; while (isDigit(fmt[i])) n = Math.min(n * 10 + fmt[i++] - 0x30, 0x7fff); return n; };
  while (i < fmt.length) {
    const c = fmt[i];
    if (c !== 0x25) { out.push(c); i++; continue; }
    i++;
    const spec: Spec = { flags: 0, width: -1, precision: -1, base: 10 };
    for (;; i++) {
      const f = fmt[i];
      if (f === 0x2d) spec.flags |= LEFT;
      else if (f === 0x2b) spec.flags |= PLUS;
      else if (f === 0x20) spec.flags |= SPACE;
      else if (f === 0x23) spec.flags |= SPECIAL;
      else if (f === 0x30) spec.flags |= ZEROPAD;
      else break;
    }
    if (isDigit(fmt[i])) spec.width = atoi();
    else if (fmt[i] === 0x2a) {
      i++;
      const w = Number(BigInt.asIntN(32, args.next()));
      if (w < 0) { spec.flags |= LEFT; spec.width = Math.min(-w, 0x7fff); } else spec.width = Math.min(w, 0x7fff);
    }
    if (fmt[i] === 0x2e) {
      i++;
      if (isDigit(fmt[i])) spec.precision = atoi();
      else if (fmt[i] === 0x2a) { i++; spec.precision = Math.max(0, Math.min(Number(BigInt.asIntN(32, args.next())), 0x7fff)); }
    }
    let qual = '';
    const q = String.fromCharCode(fmt[i] ?? 0);
    if (q === 'h' || q === 'l' || q === 'L' || q === 'z' || q === 'Z' || q === 't') {
      qual = q; i++;
      if (q === 'h' && fmt[i] === 0x68) { qual = 'H'; i++; } else if (q === 'l' && fmt[i] === 0x6c) { qual = 'L'; i++; }
    }
    const conv = String.fromCharCode(fmt[i] ?? 0);
    if (i >= fmt.length) break;
    i++;
    switch (conv) {
      case '%': out.push(0x25); break;
      case 'c': {
        const ch = Number(args.next() & 0xffn);
        let w = spec.width;
        if (!(spec.flags & LEFT)) while (--w > 0) out.push(0x20);
        out.push(ch);
        while (--w > 0) out.push(0x20);
        break;
      }
      case 's': emit(stringArg(args.next(), spec, env)); break;
      case 'p': {
        let ext = '';
        while (i < fmt.length && isAlnum(fmt[i])) ext += String.fromCharCode(fmt[i++]);
        emit(pointer(ext, args.next(), spec, env));
        break;
      }
      case 'o': case 'x': case 'X': case 'd': case 'i': case 'u': {
        spec.base = conv === 'o' ? 8 : conv === 'x' || conv === 'X' ? 16 : 10;
        if (conv === 'x') spec.flags |= SMALL;
        if (conv === 'd' || conv === 'i') spec.flags |= SIGN;
        const raw = args.next();
        const bits = qual === 'H' ? 8 : qual === 'h' ? 16 : qual === '' ? 32 : 64;
        const num = spec.flags & SIGN ? BigInt.asIntN(bits, raw) : BigInt.asUintN(bits, raw);
        emit(numberText(num, spec));
        break;
      }
      default:
        // %n and anything unknown: Linux stops formatting here
        return Uint8Array.from(out);
    }
  }
  return Uint8Array.from(out);
}

function isAlnum(c: number): boolean { return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a); }

/** number(): Linux's padding, sign and prefix rules (a 0 with precision 0 still prints "0") */
function numberText(num: bigint, spec: Spec): string {
  let { flags, width: fieldWidth, precision } = spec;
  const base = spec.base;
  const locase = flags & SMALL;
  const needPfx = (flags & SPECIAL) !== 0 && base !== 10;
  const isZero = num === 0n;
  if (flags & LEFT) flags &= ~ZEROPAD;
  let sign = '';
  if (flags & SIGN) {
    if (num < 0n) { sign = '-'; num = -num; fieldWidth--; }
    else if (flags & PLUS) { sign = '+'; fieldWidth--; }
    else if (flags & SPACE) { sign = ' '; fieldWidth--; }
  }
  if (needPfx) { if (base === 16) fieldWidth -= 2; else if (!isZero) fieldWidth--; }
  let digits = num.toString(base);
  digits = locase ? digits.toLowerCase() : digits.toUpperCase();
  if (digits.length > precision) precision = digits.length;
  fieldWidth -= precision;
  let s = '';
  if (!(flags & (ZEROPAD | LEFT))) while (--fieldWidth >= 0) s += ' ';
  s += sign;
  if (needPfx) {
    if (base === 16 || !isZero) s += '0';
    if (base === 16) s += locase ? 'x' : 'X';
  }
  if (!(flags & LEFT)) { const pad = flags & ZEROPAD ? '0' : ' '; while (--fieldWidth >= 0) s += pad; }
  s += '0'.repeat(precision - digits.length) + digits;
  while (--fieldWidth >= 0) s += ' ';
  return s;
}

/** widen_string over bytes: the width's spaces before (or after, with -) */
function widen(b: Uint8Array, spec: Spec): Uint8Array {
  const n = spec.width - b.length;
  if (n <= 0) return b;
  const pad = new Uint8Array(n).fill(0x20);
  const out = new Uint8Array(spec.width);
  if (spec.flags & LEFT) { out.set(b); out.set(pad, b.length); } else { out.set(pad); out.set(b, n); }
  return out;
}

const PAGE = 4096n;
/** IS_ERR_VALUE: the last page of the address space holds -MAX_ERRNO..-1 */
const isErr = (p: bigint): boolean => p >= (1n << 64n) - 4095n;

/** check_pointer_msg: NULL "(null)", the first page or an error value "(efault)" */
function badPointer(p: bigint): string | undefined {
  if (p === 0n) return '(null)';
  if (p < PAGE || isErr(p)) return '(efault)';
  return undefined;
}

function stringArg(p: bigint, spec: Spec, env: VsprintfEnv): Uint8Array {
  p &= M64;
  const bad = badPointer(p);
  const max = spec.precision >= 0 ? spec.precision : 0x7fff;
  let b = bad === undefined ? env.readString(p, max) : null;
  if (b === null) b = utf8.encode(bad ?? '(efault)').slice(0, max);
  return widen(b.slice(0, max), spec);
}

/** pointer_string: hex, SMALL; no width given: 16 digits zero-padded */
function pointerString(p: bigint, spec: Spec): string {
  const s: Spec = { ...spec, base: 16, flags: spec.flags | SMALL };
  if (s.width === -1) { s.width = 16; s.flags |= ZEROPAD; }
  return numberText(p & M64, s);
}

function defaultPointer(p: bigint, spec: Spec, env: VsprintfEnv): string {
  p &= M64;
  if (env.noHashPointers || p === 0n || isErr(p)) return pointerString(p, spec);
  return pointerString(hashPointer(p, env.ptrKey), spec);
}

function pointer(ext: string, p: bigint, spec: Spec, env: VsprintfEnv): Uint8Array | string {
  p &= M64;
  switch (ext[0]) {
    case 'S': case 's': case 'B': {
      // sprint_symbol / _no_offset / sprint_backtrace (the address before a return address)
      const at = ext[0] === 'B' ? p - 1n : p;
      const sym = env.symbol(at);
      let text: string;
      if (!sym) text = `0x${p.toString(16)}`;
      else {
        text = sym.name;
        if (ext[0] !== 's') text += `+0x${(ext[0] === 'B' ? sym.offset + 1n : sym.offset).toString(16)}/0x${sym.size.toString(16)}`;
        if (sym.module) text += ` [${sym.module}]`;
      }
      return widen(utf8.encode(text), spec);
    }
    case 'x': return pointerString(p, spec);
    case 'e': {
      if (!isErr(p)) return defaultPointer(p, spec, env);
      return widen(utf8.encode(`-${(M64 - p + 1n).toString()}`), spec);
    }
    case 'h': {
      // hex_string: the field width is the length (1 by default; at most 64), C ':' D '-' N none, else ' '
      const len = spec.width < 0 ? 1 : Math.min(spec.width, 64);
      const bad = badPointer(p);
      if (bad) return bad;
      const sep = ext[1] === 'C' ? ':' : ext[1] === 'D' ? '-' : ext[1] === 'N' ? '' : ' ';
      const b = env.readBytes(p, len);
      if (!b) return '(efault)';
      return [...b].map(x => x.toString(16).padStart(2, '0')).join(sep);
    }
    default: return defaultPointer(p, spec, env);
  }
}

/** the bytes of a C string at `a` (at most `max`, without the NUL); null when its first byte cannot be read */
export function readCBytes(mem: Memory, a: bigint, max: number): Uint8Array | null {
  const v = toVAddr(a);
  if (v === null) return null;
  const out: number[] = [];
  try {
    for (let i = 0; i < max; i++) {
      const b = mem.read8(v + i);
      if (b === 0) break;
      out.push(b);
    }
  } catch (e) {
    if (!(e instanceof MemoryFault)) throw e;
    if (!out.length) return null;
  }
  return Uint8Array.from(out);
}

/** What vsprintf reads for printk in kernel `k`: memory as `mem` maps it, kallsyms, the command line, the key. */
export function kernelVsprintfEnv(k: KernelApi, mem: Memory): VsprintfEnv {
  const seed = (k as { randomSeed?: bigint }).randomSeed ?? 0n;
  return {
    readString: (a, max) => readCBytes(mem, a, max),
    readBytes: (a, len) => {
      const v = toVAddr(a);
      if (v === null) return null;
      try { return mem.readBytes(v, len); } catch (e) { if (e instanceof MemoryFault) return null; throw e; }
    },
    symbol: a => {
      const r = k.image.symbols.resolve(a);
      return r ? { name: r.sym.name, offset: r.offset, size: r.sym.size, module: r.sym.module } : undefined;
    },
    noHashPointers: noHashPointers(k),
    ptrKey: ptrKey(seed),
  };
}
