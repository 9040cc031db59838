/**
 * The x86 boot protocol's setup header (Linux's Documentation/arch/x86/
 * boot.rst): the fields a 64-bit boot loader reads from a bzImage, checked
 * so a wrong file is one clear line (BootError), never a garbled boot.
 *
 * A bzImage is: the real-mode setup (boot sector + setup_sects sectors of
 * 512 bytes, the header at 0x1f1 inside it), then the protected-mode kernel
 * (the self-decompressing one) from (setup_sects + 1) * 512 to the end.
 */

/** A bad kernel image, initrd, command line or memory size: `what` is the one line a user reads. */
export class BootError extends Error {
  constructor(readonly file: string, readonly what: string) {
    super(`${file}: ${what}`);
    this.name = 'BootError';
  }
}

/** xloadflags bits */
export const XLF_KERNEL_64 = 1 << 0;
export const XLF_CAN_BE_LOADED_ABOVE_4G = 1 << 1;
/** loadflags bits */
export const LOADED_HIGH = 1 << 0;
export const CAN_USE_HEAP = 1 << 7;

/** the oldest protocol we load: 2.12 brought xloadflags (the 64-bit entry's flag) */
export const MIN_PROTOCOL = 0x020c;
/** where the header starts in the image and in boot_params */
export const HEADER_OFFSET = 0x1f1;
const HDRS = 0x53726448; // "HdrS"

export interface SetupHeader {
  /** sectors of real-mode setup after the boot sector (0 in the file means 4) */
  readonly setupSects: number;
  /** the protected-mode kernel's size in 16-byte paragraphs */
  readonly syssize: number;
  /** 0x20c = 2.12 */
  readonly version: number;
  readonly loadflags: number;
  readonly xloadflags: number;
  readonly relocatable: boolean;
  readonly kernelAlignment: number;
  /** the address the kernel prefers to run at (where it decompresses in place with no relocation) */
  readonly prefAddress: bigint;
  /** bytes of linear memory the kernel needs from its load address while it decompresses and runs */
  readonly initSize: number;
  /** the longest command line the kernel takes, without its NUL */
  readonly cmdlineSize: number;
  /** highest address the initrd may end at (+1), per initrd_addr_max */
  readonly initrdAddrMax: number;
  /** the header bytes as a loader copies them into boot_params (0x1f1 .. 0x202 + byte at 0x201) */
  readonly raw: Uint8Array;
  /** offset of the protected-mode kernel in the file */
  readonly kernelOffset: number;
  /** the kernel's version string ("6.1.0-57-cloud-amd64 (debian-kernel@...) #1 SMP ..."), or '' */
  readonly kernelVersion: string;
}

const hexW = (v: number, w = 4): string => `0x${v.toString(16).padStart(w, '0')}`;
const protocol = (v: number): string => `${v >> 8}.${(v & 0xff).toString().padStart(2, '0')}`;

/** What a file that is not an x86 bzImage looks like, for the error line. */
function notABzImage(b: Uint8Array): string {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length >= 20 && b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46) {
    const machine = dv.getUint16(18, true);
    const names: Record<number, string> = { 3: 'i386', 62: 'x86_64', 183: 'aarch64', 243: 'riscv', 40: 'arm' };
    const m = names[machine] ?? `e_machine ${machine}`;
    return `is an ELF file (${m}), not a bzImage: give the compressed kernel a boot loader loads (arch/x86/boot/bzImage, Debian's /boot/vmlinuz-*), not vmlinux`;
  }
  if (b.length >= 0x40) {
    const magic38 = dv.getUint32(0x38, true);
    if (magic38 === 0x644d5241) return 'is an arm64 kernel Image ("ARM\\x64" magic), not an x86 bzImage';
    if (magic38 === 0x05435352) return 'is a riscv64 kernel Image ("RSC\\x05" magic), not an x86 bzImage';
  }
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) return 'is gzip data, not a bzImage (a compressed vmlinux? give arch/x86/boot/bzImage)';
  return 'is not an x86 bzImage (no "HdrS" setup header at 0x202)';
}

/** Parse and check the setup header of a bzImage; throws BootError naming the file. */
export function parseSetupHeader(file: string, image: Uint8Array): SetupHeader {
  if (image.length < 0x206) throw new BootError(file, `${notABzImage(image)} (${image.length} bytes)`);
  const dv = new DataView(image.buffer, image.byteOffset, image.byteLength);
  if (image.length < 0x206 || dv.getUint32(0x202, true) !== HDRS || dv.getUint16(0x1fe, true) !== 0xaa55) {
    throw new BootError(file, notABzImage(image));
  }
  const version = dv.getUint16(0x206, true);
  if (version < MIN_PROTOCOL) {
    throw new BootError(file, `boot protocol ${protocol(version)} is older than ${protocol(MIN_PROTOCOL)} (the first with xloadflags and a 64-bit entry): a kernel before 3.8`);
  }
  const headerEnd = 0x202 + image[0x201];
  if (image.length < Math.max(headerEnd, 0x268)) throw new BootError(file, `truncated: ${image.length} bytes end inside the setup header`);
  const xloadflags = dv.getUint16(0x236, true);
  if (!(xloadflags & XLF_KERNEL_64)) {
    throw new BootError(file, `has no 64-bit entry point (xloadflags ${hexW(xloadflags)} lacks XLF_KERNEL_64): a 32-bit kernel`);
  }
  const setupSects = image[0x1f1] === 0 ? 4 : image[0x1f1];
  const kernelOffset = (setupSects + 1) * 512;
  const syssize = dv.getUint32(0x1f4, true);
  if (kernelOffset + syssize * 16 > image.length) {
    throw new BootError(file, `truncated: the setup header says ${kernelOffset + syssize * 16} bytes (setup ${kernelOffset} + kernel ${syssize * 16}), the file has ${image.length}`);
  }
  const kvOff = dv.getUint16(0x20e, true);
  let kernelVersion = '';
  if (kvOff !== 0 && kvOff + 0x200 < image.length) {
    let end = kvOff + 0x200;
    while (end < image.length && image[end] !== 0 && end - kvOff - 0x200 < 256) end++;
    kernelVersion = new TextDecoder('latin1').decode(image.subarray(kvOff + 0x200, end));
  }
  return {
    setupSects,
    syssize,
    version,
    loadflags: image[0x211],
    xloadflags,
    relocatable: image[0x234] !== 0,
    kernelAlignment: dv.getUint32(0x230, true),
    prefAddress: dv.getBigUint64(0x258, true),
    initSize: dv.getUint32(0x260, true),
    cmdlineSize: dv.getUint32(0x238, true),
    initrdAddrMax: dv.getUint32(0x22c, true),
    raw: image.slice(HEADER_OFFSET, headerEnd),
    kernelOffset,
    kernelVersion,
  };
}

/** "2.15" for a header's version */
export const protocolName = (h: SetupHeader): string => protocol(h.version);
