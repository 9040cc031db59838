/**
 * aarch64 module relocations (Linux arch/arm64/kernel/module.c
 * apply_relocate_add): what gcc and clang emit for kernel objects in the
 * small and large code models (-fno-pic), and what hand-written assembly
 * adds (the MOVW families, literal loads, test-and-branch).
 *
 * The arithmetic is Linux's: do_reloc computes S + A (ABS), S + A - P
 * (PREL) or Page(S + A) - Page(P) (PAGE); reloc_data checks 16/32-bit data
 * as unsigned for ABS and signed for PREL; reloc_insn_imm shifts the value
 * right by the field's lsb, stores the low bits in the instruction field and
 * calls the relocation an overflow when the rest is not the sign extension;
 * reloc_insn_movw makes MOVZ / MOVN of the signed forms (SABS, PREL non-NC)
 * and checks that the 16-bit chunk holds the whole remaining value; the _NC
 * forms and the low-12-bit forms are not range checked.
 *
 * Where Linux goes further, this port reports instead:
 *  - a CALL26 / JUMP26 out of the ±128 MiB branch range: Linux branches
 *    through a PLT veneer it appends to the module (module_emit_plt_entry);
 *    here it is an overflow error (no PLT area in the interface);
 *  - the Cortex-A53 erratum 843419 rewrite of ADRP at page offsets
 *    0xff8 / 0xffc (only on affected CPUs) is not done.
 * And where Linux silently drops low bits, this port reports a misaligned
 * value: branch and literal targets not 4-byte aligned, LDSTn_ABS_LO12_NC
 * offsets not a multiple of the access size (the instruction cannot encode
 * them; the linker refuses them too).
 */
import type { ArchModuleRelocs, Rela, RelocTarget } from '../../kernel/modules/relocations';
import { fitsSigned, get32, put16, put32, put64 } from '../../kernel/modules/relocations';

/* arch/arm64/include/asm/elf.h numbering (R_ARM_NONE 0 and R_AARCH64_NONE 256 are both no-ops there) */
const R_ARM_NONE = 0;
const R_AARCH64_NONE = 256;
const R_AARCH64_ABS64 = 257, R_AARCH64_ABS32 = 258, R_AARCH64_ABS16 = 259;
const R_AARCH64_PREL64 = 260, R_AARCH64_PREL32 = 261, R_AARCH64_PREL16 = 262;
const R_AARCH64_MOVW_UABS_G0 = 263, R_AARCH64_MOVW_UABS_G0_NC = 264, R_AARCH64_MOVW_UABS_G1 = 265;
const R_AARCH64_MOVW_UABS_G1_NC = 266, R_AARCH64_MOVW_UABS_G2 = 267, R_AARCH64_MOVW_UABS_G2_NC = 268;
const R_AARCH64_MOVW_UABS_G3 = 269;
const R_AARCH64_MOVW_SABS_G0 = 270, R_AARCH64_MOVW_SABS_G1 = 271, R_AARCH64_MOVW_SABS_G2 = 272;
const R_AARCH64_LD_PREL_LO19 = 273, R_AARCH64_ADR_PREL_LO21 = 274, R_AARCH64_ADR_PREL_PG_HI21 = 275;
const R_AARCH64_ADR_PREL_PG_HI21_NC = 276, R_AARCH64_ADD_ABS_LO12_NC = 277, R_AARCH64_LDST8_ABS_LO12_NC = 278;
const R_AARCH64_TSTBR14 = 279, R_AARCH64_CONDBR19 = 280, R_AARCH64_JUMP26 = 282, R_AARCH64_CALL26 = 283;
const R_AARCH64_LDST16_ABS_LO12_NC = 284, R_AARCH64_LDST32_ABS_LO12_NC = 285, R_AARCH64_LDST64_ABS_LO12_NC = 286;
const R_AARCH64_MOVW_PREL_G0 = 287, R_AARCH64_MOVW_PREL_G0_NC = 288, R_AARCH64_MOVW_PREL_G1 = 289;
const R_AARCH64_MOVW_PREL_G1_NC = 290, R_AARCH64_MOVW_PREL_G2 = 291, R_AARCH64_MOVW_PREL_G2_NC = 292;
const R_AARCH64_MOVW_PREL_G3 = 293;
const R_AARCH64_LDST128_ABS_LO12_NC = 299;

const NAMES: Readonly<Record<number, string>> = {
  [R_ARM_NONE]: 'R_AARCH64_NONE', [R_AARCH64_NONE]: 'R_AARCH64_NONE',
  [R_AARCH64_ABS64]: 'R_AARCH64_ABS64', [R_AARCH64_ABS32]: 'R_AARCH64_ABS32', [R_AARCH64_ABS16]: 'R_AARCH64_ABS16',
  [R_AARCH64_PREL64]: 'R_AARCH64_PREL64', [R_AARCH64_PREL32]: 'R_AARCH64_PREL32', [R_AARCH64_PREL16]: 'R_AARCH64_PREL16',
  [R_AARCH64_MOVW_UABS_G0]: 'R_AARCH64_MOVW_UABS_G0', [R_AARCH64_MOVW_UABS_G0_NC]: 'R_AARCH64_MOVW_UABS_G0_NC',
  [R_AARCH64_MOVW_UABS_G1]: 'R_AARCH64_MOVW_UABS_G1', [R_AARCH64_MOVW_UABS_G1_NC]: 'R_AARCH64_MOVW_UABS_G1_NC',
  [R_AARCH64_MOVW_UABS_G2]: 'R_AARCH64_MOVW_UABS_G2', [R_AARCH64_MOVW_UABS_G2_NC]: 'R_AARCH64_MOVW_UABS_G2_NC',
  [R_AARCH64_MOVW_UABS_G3]: 'R_AARCH64_MOVW_UABS_G3',
  [R_AARCH64_MOVW_SABS_G0]: 'R_AARCH64_MOVW_SABS_G0', [R_AARCH64_MOVW_SABS_G1]: 'R_AARCH64_MOVW_SABS_G1',
  [R_AARCH64_MOVW_SABS_G2]: 'R_AARCH64_MOVW_SABS_G2',
  [R_AARCH64_LD_PREL_LO19]: 'R_AARCH64_LD_PREL_LO19', [R_AARCH64_ADR_PREL_LO21]: 'R_AARCH64_ADR_PREL_LO21',
  [R_AARCH64_ADR_PREL_PG_HI21]: 'R_AARCH64_ADR_PREL_PG_HI21', [R_AARCH64_ADR_PREL_PG_HI21_NC]: 'R_AARCH64_ADR_PREL_PG_HI21_NC',
  [R_AARCH64_ADD_ABS_LO12_NC]: 'R_AARCH64_ADD_ABS_LO12_NC', [R_AARCH64_LDST8_ABS_LO12_NC]: 'R_AARCH64_LDST8_ABS_LO12_NC',
  [R_AARCH64_TSTBR14]: 'R_AARCH64_TSTBR14', [R_AARCH64_CONDBR19]: 'R_AARCH64_CONDBR19',
  [R_AARCH64_JUMP26]: 'R_AARCH64_JUMP26', [R_AARCH64_CALL26]: 'R_AARCH64_CALL26',
  [R_AARCH64_LDST16_ABS_LO12_NC]: 'R_AARCH64_LDST16_ABS_LO12_NC', [R_AARCH64_LDST32_ABS_LO12_NC]: 'R_AARCH64_LDST32_ABS_LO12_NC',
  [R_AARCH64_LDST64_ABS_LO12_NC]: 'R_AARCH64_LDST64_ABS_LO12_NC',
  [R_AARCH64_MOVW_PREL_G0]: 'R_AARCH64_MOVW_PREL_G0', [R_AARCH64_MOVW_PREL_G0_NC]: 'R_AARCH64_MOVW_PREL_G0_NC',
  [R_AARCH64_MOVW_PREL_G1]: 'R_AARCH64_MOVW_PREL_G1', [R_AARCH64_MOVW_PREL_G1_NC]: 'R_AARCH64_MOVW_PREL_G1_NC',
  [R_AARCH64_MOVW_PREL_G2]: 'R_AARCH64_MOVW_PREL_G2', [R_AARCH64_MOVW_PREL_G2_NC]: 'R_AARCH64_MOVW_PREL_G2_NC',
  [R_AARCH64_MOVW_PREL_G3]: 'R_AARCH64_MOVW_PREL_G3',
  [R_AARCH64_LDST128_ABS_LO12_NC]: 'R_AARCH64_LDST128_ABS_LO12_NC',
  // not supported by Linux either; named for the message
  294: 'R_AARCH64_MOVW_GOTOFF_G0', 307: 'R_AARCH64_GOTREL64', 308: 'R_AARCH64_GOTREL32',
  309: 'R_AARCH64_GOT_LD_PREL19', 310: 'R_AARCH64_LD64_GOTOFF_LO15', 311: 'R_AARCH64_ADR_GOT_PAGE',
  312: 'R_AARCH64_LD64_GOT_LO12_NC', 313: 'R_AARCH64_LD64_GOTPAGE_LO15', 314: 'R_AARCH64_PLT32',
  512: 'R_AARCH64_TLSGD_ADR_PREL21', 513: 'R_AARCH64_TLSGD_ADR_PAGE21', 514: 'R_AARCH64_TLSGD_ADD_LO12_NC',
  541: 'R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21', 542: 'R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC',
  549: 'R_AARCH64_TLSLE_ADD_TPREL_HI12', 550: 'R_AARCH64_TLSLE_ADD_TPREL_LO12', 551: 'R_AARCH64_TLSLE_ADD_TPREL_LO12_NC',
  560: 'R_AARCH64_TLSDESC_LD_PREL19', 561: 'R_AARCH64_TLSDESC_ADR_PREL21', 562: 'R_AARCH64_TLSDESC_ADR_PAGE21',
  563: 'R_AARCH64_TLSDESC_LD64_LO12', 564: 'R_AARCH64_TLSDESC_ADD_LO12', 569: 'R_AARCH64_TLSDESC_CALL',
  1024: 'R_AARCH64_COPY', 1025: 'R_AARCH64_GLOB_DAT', 1026: 'R_AARCH64_JUMP_SLOT', 1027: 'R_AARCH64_RELATIVE',
  1028: 'R_AARCH64_TLS_DTPMOD64', 1029: 'R_AARCH64_TLS_DTPREL64', 1030: 'R_AARCH64_TLS_TPREL64',
  1031: 'R_AARCH64_TLSDESC', 1032: 'R_AARCH64_IRELATIVE',
};

const enum Op { Abs, Prel, Page }

/** aarch64_insn_encode_immediate's fields: [shift, width] of the instruction's immediate */
const enum Field { Imm26, Imm19, Imm14, Imm12, Imm16, Adr }

function encode(insn: number, field: Field, imm: number): number {
  switch (field) {
    case Field.Imm26: return ((insn & ~0x03ffffff) | (imm & 0x03ffffff)) >>> 0;
    case Field.Imm19: return ((insn & ~(0x7ffff << 5)) | ((imm & 0x7ffff) << 5)) >>> 0;
    case Field.Imm14: return ((insn & ~(0x3fff << 5)) | ((imm & 0x3fff) << 5)) >>> 0;
    case Field.Imm12: return ((insn & ~(0xfff << 10)) | ((imm & 0xfff) << 10)) >>> 0;
    case Field.Imm16: return ((insn & ~(0xffff << 5)) | ((imm & 0xffff) << 5)) >>> 0;
    case Field.Adr: {
      // immlo (2 bits) at 29, immhi (19 bits) at 5
      const lo = imm & 3, hi = (imm >>> 2) & 0x7ffff;
      return ((insn & ~((3 << 29) | (0x7ffff << 5))) | (lo << 29) | (hi << 5)) >>> 0;
    }
  }
}

const hex = (v: bigint): string => (v < 0n ? '-0x' + (-v).toString(16) : '0x' + v.toString(16));

/** the types applied below (NAMES also names unsupported ones, for messages) */
const HANDLED: ReadonlySet<number> = new Set([
  R_AARCH64_ABS64, R_AARCH64_ABS32, R_AARCH64_ABS16, R_AARCH64_PREL64, R_AARCH64_PREL32, R_AARCH64_PREL16,
  R_AARCH64_MOVW_UABS_G0, R_AARCH64_MOVW_UABS_G0_NC, R_AARCH64_MOVW_UABS_G1, R_AARCH64_MOVW_UABS_G1_NC,
  R_AARCH64_MOVW_UABS_G2, R_AARCH64_MOVW_UABS_G2_NC, R_AARCH64_MOVW_UABS_G3,
  R_AARCH64_MOVW_SABS_G0, R_AARCH64_MOVW_SABS_G1, R_AARCH64_MOVW_SABS_G2,
  R_AARCH64_LD_PREL_LO19, R_AARCH64_ADR_PREL_LO21, R_AARCH64_ADR_PREL_PG_HI21, R_AARCH64_ADR_PREL_PG_HI21_NC,
  R_AARCH64_ADD_ABS_LO12_NC, R_AARCH64_LDST8_ABS_LO12_NC, R_AARCH64_TSTBR14, R_AARCH64_CONDBR19,
  R_AARCH64_JUMP26, R_AARCH64_CALL26, R_AARCH64_LDST16_ABS_LO12_NC, R_AARCH64_LDST32_ABS_LO12_NC,
  R_AARCH64_LDST64_ABS_LO12_NC, R_AARCH64_MOVW_PREL_G0, R_AARCH64_MOVW_PREL_G0_NC, R_AARCH64_MOVW_PREL_G1,
  R_AARCH64_MOVW_PREL_G1_NC, R_AARCH64_MOVW_PREL_G2, R_AARCH64_MOVW_PREL_G2_NC, R_AARCH64_MOVW_PREL_G3,
  R_AARCH64_LDST128_ABS_LO12_NC,
]);
/** 32-bit data relocations (any offset); the other 4-byte ones patch instructions */
const DATA32: ReadonlySet<number> = new Set([R_AARCH64_ABS32, R_AARCH64_PREL32]);

export const aarch64ModuleRelocs: ArchModuleRelocs = {
  arch: 'aarch64',
  typeName: t => NAMES[t] ?? `type ${t}`,
  applyRelocateAdd(target: RelocTarget, relas: readonly Rela[], symValue: (sym: number) => bigint): string | undefined {
    const b = target.bytes;
    for (const r of relas) {
      const off = Number(r.offset);
      const P = target.addr + r.offset;
      const where = `${target.name}+0x${r.offset.toString(16)}: ${this.typeName(r.type)}`;
      if (r.type === R_ARM_NONE || r.type === R_AARCH64_NONE) continue;
      const size = r.type === R_AARCH64_ABS64 || r.type === R_AARCH64_PREL64 ? 8
        : r.type === R_AARCH64_ABS16 || r.type === R_AARCH64_PREL16 ? 2 : 4;
      if (!HANDLED.has(r.type)) return `${where}: unsupported relocation type ${r.type}`;
      if (off < 0 || off + size > b.length) return `${where} is outside the section`;
      if (size === 4 && (off & 3) !== 0 && !DATA32.has(r.type)) return `${where}: instruction at a misaligned offset`;
      const val = BigInt.asUintN(64, symValue(r.sym) + r.addend);   // S + A (u64)
      /** do_reloc, as a signed 64-bit value */
      const reloc = (op: Op): bigint => BigInt.asIntN(64, op === Op.Abs ? val
        : op === Op.Prel ? val - P
          : (val & ~0xfffn) - (BigInt.asUintN(64, P) & ~0xfffn));
      const overflow = (v: bigint, what: string): string =>
        `${where}: value ${hex(v)} (S+A 0x${val.toString(16)}, P 0x${BigInt.asUintN(64, P).toString(16)}) does not fit ${what} (overflow)`;

      /** reloc_data: 16/32-bit data ABS unsigned, PREL signed; 64-bit unchecked */
      const data = (op: Op.Abs | Op.Prel, bits: 16 | 32 | 64): string | undefined => {
        const sval = reloc(op);
        if (bits === 64) { put64(b, off, sval); return undefined; }
        const ok = op === Op.Abs ? sval >= 0n && sval < (1n << BigInt(bits)) : fitsSigned(sval, bits);
        if (!ok) return overflow(sval, `${op === Op.Abs ? 'unsigned' : 'signed'} ${bits} bits`);
        if (bits === 32) put32(b, off, Number(BigInt.asUintN(32, sval)));
        else put16(b, off, Number(BigInt.asUintN(16, sval)));
        return undefined;
      };

      /** reloc_insn_imm: value >> lsb into a len-bit field; overflow unless the rest is its sign extension */
      const imm = (op: Op, lsb: number, len: number, field: Field, check: boolean, align = 0): string | undefined => {
        const full = reloc(op);
        if (align && (full & BigInt((1 << align) - 1)) !== 0n) {
          return `${where}: value ${hex(full)} is misaligned (not a multiple of ${1 << align})`;
        }
        const sval = full >> BigInt(lsb);
        if (check && !fitsSigned(sval, len)) {
          const range = `a signed ${len + lsb}-bit ${op === Op.Page ? 'page offset' : 'offset'}${lsb && op !== Op.Page ? ` (${len}-bit field of ${1 << lsb}-byte units)` : ''}`;
          return overflow(full, range);
        }
        const field32 = Number(BigInt.asUintN(len, sval));
        put32(b, off, encode(get32(b, off), field, field32));
        return undefined;
      };

      /** reloc_insn_movw: 16-bit chunk at lsb; MOVNZ makes the instruction MOVZ (>= 0) or MOVN (< 0, inverted) */
      const movw = (op: Op, lsb: number, signed: boolean, check: boolean): string | undefined => {
        const sval = reloc(op);
        let chunk = BigInt.asUintN(64, sval >> BigInt(lsb));
        let insn = get32(b, off);
        if (signed) {
          insn = (insn & ~(3 << 29)) >>> 0;
          if (sval >= 0n) insn = (insn | (2 << 29)) >>> 0;
          else chunk = BigInt.asUintN(64, ~chunk);
        }
        if (check && chunk > 0xffffn) {
          return overflow(sval, `the 16-bit ${signed ? 'MOVZ/MOVN' : 'MOVZ/MOVK'} chunk at bit ${lsb}`);
        }
        put32(b, off, encode(insn, Field.Imm16, Number(chunk & 0xffffn)));
        return undefined;
      };

      let err: string | undefined;
      switch (r.type) {
        /* data */
        case R_AARCH64_ABS64: err = data(Op.Abs, 64); break;
        case R_AARCH64_ABS32: err = data(Op.Abs, 32); break;
        case R_AARCH64_ABS16: err = data(Op.Abs, 16); break;
        case R_AARCH64_PREL64: err = data(Op.Prel, 64); break;
        case R_AARCH64_PREL32: err = data(Op.Prel, 32); break;
        case R_AARCH64_PREL16: err = data(Op.Prel, 16); break;
        /* MOVW */
        case R_AARCH64_MOVW_UABS_G0_NC: err = movw(Op.Abs, 0, false, false); break;
        case R_AARCH64_MOVW_UABS_G0: err = movw(Op.Abs, 0, false, true); break;
        case R_AARCH64_MOVW_UABS_G1_NC: err = movw(Op.Abs, 16, false, false); break;
        case R_AARCH64_MOVW_UABS_G1: err = movw(Op.Abs, 16, false, true); break;
        case R_AARCH64_MOVW_UABS_G2_NC: err = movw(Op.Abs, 32, false, false); break;
        case R_AARCH64_MOVW_UABS_G2: err = movw(Op.Abs, 32, false, true); break;
        case R_AARCH64_MOVW_UABS_G3: err = movw(Op.Abs, 48, false, false); break;
        case R_AARCH64_MOVW_SABS_G0: err = movw(Op.Abs, 0, true, true); break;
        case R_AARCH64_MOVW_SABS_G1: err = movw(Op.Abs, 16, true, true); break;
        case R_AARCH64_MOVW_SABS_G2: err = movw(Op.Abs, 32, true, true); break;
        case R_AARCH64_MOVW_PREL_G0_NC: err = movw(Op.Prel, 0, false, false); break;
        case R_AARCH64_MOVW_PREL_G0: err = movw(Op.Prel, 0, true, true); break;
        case R_AARCH64_MOVW_PREL_G1_NC: err = movw(Op.Prel, 16, false, false); break;
        case R_AARCH64_MOVW_PREL_G1: err = movw(Op.Prel, 16, true, true); break;
        case R_AARCH64_MOVW_PREL_G2_NC: err = movw(Op.Prel, 32, false, false); break;
        case R_AARCH64_MOVW_PREL_G2: err = movw(Op.Prel, 32, true, true); break;
        case R_AARCH64_MOVW_PREL_G3: err = movw(Op.Prel, 48, true, false); break;
        /* immediates */
        case R_AARCH64_LD_PREL_LO19: err = imm(Op.Prel, 2, 19, Field.Imm19, true, 2); break;
        case R_AARCH64_ADR_PREL_LO21: err = imm(Op.Prel, 0, 21, Field.Adr, true); break;
        case R_AARCH64_ADR_PREL_PG_HI21_NC: err = imm(Op.Page, 12, 21, Field.Adr, false); break;
        case R_AARCH64_ADR_PREL_PG_HI21: err = imm(Op.Page, 12, 21, Field.Adr, true); break;
        case R_AARCH64_ADD_ABS_LO12_NC:
        case R_AARCH64_LDST8_ABS_LO12_NC: err = imm(Op.Abs, 0, 12, Field.Imm12, false); break;
        case R_AARCH64_LDST16_ABS_LO12_NC: err = imm(Op.Abs, 1, 11, Field.Imm12, false, 1); break;
        case R_AARCH64_LDST32_ABS_LO12_NC: err = imm(Op.Abs, 2, 10, Field.Imm12, false, 2); break;
        case R_AARCH64_LDST64_ABS_LO12_NC: err = imm(Op.Abs, 3, 9, Field.Imm12, false, 3); break;
        case R_AARCH64_LDST128_ABS_LO12_NC: err = imm(Op.Abs, 4, 8, Field.Imm12, false, 4); break;
        case R_AARCH64_TSTBR14: err = imm(Op.Prel, 2, 14, Field.Imm14, true, 2); break;
        case R_AARCH64_CONDBR19: err = imm(Op.Prel, 2, 19, Field.Imm19, true, 2); break;
        case R_AARCH64_JUMP26:
        case R_AARCH64_CALL26:
          err = imm(Op.Prel, 2, 26, Field.Imm26, true, 2);
          if (err?.endsWith('(overflow)')) err += ': beyond the ±128 MiB branch range (Linux would branch through a module PLT veneer, which this loader does not build)';
          break;
        default:
          return `${where}: unsupported relocation type ${r.type}`;
      }
      if (err) return err;
    }
    return undefined;
  },
};
