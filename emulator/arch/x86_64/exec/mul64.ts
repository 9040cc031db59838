/**
 * 64 x 64 -> 128-bit multiplication on int32 halves without bigint: four
 * 32x32 -> 64 products built from 16-bit pieces (every intermediate stays
 * below 2^53, so doubles are exact). Result in MUL_OUT:
 * [bits 0..31, 32..63, 64..95, 96..127] as int32.
 */
export const MUL_OUT = new Int32Array(4);
let hi32 = 0;

/** unsigned 32x32: returns the low 32 bits (as unsigned), high 32 bits in hi32 */
function mul32(a: number, b: number): number {
  const a0 = a & 0xffff, a1 = a >>> 16, b0 = b & 0xffff, b1 = b >>> 16;
  const p0 = a0 * b0, p1 = a0 * b1, p2 = a1 * b0, p3 = a1 * b1;
  const mid = (p0 >>> 16) + (p1 & 0xffff) + (p2 & 0xffff);
  hi32 = p3 + (p1 >>> 16) + (p2 >>> 16) + (mid >>> 16);
  return (((mid & 0xffff) << 16) | (p0 & 0xffff)) >>> 0;
}

/** unsigned product of (al, ah) and (bl, bh) */
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
