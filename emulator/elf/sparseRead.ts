/**
 * Reading a big ELF64 file (a vmlinux with DWARF: ~600 MB, half of it the
 * .rela.debug_* sections `--emit-relocs` leaves, already applied in an
 * executable) without holding what nobody reads: a zero-filled buffer of the
 * file's size (its untouched pages cost no memory) gets the headers, the
 * program segments' bytes and every section's bytes except the relocation
 * sections that apply to non-allocated (debug) sections. Those are returned
 * in `skipped` (section indexes) so the loader shows them without bytes.
 * Any file it cannot read this way (not ELF64 little or big endian, no
 * section headers, extended numbering) is read whole.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** from this size up an ELF64 file is read sparsely */
export const SPARSE_MIN = 128 << 20;
const SHT_RELA = 4, SHT_REL = 9, SHT_NOBITS = 8;
const SHF_ALLOC = 2n;

export function readElfSparse(path: string): { bytes: Uint8Array; skipped: ReadonlySet<number> } | undefined {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size < SPARSE_MIN) return undefined;
    const eh = Buffer.alloc(64);
    if (readSync(fd, eh, 0, 64, 0) !== 64) return undefined;
    if (eh.readUInt32BE(0) !== 0x7f454c46 || eh[4] !== 2 || (eh[5] !== 1 && eh[5] !== 2)) return undefined;
    const le = eh[5] === 1;
    const u16 = (b: Buffer, o: number): number => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
    const u32 = (b: Buffer, o: number): number => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
    const u64 = (b: Buffer, o: number): bigint => (le ? b.readBigUInt64LE(o) : b.readBigUInt64BE(o));
    const phoff = Number(u64(eh, 32)), shoff = Number(u64(eh, 40));
    const phentsize = u16(eh, 54), phnum = u16(eh, 56), shentsize = u16(eh, 58), shnum = u16(eh, 60);
    if (shoff === 0 || shnum === 0 || shentsize < 64 || shoff + shnum * shentsize > size) return undefined;
    if (phnum > 0 && (phentsize < 56 || phoff + phnum * phentsize > size)) return undefined;
    const bytes = Buffer.alloc(size);
    const read = (off: number, len: number): void => {
      if (len <= 0 || off < 0 || off + len > size) return;
      for (let done = 0; done < len;) {
        const n = readSync(fd, bytes, off + done, Math.min(len - done, 1 << 30), off + done);
        if (n <= 0) throw new Error(`${path}: short read at 0x${(off + done).toString(16)}`);
        done += n;
      }
    };
    read(0, 64);
    read(phoff, phnum * phentsize);
    read(shoff, shnum * shentsize);
    for (let i = 0; i < phnum; i++) {
      const b = phoff + i * phentsize;
      read(Number(u64(bytes, b + 8)), Number(u64(bytes, b + 32)));
    }
    const flagsOf = (i: number): bigint => u64(bytes, shoff + i * shentsize + 8);
    const skipped = new Set<number>();
    for (let i = 0; i < shnum; i++) {
      const b = shoff + i * shentsize;
      const type = u32(bytes, b + 4);
      if (type === SHT_NOBITS || type === 0) continue;
      const info = u32(bytes, b + 44);
      if ((type === SHT_RELA || type === SHT_REL) && info > 0 && info < shnum && (flagsOf(info) & SHF_ALLOC) === 0n) {
        skipped.add(i);
        continue;
      }
      read(Number(u64(bytes, b + 24)), Number(u64(bytes, b + 32)));
    }
    return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), skipped };
  } finally {
    closeSync(fd);
  }
}
