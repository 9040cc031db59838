/**
 * The image's exception table (Linux search_exception_tables): 16-byte
 * (faulting instruction address, fixup address) pairs in the section named
 * by EXCEPTION_TABLE_SECTION. An image declares entries with
 * KP_EXTABLE(insn, fixup) (examples/include/kprobe_image.h). kprobes uses
 * it to refuse boosting an instruction that may fault and to refuse jump
 * optimization in any function that has an entry (Linux can_optimize).
 */
import type { ElfImage } from '../elf/types';
import { EXCEPTION_TABLE_SECTION } from '../kernel/abi';

export interface ExTableEntry {
  insn: bigint;
  fixup: bigint;
}

export class ExceptionTable {
  readonly entries: readonly ExTableEntry[];
  private readonly byInsn = new Map<bigint, bigint>();

  constructor(image: ElfImage) {
    const out: ExTableEntry[] = [];
    const sec = image.section(EXCEPTION_TABLE_SECTION);
    if (sec) {
      const dv = new DataView(sec.data.buffer, sec.data.byteOffset, sec.data.byteLength);
      for (let o = 0; o + 16 <= dv.byteLength; o += 16) {
        const e = { insn: dv.getBigUint64(o, true), fixup: dv.getBigUint64(o + 8, true) };
        out.push(e);
        this.byInsn.set(e.insn, e.fixup);
      }
    }
    this.entries = out;
  }

  /** the fixup address of an instruction listed in the table */
  search(addr: bigint): bigint | undefined {
    return this.byInsn.get(BigInt.asUintN(64, addr));
  }
}
