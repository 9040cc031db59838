/**
 * printk formatting with the kernel's vsprintf conventions.
 *
 * Supported: %d %i %u %x %X %o %c %s %p %% with flags '-' '+' ' ' '#' '0',
 * field width and precision (digits or '*'), and length modifiers hh h l ll
 * L z Z t j. Integer conversions truncate the (64-bit) argument to the width
 * the length modifier names, like a C callee reading its va_list.
 *
 * Decisions where the kernel differs from libc or hashes:
 * - %p prints like %px (16 zero-padded hex digits, no 0x), i.e. as a kernel
 *   booted with `no_hash_pointers`: a debugger wants real addresses. %pK too.
 * - %pS/%pF print "symbol+0xoff/0xsize", %ps/%pf "symbol", via
 *   env.addrToSymbol; without a symbol they print "0x" + 16 hex digits.
 *   Other %p<ext> letters are consumed and print like %px.
 * - %#x of 0 prints "0x0" (kernel number()); %s of NULL prints "(null)",
 *   of an unreadable address "(efault)" (kernel check_pointer()).
 * - A leading KERN_<LEVEL> prefix ("\001" + level) is stripped.
 * - An unknown conversion or a missing argument prints the conversion text
 *   itself; extra arguments are ignored.
 */
import { PrintkArg, PrintkEnv } from './types';

export interface FormatSpec {
  /** offset of '%' in fmt and length of the whole conversion */
  start: number;
  end: number;
  flags: string;
  /** undefined = none, 'star' = taken from the arguments */
  width?: number | 'star';
  precision?: number | 'star';
  /** integer width in bits the length modifier selects */
  bits: 8 | 16 | 32 | 64;
  conv: string;
  /** %p extension letters (e.g. 'S', 'x') */
  ext: string;
  valid: boolean;
}

export type FormatPiece = string | FormatSpec;

/** Split a format into literal text and conversions. */
export function parseFormat(fmt: string): FormatPiece[] {
  const out: FormatPiece[] = [];
  let lit = '';
  let i = 0;
  while (i < fmt.length) {
    const c = fmt[i];
    if (c !== '%') { lit += c; i++; continue; }
    if (fmt[i + 1] === '%') { lit += '%'; i += 2; continue; }
    const start = i;
    i++;
    let flags = '';
    while (i < fmt.length && '-+ #0'.includes(fmt[i])) flags += fmt[i++];
    let width: number | 'star' | undefined;
    if (fmt[i] === '*') { width = 'star'; i++; } else if (/[0-9]/.test(fmt[i] ?? '')) {
      let w = 0;
      while (/[0-9]/.test(fmt[i] ?? '')) w = Math.min(w * 10 + Number(fmt[i++]), 4096);
      width = w;
    }
    let precision: number | 'star' | undefined;
    if (fmt[i] === '.') {
      i++;
      if (fmt[i] === '*') { precision = 'star'; i++; } else {
        let p = 0;
        while (/[0-9]/.test(fmt[i] ?? '')) p = Math.min(p * 10 + Number(fmt[i++]), 4096);
        precision = p;
      }
    }
    let bits: 8 | 16 | 32 | 64 = 32;
    if (fmt.startsWith('hh', i)) { bits = 8; i += 2; } else if (fmt.startsWith('ll', i)) { bits = 64; i += 2; } else if (fmt[i] === 'h') { bits = 16; i++; } else if (fmt[i] !== undefined && 'lLzZtj'.includes(fmt[i])) { bits = 64; i++; }
    const conv = fmt[i] ?? '';
    if (conv !== '') i++;
    let ext = '';
    if (conv === 'p') while (i < fmt.length && /[A-Za-z0-9]/.test(fmt[i])) ext += fmt[i++];
    if (lit) { out.push(lit); lit = ''; }
    out.push({ start, end: i, flags, width, precision, bits, conv, ext, valid: conv !== '' && 'diuxXocsp'.includes(conv) });
  }
  if (lit) out.push(lit);
  return out;
}

/** How many arguments a format consumes (stars included) and which conversions are invalid. */
export function formatArgKinds(fmt: string): { kinds: ('int' | 'str' | 'ptr' | 'char')[]; invalid: FormatSpec[] } {
  const kinds: ('int' | 'str' | 'ptr' | 'char')[] = [];
  const invalid: FormatSpec[] = [];
  for (const p of parseFormat(fmt)) {
    if (typeof p === 'string') continue;
    if (!p.valid) { invalid.push(p); continue; }
    if (p.width === 'star') kinds.push('int');
    if (p.precision === 'star') kinds.push('int');
    kinds.push(p.conv === 's' ? 'str' : p.conv === 'p' ? 'ptr' : p.conv === 'c' ? 'char' : 'int');
  }
  return { kinds, invalid };
}

/** Format like the kernel's printk; returns the text (the caller appends it to the log). */
export function formatPrintk(fmt: string, args: readonly PrintkArg[], env: PrintkEnv): string {
  fmt = stripLevel(fmt);
  let out = '';
  let ai = 0;
  const take = (): PrintkArg | undefined => (ai < args.length ? args[ai++] : undefined);
  const asInt = (a: PrintkArg | undefined): bigint => (typeof a === 'bigint' ? a : 0n);
  for (const p of parseFormat(fmt)) {
    if (typeof p === 'string') { out += p; continue; }
    const text = fmt.slice(p.start, p.end);
    if (!p.valid) { out += text; continue; }
    const need = (p.width === 'star' ? 1 : 0) + (p.precision === 'star' ? 1 : 0) + 1;
    if (args.length - ai < need) { out += text; ai = args.length; continue; }
    let flags = p.flags;
    let width = 0;
    if (p.width === 'star') {
      const w = Number(BigInt.asIntN(32, asInt(take())));
      if (w < 0) { flags += '-'; width = Math.min(-w, 4096); } else width = Math.min(w, 4096);
    } else if (p.width !== undefined) width = p.width;
    let precision: number | undefined;
    if (p.precision === 'star') {
      const v = Number(BigInt.asIntN(32, asInt(take())));
      precision = v < 0 ? undefined : Math.min(v, 4096);
    } else precision = p.precision;
    const arg = take();
    out += convert(p, flags, p.width === undefined ? undefined : width, precision, arg, env);
  }
  return out;
}

function stripLevel(fmt: string): string {
  while (fmt.length >= 2 && fmt.charCodeAt(0) === 1 && /[0-7cd]/.test(fmt[1])) fmt = fmt.slice(2);
  return fmt;
}

function pad(s: string, width: number | undefined, left: boolean, zero = false, signLen = 0): string {
  if (width === undefined || s.length >= width) return s;
  if (left) return s + ' '.repeat(width - s.length);
  if (zero) return s.slice(0, signLen) + '0'.repeat(width - s.length) + s.slice(signLen);
  return ' '.repeat(width - s.length) + s;
}

function convert(p: FormatSpec, flags: string, width: number | undefined, precision: number | undefined, arg: PrintkArg | undefined, env: PrintkEnv): string {
  const left = flags.includes('-');
  switch (p.conv) {
    case 's': {
      let s: string;
      if (typeof arg === 'string') s = arg;
      else {
        const addr = BigInt.asUintN(64, arg ?? 0n);
        if (addr === 0n) s = '(null)';
        else {
          try { s = env.readCString(addr, precision ?? 4096); } catch { s = '(efault)'; }
        }
      }
      if (precision !== undefined) s = s.slice(0, precision);
      return pad(s, width, left);
    }
    case 'c': {
      const v = typeof arg === 'bigint' ? Number(BigInt.asUintN(8, arg)) : typeof arg === 'string' ? (arg.charCodeAt(0) & 0xff) : 0;
      return pad(String.fromCharCode(v), width, left);
    }
    case 'p': return pointer(p, width, left, flags.includes('0'), typeof arg === 'bigint' ? BigInt.asUintN(64, arg) : 0n, env);
    default: {
      const raw = typeof arg === 'bigint' ? arg : 0n;
      const signed = p.conv === 'd' || p.conv === 'i';
      const v = signed ? BigInt.asIntN(p.bits, raw) : BigInt.asUintN(p.bits, raw);
      const base = p.conv === 'x' || p.conv === 'X' ? 16 : p.conv === 'o' ? 8 : 10;
      let digits = (v < 0n ? -v : v).toString(base);
      if (p.conv === 'X') digits = digits.toUpperCase();
      if (precision !== undefined) {
        if (precision === 0 && v === 0n) digits = '';
        else if (digits.length < precision) digits = '0'.repeat(precision - digits.length) + digits;
      }
      let prefix = '';
      if (signed) prefix = v < 0n ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '';
      else if (flags.includes('#')) prefix = base === 16 ? (p.conv === 'X' ? '0X' : '0x') : base === 8 && !digits.startsWith('0') ? '0' : '';
      const zero = flags.includes('0') && !left && precision === undefined;
      return pad(prefix + digits, width, left, zero, prefix.length);
    }
  }
}

function pointer(p: FormatSpec, width: number | undefined, left: boolean, zero: boolean, addr: bigint, env: PrintkEnv): string {
  const e = p.ext[0];
  if (e === 'S' || e === 's' || e === 'F' || e === 'f' || e === 'B') {
    const sym = env.addrToSymbol?.(addr);
    if (sym) {
      let s = sym.name;
      if (e === 'S' || e === 'F' || e === 'B') {
        s += `+0x${sym.offset.toString(16)}`;
        if (sym.size !== undefined) s += `/0x${sym.size.toString(16)}`;
      }
      return pad(s, width, left);
    }
    return pad('0x' + addr.toString(16).padStart(16, '0'), width, left);
  }
  const hexs = addr.toString(16);
  if (width === undefined) return hexs.padStart(16, '0');
  return pad(hexs, width, left, zero);
}
