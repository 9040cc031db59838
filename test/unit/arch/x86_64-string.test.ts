/**
 * x86_64 string instructions: movs stos lods cmps scas, rep/repe/repne, DF,
 * and restartable faults in the middle of a rep.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, getReg, setReg, DATA, CODE } from '../../fixtures/x86/harness';
import { ZF } from '../../../emulator/arch/x86_64/flags';

describe('x86 string instructions', () => {
  test('rep movsb copies and advances rsi/rdi, rcx reaches 0', () => {
    const { cpu, mem } = machine('f3 a4 f4');
    mem.writeBytes(DATA, Uint8Array.from([1, 2, 3, 4, 5]));
    setReg(cpu, 'rsi', BigInt(DATA)); setReg(cpu, 'rdi', BigInt(DATA + 0x100)); setReg(cpu, 'rcx', 5n);
    cpu.run(10);
    assert.deepEqual([...mem.readBytes(DATA + 0x100, 5)], [1, 2, 3, 4, 5]);
    assert.equal(getReg(cpu, 'rcx'), 0n);
    assert.equal(getReg(cpu, 'rsi'), BigInt(DATA + 5));
    assert.equal(getReg(cpu, 'rdi'), BigInt(DATA + 0x105));
  });
  test('rep stosq with DF=1 goes downwards', () => {
    // std ; rep stosq ; cld
    const { cpu, mem } = machine('fd f3 48 ab fc f4');
    setReg(cpu, 'rdi', BigInt(DATA + 0x10)); setReg(cpu, 'rcx', 3n); setReg(cpu, 'rax', 0x0102030405060708n);
    cpu.run(10);
    assert.equal(mem.read32(DATA), 0x05060708);
    assert.equal(mem.read32(DATA + 0x14), 0x01020304);
    assert.equal(getReg(cpu, 'rdi'), BigInt(DATA - 8));
    assert.equal(cpu.df, false);
  });
  test('lodsd / stosw without rep move once', () => {
    const { cpu, mem } = machine('ad 66 ab f4');
    mem.write32(DATA, 0xaabbccdd);
    setReg(cpu, 'rsi', BigInt(DATA)); setReg(cpu, 'rdi', BigInt(DATA + 0x20)); setReg(cpu, 'rcx', 99n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 0xaabbccddn);
    assert.equal(mem.read16(DATA + 0x20), 0xccdd);
    assert.equal(getReg(cpu, 'rcx'), 99n);
  });
  test('repne scasb finds a byte (strlen idiom)', () => {
    // mov rcx, -1 ; xor eax, eax ; repne scasb ; not rcx ; dec rcx
    const { cpu, mem } = machine('48 c7 c1 ff ff ff ff 31 c0 f2 ae 48 f7 d1 48 ff c9 f4');
    mem.writeBytes(DATA, new TextEncoder().encode('hello\0'));
    setReg(cpu, 'rdi', BigInt(DATA));
    cpu.run(10);
    assert.equal(getReg(cpu, 'rcx'), 5n);
  });
  test('repe cmpsb stops at the first difference', () => {
    const { cpu, mem } = machine('f3 a6 f4');
    mem.writeBytes(DATA, new TextEncoder().encode('abcdef'));
    mem.writeBytes(DATA + 0x10, new TextEncoder().encode('abcxef'));
    setReg(cpu, 'rsi', BigInt(DATA)); setReg(cpu, 'rdi', BigInt(DATA + 0x10)); setReg(cpu, 'rcx', 6n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rcx'), 2n);
    assert.equal(cpu.getRflags() & ZF, 0);
    assert.equal(getReg(cpu, 'rsi'), BigInt(DATA + 4));
  });
  test('a fault in the middle of rep movsb leaves progress in rcx/rsi/rdi and pc at the insn', () => {
    const { cpu } = machine('f3 a4 f4');
    // source runs off the end of the data region after 4 bytes
    setReg(cpu, 'rsi', BigInt(DATA + 0x10000 - 4)); setReg(cpu, 'rdi', BigInt(DATA)); setReg(cpu, 'rcx', 10n);
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'pageFault');
    assert.equal(r.trap?.pc, BigInt(CODE));
    if (r.trap?.kind === 'pageFault') {
      assert.equal(r.trap.addr, BigInt(DATA + 0x10000));
      assert.equal(r.trap.access, 'read');
      assert.equal(r.trap.present, false);
    }
    assert.equal(getReg(cpu, 'rcx'), 6n);
  });
});
