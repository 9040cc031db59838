/**
 * x86_64 module relocations (Linux arch/x86/kernel/module.c
 * apply_relocate_add): what clang and gcc emit for -mcmodel=kernel objects.
 */
import type { ArchModuleRelocs, Rela, RelocTarget } from '../../kernel/modules/relocations';
import { fitsSigned, fitsUnsigned, put32, put64 } from '../../kernel/modules/relocations';

const R_X86_64_NONE = 0, R_X86_64_64 = 1, R_X86_64_PC32 = 2, R_X86_64_PLT32 = 4, R_X86_64_32 = 10, R_X86_64_32S = 11, R_X86_64_PC64 = 24;
const NAMES: Readonly<Record<number, string>> = {
  [R_X86_64_NONE]: 'R_X86_64_NONE', [R_X86_64_64]: 'R_X86_64_64', [R_X86_64_PC32]: 'R_X86_64_PC32', 3: 'R_X86_64_GOT32',
  [R_X86_64_PLT32]: 'R_X86_64_PLT32', 9: 'R_X86_64_GOTPCREL', [R_X86_64_32]: 'R_X86_64_32', [R_X86_64_32S]: 'R_X86_64_32S',
  [R_X86_64_PC64]: 'R_X86_64_PC64', 41: 'R_X86_64_GOTPCRELX', 42: 'R_X86_64_REX_GOTPCRELX',
};

export const x86_64ModuleRelocs: ArchModuleRelocs = {
  arch: 'x86_64',
  typeName: t => NAMES[t] ?? `type ${t}`,
  applyRelocateAdd(target: RelocTarget, relas: readonly Rela[], symValue: (sym: number) => bigint): string | undefined {
    const b = target.bytes;
    for (const r of relas) {
      const off = Number(r.offset);
      const S = symValue(r.sym), A = r.addend, P = target.addr + r.offset;
      const where = `${target.name}+0x${r.offset.toString(16)}: ${this.typeName(r.type)}`;
      const size = r.type === R_X86_64_64 || r.type === R_X86_64_PC64 ? 8 : 4;
      if (off < 0 || off + size > b.length) return `${where} is outside the section`;
      switch (r.type) {
        case R_X86_64_NONE: break;
        case R_X86_64_64: put64(b, off, S + A); break;
        case R_X86_64_PC64: put64(b, off, S + A - P); break;
        case R_X86_64_32: {
          const v = BigInt.asUintN(64, S + A);
          if (!fitsUnsigned(v, 32)) return `${where}: value 0x${v.toString(16)} does not fit in 32 bits (overflow)`;
          put32(b, off, Number(v));
          break;
        }
        case R_X86_64_32S: {
          const v = BigInt.asIntN(64, S + A);
          if (!fitsSigned(v, 32)) return `${where}: value 0x${BigInt.asUintN(64, v).toString(16)} does not fit in 32 signed bits (overflow)`;
          put32(b, off, Number(BigInt.asUintN(32, v)));
          break;
        }
        case R_X86_64_PC32: case R_X86_64_PLT32: {
          const v = BigInt.asIntN(64, S + A - P);
          if (!fitsSigned(v, 32)) return `${where}: target is out of rel32 reach (displacement 0x${BigInt.asUintN(64, v).toString(16)})`;
          put32(b, off, Number(BigInt.asUintN(32, v)));
          break;
        }
        default:
          return `${where}: unsupported relocation type ${r.type}`;
      }
    }
    return undefined;
  },
};
