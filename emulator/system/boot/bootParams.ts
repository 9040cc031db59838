/**
 * struct boot_params, the "zero page" a 64-bit boot loader fills for the
 * kernel (arch/x86/include/uapi/asm/bootparam.h, Documentation/arch/x86/
 * zero-page.rst): the setup header copied from the image with the loader's
 * fields set, the E820 map, and the high halves of the command line and
 * initrd addresses.
 */
import type { E820Entry } from './e820';
import { HEADER_OFFSET, type SetupHeader } from './setupHeader';

export const BOOT_PARAMS_SIZE = 0x1000;
/** offsets in boot_params */
export const BP = {
  acpiRsdpAddr: 0x070,
  extRamdiskImage: 0x0c0,
  extRamdiskSize: 0x0c4,
  extCmdLinePtr: 0x0c8,
  e820Entries: 0x1e8,
  sentinel: 0x1ef,
  typeOfLoader: 0x210,
  loadflags: 0x211,
  ramdiskImage: 0x218,
  ramdiskSize: 0x21c,
  cmdLinePtr: 0x228,
  e820Table: 0x2d0,
} as const;
/** E820_MAX_ENTRIES_ZEROPAGE */
export const E820_MAX = 128;
/** "undefined" boot loader ID: a loader without an assigned one */
export const LOADER_UNDEFINED = 0xff;

export interface BootParamsInput {
  readonly header: SetupHeader;
  readonly cmdlineAddr: number;
  readonly initrd?: { readonly addr: number; readonly size: number };
  readonly e820: readonly E820Entry[];
  /** the ACPI RSDP's physical address (boot protocol 2.14's acpi_rsdp_addr), when the platform has tables */
  readonly acpiRsdp?: number;
}

const lo32 = (v: number): number => v % 0x100000000;
const hi32 = (v: number): number => Math.floor(v / 0x100000000);

export function buildBootParams(p: BootParamsInput): Uint8Array {
  if (p.e820.length > E820_MAX) throw new RangeError(`boot_params holds ${E820_MAX} E820 entries, not ${p.e820.length}`);
  const bp = new Uint8Array(BOOT_PARAMS_SIZE);
  const dv = new DataView(bp.buffer);
  bp.set(p.header.raw, HEADER_OFFSET);
  bp[BP.typeOfLoader] = LOADER_UNDEFINED;
  dv.setUint32(BP.cmdLinePtr, lo32(p.cmdlineAddr), true);
  dv.setUint32(BP.extCmdLinePtr, hi32(p.cmdlineAddr), true);
  if (p.initrd) {
    dv.setUint32(BP.ramdiskImage, lo32(p.initrd.addr), true);
    dv.setUint32(BP.ramdiskSize, lo32(p.initrd.size), true);
    dv.setUint32(BP.extRamdiskImage, hi32(p.initrd.addr), true);
    dv.setUint32(BP.extRamdiskSize, hi32(p.initrd.size), true);
  }
  if (p.acpiRsdp !== undefined) dv.setBigUint64(BP.acpiRsdpAddr, BigInt(p.acpiRsdp), true);
  bp[BP.e820Entries] = p.e820.length;
  p.e820.forEach((e, i) => {
    const at = BP.e820Table + i * 20;
    dv.setBigUint64(at, BigInt(e.addr), true);
    dv.setBigUint64(at + 8, BigInt(e.size), true);
    dv.setUint32(at + 16, e.type, true);
  });
  return bp;
}
