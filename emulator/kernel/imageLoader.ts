/**
 * Maps an ELF image's PT_LOAD segments into an address space: one region per
 * segment, [p_vaddr, p_vaddr + p_memsz), permissions from p_flags, file bytes
 * copied, the rest (bss) zero. Bad segments are ImageErrors naming the file
 * and the segment.
 *
 * Given the file's pages (a file Backing, one per inode in a page cache),
 * a read-only segment that is all file bytes (filesz = memsz) and whose
 * address is congruent to its file offset is mapped as a window onto those
 * pages instead of a copy, as mmap(MAP_PRIVATE) of the file does until
 * someone writes: every process mapping the file shares its text, and the
 * region reports (inode, offset). Writable segments stay private copies.
 */
import { ElfImage, ImageError } from '../elf/types';
import { Memory, PERM_R, PERM_U, PERM_W, PERM_X, Region } from '../memory/memory';
import { toVAddr } from '../memory/address';
import { Backing, PAGE_SIZE } from '../memory/backing';

export const PT_LOAD = 1;
export const PT_PHDR = 6;
const PF_X = 1, PF_W = 2, PF_R = 4;
/** refuse absurd segments instead of allocating them */
const MAX_SEGMENT = 1 << 30;

export interface LoadedImage {
  regions: Region[];
  /** lowest mapped address and end of the highest segment (unsigned) */
  low: bigint;
  high: bigint;
  /** [start, end) of executable segments, for reach checks */
  textLow: bigint;
  textHigh: bigint;
}

export function permsOf(flags: number, user: boolean): number {
  return (flags & PF_R ? PERM_R : 0) | (flags & PF_W ? PERM_W : 0) | (flags & PF_X ? PERM_X : 0) | (user ? PERM_U : 0);
}

/** The file's pages when `seg` can be mapped from them (see the header), else null. */
function filePages(seg: ElfImage['segments'][number], file: Backing | undefined): number | null {
  if (!file || file.identity.kind !== 'file' || seg.flags & PF_W || seg.filesz !== seg.memsz) return null;
  const rel = seg.offset - file.fileOffset;
  if (rel < 0n || rel + seg.filesz > BigInt(file.size)) return null;
  if (BigInt.asUintN(64, seg.vaddr - seg.offset) % BigInt(PAGE_SIZE) !== 0n) return null;
  return Number(rel);
}

export function mapImage(mem: Memory, image: ElfImage, user: boolean, file?: Backing): LoadedImage {
  const regions: Region[] = [];
  let low = -1n, high = 0n, textLow = -1n, textHigh = 0n;
  image.segments.forEach((seg, i) => {
    if (seg.type !== PT_LOAD || seg.memsz === 0n) return;
    const what = `PT_LOAD segment ${i} at 0x${seg.vaddr.toString(16)}`;
    if (seg.memsz > BigInt(MAX_SEGMENT)) throw new ImageError(image.path, `${what}: memsz 0x${seg.memsz.toString(16)} is too large`);
    if (seg.filesz > seg.memsz) throw new ImageError(image.path, `${what}: filesz 0x${seg.filesz.toString(16)} > memsz 0x${seg.memsz.toString(16)}`);
    const base = toVAddr(seg.vaddr);
    const endV = toVAddr(seg.vaddr + seg.memsz - 1n);
    if (base === null || endV === null || endV < base) throw new ImageError(image.path, `${what}: address is not canonical`);
    // a user process maps whole pages, as mmap does (mprotect and munmap then work on page ranges);
    // where a neighbouring segment already holds part of a page, the region starts / ends at its edge
    let lo = base, hi = base + Number(seg.memsz);
    if (user) {
      lo = Math.floor(base / PAGE_SIZE) * PAGE_SIZE;
      hi = Math.ceil(hi / PAGE_SIZE) * PAGE_SIZE;
      for (const o of mem.allRegions()) {
        if (o.end > lo && o.end <= base) lo = o.end;
        if (o.base < hi && o.base >= base + Number(seg.memsz)) hi = o.base;
      }
    }
    const lead = base - lo;
    const size = hi - lo;
    let r: Region;
    const name = `${image.path}:seg${i}`, perms = permsOf(seg.flags, user);
    const fp = filePages(seg, file);
    const inFile = fp !== null && fp - lead >= 0 && fp - lead + size <= (file?.size ?? 0) ? fp - lead : null;
    try {
      r = inFile !== null && file ? mem.mapBacking(lo, size, perms, name, file, inFile) : mem.map(lo, size, perms, name);
    } catch (e) {
      throw new ImageError(image.path, `${what}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (inFile !== null && !sameBytes(r.bytes.subarray(lead, lead + Number(seg.filesz)), seg.data.subarray(0, Number(seg.filesz)))) {
      mem.unmap(r);
      throw new ImageError(image.path, `${what}: the file pages given (inode ${file?.identity.kind === 'file' ? file.identity.inode : '?'}) do not hold the segment's bytes at offset 0x${seg.offset.toString(16)}`);
    }
    if (inFile === null) mem.writeBytes(base, seg.data.subarray(0, Number(seg.filesz)), 'loader'); // DMA-like: no watchpoint sees it
    regions.push(r);
    const end = seg.vaddr + seg.memsz;
    if (low < 0n || seg.vaddr < low) low = seg.vaddr;
    if (end > high) high = end;
    if (seg.flags & PF_X) {
      if (textLow < 0n || seg.vaddr < textLow) textLow = seg.vaddr;
      if (end > textHigh) textHigh = end;
    }
  });
  if (regions.length === 0) throw new ImageError(image.path, 'no PT_LOAD segment to load');
  if (textLow < 0n) { textLow = low; textHigh = high; }
  return { regions, low, high, textLow, textHigh };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  // native comparison: a program's text can be megabytes, compared at every exec
  return Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));
}
