/**
 * The initrd check a loader can make before the kernel does: its first
 * bytes are a cpio archive (newc / newc with CRC, as the kernel's
 * initramfs unpacker takes) or one of the compressions Debian's kernel
 * unpacks (CONFIG_RD_GZIP, RD_LZ4, RD_XZ, RD_ZSTD).
 */
import { BootError } from './setupHeader';

const FORMATS: readonly { name: string; magic: readonly number[] }[] = [
  { name: 'cpio newc', magic: [...'070701'].map(c => c.charCodeAt(0)) },
  { name: 'cpio newc+crc', magic: [...'070702'].map(c => c.charCodeAt(0)) },
  { name: 'gzip', magic: [0x1f, 0x8b] },
  { name: 'lz4 (legacy)', magic: [0x02, 0x21, 0x4c, 0x18] },
  { name: 'lz4', magic: [0x04, 0x22, 0x4d, 0x18] },
  { name: 'xz', magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] },
  { name: 'zstd', magic: [0x28, 0xb5, 0x2f, 0xfd] },
];

/** The initrd's format by its magic; throws BootError when it is none the kernel unpacks. */
export function initrdFormat(file: string, data: Uint8Array): string {
  if (data.length === 0) throw new BootError(file, 'the initrd is empty');
  const f = FORMATS.find(f => f.magic.length <= data.length && f.magic.every((b, i) => data[i] === b));
  if (f) return f.name;
  const head = [...data.subarray(0, 6)].map(b => b.toString(16).padStart(2, '0')).join(' ');
  throw new BootError(file, `is not an initramfs: it starts ${head}, not a cpio newc archive (070701) or gzip / lz4 / xz / zstd data`);
}
