/**
 * x86_64 data movement: mov forms and sizes, movabs, movzx/movsx/movsxd,
 * lea (incl. exactness with full 64-bit registers), xchg, cbw family,
 * push/pop, bswap, cmovcc, setcc, leave/enter, fs/gs segment bases.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, getReg, setReg, DATA, STACK_TOP } from '../../fixtures/x86/harness';

describe('x86 mov', () => {
  test('sizes: 32-bit writes zero-extend, 8/16-bit writes merge', () => {
    // mov rax,-1 ; mov eax, 5 ; mov rbx,-1 ; mov bx, 0x1234 ; mov rcx,-1 ; mov cl, 0 ; mov ch, 0x77
    const { cpu } = machine('48 c7 c0 ff ff ff ff b8 05 00 00 00 48 c7 c3 ff ff ff ff 66 bb 34 12 48 c7 c1 ff ff ff ff b1 00 b5 77 f4');
    cpu.run(20);
    assert.equal(getReg(cpu, 'rax'), 5n);
    assert.equal(getReg(cpu, 'rbx'), 0xffffffffffff1234n);
    assert.equal(getReg(cpu, 'rcx'), 0xffffffffffff7700n);
  });
  test('movabs and mov r64, imm32 sign extension', () => {
    // movabs r12, 0x1122334455667788 ; mov rdx, -2 (c7)
    const { cpu } = machine('49 bc 88 77 66 55 44 33 22 11 48 c7 c2 fe ff ff ff f4');
    cpu.run(10);
    assert.equal(getReg(cpu, 'r12'), 0x1122334455667788n);
    assert.equal(getReg(cpu, 'rdx'), 0xfffffffffffffffen);
  });
  test('memory loads/stores of every size', () => {
    // mov qword ptr [rdi], rsi ; mov eax, dword ptr [rdi+4] ; movzx ecx, byte ptr [rdi+7] ; movsx rdx, word ptr [rdi+6] ; movsxd r8, dword ptr [rdi+4]
    const { cpu, mem } = machine('48 89 37 8b 47 04 0f b6 4f 07 48 0f bf 57 06 4c 63 47 04 f4');
    setReg(cpu, 'rdi', BigInt(DATA)); setReg(cpu, 'rsi', 0x8123456789abcdefn);
    cpu.run(10);
    assert.equal(mem.read32(DATA), 0x89abcdef);
    assert.equal(getReg(cpu, 'rax'), 0x81234567n);
    assert.equal(getReg(cpu, 'rcx'), 0x81n);
    assert.equal(getReg(cpu, 'rdx'), 0xffffffffffff8123n);
    assert.equal(getReg(cpu, 'r8'), 0xffffffff81234567n);
  });
  test('lea is exact for full 64-bit register values', () => {
    // lea rax, [rsi + 8*rdx + 0x10] ; lea ecx, [rsi + rdx - 1]
    const { cpu } = machine('48 8d 44 d6 10 8d 4c 16 ff f4');
    setReg(cpu, 'rsi', 0x9e3779b97f4a7c15n); setReg(cpu, 'rdx', 0x0000123456789abdn);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), BigInt.asUintN(64, 0x9e3779b97f4a7c15n + 8n * 0x0000123456789abdn + 0x10n));
    assert.equal(getReg(cpu, 'rcx'), BigInt.asUintN(32, 0x9e3779b97f4a7c15n + 0x0000123456789abdn - 1n));
  });
  test('lea with mid-sized values (bits 47..52) does not round', () => {
    const { cpu } = machine('48 8d 04 ce f4'); // lea rax, [rsi + 8*rcx]
    setReg(cpu, 'rsi', 0x000fffffffffffffn); setReg(cpu, 'rcx', 0x0007ffffffffffffn);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 0x000fffffffffffffn + 8n * 0x0007ffffffffffffn);
  });
  test('xchg, bswap, cbw family', () => {
    // xchg rax, rbx (48 93) ; bswap ecx ; bswap rdx ; cdqe ; cqo
    const { cpu } = machine('48 93 0f c9 48 0f ca 48 98 48 99 f4');
    setReg(cpu, 'rax', 1n); setReg(cpu, 'rbx', 0x80000000n); setReg(cpu, 'rcx', 0x11223344n); setReg(cpu, 'rdx', 0x0102030405060708n);
    cpu.run(3);
    assert.equal(getReg(cpu, 'rbx'), 1n);
    assert.equal(getReg(cpu, 'rcx'), 0x44332211n);
    assert.equal(getReg(cpu, 'rdx'), 0x0807060504030201n);
    cpu.run(2);
    assert.equal(getReg(cpu, 'rax'), 0xffffffff80000000n);
    assert.equal(getReg(cpu, 'rdx'), 0xffffffffffffffffn);
  });
  test('push/pop, cmov, setcc', () => {
    // push 0x-5 (6a fb) ; pop rcx ; cmp ecx, 0 ; cmovl edx, ecx ; setg al ; setl bl
    const { cpu } = machine('6a fb 59 83 f9 00 0f 4c d1 0f 9f c0 0f 9c c3 f4');
    setReg(cpu, 'rdx', 0xffffffff00000009n); setReg(cpu, 'rax', 0x100n); setReg(cpu, 'rbx', 0n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rcx'), 0xfffffffffffffffbn);
    assert.equal(getReg(cpu, 'rdx'), 0xfffffffbn);
    assert.equal(getReg(cpu, 'rax'), 0x100n);
    assert.equal(getReg(cpu, 'rbx'), 1n);
    assert.equal(getReg(cpu, 'rsp'), BigInt(STACK_TOP));
  });
  test('cmov with a false condition still zero-extends a 32-bit destination', () => {
    const { cpu } = machine('31 c0 0f 45 d1 f4'); // xor eax,eax ; cmovne edx, ecx
    setReg(cpu, 'rdx', 0xffffffff00000009n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rdx'), 9n);
  });
  test('enter/leave build and tear down a frame', () => {
    // push rbp ; mov rbp, rsp ; enter 0x20, 0 ; leave ; pop rbp
    const { cpu } = machine('55 48 89 e5 c8 20 00 00 c9 5d f4');
    setReg(cpu, 'rbp', 0x1234n);
    cpu.run(3);
    assert.equal(getReg(cpu, 'rbp'), BigInt(STACK_TOP - 16));
    assert.equal(getReg(cpu, 'rsp'), BigInt(STACK_TOP - 16 - 0x20));
    cpu.run(2);
    assert.equal(getReg(cpu, 'rbp'), 0x1234n);
    assert.equal(getReg(cpu, 'rsp'), BigInt(STACK_TOP));
  });
  test('fs/gs segment overrides add the base', () => {
    // mov rax, qword ptr fs:[0x28] ; mov dword ptr gs:[rdi], 7
    const { cpu, mem } = machine('64 48 8b 04 25 28 00 00 00 65 c7 07 07 00 00 00 f4');
    cpu.fsBase = DATA; cpu.gsBase = DATA + 0x100;
    setReg(cpu, 'rdi', 8n);
    mem.write32(DATA + 0x28, 0xdeadbeef);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 0xdeadbeefn);
    assert.equal(mem.read32(DATA + 0x108), 7);
  });
});

describe('x86 xlat', () => {
  test('xlatb looks up al in the table at rbx', () => {
    const { cpu, mem } = machine('d7 f4');
    mem.writeBytes(DATA, Uint8Array.from([10, 11, 12, 13]));
    setReg(cpu, 'rbx', BigInt(DATA)); setReg(cpu, 'rax', 0x1202n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 0x120cn);
  });
});

describe('x86 sign extension of the accumulator', () => {
  test('cbw / cwde / cdqe and cwd / cdq / cqo', () => {
    // mov eax, 0x80 ; cbw ; cwde ; mov r8... : check each step
    const { cpu } = machine('b8 80 00 00 00 66 98 98 48 98 66 99 99 48 99 f4');
    setReg(cpu, 'rdx', 0x1111111111111111n);
    cpu.run(2);
    assert.equal(getReg(cpu, 'rax'), 0xff80n);
    cpu.run(1);
    assert.equal(getReg(cpu, 'rax'), 0xffffff80n);
    cpu.run(1);
    assert.equal(getReg(cpu, 'rax'), 0xffffffffffffff80n);
    cpu.run(1);
    assert.equal(getReg(cpu, 'rdx'), 0x111111111111ffffn);
    cpu.run(1);
    assert.equal(getReg(cpu, 'rdx'), 0xffffffffn);
    cpu.run(1);
    assert.equal(getReg(cpu, 'rdx'), 0xffffffffffffffffn);
  });
  test('enter with a nesting level copies the frame pointer chain', () => {
    // push rbp; mov rbp, rsp ; enter 0x10, 2 ; hlt
    const { cpu, mem } = machine('55 48 89 e5 c8 10 00 02 f4');
    setReg(cpu, 'rbp', 0x1234n);
    cpu.run(3);
    const frame = BigInt(STACK_TOP - 16);
    assert.equal(getReg(cpu, 'rbp'), frame);
    // [frame] = old rbp, [frame-8] = copy of [old rbp - 8], [frame-16] = frame itself
    assert.equal(mem.read32(Number(frame)), STACK_TOP - 8);
    assert.equal(BigInt(mem.read32(Number(frame) - 16)), frame);
    assert.equal(getReg(cpu, 'rsp'), frame - 16n - 0x10n);
  });
});
