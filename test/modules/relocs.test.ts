/**
 * Module relocations of x86_64, aarch64 and riscv64 (apply_relocate_add)
 * against a real linker, type by type.
 *
 * test/modules/build.sh compiles test/modules/src/*.c with gcc and clang
 * for each arch (kernel module flags; aarch64 small and large code models;
 * with and without -ffunction-sections -fdata-sections) and links each
 * object alone with ld.lld at a fixed layout, one output section per input
 * section under the same name, undefined symbols --defsym'd
 * (test/modules/bin: <name>.o, <name>.ld, <name>.elf, committed). Here each
 * object's allocated sections are placed where lld put them, its
 * relocations applied with the arch's applyRelocateAdd, and the bytes must
 * be lld's. kcode.c is ordinary kernel-style C; asm_<arch>.c carries the
 * types compilers emit rarely, and sweeps (each field at both ends of its
 * range and with every bit set, on raw instruction words). After the
 * comparisons every type of each arch's list must have been seen.
 *
 * Then what the linker does not show: Linux's own choices where they differ
 * from lld's (signed MOVW forms, the auipc+jalr range), and errors: an
 * unsupported type names itself, an out-of-range branch or PC-relative
 * value is an overflow, a PCREL_LO12 without its HI20 is refused.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import { parseRelObject, SHF_ALLOC, SHN_ABS, SHN_COMMON, SHN_UNDEF } from '../../emulator/kernel/modules/object';
import type { ArchModuleRelocs, Rela } from '../../emulator/kernel/modules/relocations';
import { get32 } from '../../emulator/kernel/modules/relocations';
import { x86_64ModuleRelocs } from '../../emulator/arch/x86_64/modules';
import { aarch64ModuleRelocs } from '../../emulator/arch/aarch64/modules';
import { riscv64ModuleRelocs } from '../../emulator/arch/riscv64/modules';
import { repoPath } from '../util/paths';

const BIN = repoPath('test', 'modules', 'bin');
const SHT_NOBITS = 8;
const ARCHES: Readonly<Record<string, ArchModuleRelocs>> = {
  x86_64: x86_64ModuleRelocs, aarch64: aarch64ModuleRelocs, riscv64: riscv64ModuleRelocs,
};

/** the types each arch's objects must exercise (all verified against lld) */
const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  x86_64: ['NONE', '64', 'PC32', 'PLT32', '32', '32S', 'PC64'].map(t => `R_X86_64_${t}`),
  aarch64: [
    'NONE', 'ABS64', 'ABS32', 'ABS16', 'PREL64', 'PREL32', 'PREL16',
    'ADR_PREL_PG_HI21', 'ADR_PREL_PG_HI21_NC', 'ADR_PREL_LO21', 'ADD_ABS_LO12_NC',
    'LDST8_ABS_LO12_NC', 'LDST16_ABS_LO12_NC', 'LDST32_ABS_LO12_NC', 'LDST64_ABS_LO12_NC', 'LDST128_ABS_LO12_NC',
    'CALL26', 'JUMP26', 'CONDBR19', 'TSTBR14', 'LD_PREL_LO19',
    'MOVW_UABS_G0', 'MOVW_UABS_G0_NC', 'MOVW_UABS_G1', 'MOVW_UABS_G1_NC', 'MOVW_UABS_G2', 'MOVW_UABS_G2_NC', 'MOVW_UABS_G3',
    'MOVW_SABS_G0', 'MOVW_SABS_G1', 'MOVW_SABS_G2',
    'MOVW_PREL_G0', 'MOVW_PREL_G0_NC', 'MOVW_PREL_G1', 'MOVW_PREL_G1_NC', 'MOVW_PREL_G2', 'MOVW_PREL_G2_NC', 'MOVW_PREL_G3',
  ].map(t => `R_AARCH64_${t}`),
  riscv64: [
    'NONE', '64', '32', '32_PCREL', 'BRANCH', 'JAL', 'RVC_BRANCH', 'RVC_JUMP', 'CALL', 'CALL_PLT',
    'PCREL_HI20', 'PCREL_LO12_I', 'PCREL_LO12_S', 'HI20', 'LO12_I', 'LO12_S',
    'ADD8', 'ADD16', 'ADD32', 'ADD64', 'SUB8', 'SUB16', 'SUB32', 'SUB64', 'SUB6', 'SET6', 'SET8', 'SET16', 'SET32',
  ].map(t => `R_RISCV_${t}`),
};

const hex = (v: bigint | number): string => `0x${v.toString(16)}`;
const covered = new Map<string, Map<string, number>>();

/** the relocations of `relas` whose field covers byte `at` of the section */
function coveringRelas(relas: readonly Rela[], at: number): Rela[] {
  return relas.filter(r => at >= Number(r.offset) && at < Number(r.offset) + 8);
}

function compareObject(name: string): { arch: string; relocations: number } {
  const obj = parseRelObject(new Uint8Array(readFileSync(join(BIN, `${name}.o`))), `${name}.o`);
  const arch = obj.image.archName;
  const relocs = ARCHES[arch];
  assert.ok(relocs, `${name}: arch ${arch}`);
  const linked = loadElf(join(BIN, `${name}.elf`));
  const alloc = obj.sections.filter(s => (s.flags & SHF_ALLOC) !== 0n && s.size > 0n);
  const addr = new Map<number, bigint>();
  for (const s of alloc) {
    assert.equal(alloc.filter(x => x.name === s.name).length, 1, `${name}: one input section named ${s.name}`);
    const out = linked.section(s.name);
    assert.ok(out, `${name}: ${s.name} is an output section of the reference link`);
    assert.equal(out.size, s.size, `${name}: ${s.name} kept its size in the link (no merging or relaxation)`);
    addr.set(s.index, out.addr);
  }
  const value = (i: number): bigint => {
    const sym = obj.symbols[i];
    if (i === 0) return 0n;
    assert.notEqual(sym.shndx, SHN_COMMON, `${name}: common symbol ${sym.name}`);
    if (sym.shndx === SHN_UNDEF) {
      const d = linked.symbols.lookup(sym.name);
      assert.ok(d, `${name}: the reference link defines ${sym.name}`);
      return d.value;
    }
    if (sym.shndx === SHN_ABS) return sym.value;
    const base = addr.get(sym.shndx);
    assert.ok(base !== undefined, `${name}: symbol ${sym.name} is in unplaced section ${sym.shndx}`);
    return base + sym.value;
  };
  const seen = covered.get(arch) ?? new Map<string, number>();
  covered.set(arch, seen);
  let relocations = 0;
  for (const [target, relas] of obj.relas) {
    const sec = obj.sections[target];
    const at = addr.get(target);
    if (at === undefined || sec.type === SHT_NOBITS) continue;
    const bytes = sec.data.slice();
    const err = relocs.applyRelocateAdd({ bytes, addr: at, name: sec.name }, relas, value);
    assert.equal(err, undefined, `${name}: ${sec.name}`);
    const want = linked.section(sec.name)!.data;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] === want[i]) continue;
      const rs = coveringRelas(relas, i).map(r => `${relocs.typeName(r.type)} at ${hex(r.offset)} (sym ${obj.symbols[r.sym].name || r.sym} ${r.addend < 0n ? '-' : '+'} ${hex(r.addend < 0n ? -r.addend : r.addend)})`);
      const w = i & ~3;
      assert.fail(`${name}: ${sec.name}+${hex(i)} (address ${hex(at + BigInt(i))}): byte ${hex(bytes[i])}, lld wrote ${hex(want[i])}`
        + ` (word ${hex(get32(bytes, w))} vs ${hex(get32(want, w))}); relocations there: ${rs.join('; ') || 'none'}`);
    }
    assert.equal(bytes.length, want.length);
    for (const r of relas) {
      const t = relocs.typeName(r.type);
      seen.set(t, (seen.get(t) ?? 0) + 1);
    }
    relocations += relas.length;
  }
  return { arch, relocations };
}

const objects = readdirSync(BIN).filter(f => f.endsWith('.o')).map(f => f.slice(0, -2)).sort();

describe('module relocations = ld.lld\'s (test/modules/bin)', () => {
  test('every arch has gcc and clang objects with reference links', () => {
    for (const arch of Object.keys(ARCHES)) {
      for (const cc of ['gcc', 'clang']) {
        assert.ok(objects.some(o => o.startsWith(`${arch}-${cc}-`)), `${arch} ${cc}`);
      }
    }
    const elfs = new Set(readdirSync(BIN).filter(f => f.endsWith('.elf')).map(f => f.slice(0, -4)));
    assert.deepEqual(objects.filter(o => !elfs.has(o)), [], 'objects without a reference link');
  });

  for (const name of objects) {
    test(name, () => {
      const { arch, relocations } = compareObject(name);
      assert.ok(name.startsWith(`${arch}-`), `${name} is ${arch}`);
      assert.ok(relocations >= 10, `${name}: only ${relocations} relocations`);
    });
  }

  for (const arch of Object.keys(REQUIRED)) {
    test(`${arch}: every relocation type of the list was compared`, () => {
      const seen = covered.get(arch);
      assert.ok(seen, `${arch}: no objects compared`);
      assert.deepEqual(REQUIRED[arch].filter(t => !seen.has(t)), [], `seen: ${[...seen].map(([t, n]) => `${t} ${n}`).join(', ')}`);
    });
  }
});

/* ---- synthetic cases ---- */

const le32 = (...words: number[]): Uint8Array => {
  const b = new Uint8Array(words.length * 4);
  words.forEach((w, i) => { b[i * 4] = w & 0xff; b[i * 4 + 1] = (w >>> 8) & 0xff; b[i * 4 + 2] = (w >>> 16) & 0xff; b[i * 4 + 3] = (w >>> 24) & 0xff; });
  return b;
};
const rela = (type: number, offset = 0, addend = 0n, sym = 1): Rela => ({ offset: BigInt(offset), type, sym, addend });
/** apply one relocation to `bytes` at `addr`, the symbol at `S` */
function apply(relocs: ArchModuleRelocs, bytes: Uint8Array, relas: Rela[], S: bigint, addr = 0xffff000010000000n, name = '.text'): string | undefined {
  return relocs.applyRelocateAdd({ bytes, addr, name }, relas, () => S);
}

describe('aarch64: Linux\'s choices and errors', () => {
  const A = aarch64ModuleRelocs;
  const base = 0xffff800010000000n;
  test('MOVW_PREL_G3 of a negative offset is a MOVN of the inverted chunk (reloc_insn_movw AARCH64_INSN_IMM_MOVNZ)', () => {
    const b = le32(0xd2e00000);  // movz x0, #0, lsl #48
    assert.equal(apply(A, b, [rela(293)], base - 0x10n, base), undefined);
    assert.equal(get32(b, 0), 0x92e00000);  // movn x0, #0, lsl #48: ~(0 << 48), the MOVKs below fill the rest
  });
  test('MOVW_SABS_G1 of a negative value: MOVN with ~(v >> 16); of a positive one: MOVZ', () => {
    const b = le32(0xd2a00000, 0x92a00000);  // movz, movn: the relocation sets the opcode either way
    assert.equal(apply(A, b, [rela(271, 0, -0x12345678n), rela(271, 4, 0x12345678n)], 0n, base), undefined);
    assert.equal(get32(b, 0), (0x92a00000 | (0x1234 << 5)) >>> 0);  // movn x0, #0x1234, lsl #16 = -0x12340001: movk g0 completes it
    assert.equal(get32(b, 4), (0xd2a00000 | (0x1234 << 5)) >>> 0);  // movz x0, #0x1234, lsl #16
  });
  test('ABS32 is checked as unsigned, PREL32 as signed (reloc_data)', () => {
    assert.match(apply(A, new Uint8Array(4), [rela(258)], 0xffffffffffffffffn) ?? '', /R_AARCH64_ABS32.*overflow/);
    assert.equal(apply(A, new Uint8Array(4), [rela(258)], 0xffffffffn), undefined);
    assert.match(apply(A, new Uint8Array(4), [rela(261)], base + 0x80000000n, base) ?? '', /R_AARCH64_PREL32.*overflow/);
    assert.equal(apply(A, new Uint8Array(4), [rela(261)], base - 0x80000000n, base), undefined);
  });
  test('CALL26 beyond ±128 MiB is an overflow naming the type and place; at the edge it is not', () => {
    const err = apply(A, le32(0, 0x94000000), [rela(283, 4)], base + 4n + 0x8000000n, base);
    assert.match(err ?? '', /\.text\+0x4: R_AARCH64_CALL26.*overflow/);
    assert.match(apply(A, le32(0x14000000), [rela(282)], base - 0x8000004n, base) ?? '', /R_AARCH64_JUMP26.*overflow/);
    const b = le32(0x94000000);
    assert.equal(apply(A, b, [rela(283)], base - 0x8000000n, base), undefined);
    assert.equal(get32(b, 0), 0x96000000);
  });
  test('CONDBR19, TSTBR14, ADR_PREL_LO21, ADR_PREL_PG_HI21 out of range: overflow; the _NC form is not checked', () => {
    assert.match(apply(A, le32(0x54000000), [rela(280)], base + 0x100000n, base) ?? '', /R_AARCH64_CONDBR19.*overflow/);
    assert.match(apply(A, le32(0x36280001), [rela(279)], base - 0x8004n, base) ?? '', /R_AARCH64_TSTBR14.*overflow/);
    assert.match(apply(A, le32(0x10000004), [rela(274)], base + 0x100000n, base) ?? '', /R_AARCH64_ADR_PREL_LO21.*overflow/);
    assert.match(apply(A, le32(0x90000005), [rela(275)], base + 0x100000000n, base) ?? '', /R_AARCH64_ADR_PREL_PG_HI21.*overflow/);
    assert.equal(apply(A, le32(0x90000005), [rela(276)], base + 0x100000000n, base), undefined);
  });
  test('MOVW_UABS_G0 of a value above 16 bits is an overflow; the _NC form takes the low chunk', () => {
    assert.match(apply(A, le32(0xd2800000), [rela(263)], 0x10000n) ?? '', /R_AARCH64_MOVW_UABS_G0.*overflow/);
    const b = le32(0xf2800000);
    assert.equal(apply(A, b, [rela(264)], 0x12345n), undefined);
    assert.equal(get32(b, 0), (0xf2800000 | (0x2345 << 5)) >>> 0);
  });
  test('a misaligned branch target or LDST64 offset is refused', () => {
    assert.match(apply(A, le32(0x94000000), [rela(283)], base + 6n, base) ?? '', /R_AARCH64_CALL26.*align/);
    assert.match(apply(A, le32(0xf9400000), [rela(286)], base + 0x1004n, base) ?? '', /R_AARCH64_LDST64_ABS_LO12_NC.*align/);
  });
  test('unsupported types are named: GOT, TLS, dynamic, unknown', () => {
    assert.match(apply(A, new Uint8Array(8), [rela(311)], base) ?? '', /R_AARCH64_ADR_GOT_PAGE.*unsupported/);
    assert.match(apply(A, new Uint8Array(8), [rela(1027)], base) ?? '', /R_AARCH64_RELATIVE.*unsupported/);
    assert.match(apply(A, new Uint8Array(8), [rela(9999)], base) ?? '', /type 9999.*unsupported/);
    assert.equal(A.typeName(283), 'R_AARCH64_CALL26');
    assert.equal(A.typeName(12345), 'type 12345');
  });
  test('a relocation outside its section is refused', () => {
    assert.match(apply(A, new Uint8Array(4), [rela(257)], base) ?? '', /R_AARCH64_ABS64.*outside/);
  });
});

describe('riscv64: Linux\'s choices and errors', () => {
  const R = riscv64ModuleRelocs;
  const base = 0xffffffff80000000n;
  const auipc = 0x00000097, jalr = 0x000080e7;
  test('CALL reaches [-2^31 - 2^11, 2^31 - 2^11) (riscv_insn_valid_32bit_offset), no further', () => {
    for (const [off, ok] of [[(1n << 31n) - 0x801n, true], [(1n << 31n) - 0x800n, false], [-(1n << 31n) - 0x800n, true], [-(1n << 31n) - 0x801n, false]] as const) {
      const b = le32(auipc, jalr);
      const err = apply(R, b, [rela(18)], base + off, base);
      if (ok) {
        assert.equal(err, undefined, hex(off));
        // auipc + jalr must add up to the offset
        const hi = BigInt.asIntN(32, BigInt(get32(b, 0) & 0xfffff000));
        const lo = BigInt.asIntN(12, BigInt(get32(b, 4) >>> 20));
        assert.equal(hi + lo, off, hex(off));
      } else {
        assert.match(err ?? '', /R_RISCV_CALL/, hex(off));
      }
    }
  });
  test('PCREL_HI20 has the same reach; HI20 of a value that lui+addi cannot build is refused', () => {
    assert.match(apply(R, le32(0x00000517), [rela(23)], base + (1n << 31n) - 0x800n, base) ?? '', /R_RISCV_PCREL_HI20/);
    assert.match(apply(R, le32(0x00000537), [rela(26)], 0x7ffff800n) ?? '', /R_RISCV_HI20/);
    assert.equal(apply(R, le32(0x00000537), [rela(26)], 0x7ffff7ffn), undefined);
  });
  test('JAL, BRANCH, RVC_BRANCH, RVC_JUMP out of range: overflow naming type and place', () => {
    assert.match(apply(R, le32(0, 0x000000ef), [rela(17, 4)], base + 4n + 0x100000n, base) ?? '', /\.text\+0x4: R_RISCV_JAL.*overflow/);
    assert.match(apply(R, le32(0x00b50063), [rela(16)], base - 0x1002n, base) ?? '', /R_RISCV_BRANCH.*overflow/);
    assert.match(apply(R, new Uint8Array([0x01, 0xc1]), [rela(44)], base + 0x100n, base) ?? '', /R_RISCV_RVC_BRANCH.*overflow/);
    assert.match(apply(R, new Uint8Array([0x01, 0xa0]), [rela(45)], base - 0x802n, base) ?? '', /R_RISCV_RVC_JUMP.*overflow/);
  });
  test('PCREL_LO12 takes S + A - P of the PCREL_HI20 at its label, wherever that one is in the list', () => {
    const b = le32(0x00050513, 0x00000517, 0x00a53023);  // addi (lo12_i) before its auipc; sd (lo12_s) after
    const S = base + 0x12345n;
    const relas = [{ ...rela(24, 0), sym: 2 }, rela(23, 4), { ...rela(25, 8), sym: 2 }];
    const err = R.applyRelocateAdd({ bytes: b, addr: base, name: '.text' }, relas, i => (i === 2 ? base + 4n : S));
    assert.equal(err, undefined);
    const off = S - (base + 4n);  // 0x12341
    assert.equal(get32(b, 4) >>> 12, Number((off + 0x800n) >> 12n));
    assert.equal(BigInt(get32(b, 0) >>> 20), off & 0xfffn);
    const s = get32(b, 8);
    assert.equal(((s >>> 25) << 5) | ((s >>> 7) & 0x1f), Number(off & 0xfffn));
  });
  test('a PCREL_LO12 whose label carries no PCREL_HI20 is refused', () => {
    const err = R.applyRelocateAdd({ bytes: le32(0x00050513), addr: base, name: '.text' }, [rela(24)], () => base + 0x40n);
    assert.match(err ?? '', /R_RISCV_PCREL_LO12_I.*HI20/);
  });
  test('GOT_HI20, TLS and dynamic types are refused by name; ALIGN too (a relaxable object), RELAX is ignored', () => {
    assert.match(apply(R, le32(0x00000517), [rela(20)], base) ?? '', /R_RISCV_GOT_HI20/);
    assert.match(apply(R, le32(0x00000517), [rela(29)], base) ?? '', /R_RISCV_TPREL_HI20|type 29/);
    assert.match(apply(R, new Uint8Array(8), [rela(3)], base) ?? '', /R_RISCV_RELATIVE|type 3/);
    assert.match(apply(R, le32(0x00000013), [rela(43, 0, 4n)], base) ?? '', /R_RISCV_ALIGN/);
    const b = le32(0x00000013);
    assert.equal(apply(R, b, [rela(51)], base), undefined);
    assert.equal(get32(b, 0), 0x00000013);
    assert.match(apply(R, new Uint8Array(8), [rela(200)], base) ?? '', /type 200/);
  });
  test('PLT32 and 32_PCREL: S + A - P in 32 signed bits', () => {
    for (const t of [57, 59]) {
      const b = new Uint8Array(4);
      assert.equal(apply(R, b, [rela(t)], base - 0x10n, base), undefined);
      assert.equal(get32(b, 0), 0xfffffff0);
      assert.match(apply(R, new Uint8Array(4), [rela(t)], base + 0x80000000n, base) ?? '', /overflow/);
    }
  });
  test('R_RISCV_32 of an address above 4 GiB is an overflow (apply_r_riscv_32_rela)', () => {
    assert.match(apply(R, new Uint8Array(4), [rela(1)], base) ?? '', /R_RISCV_32\b/);
  });
  test('SET6 / SUB6 keep the top two bits of the byte (DW_CFA_advance_loc)', () => {
    const b = new Uint8Array([0x40]);
    assert.equal(R.applyRelocateAdd({ bytes: b, addr: base, name: '.eh' }, [rela(53, 0, 0n, 1), rela(52, 0, 0n, 2)], i => (i === 1 ? 0x1234n : 0x1200n)), undefined);
    assert.equal(b[0], 0x40 | 0x34);
  });
});

describe('x86_64: errors', () => {
  const X = x86_64ModuleRelocs;
  const base = 0xffffffffa0000000n;
  test('PC32 / PLT32 beyond ±2 GiB and 32S of a non-kernel address are refused, naming the type', () => {
    assert.match(apply(X, new Uint8Array(4), [rela(2)], base + 0x80000000n, base) ?? '', /R_X86_64_PC32.*(overflow|reach)/);
    assert.match(apply(X, new Uint8Array(4), [rela(4)], base - 0x80000001n, base) ?? '', /R_X86_64_PLT32.*(overflow|reach)/);
    assert.match(apply(X, new Uint8Array(4), [rela(11)], 0xffff800000000000n) ?? '', /R_X86_64_32S.*overflow/);
    assert.match(apply(X, new Uint8Array(4), [rela(10)], base) ?? '', /R_X86_64_32\b.*overflow/);
  });
  test('GOTPCREL and unknown types are named', () => {
    assert.match(apply(X, new Uint8Array(4), [rela(9)], base) ?? '', /R_X86_64_GOTPCREL.*unsupported/);
    assert.match(apply(X, new Uint8Array(4), [rela(77)], base) ?? '', /type 77/);
  });
});
