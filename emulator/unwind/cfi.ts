/**
 * DWARF call frame information: the CIEs and FDEs of `.debug_frame` (DWARF
 * 2-5, 32- and 64-bit formats) and `.eh_frame` (the GCC/LSB form: CIE id 0,
 * CIE pointers relative to themselves, 'z' augmentation data with the
 * DW_EH_PE pointer encodings).
 *
 * Addresses are bigint (exact). Malformed input is an ImageError naming the
 * file, the section and the entry's offset in it.
 */
import { ByteReader } from '../elf/reader';
import { ImageError } from '../elf/types';

export type FrameSectionKind = '.debug_frame' | '.eh_frame';

export interface Cie {
  /** offset of the entry in its section */
  offset: number;
  version: number;
  augmentation: string;
  addressSize: number;
  codeAlign: bigint;
  dataAlign: bigint;
  /** DWARF register number of the return-address column */
  raReg: number;
  /** DW_EH_PE encoding of FDE addresses (.eh_frame 'R'); absolute for .debug_frame */
  fdeEncoding: number;
  /** 'S' augmentation: the frames are signal frames (the pc is not after a call) */
  signalFrame: boolean;
  initialInstructions: Uint8Array;
}

export interface Fde {
  offset: number;
  cie: Cie;
  /** [pcBegin, pcEnd) */
  pcBegin: bigint;
  pcEnd: bigint;
  instructions: Uint8Array;
}

export interface FrameSection {
  kind: FrameSectionKind;
  cies: Cie[];
  fdes: Fde[];
}

export interface FrameSectionOptions {
  kind: FrameSectionKind;
  little: boolean;
  /** target address size in bytes (ELF class / 8) */
  addressSize: number;
  /** sh_addr of the section (for DW_EH_PE_pcrel in .eh_frame) */
  sectionAddr: bigint;
  /** file named in errors */
  file: string;
}

export const DW_EH_PE_omit = 0xff;
const DW_EH_PE_absptr = 0x00;
const DW_EH_PE_pcrel = 0x10;

class CfiError extends Error {}

/** Parse a whole `.debug_frame` or `.eh_frame` section. */
export function parseFrameSection(data: Uint8Array, o: FrameSectionOptions): FrameSection {
  const r = new ByteReader(data, o.little);
  const cies = new Map<number, Cie>();
  const fdes: Fde[] = [];
  const eh = o.kind === '.eh_frame';
  let entry = 0;
  try {
    while (r.pos < data.length) {
      entry = r.pos;
      const { length, offsetSize } = r.initialLength();
      if (length === 0n) {
        if (eh) break; // .eh_frame terminator
        continue;
      }
      const body = r.pos;
      const end = BigInt(body) + length;
      if (end > BigInt(data.length)) throw new CfiError(`length ${length} runs past the end of the section (0x${data.length.toString(16)} bytes)`);
      const idPos = r.pos;
      const id = r.uint(offsetSize);
      const isCie = id === cieId(eh, offsetSize);
      const sub = new ByteReader(data.subarray(0, Number(end)), o.little, r.pos);
      if (isCie) {
        cies.set(entry, readCie(sub, entry, o));
      } else {
        const cieOff = eh ? idPos - Number(id) : Number(id);
        let cie = cies.get(cieOff);
        if (!cie) {
          if (cieOff < 0 || cieOff >= data.length) throw new CfiError(`CIE pointer 0x${cieOff.toString(16)} outside the section`);
          // a CIE after its FDEs (allowed in .debug_frame)
          const cr = new ByteReader(data, o.little, cieOff);
          const { length: cl, offsetSize: cOffsetSize } = cr.initialLength();
          const cend = BigInt(cr.pos) + cl;
          if (cend > BigInt(data.length)) throw new CfiError(`CIE at 0x${cieOff.toString(16)} runs past the end of the section`);
          const cid = cr.uint(cOffsetSize);
          if (cid !== cieId(eh, cOffsetSize)) throw new CfiError(`CIE pointer 0x${cieOff.toString(16)} does not point at a CIE`);
          cie = readCie(new ByteReader(data.subarray(0, Number(cend)), o.little, cr.pos), cieOff, o);
          cies.set(cieOff, cie);
        }
        fdes.push(readFde(sub, entry, cie, o));
      }
      r.pos = Number(end);
    }
  } catch (e) {
    if (e instanceof CfiError || e instanceof RangeError) {
      throw new ImageError(o.file, `malformed ${o.kind} entry at offset 0x${entry.toString(16)}: ${e.message}`);
    }
    throw e;
  }
  fdes.sort((a, b) => (a.pcBegin < b.pcBegin ? -1 : a.pcBegin > b.pcBegin ? 1 : 0));
  return { kind: o.kind, cies: [...cies.values()].sort((a, b) => a.offset - b.offset), fdes };
}

/** The CIE id that marks an entry as a CIE (0 in .eh_frame, all ones in .debug_frame). */
function cieId(eh: boolean, offsetSize: 4 | 8): bigint {
  return eh ? 0n : offsetSize === 8 ? 0xffffffffffffffffn : 0xffffffffn;
}

function readCie(r: ByteReader, offset: number, o: FrameSectionOptions): Cie {
  const version = r.u8();
  if (version !== 1 && version !== 3 && version !== 4) throw new CfiError(`unsupported CIE version ${version} (1, 3 and 4 supported)`);
  const augmentation = r.cstr();
  let addressSize = o.addressSize;
  if (version === 4) {
    addressSize = r.u8();
    const segSize = r.u8();
    if (segSize !== 0) throw new CfiError(`segment selectors (size ${segSize}) not supported`);
    if (addressSize !== 2 && addressSize !== 4 && addressSize !== 8) throw new CfiError(`bad address size ${addressSize}`);
  }
  const cie: Cie = {
    offset, version, augmentation, addressSize,
    codeAlign: r.ulebBig(),
    dataAlign: r.slebBig(),
    raReg: version === 1 ? r.u8() : r.uleb(),
    fdeEncoding: DW_EH_PE_absptr,
    signalFrame: false,
    initialInstructions: new Uint8Array(0),
  };
  if (augmentation.startsWith('z')) {
    const len = r.uleb();
    const augEnd = r.pos + len;
    for (const c of augmentation.slice(1)) {
      if (c === 'R') cie.fdeEncoding = r.u8();
      else if (c === 'L') r.u8(); // LSDA encoding: the FDE's LSDA pointer is skipped with its augmentation data
      else if (c === 'P') { const enc = r.u8(); readEncoded(r, enc, cie.addressSize, o); }
      else if (c === 'S') cie.signalFrame = true;
      else if (c === 'B' || c === 'G') { /* AArch64 BTI / MTE markers: no data */ }
      else break; // unknown: the length lets us skip the rest
    }
    r.pos = augEnd;
  } else if (augmentation !== '') {
    // 'eh' (old GCC) carries an eh pointer; anything else cannot be skipped safely
    if (augmentation === 'eh') r.skip(cie.addressSize);
    else throw new CfiError(`unknown CIE augmentation "${augmentation}"`);
  }
  cie.initialInstructions = r.bytes.subarray(r.pos);
  return cie;
}

function readFde(r: ByteReader, offset: number, cie: Cie, o: FrameSectionOptions): Fde {
  const enc = o.kind === '.eh_frame' ? cie.fdeEncoding : DW_EH_PE_absptr;
  const pcBegin = readEncoded(r, enc, cie.addressSize, o);
  const range = readEncoded(r, enc & 0x0f, cie.addressSize, o);
  if (cie.augmentation.startsWith('z')) r.skip(r.uleb());
  const mask = (1n << BigInt(cie.addressSize * 8)) - 1n;
  return { offset, cie, pcBegin, pcEnd: (pcBegin + range) & mask, instructions: r.bytes.subarray(r.pos) };
}

/** A DW_EH_PE-encoded pointer (absptr with the CIE's address size in .debug_frame). */
export function readEncoded(r: ByteReader, enc: number, addressSize: number, o: FrameSectionOptions): bigint {
  if (enc === DW_EH_PE_omit) return 0n;
  const at = r.pos;
  let v: bigint;
  switch (enc & 0x0f) {
    case 0x00: v = r.uint(addressSize); break;
    case 0x01: v = r.ulebBig(); break;
    case 0x02: v = BigInt(r.u16()); break;
    case 0x03: v = BigInt(r.u32()); break;
    case 0x04: v = r.u64(); break;
    case 0x09: v = r.slebBig(); break;
    case 0x0a: v = BigInt.asIntN(16, BigInt(r.u16())); break;
    case 0x0b: v = BigInt.asIntN(32, BigInt(r.u32())); break;
    case 0x0c: v = BigInt.asIntN(64, r.u64()); break;
    default: throw new CfiError(`unsupported pointer encoding 0x${enc.toString(16)}`);
  }
  switch (enc & 0x70) {
    case 0x00: break;
    case DW_EH_PE_pcrel: v += o.sectionAddr + BigInt(at); break;
    default: throw new CfiError(`unsupported pointer application 0x${(enc & 0x70).toString(16)}`);
  }
  if (enc & 0x80) throw new CfiError('indirect pointers (DW_EH_PE_indirect) not supported');
  return BigInt.asUintN(addressSize * 8, v);
}
