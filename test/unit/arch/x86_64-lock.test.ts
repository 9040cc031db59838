/**
 * x86_64 LOCK prefix: lockable instructions with a memory destination run;
 * every other LOCK use raises #UD at the instruction (it does not retire and
 * changes nothing), as hardware does (the hardware cases are in
 * x86_64-addr32.test.ts). cmpxchg16b alignment (#GP).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, getReg, setReg, hexBytes, CODE, DATA } from '../../fixtures/x86/harness';
import { x86_64 } from '../../../emulator/arch/x86_64/index';
import { OPS } from '../../../emulator/arch/x86_64/table';

/** lockable per the SDM's LOCK page (memory destination forms) */
const LOCKABLE = new Set(['add', 'adc', 'and', 'btc', 'btr', 'bts', 'cmpxchg', 'cmpxchg8b', 'dec', 'inc', 'neg', 'not', 'or', 'sbb', 'sub', 'xadd', 'xchg', 'xor']);

describe('x86 LOCK prefix', () => {
  test('the table marks exactly the SDM list as lockable, only on forms with a memory destination', () => {
    const marked = new Set(OPS.filter(o => o.lockable).map(o => o.mnem));
    assert.deepEqual([...marked].sort(), [...LOCKABLE].sort());
    for (const o of OPS.filter(d => d.lockable)) {
      assert.ok(o.ops.length > 0 && (o.ops[0].k === 'E' || o.ops[0].k === 'M'), `${o.code} ${o.mnem}: first operand ${o.ops[0]?.k}`);
    }
  });

  for (const [bytes, what] of [
    ['f0 01 c0', 'lock add eax, eax'],
    ['f0 90', 'lock nop'],
    ['f0 89 0b', 'lock mov [rbx], ecx'],
    ['f0 48 0f c7 c9', 'lock cmpxchg16b with a register operand'],
    ['f0 0f a3 0b', 'lock bt [rbx], ecx'],
    ['f0 38 0b', 'lock cmp [rbx], cl'],
  ] as const) {
    test(`${what} (${bytes}) raises #UD with pc at the instruction, nothing retired or changed`, () => {
      // mov ecx, 5 ; <locked insn> ; hlt
      const { cpu, mem } = machine(`b9 05 00 00 00 ${bytes} f4`);
      setReg(cpu, 'rbx', BigInt(DATA));
      mem.write32(DATA, 0x1234);
      const flags = cpu.getRflags();
      const r = cpu.run(10);
      assert.equal(r.trap?.kind, 'undefined');
      assert.equal(r.trap?.pc, BigInt(CODE + 5));
      assert.equal(r.executed, 1);
      assert.equal(cpu.getPc(), BigInt(CODE + 5));
      assert.equal(getReg(cpu, 'rax'), 0n);
      assert.equal(getReg(cpu, 'rcx'), 5n);
      assert.equal(mem.read32(DATA), 0x1234);
      assert.equal(cpu.getRflags(), flags);
    });
  }

  test('lock xadd / lock cmpxchg / xchg on memory run (the spin-lock idioms)', () => {
    // lock xadd [rbx], ecx ; lock cmpxchg [rbx+8], edx ; xchg [rbx+16], esi ; hlt
    const { cpu, mem } = machine('f0 0f c1 0b f0 0f b1 53 08 87 73 10 f4');
    setReg(cpu, 'rbx', BigInt(DATA));
    mem.write32(DATA, 10); mem.write32(DATA + 8, 0); mem.write32(DATA + 16, 7);
    setReg(cpu, 'rcx', 1n); setReg(cpu, 'rax', 0n); setReg(cpu, 'rdx', 1n); setReg(cpu, 'rsi', 9n);
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'halt');
    assert.equal(mem.read32(DATA), 11);
    assert.equal(getReg(cpu, 'rcx'), 10n);
    assert.equal(mem.read32(DATA + 8), 1);
    assert.equal(mem.read32(DATA + 16), 9);
    assert.equal(getReg(cpu, 'rsi'), 7n);
  });

  test('disassembly keeps the prefix of both valid and #UD forms (as llvm prints them)', () => {
    const dis = (h: string): string => {
      const d = x86_64.decodeBytes(hexBytes(h), BigInt(CODE));
      assert.ok(d, h);
      return `${d.mnemonic} ${d.operands}`.trim();
    };
    assert.equal(dis('f0 01 c0'), 'lock add eax, eax');
    assert.equal(dis('f0 0f c1 0b'), 'lock xadd dword ptr [rbx], ecx');
    assert.equal(dis('f0 0f c7 0f'), 'lock cmpxchg8b qword ptr [rdi]');
    assert.equal(dis('f0 48 0f c7 0f'), 'lock cmpxchg16b xmmword ptr [rdi]');
  });
});

describe('x86 cmpxchg8b / cmpxchg16b', () => {
  test('cmpxchg16b on an operand that is not 16-byte aligned is #GP at the instruction', () => {
    const { cpu } = machine('48 0f c7 0b f4');
    setReg(cpu, 'rbx', BigInt(DATA + 8));
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'generalProtection');
    assert.equal(r.trap?.pc, BigInt(CODE));
  });
  test('cmpxchg8b keeps CF/SF/OF (only ZF is written)', () => {
    // stc ; cmpxchg8b [rbx] (not equal) ; hlt
    const { cpu, mem } = machine('f9 0f c7 0b f4');
    setReg(cpu, 'rbx', BigInt(DATA));
    mem.write32(DATA, 1); mem.write32(DATA + 4, 2);
    cpu.run(10);
    assert.equal(cpu.getRflags() & 0x41, 0x01);
    assert.equal(getReg(cpu, 'rax'), 1n);
    assert.equal(getReg(cpu, 'rdx'), 2n);
  });
});
