/**
 * One unwind step from call frame information: find the FDE covering a pc,
 * take the row in effect there, compute the CFA and the caller's registers
 * (DWARF register numbers), the return address among them.
 *
 * Registers with no rule keep their value (the callee-saved convention);
 * the caller's stack pointer is the CFA. A rule that needs a DWARF
 * expression fails the step for the registers that need it (the CFA, the
 * return address) and drops other registers it covers.
 */
import type { ElfImage } from '../elf/types';
import { ImageError } from '../elf/types';
import { sectionContents } from '../elf/compressed';
import { SHT_NOBITS } from '../elf/elfFile';
import { Fde, FrameSection, FrameSectionKind, parseFrameSection } from './cfi';
import { CfaProgramError, rowAt, UnwindRow, unwindRows } from './cfaProgram';

/** Register values by DWARF register number (unsigned). */
export type DwarfRegs = Map<number, bigint>;

export type CfiStep =
  /** no FDE covers the pc */
  | { kind: 'noFde' }
  | { kind: 'failed'; fde: Fde; reason: string }
  /** ra undefined: the return-address rule is DW_CFA_undefined (outermost frame) */
  | { kind: 'ok'; fde: Fde; row: UnwindRow; cfa: bigint; regs: DwarfRegs; ra: bigint | undefined };

export class CfiUnwinder {
  private readonly rowCache = new Map<Fde, UnwindRow[] | string>();

  constructor(readonly sections: readonly FrameSection[], readonly little: boolean, readonly addressSize: number) {}

  /** The FDE covering pc (.debug_frame preferred over .eh_frame). */
  findFde(pc: bigint): Fde | undefined {
    for (const s of this.sections) {
      const f = s.fdes;
      let lo = 0;
      let hi = f.length - 1;
      let best = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (f[mid].pcBegin <= pc) { best = mid; lo = mid + 1; } else hi = mid - 1;
      }
      // ranges may nest or overlap after discarded sections: look back a little
      for (let i = best; i >= 0 && i > best - 4; i--) if (f[i].pcBegin <= pc && pc < f[i].pcEnd) return f[i];
    }
    return undefined;
  }

  /** The rows of an FDE's table (cached). Throws CfaProgramError for a program it cannot run. */
  rows(fde: Fde): UnwindRow[] {
    let r = this.rowCache.get(fde);
    if (r === undefined) {
      try { r = unwindRows(fde, this.little); } catch (e) {
        if (!(e instanceof CfaProgramError)) throw e;
        r = e.message;
      }
      this.rowCache.set(fde, r);
    }
    if (typeof r === 'string') throw new CfaProgramError(r);
    return r;
  }

  /**
   * Unwind one frame. `lookupPc`: the pc for frame 0, return address - 1 for
   * callers (the call may be a function's last instruction). `regs`: the
   * frame's registers; `read` reads a pointer-sized value (undefined when
   * unmapped); `spReg`: the DWARF number of the stack pointer.
   */
  step(lookupPc: bigint, regs: ReadonlyMap<number, bigint>, read: (addr: bigint) => bigint | undefined, spReg: number): CfiStep {
    const fde = this.findFde(lookupPc);
    if (!fde) return { kind: 'noFde' };
    const fail = (reason: string): CfiStep => ({ kind: 'failed', fde, reason });
    let rows: UnwindRow[];
    try { rows = this.rows(fde); } catch (e) {
      if (e instanceof CfaProgramError) return fail(e.message);
      throw e;
    }
    const row = rowAt(rows, lookupPc);
    if (!row) return fail('no row covers the pc');
    if (row.cfa.kind !== 'regOffset') return fail('the CFA is a DWARF expression (not supported)');
    const base = regs.get(row.cfa.reg);
    if (base === undefined) return fail(`the CFA register (DWARF ${row.cfa.reg}) is not known in this frame`);
    const bits = BigInt(this.addressSize * 8);
    const cfa = BigInt.asUintN(Number(bits), base + row.cfa.offset);
    const out: DwarfRegs = new Map(regs);
    const raReg = fde.cie.raReg;
    for (const [reg, rule] of row.regs) {
      let v: bigint | undefined;
      switch (rule.kind) {
        case 'sameValue': continue;
        case 'undefined': v = undefined; break;
        case 'offset': v = read(BigInt.asUintN(Number(bits), cfa + rule.offset)); break;
        case 'valOffset': v = BigInt.asUintN(Number(bits), cfa + rule.offset); break;
        case 'register': v = regs.get(rule.reg); break;
        case 'expression': case 'valExpression':
          if (reg === raReg) return fail('the return address rule is a DWARF expression (not supported)');
          v = undefined;
          break;
      }
      if (v === undefined) {
        if (reg === raReg && rule.kind === 'offset') return fail(`the return address at CFA${rule.offset < 0n ? '' : '+'}${rule.offset} cannot be read`);
        out.delete(reg);
      } else {
        out.set(reg, v);
      }
    }
    out.set(spReg, cfa);
    return { kind: 'ok', fde, row, cfa, regs: out, ra: out.get(raReg) };
  }
}

const SECTIONS: readonly FrameSectionKind[] = ['.debug_frame', '.eh_frame'];

/**
 * The call frame information of an image (.debug_frame and .eh_frame), or
 * null when it has neither. Malformed sections throw ImageError.
 */
export function loadCfi(image: ElfImage): CfiUnwinder | null {
  const little = image.endian === 'little';
  const sections: FrameSection[] = [];
  for (const kind of SECTIONS) {
    const s = image.section(kind);
    if (!s || s.type === SHT_NOBITS || s.size === 0n) continue;
    const data = sectionContents(s, image.elfClass, little, image.path);
    sections.push(parseFrameSection(data, { kind, little, addressSize: image.elfClass / 8, sectionAddr: s.addr, file: image.path }));
  }
  for (const s of sections) {
    // FDEs of discarded code: address 0 or a tombstone (the range wraps)
    s.fdes = s.fdes.filter((f) => f.pcBegin !== 0n && f.pcEnd > f.pcBegin);
  }
  return sections.length ? new CfiUnwinder(sections, little, image.elfClass / 8) : null;
}

const cache = new WeakMap<ElfImage, { unwinder: CfiUnwinder | null; error?: string }>();

/**
 * loadCfi cached per image; a malformed section gives null here (stack walks
 * fall back to frame pointers) and its message in cfiError().
 */
export function cfiFor(image: ElfImage): CfiUnwinder | null {
  let c = cache.get(image);
  if (!c) {
    try { c = { unwinder: loadCfi(image) }; } catch (e) {
      if (!(e instanceof ImageError)) throw e;
      c = { unwinder: null, error: e.message };
    }
    cache.set(image, c);
  }
  return c.unwinder;
}

/** Why cfiFor(image) is null although the image has frame sections, if it is. */
export function cfiError(image: ElfImage): string | undefined {
  cfiFor(image);
  return cache.get(image)?.error;
}
