/**
 * 64 x 64-bit multiplication on int32 halves without bigint.
 *
 * The 32 x 32 -> 64 unsigned product: the low word is Math.imul's; the high
 * word comes from the double product d = fl(a * b), which is within 2^10 of
 * the exact P = hi * 2^32 + lo (P < 2^64: half an ulp is at most 2^10);
 * d - lo is then within 2^11 of hi * 2^32 (the subtraction rounds by at
 * most another 2^10), so scaling by 2^-32 (exact) and rounding to the
 * nearest integer gives hi exactly.
 */
export const MUL_OUT = new Int32Array(4);
let hi32 = 0;

const TWO_M32 = 1 / 4294967296;

/** High 32 bits (unsigned) of the unsigned product of the 32-bit a and b. */
export function umulhi32(a: number, b: number): number {
  const lo = Math.imul(a, b) >>> 0;
  return (((a >>> 0) * (b >>> 0) - lo) * TWO_M32 + 0.5) >>> 0;
}

/** unsigned 32x32: returns the low 32 bits (as unsigned), high 32 bits in hi32 */
function mul32(a: number, b: number): number {
  const lo = Math.imul(a, b) >>> 0;
  hi32 = (((a >>> 0) * (b >>> 0) - lo) * TWO_M32 + 0.5) >>> 0;
  return lo;
}

/**
 * Low 64 bits of the product of (al, ah) and (bl, bh) (the same for signed
 * and unsigned operands): low word into MUL_OUT[0], high word into MUL_OUT[1].
 */
export function mulLo64(al: number, ah: number, bl: number, bh: number): void {
  MUL_OUT[0] = Math.imul(al, bl);
  MUL_OUT[1] = umulhi32(al, bl) + Math.imul(al, bh) + Math.imul(ah, bl);
}

/** unsigned 128-bit product of (al, ah) and (bl, bh), into MUL_OUT: [bits 0..31, 32..63, 64..95, 96..127] as int32 */
export function mulu64(al: number, ah: number, bl: number, bh: number): void {
  const ll = mul32(al, bl), llh = hi32;
  const lh = mul32(al, bh), lhh = hi32;
  const hl = mul32(ah, bl), hlh = hi32;
  const hh = mul32(ah, bh), hhh = hi32;
  const t1 = llh + lh + hl;
  const c1 = t1 >= 8589934592 ? 2 : t1 >= 4294967296 ? 1 : 0;
  const t2 = hh + lhh + hlh + c1;
  const c2 = t2 >= 8589934592 ? 2 : t2 >= 4294967296 ? 1 : 0;
  MUL_OUT[0] = ll;
  MUL_OUT[1] = t1;
  MUL_OUT[2] = t2;
  MUL_OUT[3] = hhh + c2;
}

/** signed product: the unsigned one with the high half corrected */
export function muls64(al: number, ah: number, bl: number, bh: number): void {
  mulu64(al, ah, bl, bh);
  if (ah >= 0 && bh >= 0) return;
  let h0 = MUL_OUT[2] >>> 0, h1 = MUL_OUT[3] >>> 0;
  // high -= (a < 0 ? b : 0) + (b < 0 ? a : 0)   (mod 2^64)
  if (ah < 0) { const t = h0 - (bl >>> 0); h0 = t < 0 ? t + 4294967296 : t; h1 = (h1 - (bh >>> 0) - (t < 0 ? 1 : 0)) >>> 0; }
  if (bh < 0) { const t = h0 - (al >>> 0); h0 = t < 0 ? t + 4294967296 : t; h1 = (h1 - (ah >>> 0) - (t < 0 ? 1 : 0)) >>> 0; }
  MUL_OUT[2] = h0; MUL_OUT[3] = h1;
}
