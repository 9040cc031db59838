/**
 * x86_64 control flow: jcc (all 16 conditions after cmp), jmp rel/indirect
 * (jump tables through memory), call/ret, ret imm16, loop, jrcxz.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, getReg, setReg, CODE, DATA, STACK_TOP } from '../../fixtures/x86/harness';
import { CC_NAMES } from '../../../emulator/arch/x86_64/table';

function condHolds(cc: string, a: bigint, b: bigint): boolean {
  const ua = BigInt.asUintN(32, a), ub = BigInt.asUintN(32, b);
  const sa = BigInt.asIntN(32, a), sb = BigInt.asIntN(32, b);
  const r = BigInt.asUintN(32, a - b);
  const sf = (r >> 31n) === 1n, zf = r === 0n, cf = ua < ub;
  const of = ((sa - sb) !== BigInt.asIntN(32, sa - sb));
  let pf = true;
  for (let k = 0n; k < 8n; k++) if ((r >> k) & 1n) pf = !pf;
  const base: Record<string, boolean> = {
    o: of, b: cf, e: zf, be: cf || zf, s: sf, p: pf, l: sf !== of, le: zf || sf !== of,
  };
  const neg = cc.startsWith('n') ? cc.slice(1) : null;
  const alias: Record<string, string> = { ae: 'b', a: 'be', ge: 'l', g: 'le' };
  if (neg) return !base[neg];
  if (alias[cc]) return !base[alias[cc]];
  return base[cc];
}

describe('x86 jcc', () => {
  const pairs: [bigint, bigint][] = [[1n, 2n], [2n, 1n], [5n, 5n], [0x80000000n, 1n], [0x7fffffffn, 0xffffffffn], [0n, 0x80000000n]];
  for (let cc = 0; cc < 16; cc++) {
    test(`j${CC_NAMES[cc]} (short and near) after cmp`, () => {
      for (const [a, b] of pairs) {
        // cmp eax, ecx ; jcc +5 ; mov edx, 1 ; hlt   |  near form: 0f 8x rel32
        for (const form of ['short', 'near']) {
          const jcc = form === 'short' ? `${(0x70 + cc).toString(16)} 05` : `0f ${(0x80 + cc).toString(16)} 05 00 00 00`;
          const { cpu } = machine(`39 c8 ${jcc} ba 01 00 00 00 f4`);
          setReg(cpu, 'rax', a); setReg(cpu, 'rcx', b);
          cpu.run(10);
          const taken = getReg(cpu, 'rdx') === 0n;
          assert.equal(taken, condHolds(CC_NAMES[cc], a, b), `j${CC_NAMES[cc]} ${form} ${a} vs ${b}`);
        }
      }
    });
  }
});

describe('x86 calls and jumps', () => {
  test('call rel32 / ret pushes and pops the return address', () => {
    // call +6 ; hlt ; ... ; target: mov eax, 7 ; ret
    const { cpu } = machine('e8 01 00 00 00 f4 b8 07 00 00 00 c3');
    let r = cpu.run(2);
    assert.equal(getReg(cpu, 'rsp'), BigInt(STACK_TOP - 8));
    r = cpu.run(10);
    assert.equal(r.trap?.kind, 'halt');
    assert.equal(getReg(cpu, 'rax'), 7n);
    assert.equal(getReg(cpu, 'rsp'), BigInt(STACK_TOP));
  });
  test('ret imm16 releases arguments', () => {
    const { cpu } = machine('e8 01 00 00 00 f4 c2 10 00');
    cpu.run(10);
    assert.equal(getReg(cpu, 'rsp'), BigInt(STACK_TOP + 0x10));
  });
  test('jump table: jmp qword ptr [8*rax + table]', () => {
    // jmp [8*rax + DATA] ; case0: mov ebx,10 ; hlt ; case1: mov ebx,11 ; hlt
    const { cpu, mem } = machine('ff 24 c5 00 00 60 00 bb 0a 00 00 00 f4 bb 0b 00 00 00 f4');
    mem.write32(DATA, CODE + 7); mem.write32(DATA + 8, CODE + 13);
    setReg(cpu, 'rax', 1n);
    cpu.run(10);
    assert.equal(getReg(cpu, 'rbx'), 11n);
  });
  test('indirect call through a register and a non-canonical target faults (#GP)', () => {
    const { cpu } = machine('ff d0 f4');
    setReg(cpu, 'rax', 0x8000000000000000n);
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'generalProtection');
    assert.equal(r.trap?.pc, BigInt(CODE));
    assert.equal(getReg(cpu, 'rsp'), BigInt(STACK_TOP), 'nothing pushed');
  });
  test('loop and jrcxz', () => {
    // mov ecx, 5 ; l: inc eax ; loop l ; jrcxz +1 ; hlt ; inc ebx ; hlt
    const { cpu } = machine('b9 05 00 00 00 ff c0 e2 fc e3 01 f4 ff c3 f4');
    cpu.run(100);
    assert.equal(getReg(cpu, 'rax'), 5n);
    assert.equal(getReg(cpu, 'rcx'), 0n);
    assert.equal(getReg(cpu, 'rbx'), 1n);
  });
});
