/**
 * RISC-V module relocations (Linux arch/riscv/kernel/module.c
 * apply_relocate_add): what gcc and clang emit for -mcmodel=medany
 * -mno-relax kernel code: absolute and pc-relative HI20/LO12 pairs (a
 * PCREL_LO12 names the label of its AUIPC, whose PCREL_HI20 gives the
 * value), CALL(_PLT) auipc+jalr pairs, branches and jumps (also
 * compressed), the ADD/SUB/SET families of debug and jump tables. RELAX is
 * ignored (the code is not relaxed); ALIGN is refused, as by Linux (an
 * object built for linker relaxation: rebuild with -mno-relax). Ranges are
 * Linux's where it checks (R_RISCV_32 unsigned, auipc pairs
 * [-2^31 - 2^11, 2^31 - 2^11)) and the instruction field's elsewhere
 * (branches and jumps, which Linux truncates silently; odd targets refused).
 * ADD/SUB add to the bytes in place (psABI, lld); Linux >= 6.8 sums them
 * from zero instead, the same for the zeroed places assemblers emit.
 */
import type { ArchModuleRelocs, Rela, RelocTarget } from '../../kernel/modules/relocations';
import { fitsSigned, get16, get32, put16, put32, put64 } from '../../kernel/modules/relocations';

const NAMES: Readonly<Record<number, string>> = {
  0: 'R_RISCV_NONE', 1: 'R_RISCV_32', 2: 'R_RISCV_64', 16: 'R_RISCV_BRANCH', 17: 'R_RISCV_JAL', 18: 'R_RISCV_CALL',
  19: 'R_RISCV_CALL_PLT', 20: 'R_RISCV_GOT_HI20', 23: 'R_RISCV_PCREL_HI20', 24: 'R_RISCV_PCREL_LO12_I', 25: 'R_RISCV_PCREL_LO12_S',
  26: 'R_RISCV_HI20', 27: 'R_RISCV_LO12_I', 28: 'R_RISCV_LO12_S', 33: 'R_RISCV_ADD8', 34: 'R_RISCV_ADD16', 35: 'R_RISCV_ADD32',
  36: 'R_RISCV_ADD64', 37: 'R_RISCV_SUB8', 38: 'R_RISCV_SUB16', 39: 'R_RISCV_SUB32', 40: 'R_RISCV_SUB64', 43: 'R_RISCV_ALIGN',
  44: 'R_RISCV_RVC_BRANCH', 45: 'R_RISCV_RVC_JUMP', 51: 'R_RISCV_RELAX', 52: 'R_RISCV_SUB6', 53: 'R_RISCV_SET6', 54: 'R_RISCV_SET8',
  55: 'R_RISCV_SET16', 56: 'R_RISCV_SET32', 57: 'R_RISCV_32_PCREL', 59: 'R_RISCV_PLT32',
  // refused (as by Linux), named for the message
  3: 'R_RISCV_RELATIVE', 4: 'R_RISCV_COPY', 5: 'R_RISCV_JUMP_SLOT', 6: 'R_RISCV_TLS_DTPMOD32', 7: 'R_RISCV_TLS_DTPMOD64',
  8: 'R_RISCV_TLS_DTPREL32', 9: 'R_RISCV_TLS_DTPREL64', 10: 'R_RISCV_TLS_TPREL32', 11: 'R_RISCV_TLS_TPREL64',
  21: 'R_RISCV_TLS_GOT_HI20', 22: 'R_RISCV_TLS_GD_HI20', 29: 'R_RISCV_TPREL_HI20', 30: 'R_RISCV_TPREL_LO12_I',
  31: 'R_RISCV_TPREL_LO12_S', 32: 'R_RISCV_TPREL_ADD', 58: 'R_RISCV_IRELATIVE', 60: 'R_RISCV_SET_ULEB128', 61: 'R_RISCV_SUB_ULEB128',
};

/**
 * What auipc + addi/jalr (and lui + addi) reach: hi20 rounds up when lo12 is
 * negative, so [-2^31 - 2^11, 2^31 - 2^11) (Linux riscv_insn_valid_32bit_offset)
 */
const fitsHiLo = (v: bigint): boolean => v >= -(1n << 31n) - 0x800n && v < (1n << 31n) - 0x800n;

const bit = (v: bigint, n: number): number => Number((v >> BigInt(n)) & 1n);
const bits = (v: bigint, hi: number, lo: number): number => Number((v >> BigInt(lo)) & ((1n << BigInt(hi - lo + 1)) - 1n));

/** the U-type and I/S-type halves of a 32-bit pc- or absolute value (hi20 rounds for the sign of lo12) */
function hiLo(v: bigint): { hi: number; lo: number } {
  const lo = Number(BigInt.asIntN(12, v));
  const hi = Number(BigInt.asUintN(20, (v - BigInt(lo)) >> 12n));
  return { hi, lo };
}
const setU = (w: number, hi: number): number => ((w & 0xfff) | (hi << 12)) >>> 0;
const setI = (w: number, lo: number): number => ((w & 0x000fffff) | ((lo & 0xfff) << 20)) >>> 0;
const setS = (w: number, lo: number): number => ((w & 0x01fff07f) | (((lo >> 5) & 0x7f) << 25) | ((lo & 0x1f) << 7)) >>> 0;

export const riscv64ModuleRelocs: ArchModuleRelocs = {
  arch: 'riscv64',
  typeName: t => NAMES[t] ?? `type ${t}`,
  applyRelocateAdd(target: RelocTarget, relas: readonly Rela[], symValue: (sym: number) => bigint): string | undefined {
    const b = target.bytes;
    // PCREL_HI20 results by the address of their AUIPC, for the LO12 relocations naming that label
    const hi20 = new Map<bigint, bigint>();
    for (const r of relas) {
      if (r.type === 23 || r.type === 20) hi20.set(target.addr + r.offset, BigInt.asIntN(64, symValue(r.sym) + r.addend - (target.addr + r.offset)));
    }
    for (const r of relas) {
      const off = Number(r.offset);
      const S = symValue(r.sym), A = r.addend, P = target.addr + r.offset;
      const where = `${target.name}+0x${r.offset.toString(16)}: ${this.typeName(r.type)}`;
      const size = r.type === 2 || r.type === 36 || r.type === 40 ? 8 : r.type === 44 || r.type === 45 || r.type === 34 || r.type === 38 || r.type === 55 ? 2
        : r.type === 33 || r.type === 37 || r.type === 52 || r.type === 53 || r.type === 54 ? 1 : r.type === 18 || r.type === 19 ? 8 : 4;
      if (r.type !== 0 && r.type !== 51 && r.type !== 43 && (off < 0 || off + size > b.length)) return `${where} is outside the section`;
      const pc = BigInt.asIntN(64, S + A - P);
      const far = (v: bigint, n: number): string => `${where}: offset 0x${BigInt.asUintN(64, v).toString(16)} does not fit in ${n} bits (overflow)`;
      const farHiLo = (v: bigint, what: string): string =>
        `${where}: ${what} 0x${BigInt.asUintN(64, v).toString(16)} is beyond the ±2 GiB reach of a hi20 + lo12 pair (overflow)`;
      const odd = (v: bigint): string => `${where}: offset 0x${BigInt.asUintN(64, v).toString(16)} is odd (misaligned branch target)`;
      switch (r.type) {
        case 0: case 51: break; // NONE, RELAX
        case 43: return `${where}: alignment padding to fix up (build with -mno-relax)`;
        case 1: { // apply_r_riscv_32_rela: the value must be a u32
          const v = BigInt.asUintN(64, S + A);
          if (v >> 32n) return `${where}: value 0x${v.toString(16)} does not fit in 32 bits (overflow)`;
          put32(b, off, Number(v));
          break;
        }
        case 2: put64(b, off, S + A); break;
        case 57: case 59: { if (!fitsSigned(pc, 32)) return far(pc, 32); put32(b, off, Number(BigInt.asUintN(32, pc))); break; }
        case 16: { // B-type
          if (!fitsSigned(pc, 13)) return far(pc, 13);
          if (pc & 1n) return odd(pc);
          const w = get32(b, off) & 0x01fff07f;
          put32(b, off, (w | (bit(pc, 12) << 31) | (bits(pc, 10, 5) << 25) | (bits(pc, 4, 1) << 8) | (bit(pc, 11) << 7)) >>> 0);
          break;
        }
        case 17: { // J-type
          if (!fitsSigned(pc, 21)) return far(pc, 21);
          if (pc & 1n) return odd(pc);
          const w = get32(b, off) & 0xfff;
          put32(b, off, (w | (bit(pc, 20) << 31) | (bits(pc, 10, 1) << 21) | (bit(pc, 11) << 20) | (bits(pc, 19, 12) << 12)) >>> 0);
          break;
        }
        case 44: { // c.beqz / c.bnez
          if (!fitsSigned(pc, 9)) return far(pc, 9);
          if (pc & 1n) return odd(pc);
          const w = get16(b, off) & 0xe383;
          put16(b, off, w | (bit(pc, 8) << 12) | (bits(pc, 4, 3) << 10) | (bits(pc, 7, 6) << 5) | (bits(pc, 2, 1) << 3) | (bit(pc, 5) << 2));
          break;
        }
        case 45: { // c.j
          if (!fitsSigned(pc, 12)) return far(pc, 12);
          if (pc & 1n) return odd(pc);
          const w = get16(b, off) & 0xe003;
          put16(b, off, w | (bit(pc, 11) << 12) | (bit(pc, 4) << 11) | (bits(pc, 9, 8) << 9) | (bit(pc, 10) << 8) | (bit(pc, 6) << 7)
            | (bit(pc, 7) << 6) | (bits(pc, 3, 1) << 3) | (bit(pc, 5) << 2));
          break;
        }
        case 18: case 19: { // auipc + jalr
          if (!fitsHiLo(pc)) return farHiLo(pc, 'offset');
          const { hi, lo } = hiLo(pc);
          put32(b, off, setU(get32(b, off), hi));
          put32(b, off + 4, setI(get32(b, off + 4), lo));
          break;
        }
        case 23: { if (!fitsHiLo(pc)) return farHiLo(pc, 'offset'); put32(b, off, setU(get32(b, off), hiLo(pc).hi)); break; }
        case 24: case 25: {
          // the label's address; the addend is ignored (Linux and lld: it is 0)
          const v = hi20.get(S);
          if (v === undefined) return `${where}: no PCREL_HI20 at its label 0x${S.toString(16)}`;
          const lo = hiLo(v).lo;
          put32(b, off, r.type === 24 ? setI(get32(b, off), lo) : setS(get32(b, off), lo));
          break;
        }
        case 26: { const v = BigInt.asIntN(64, S + A); if (!fitsHiLo(v)) return farHiLo(v, 'value'); put32(b, off, setU(get32(b, off), hiLo(v).hi)); break; }
        case 27: put32(b, off, setI(get32(b, off), hiLo(S + A).lo)); break;
        case 28: put32(b, off, setS(get32(b, off), hiLo(S + A).lo)); break;
        case 33: case 37: b[off] = Number(BigInt.asUintN(8, BigInt(b[off]) + (r.type === 33 ? S + A : -(S + A)))); break;
        case 34: case 38: put16(b, off, Number(BigInt.asUintN(16, BigInt(get16(b, off)) + (r.type === 34 ? S + A : -(S + A))))); break;
        case 35: case 39: put32(b, off, Number(BigInt.asUintN(32, BigInt(get32(b, off)) + (r.type === 35 ? S + A : -(S + A))))); break;
        case 36: case 40: {
          const cur = BigInt(get32(b, off)) | (BigInt(get32(b, off + 4)) << 32n);
          put64(b, off, cur + (r.type === 36 ? S + A : -(S + A)));
          break;
        }
        case 52: b[off] = (b[off] & 0xc0) | Number(BigInt.asUintN(6, BigInt(b[off] & 0x3f) - (S + A))); break;
        case 53: b[off] = (b[off] & 0xc0) | Number(BigInt.asUintN(6, S + A)); break;
        case 54: b[off] = Number(BigInt.asUintN(8, S + A)); break;
        case 55: put16(b, off, Number(BigInt.asUintN(16, S + A))); break;
        case 56: put32(b, off, Number(BigInt.asUintN(32, S + A))); break;
        default:
          return `${where}: unsupported relocation type ${r.type}`;
      }
    }
    return undefined;
  },
};
