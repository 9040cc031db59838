/**
 * riscv64 C extension units: every compressed form clang and gcc emit
 * expands to exactly the 32-bit instruction llvm-mc assembles for its
 * expansion (both sides assembled by llvm-mc: `-mattr=+c` for the 16-bit
 * form, without +c for the expansion), decodes with length 2 and executes
 * like its expansion; reserved and F/D encodings are illegal; mixed streams
 * decode from any 2-byte-aligned address.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { expandRvc } from '../../../emulator/arch/riscv64/rvc';
import { machine, run, get, gets, set, riscv64, hexBytes, CODE, DATA, STACK_TOP } from './riscv64-harness';

/** [compressed assembly, 16-bit encoding, expansion, its 32-bit encoding] */
const FORMS: [string, number, string, number][] = [
  ['c.addi4spn a0, sp, 1020', 0x1fe8, 'addi a0, sp, 1020', 0x3fc10513],
  ['c.addi4spn s1, sp, 4', 0x44, 'addi s1, sp, 4', 0x410493],
  ['c.lw a5, 124(a4)', 0x5f7c, 'lw a5, 124(a4)', 0x7c72783],
  ['c.ld s0, 248(a5)', 0x7fe0, 'ld s0, 248(a5)', 0xf87b403],
  ['c.sw a5, 64(a4)', 0xc33c, 'sw a5, 64(a4)', 0x4f72023],
  ['c.sd s1, 8(a0)', 0xe504, 'sd s1, 8(a0)', 0x953423],
  ['c.nop', 0x1, 'addi zero, zero, 0', 0x13],
  ['c.addi a0, -32', 0x1501, 'addi a0, a0, -32', 0xfe050513],
  ['c.addi t6, 31', 0xffd, 'addi t6, t6, 31', 0x1ff8f93],
  ['c.addiw a0, -1', 0x357d, 'addiw a0, a0, -1', 0xfff5051b],
  ['c.addiw s2, 0', 0x2901, 'addiw s2, s2, 0', 0x9091b],
  ['c.li a7, 11', 0x48ad, 'addi a7, zero, 11', 0xb00893],
  ['c.li t0, -32', 0x5281, 'addi t0, zero, -32', 0xfe000293],
  ['c.addi16sp sp, -512', 0x7101, 'addi sp, sp, -512', 0xe0010113],
  ['c.addi16sp sp, 496', 0x617d, 'addi sp, sp, 496', 0x1f010113],
  ['c.lui a0, 1', 0x6505, 'lui a0, 1', 0x1537],
  ['c.lui s11, 0xfffe0', 0x7d81, 'lui s11, 0xfffe0', 0xfffe0db7],
  ['c.srli a0, 1', 0x8105, 'srli a0, a0, 1', 0x155513],
  ['c.srli s1, 63', 0x90fd, 'srli s1, s1, 63', 0x3f4d493],
  ['c.srai a5, 32', 0x9781, 'srai a5, a5, 32', 0x4207d793],
  ['c.andi a3, -1', 0x9afd, 'andi a3, a3, -1', 0xfff6f693],
  ['c.andi a3, 15', 0x8abd, 'andi a3, a3, 15', 0xf6f693],
  ['c.sub a0, a1', 0x8d0d, 'sub a0, a0, a1', 0x40b50533],
  ['c.xor s0, a5', 0x8c3d, 'xor s0, s0, a5', 0xf44433],
  ['c.or a2, a3', 0x8e55, 'or a2, a2, a3', 0xd66633],
  ['c.and a4, s1', 0x8f65, 'and a4, a4, s1', 0x977733],
  ['c.subw a0, a1', 0x9d0d, 'subw a0, a0, a1', 0x40b5053b],
  ['c.addw a5, a4', 0x9fb9, 'addw a5, a5, a4', 0xe787bb],
  ['c.j 2046', 0xaffd, 'jal zero, 2046', 0x7fe0006f],
  ['c.j -2048', 0xb001, 'jal zero, -2048', 0x801ff06f],
  ['c.beqz a0, 254', 0xcd7d, 'beq a0, zero, 254', 0xe050f63],
  ['c.bnez s1, -256', 0xf081, 'bne s1, zero, -256', 0xf00490e3],
  ['c.slli a0, 1', 0x506, 'slli a0, a0, 1', 0x151513],
  ['c.slli t6, 63', 0x1ffe, 'slli t6, t6, 63', 0x3ff9f93],
  ['c.lwsp ra, 252(sp)', 0x50fe, 'lw ra, 252(sp)', 0xfc12083],
  ['c.ldsp s0, 504(sp)', 0x747e, 'ld s0, 504(sp)', 0x1f813403],
  ['c.jr ra', 0x8082, 'jalr zero, 0(ra)', 0x8067],
  ['c.jr t0', 0x8282, 'jalr zero, 0(t0)', 0x28067],
  ['c.mv a0, s2', 0x854a, 'add a0, zero, s2', 0x1200533],
  ['c.ebreak', 0x9002, 'ebreak', 0x100073],
  ['c.jalr a5', 0x9782, 'jalr ra, 0(a5)', 0x780e7],
  ['c.add s0, t6', 0x947e, 'add s0, s0, t6', 0x1f40433],
  ['c.swsp a5, 252(sp)', 0xdfbe, 'sw a5, 252(sp)', 0xef12e23],
  ['c.sdsp ra, 504(sp)', 0xff86, 'sd ra, 504(sp)', 0x1e113c23],
  ['c.sdsp zero, 0(sp)', 0xe002, 'sd zero, 0(sp)', 0x13023],
];

const le16 = (h: number): Uint8Array => Uint8Array.of(h & 0xff, h >> 8);
const le32 = (w: number): Uint8Array => Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24);

describe('rv64 RVC expansion', () => {
  for (const [c, h, e, w] of FORMS) {
    test(`${c} -> ${e}`, () => {
      assert.equal(expandRvc(h), w | 0);
      const a = 0xffffffff80000100n;
      const dc = riscv64.decodeBytes(le16(h), a), dw = riscv64.decodeBytes(le32(w), a);
      assert.ok(dc && dw);
      assert.equal(dc.length, 2);
      // llvm-objdump shows c.mv as `mv`; every other form as its expansion
      if (c.startsWith('c.mv ')) assert.equal(`${dc.mnemonic} ${dc.operands}`, `mv ${c.slice(5)}`);
      else assert.equal(`${dc.mnemonic} ${dc.operands}`, `${dw.mnemonic} ${dw.operands}`);
      assert.equal(dc.flow, dw.flow);
      assert.equal(dc.target, dw.target === undefined ? undefined : dw.target);
    });
  }
  test('the forms cover every RV64C instruction without F/D', () => {
    const names = new Set(FORMS.map(f => f[0].split(' ')[0]));
    for (const n of ['c.addi4spn', 'c.lw', 'c.ld', 'c.sw', 'c.sd', 'c.nop', 'c.addi', 'c.addiw', 'c.li', 'c.addi16sp', 'c.lui', 'c.srli',
      'c.srai', 'c.andi', 'c.sub', 'c.xor', 'c.or', 'c.and', 'c.subw', 'c.addw', 'c.j', 'c.beqz', 'c.bnez', 'c.slli', 'c.lwsp', 'c.ldsp',
      'c.jr', 'c.mv', 'c.ebreak', 'c.jalr', 'c.add', 'c.swsp', 'c.sdsp']) assert.ok(names.has(n), n);
  });
  test('reserved encodings are illegal', () => {
    // c.unimp (0), c.addi4spn imm 0, c.addiw x0, c.addi16sp 0, c.lui imm 0, reserved q1 op, c.lwsp x0, c.jr x0, q0 reserved (f3 = 4)
    for (const h of [0x0000, 0x0004, 0x2001, 0x6101, 0x6501, 0x9c41, 0x4002, 0x8002, 0x8000]) {
      assert.equal(expandRvc(h), null, `0x${h.toString(16)}`);
    }
  });
  test('the D loads and stores expand to fld / fsd (llvm-mc encodings)', () => {
    const forms: [string, number, number][] = [
      ['c.fld fs0, 8(a0)', 0x2500, 0x00853407], ['c.fsd fa5, 248(a5)', 0xbffc, 0x0ef7bc27],
      ['c.fldsp fa0, 24(sp)', 0x2562, 0x01813507], ['c.fsdsp fs1, 16(sp)', 0xa826, 0x00913827],
    ];
    for (const [asm, h, w] of forms) assert.equal(expandRvc(h), w | 0, asm);
  });
  test('an illegal compressed instruction stops with undefined and its encoding in stval', () => {
    const { cpu } = machine('00 00');
    const r = run(cpu);
    assert.deepEqual(r.trap, { kind: 'undefined', pc: BigInt(CODE) });
    assert.equal(cpu.getReg(33), 0n); // badaddr = the 16 bits (0)
    const m2 = machine('02 80'); // c.jr x0
    assert.equal(run(m2.cpu).trap?.kind, 'undefined');
    assert.equal(m2.cpu.getReg(33), 0x8002n);
  });
});

describe('rv64 RVC execution', () => {
  test('compressed loads, stores, sp forms and arithmetic', () => {
    // c.sdsp ra,504(sp); c.ldsp s0,504(sp); c.addi16sp sp,-512; c.lui a0,1; c.srai a5,32; c.addiw a0,-1; c.ebreak
    const { cpu, mem } = machine('86 ff 7e 74 01 71 05 65 81 97 7d 35 02 90');
    const sp = STACK_TOP - 1024;
    set(cpu, 'sp', BigInt(sp)); set(cpu, 'ra', 0x1122334455667788n); set(cpu, 'a5', 0x8000000000000000n);
    const r = run(cpu);
    assert.deepEqual(r.trap, { kind: 'breakpoint', pc: BigInt(CODE + 12) });
    assert.equal(mem.read64(sp + 504), 0x1122334455667788n);
    assert.equal(get(cpu, 's0'), 0x1122334455667788n);
    assert.equal(get(cpu, 'sp'), BigInt(sp - 512));
    assert.equal(get(cpu, 'a0'), 0xfffn);
    assert.equal(gets(cpu, 'a5'), -(1n << 31n));
  });
  test('c.jalr links pc + 2; c.jr returns', () => {
    // c.jalr a5; c.ebreak; (target:) c.jr ra
    const { cpu } = machine('82 97 02 90 82 80');
    set(cpu, 'a5', BigInt(CODE + 4));
    const r = run(cpu);
    assert.deepEqual(r.trap, { kind: 'breakpoint', pc: BigInt(CODE + 2) });
    assert.equal(get(cpu, 'ra'), BigInt(CODE + 2));
  });
  test('c.beqz / c.bnez / c.j', () => {
    // c.beqz a0,+6; c.li a1,1; c.ebreak; (+6:) c.bnez a0,-4 (not taken); c.j -6 -> c.ebreak at +4? see offsets below
    // layout: 0 c.beqz a0,6 | 2 c.li a1,1 | 4 c.ebreak | 6 c.bnez a2,-2 | 8 c.j -4
    const { cpu } = machine(`${hex16(0xc119)} ${hex16(0x4585)} 02 90 ${hex16(0xfe7d)} ${hex16(0xbff5)}`);
    set(cpu, 'a2', 0n);
    const r = run(cpu);
    assert.deepEqual(r.trap, { kind: 'breakpoint', pc: BigInt(CODE + 4) });
    assert.equal(get(cpu, 'a1'), 0n, 'c.li was jumped over');
  });
  test('a mixed 2/4-byte stream decodes from any 2-byte-aligned address', () => {
    // c.li a0,1; addi a0,a0,2 (uncompressed); c.addi a0,4; c.ebreak
    const bytes = hexBytes('05 45 13 05 25 00 11 05 02 90');
    const { cpu } = machine('05 45 13 05 25 00 11 05 02 90');
    run(cpu);
    assert.equal(get(cpu, 'a0'), 7n);
    const at = (k: number) => riscv64.decodeBytes(bytes.subarray(k), BigInt(CODE + k));
    assert.deepEqual([0, 2, 6, 8].map(k => at(k)?.length), [2, 4, 2, 2]);
    // from the middle of the addi: its upper half (0x0025) is itself a 2-byte instruction
    assert.equal(at(4)?.length, 2);
    assert.equal(riscv64.decodeBytes(bytes.subarray(1), BigInt(CODE + 1)), null, 'odd address');
  });
  test('c.lw / c.sw / c.ld / c.sd at the top of their offset range', () => {
    // c.sd s1,8(a0); c.ld s0,248(a5); c.ebreak
    const { cpu, mem } = machine('04 e5 e0 7f 02 90');
    set(cpu, 'a0', BigInt(DATA)); set(cpu, 's1', 0xabcdn); set(cpu, 'a5', BigInt(DATA + 0x100));
    mem.write64(DATA + 0x100 + 248, 0x5555n);
    run(cpu);
    assert.equal(mem.read64(DATA + 8), 0xabcdn);
    assert.equal(get(cpu, 's0'), 0x5555n);
  });
});

function hex16(h: number): string { return `${(h & 0xff).toString(16).padStart(2, '0')} ${(h >> 8).toString(16).padStart(2, '0')}`; }
