/**
 * 64-bit addresses.
 *
 * At the edges (ELF, DAP, user input, CLI) addresses are `bigint` (unsigned,
 * 0 .. 2^64-1). Inside the CPU loop and the memory bus an address is a `VAddr`:
 * the *signed* value of a canonical virtual address, held in a JS number.
 *
 * Why this is exact: every architecture we emulate uses canonical addresses of
 * at most 48 significant bits, sign-extended to 64 (x86_64 4-level paging,
 * aarch64 48-bit VA, riscv64 Sv39/Sv48). Their signed values lie in
 * [-2^47, 2^47), far inside the 2^53 range where doubles are exact. A
 * non-canonical address has no VAddr: `toVAddr` returns `null` and the CPU
 * raises #GP / a fault instead. So no 64-bit address is ever rounded.
 *
 *   0xffffffff81000000n  <->  -2130706432
 *   0x0000000000400000n  <->  4194304
 */
export type VAddr = number;

const CANON_LIMIT = 2n ** 47n;
const TWO64 = 2n ** 64n;

/** Canonical 64-bit address -> VAddr, or null when not canonical (48-bit). */
export function toVAddr(a: bigint): VAddr | null {
  const u = BigInt.asUintN(64, a);
  const s = BigInt.asIntN(64, u);
  if (s >= CANON_LIMIT || s < -CANON_LIMIT) return null;
  return Number(s);
}

/** Like toVAddr but throws a RangeError naming the address. */
export function mustVAddr(a: bigint): VAddr {
  const v = toVAddr(a);
  if (v === null) throw new RangeError(`address 0x${BigInt.asUintN(64, a).toString(16)} is not canonical`);
  return v;
}

/** VAddr -> unsigned 64-bit bigint. */
export function fromVAddr(v: VAddr): bigint {
  const b = BigInt(v);
  return b < 0n ? b + TWO64 : b;
}

/** Unsigned 64-bit value from (lo, hi) 32-bit halves. */
export function u64(lo: number, hi: number): bigint {
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}

/** VAddr from (lo, hi) halves of a 64-bit register; null if not canonical. */
export function vaddrFromHalves(lo: number, hi: number): VAddr | null {
  const h = hi | 0;
  if (h > 0x7fff || h < -0x8000) return null;
  return h * 4294967296 + (lo >>> 0);
}

/** Halves of a VAddr (lo, hi as int32). */
// ToInt32 is the value modulo 2^32 as an int32: exact for every integer VAddr (|v| < 2^63), and a truncation, not a floating remainder
export function lo32(v: VAddr): number { return v | 0; }
export function hi32(v: VAddr): number { return Math.floor(v / 4294967296) | 0; }

/** Format like the kernel's %px: 16 lower-case hex digits for 64-bit. */
export function hex64(a: bigint): string {
  return BigInt.asUintN(64, a).toString(16).padStart(16, '0');
}

export function hex(a: bigint): string {
  return '0x' + BigInt.asUintN(64, a).toString(16);
}
