/**
 * Section contents, inflating SHF_COMPRESSED (zlib) debug sections, as
 * `ld --compress-debug-sections=zlib` or `llvm-objcopy --compress-debug-sections`
 * produce them.
 */
import type * as zlib from 'node:zlib';
import { ElfSection, ImageError } from './types';
import { ByteReader } from './reader';

export const SHF_COMPRESSED = 0x800n;
const ELFCOMPRESS_ZLIB = 1;
const ELFCOMPRESS_ZSTD = 2;

export function sectionContents(s: ElfSection, elfClass: 32 | 64, little: boolean, file: string): Uint8Array {
  if ((s.flags & SHF_COMPRESSED) === 0n) return s.data;
  const r = new ByteReader(s.data, little);
  const hdr = elfClass === 64 ? 24 : 12;
  if (s.data.length < hdr) throw new ImageError(file, `truncated: compressed section ${s.name} header`);
  const type = r.u32At(0);
  const size = elfClass === 64 ? r.u64At(8) : BigInt(r.u32At(4));
  if (type === ELFCOMPRESS_ZSTD) throw new ImageError(file, `section ${s.name} is zstd-compressed (not supported; relink with --compress-debug-sections=zlib or none)`);
  if (type !== ELFCOMPRESS_ZLIB) throw new ImageError(file, `section ${s.name}: unknown compression type ${type}`);
  let out: Uint8Array;
  try {
    // loaded here, not at start-up: few images have compressed sections, and node:zlib costs a cold start ~3 ms
    out = (require('node:zlib') as typeof zlib).inflateSync(s.data.subarray(hdr));
  } catch (e) {
    throw new ImageError(file, `section ${s.name}: corrupt zlib data (${e instanceof Error ? e.message : String(e)})`);
  }
  if (BigInt(out.length) !== size) throw new ImageError(file, `section ${s.name}: inflated to ${out.length} bytes, header says ${size}`);
  return out;
}
