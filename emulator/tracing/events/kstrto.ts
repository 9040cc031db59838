/**
 * The kernel's number parsers as the probe-event parser uses them
 * (lib/kstrtox.c, lib/vsprintf.c): the whole string must be the number,
 * base 0 reads 0x hex, 0 octal or decimal. undefined: not a number or out
 * of range.
 */

function digits(s: string, base: number): bigint | undefined {
  if (!s) return undefined;
  const re = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!re.test(s)) return undefined;
  let v = 0n;
  for (const c of s) v = v * BigInt(base) + BigInt(parseInt(c, 16));
  return v;
}

/** kstrtoull(s, base): an optional '+', the digits, an optional trailing newline; at most 64 bits */
export function kstrtoull(s: string, base = 0): bigint | undefined {
  if (s.endsWith('\n')) s = s.slice(0, -1);
  if (s.startsWith('+')) s = s.slice(1);
  let b = base;
  if (b === 0 || b === 16) {
    if (/^0[xX]/.test(s)) { s = s.slice(2); b = 16; } else if (b === 0) b = s.length > 1 && s[0] === '0' ? 8 : 10;
  }
  const v = digits(s, b);
  return v !== undefined && v < 1n << 64n ? v : undefined;
}

/** kstrtouint: kstrtoull within 32 bits */
export function kstrtouint(s: string, base = 0): bigint | undefined {
  const v = kstrtoull(s, base);
  return v !== undefined && v <= 0xffffffffn ? v : undefined;
}

/** kstrtol(s, base) for a 64-bit long: an optional sign */
export function kstrtol(s: string, base = 0): bigint | undefined {
  if (s.startsWith('-')) {
    const v = kstrtoull(s.slice(1), base);
    return v !== undefined && v <= 1n << 63n ? -v : undefined;
  }
  const v = kstrtoull(s, base);
  return v !== undefined && v < 1n << 63n ? v : undefined;
}

/** simple_strtoul(s, &end, 0): the number at the start of s (0 when none) and where it stopped */
export function simpleStrtoul(s: string): { value: bigint; end: number } {
  const m = /^0[xX][0-9a-fA-F]+/.exec(s) ?? /^0[0-7]*/.exec(s) ?? /^[1-9][0-9]*/.exec(s);
  if (!m) return { value: 0n, end: 0 };
  const t = m[0];
  const value = /^0[xX]/.test(t) ? BigInt(t) : t.length > 1 && t[0] === '0' ? BigInt('0o' + t.slice(1)) : BigInt(t);
  return { value: BigInt.asUintN(64, value), end: t.length };
}

/** kstrtoul: an unsigned long, 64 bits on the three ports */
export const kstrtoul = kstrtoull;
