/**
 * .debug_line features compilers rarely emit, on hand-assembled units:
 * opcode_base other than 13, unknown standard/extended opcodes,
 * min_inst_length > 1, VLIW op_index, fixed_advance_pc, const_add_pc,
 * define_file, DWARF64 v3, every DWARF 5 entry form, big endian, and
 * malformed units. Expected rows follow the DWARF 5 spec, section 6.2.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ImageError } from '../../../emulator/elf';
import { parseDebugLineUnits } from '../../../emulator/elf/dwarf/debugLine';

const uleb = (v: number): number[] => {
  const out: number[] = [];
  do { let b = v & 0x7f; v = Math.floor(v / 128); if (v) b |= 0x80; out.push(b); } while (v);
  return out;
};
const sleb = (v: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const b = v & 0x7f; v >>= 7;
    if ((v === 0 && !(b & 0x40)) || (v === -1 && (b & 0x40))) { out.push(b); return out; }
    out.push(b | 0x80);
  }
};
const str = (s: string): number[] => [...Buffer.from(s, 'utf8'), 0];
const le = (v: bigint, n: number, little = true): number[] => {
  const b: number[] = [];
  for (let i = 0; i < n; i++) b.push(Number((v >> BigInt(8 * i)) & 0xffn));
  return little ? b : b.reverse();
};

const op = {
  setAddress: (a: bigint, size = 8, little = true) => [0, ...uleb(size + 1), 2, ...le(a, size, little)],
  endSequence: [0, 1, 1],
  setDiscriminator: (d: number) => [0, ...uleb(1 + uleb(d).length), 4, ...uleb(d)],
  copy: [1],
  advancePc: (n: number) => [2, ...uleb(n)],
  advanceLine: (n: number) => [3, ...sleb(n)],
  setFile: (n: number) => [4, ...uleb(n)],
  setColumn: (n: number) => [5, ...uleb(n)],
  negateStmt: [6],
  constAddPc: [8],
  fixedAdvancePc: (n: number, little = true) => [9, ...le(BigInt(n), 2, little)],
};

interface UnitSpec {
  version: number;
  dwarf64?: boolean;
  little?: boolean;
  minInst?: number;
  maxOps?: number;
  lineBase?: number;
  lineRange?: number;
  opcodeBase?: number;
  stdLengths?: number[];
  /** v2-4: include dirs and files (name, dir); v5: raw entry tables */
  dirs?: string[];
  files?: Array<[string, number]>;
  v5Tables?: number[];
  program: number[];
}

const STD = [0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1];

function unit(u: UnitSpec): number[] {
  const little = u.little ?? true;
  const os = u.dwarf64 ? 8 : 4;
  const opcodeBase = u.opcodeBase ?? 13;
  const hdr: number[] = [u.minInst ?? 1];
  if (u.version >= 4) hdr.push(u.maxOps ?? 1);
  hdr.push(1, (u.lineBase ?? -5) & 0xff, u.lineRange ?? 14, opcodeBase);
  hdr.push(...(u.stdLengths ?? STD.slice(0, opcodeBase - 1)));
  if (u.version >= 5) {
    hdr.push(...u.v5Tables!);
  } else {
    for (const d of u.dirs ?? []) hdr.push(...str(d));
    hdr.push(0);
    for (const [n, d] of u.files ?? []) hdr.push(...str(n), ...uleb(d), 0, 0);
    hdr.push(0);
  }
  const afterLength: number[] = [...le(BigInt(u.version), 2, little)];
  if (u.version >= 5) afterLength.push(8, 0);
  afterLength.push(...le(BigInt(hdr.length), os, little), ...hdr, ...u.program);
  const len = u.dwarf64 ? [0xff, 0xff, 0xff, 0xff, ...le(BigInt(afterLength.length), 8, little)] : le(BigInt(afterLength.length), 4, little);
  return [...len, ...afterLength];
}

function rows(bytes: number[], opts: { little?: boolean; str?: Uint8Array; lineStr?: Uint8Array; compDirs?: Map<number, string> } = {}) {
  const parsed = parseDebugLineUnits(
    { line: new Uint8Array(bytes), str: opts.str, lineStr: opts.lineStr },
    { little: opts.little ?? true, file: 'synthetic.elf', compDirs: opts.compDirs, addressSize: 8 });
  return parsed.rows.map((r) => ({ a: r.address, line: r.line, col: r.column, file: r.file, stmt: r.isStmt, end: r.endSequence }));
}

describe('synthetic .debug_line units', () => {
  test('DWARF 2 opcode_base 10: opcodes 10..12 are special opcodes', () => {
    const r = rows(unit({
      version: 2, opcodeBase: 10, lineBase: -3, lineRange: 12, files: [['a.c', 0]],
      program: [...op.setAddress(0x1000n), ...op.advanceLine(9), 38, 12, ...op.advancePc(4), ...op.endSequence],
    }), { compDirs: new Map([[0, '/build']]) });
    assert.deepEqual(r, [
      // 38: adjusted 28 -> address += 28/12 = 2, line += -3 + 28%12 = +1
      { a: 0x1002n, line: 11, col: 0, file: '/build/a.c', stmt: true, end: false },
      // 12: adjusted 2 -> address += 0, line += -3 + 2 = -1
      { a: 0x1002n, line: 10, col: 0, file: '/build/a.c', stmt: true, end: false },
      { a: 0x1006n, line: 10, col: 0, file: '/build/a.c', stmt: true, end: true },
    ]);
  });

  test('min_inst_length 4, const_add_pc, fixed_advance_pc, negate_stmt, column, discriminator', () => {
    const r = rows(unit({
      version: 3, minInst: 4, dirs: ['inc'], files: [['a.c', 0], ['b.h', 1]],
      program: [
        ...op.setAddress(0xffffffff81000000n), ...op.copy,
        ...op.advancePc(3), ...op.setColumn(7), ...op.setDiscriminator(5), ...op.copy, // +12
        ...op.constAddPc, ...op.negateStmt, ...op.setFile(2), ...op.copy, // (255-13)/14 = 17 -> +68
        ...op.fixedAdvancePc(0x100), ...op.negateStmt, ...op.copy, // +0x100, not scaled
        ...op.endSequence,
      ],
    }));
    const base = 0xffffffff81000000n;
    assert.deepEqual(r.map((x) => [Number(x.a - base), x.line, x.col, x.file, x.stmt, x.end]), [
      [0, 1, 0, 'a.c', true, false],
      [12, 1, 7, 'a.c', true, false],
      [80, 1, 7, 'inc/b.h', false, false],
      [336, 1, 7, 'inc/b.h', true, false],
      [336, 1, 7, 'inc/b.h', true, true],
    ]);
  });

  test('addresses keep all 64 bits', () => {
    const p = parseDebugLineUnits({ line: new Uint8Array(unit({ version: 4, files: [['a.c', 0]], program: [...op.setAddress(0xffffffff81234567n), ...op.copy, ...op.advancePc(1), ...op.endSequence] })) },
      { little: true, file: 'x' });
    assert.deepEqual(p.rows.map((r) => r.address), [0xffffffff81234567n, 0xffffffff81234568n]);
  });

  test('VLIW: maximum_operations_per_instruction 3 advances op_index', () => {
    const r = rows(unit({
      version: 4, minInst: 8, maxOps: 3, files: [['a.c', 0]],
      program: [...op.setAddress(0x2000n), ...op.advancePc(4), ...op.copy, ...op.advancePc(2), ...op.copy, ...op.endSequence],
    }));
    // op 4 -> address += 8 * (4 / 3) = 8, op_index 1; then op 1+2 = 3 -> address += 8, op_index 0
    assert.deepEqual(r.map((x) => x.a), [0x2008n, 0x2010n, 0x2010n]);
  });

  test('unknown standard opcode (opcode_base 14) and unknown extended opcode are skipped', () => {
    const r = rows(unit({
      version: 3, opcodeBase: 14, stdLengths: [...STD, 2], files: [['a.c', 0]],
      program: [
        ...op.setAddress(0x3000n),
        13, 0x80, 0x01, 0x05, // opcode 13: two ULEB operands (128, 5)
        0, 4, 0x80, 0xaa, 0xbb, 0xcc, // extended opcode 0x80 with 3 bytes
        ...op.copy, 20, // special opcode 20: adjusted 6 -> address += 0, line += -5 + 6
        ...op.endSequence,
      ],
    }));
    assert.deepEqual(r.map((x) => [x.a, x.line]), [[0x3000n, 1], [0x3000n, 2], [0x3000n, 2]]);
  });

  test('DW_LNE_define_file (DWARF 2-4) adds a file', () => {
    const r = rows(unit({
      version: 3, dirs: ['/usr/include'], files: [['a.c', 0]],
      program: [0, ...uleb(1 + 'gen.c'.length + 1 + 3), 3, ...str('gen.c'), 1, 0, 0,
        ...op.setAddress(0x10n), ...op.setFile(2), ...op.copy, ...op.endSequence],
    }));
    assert.equal(r[0].file, '/usr/include/gen.c');
  });

  test('64-bit DWARF v3 unit followed by a 32-bit unit', () => {
    const a = unit({ version: 3, dwarf64: true, files: [['one.c', 0]], program: [...op.setAddress(0x100n), ...op.copy, ...op.endSequence] });
    const b = unit({ version: 4, files: [['two.c', 0]], program: [...op.setAddress(0x200n), ...op.copy, ...op.endSequence] });
    const p = parseDebugLineUnits({ line: new Uint8Array([...a, ...b]) }, { little: true, file: 'x' });
    assert.deepEqual(p.units.map((u) => [u.offset, u.offsetSize, u.version]), [[0, 8, 3], [a.length, 4, 4]]);
    assert.deepEqual(p.rows.map((r) => [Number(r.address), r.file, r.unit]), [[0x100, 'one.c', 0], [0x100, 'one.c', 0], [0x200, 'two.c', a.length], [0x200, 'two.c', a.length]]);
  });

  test('DWARF 5 entry formats: string, line_strp, strp, udata, data1/2/4/8, data16 MD5, block', () => {
    const strSec = new Uint8Array([0, ...str('/src')]); // .debug_str: "/src" at 1
    const lineStr = new Uint8Array([...str('x'), ...str('lib')]); // .debug_line_str: "lib" at 2
    const DW = { string: 0x08, line_strp: 0x1f, strp: 0x0e, udata: 0x0f, data1: 0x0b, data2: 0x05, data4: 0x06, data8: 0x07, data16: 0x1e, block: 0x09 };
    const dirs = [
      2, 1, DW.strp, ...uleb(0x2001), DW.block, // format: path strp, vendor block
      2, // two directories
      ...le(1n, 4), 2, 0xaa, 0xbb, // "/src", block len 2
      ...le(0n, 4), 0, // "" (relative: joined with dir 0), empty block
    ];
    const files = [
      5, 1, DW.line_strp, 2, DW.udata, 5, DW.data16, 3, DW.data4, 4, DW.data8, // path, dir, MD5, timestamp, size
      3,
      ...le(2n, 4), ...uleb(0), ...new Array(16).fill(0x11), ...le(7n, 4), ...le(9n, 8), // "lib" in dir 0
      ...le(0n, 4), ...uleb(1), ...new Array(16).fill(0x22), ...le(0n, 4), ...le(0n, 8), // "x" in dir 1
      ...le(0n, 4), ...uleb(0), ...new Array(16).fill(0x33), ...le(0n, 4), ...le(0n, 8),
    ];
    const r1 = rows(unit({ version: 5, v5Tables: [...dirs, ...files], program: [...op.setAddress(0x40n), ...op.copy, ...op.setFile(1), ...op.copy, ...op.endSequence] }), { str: strSec, lineStr });
    assert.deepEqual(r1.map((x) => x.file), ['/src/x', '/src/x', '/src/x']);
    // file 1 is "x" in directory 1 (""), directory 1 joined with directory 0
    const r0 = rows(unit({ version: 5, v5Tables: [...dirs, ...files], program: [...op.setAddress(0x40n), ...op.setFile(0), ...op.copy, ...op.endSequence] }), { str: strSec, lineStr });
    assert.equal(r0[0].file, '/src/lib');

    const inline = [
      1, 1, DW.string, 1, ...str('/abs'),
      2, 1, DW.string, 2, DW.data2, 2, ...str('f.c'), ...le(0n, 2), ...str('/elsewhere/g.c'), ...le(0n, 2),
    ];
    const r2 = rows(unit({ version: 5, v5Tables: inline, program: [...op.setAddress(0x40n), ...op.setFile(0), ...op.copy, ...op.setFile(1), ...op.copy, ...op.endSequence] }));
    assert.deepEqual(r2.map((x) => x.file).slice(0, 2), ['/abs/f.c', '/elsewhere/g.c']);
    const data1 = [1, 1, DW.string, 2, ...str('/d'), ...str('sub'), 2, 1, DW.string, 2, DW.data1, 1, ...str('h.c'), 1];
    assert.equal(rows(unit({ version: 5, v5Tables: data1, program: [...op.setAddress(1n), ...op.setFile(0), ...op.copy, ...op.endSequence] }))[0].file, '/d/sub/h.c');
  });

  test('big-endian unit', () => {
    const r = rows(unit({
      version: 4, little: false, files: [['be.c', 0]],
      program: [...op.setAddress(0x10000000n, 4, false), ...op.copy, ...op.fixedAdvancePc(0x0102, false), ...op.copy, ...op.endSequence],
    }), { little: false });
    assert.deepEqual(r.map((x) => x.a), [0x10000000n, 0x10000102n, 0x10000102n]);
  });

  const bad = (bytes: number[], pattern: RegExp) => assert.throws(
    () => parseDebugLineUnits({ line: new Uint8Array(bytes) }, { little: true, file: 'bad.elf' }),
    (e: unknown) => e instanceof ImageError && e.file === 'bad.elf' && pattern.test(e.message) && !e.message.includes('\n'));

  test('malformed units: errors name the unit offset and the problem', () => {
    const good = unit({ version: 4, files: [['a.c', 0]], program: [...op.setAddress(0x10n), ...op.copy, ...op.endSequence] });
    bad([...good, 0xff, 0x00, 0x00, 0x00], new RegExp(`unit at offset 0x${good.length.toString(16)}: unit length 0xff runs past the end`));
    bad([0xf0, 0xff, 0xff, 0xff], /reserved unit length 0xfffffff0/);
    bad(unit({ version: 6, v5Tables: [], program: [] }), /unsupported version 6 \(2-5 supported\)/);
    bad(unit({ version: 4, lineRange: 0, files: [], program: [] }), /line_range is 0/);
    const trunc = unit({ version: 4, files: [['a.c', 0]], program: [0, 9, 2, 1, 2, 3] });
    bad(trunc, /extended opcode at 0x[0-9a-f]+ runs past the unit/);
    const noStr = [1, 1, 0x0e, 1, 0, 0, 0, 0, 0, 0];
    bad(unit({ version: 5, v5Tables: noStr, program: [] }), /\.debug_str reference but the section is missing/);
  });
});
