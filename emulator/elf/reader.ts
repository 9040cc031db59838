/**
 * Endian-aware, bounds-checked cursor over a byte range. 64-bit values are
 * always read as bigint (exact). Reading past the end throws RangeError with
 * the offset, which callers turn into an ImageError naming the section.
 */
export class ByteReader {
  private readonly view: DataView;
  pos: number;

  constructor(readonly bytes: Uint8Array, readonly little: boolean, pos = 0) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = pos;
  }

  get length(): number { return this.bytes.length; }
  get atEnd(): boolean { return this.pos >= this.bytes.length; }

  private need(n: number, at: number): void {
    if (at < 0 || at + n > this.bytes.length) {
      throw new RangeError(`read of ${n} byte(s) at offset 0x${at.toString(16)} past the end (0x${this.bytes.length.toString(16)} bytes)`);
    }
  }

  u8At(at: number): number { this.need(1, at); return this.view.getUint8(at); }
  u16At(at: number): number { this.need(2, at); return this.view.getUint16(at, this.little); }
  u32At(at: number): number { this.need(4, at); return this.view.getUint32(at, this.little); }
  u64At(at: number): bigint { this.need(8, at); return this.view.getBigUint64(at, this.little); }
  /** unsigned of `size` bytes (1, 2, 4, 8) as bigint */
  uintAt(at: number, size: number): bigint {
    switch (size) {
      case 1: return BigInt(this.u8At(at));
      case 2: return BigInt(this.u16At(at));
      case 4: return BigInt(this.u32At(at));
      case 8: return this.u64At(at);
      default: throw new RangeError(`unsupported field size ${size}`);
    }
  }

  u8(): number { const v = this.u8At(this.pos); this.pos += 1; return v; }
  i8(): number { const v = this.u8(); return v >= 0x80 ? v - 0x100 : v; }
  u16(): number { const v = this.u16At(this.pos); this.pos += 2; return v; }
  u32(): number { const v = this.u32At(this.pos); this.pos += 4; return v; }
  u64(): bigint { const v = this.u64At(this.pos); this.pos += 8; return v; }
  uint(size: number): bigint { const v = this.uintAt(this.pos, size); this.pos += size; return v; }

  /** A DWARF initial length: 32-bit, or the 0xffffffff escape and 64-bit (64-bit DWARF, offsets of 8 bytes). */
  initialLength(): { length: bigint; offsetSize: 4 | 8 } {
    const length = BigInt(this.u32());
    return length === 0xffffffffn ? { length: this.u64(), offsetSize: 8 } : { length, offsetSize: 4 };
  }

  /** ULEB128 as bigint (exact for any width). */
  ulebBig(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.u8();
      result |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if ((b & 0x80) === 0) return result;
    }
  }

  /** SLEB128 as bigint. */
  slebBig(): bigint {
    let result = 0n;
    let shift = 0n;
    let b: number;
    do {
      b = this.u8();
      result |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b & 0x80);
    if (b & 0x40) result -= 1n << shift;
    return result;
  }

  /** ULEB128 that must fit a JS number (counts, indices, lines). */
  uleb(): number { return Number(this.ulebBig()); }
  sleb(): number { return Number(this.slebBig()); }

  /** NUL-terminated string (UTF-8). */
  cstr(): string {
    const end = this.bytes.indexOf(0, this.pos);
    if (end < 0) throw new RangeError(`unterminated string at offset 0x${this.pos.toString(16)}`);
    const s = utf8(this.bytes.subarray(this.pos, end));
    this.pos = end + 1;
    return s;
  }

  skip(n: number): void { this.need(n, this.pos); this.pos += n; }
  slice(n: number): Uint8Array { this.need(n, this.pos); const s = this.bytes.subarray(this.pos, this.pos + n); this.pos += n; return s; }
}

const decoder = new TextDecoder('utf-8');
export function utf8(b: Uint8Array): string { return decoder.decode(b); }

/** NUL-terminated string at `off` in a string table ('' when out of range). */
export function strAt(table: Uint8Array, off: number): string {
  if (off < 0 || off >= table.length) return '';
  let end = table.indexOf(0, off);
  if (end < 0) end = table.length;
  return utf8(table.subarray(off, end));
}
