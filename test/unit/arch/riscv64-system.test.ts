/**
 * riscv64 system and Zicsr units: ecall (S-mode: hypercall, U-mode:
 * syscall, pc after it), ebreak / c.ebreak (pc = the instruction), wfi,
 * illegal instructions (undefined, encoding in badaddr), supervisor CSRs and
 * counters, privilege checks, sret, the inline breakpoint hook, decode-cache
 * invalidation on code writes, context save/restore, pt_regs access.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, run, get, set, riscv64, CODE } from './riscv64-harness';
import { regIndex } from '../../../emulator/arch/types';

describe('rv64 traps', () => {
  test('ecall in S-mode is the hypercall; in U-mode the syscall; pc = next instruction', () => {
    // li a7,11; ecall; ebreak
    const code = '93 08 b0 00 73 00 00 00 73 00 10 00';
    const k = machine(code);
    assert.deepEqual(run(k.cpu).trap, { kind: 'hypercall', pc: BigInt(CODE + 8) });
    assert.equal(k.cpu.getReg(riscv64.abi.hypercall.nr), 11n);
    const u = machine(code, { user: true });
    assert.deepEqual(run(u.cpu).trap, { kind: 'syscall', pc: BigInt(CODE + 8) });
  });
  test('ebreak and c.ebreak report their own address', () => {
    // c.nop; c.ebreak
    const { cpu } = machine('01 00 02 90');
    const r = run(cpu);
    assert.deepEqual(r.trap, { kind: 'breakpoint', pc: BigInt(CODE + 2) });
    assert.equal(r.executed, 2);
    assert.equal(cpu.getPc(), BigInt(CODE + 2));
  });
  test('the inline breakpoint hook takes an ebreak without a trap', () => {
    // c.ebreak; (hook moves the pc to) ebreak at +2... c.ebreak; ebreak
    const { cpu } = machine('02 90 73 00 10 00');
    const seen: number[] = [];
    cpu.inlineBreakpoint = (c, at) => { seen.push(at); if (at !== CODE) return false; c.pc = CODE + 2; return true; };
    const r = run(cpu);
    assert.deepEqual(seen, [CODE, CODE + 2]);
    assert.deepEqual(r.trap, { kind: 'breakpoint', pc: BigInt(CODE + 2) });
  });
  test('wfi halts in S-mode and is illegal in U-mode', () => {
    // wfi; ebreak
    assert.deepEqual(run(machine('73 00 50 10 73 00 10 00').cpu).trap, { kind: 'halt', pc: BigInt(CODE + 4) });
    assert.deepEqual(run(machine('73 00 50 10 73 00 10 00', { user: true }).cpu).trap, { kind: 'undefined', pc: BigInt(CODE) });
  });
  test('an unknown encoding is undefined, with the encoding in badaddr and cause 2', () => {
    const { cpu } = machine('ff ff ff 7f'); // opcode 0x7f: 80-bit+ reserved; 0x7fffffff
    const r = run(cpu);
    assert.deepEqual(r.trap, { kind: 'undefined', pc: BigInt(CODE) });
    assert.equal(r.executed, 0);
    const m2 = machine('53 05 b5 06'); // fadd.q: no Q extension
    assert.equal(run(m2.cpu).trap?.kind, 'undefined');
    assert.equal(m2.cpu.getReg(regIndex(riscv64, 'badaddr')), 0x06b50553n);
    assert.equal(m2.cpu.getReg(regIndex(riscv64, 'cause')), 2n);
    const m3 = machine('53 d5 b5 02'); // fadd.d with the reserved rounding mode 5: illegal when executed
    assert.equal(run(m3.cpu).trap?.kind, 'undefined');
    assert.equal(m3.cpu.getReg(regIndex(riscv64, 'badaddr')), 0x02b5d553n);
  });
});

describe('rv64 Zicsr', () => {
  test('supervisor CSRs read and write; counters read the retired instructions', () => {
    // csrw sscratch,a0; csrr a1,sscratch; csrrs a2,sstatus,a3; csrrc a4,sstatus,a3; csrrwi a5,stvec,8; csrr a6,stvec; rdtime a7; rdcycle s2; ebreak
    const { cpu } = machine('73 10 05 14 f3 25 00 14 73 a6 06 10 73 b7 06 10 f3 57 54 10 73 28 50 10 f3 28 10 c0 73 29 00 c0 73 00 10 00');
    set(cpu, 'a0', 0xdeadbeefcafef00dn); set(cpu, 'a3', 0x2n); // SIE
    run(cpu);
    assert.equal(get(cpu, 'a1'), 0xdeadbeefcafef00dn);
    assert.equal(get(cpu, 'a2') & 0x2n, 0n);
    assert.equal(get(cpu, 'a4') & 0x2n, 0x2n, 'csrrs set SIE');
    assert.equal(get(cpu, 'a2') >> 32n & 3n, 2n, 'UXL = 64-bit');
    assert.equal(get(cpu, 'a6'), 8n);
    assert.equal(get(cpu, 'a7'), 6n, 'time = instructions retired before rdtime');
    assert.equal(get(cpu, 's2'), 7n);
  });
  test('user mode: S-mode CSRs are illegal, counters are readable', () => {
    // csrr a0,sstatus
    const { cpu } = machine('73 25 00 10', { user: true });
    assert.deepEqual(run(cpu).trap, { kind: 'undefined', pc: BigInt(CODE) });
    // rdcycle s2; ebreak
    const u = machine('73 29 00 c0 73 00 10 00', { user: true });
    assert.equal(run(u.cpu).trap?.kind, 'breakpoint');
  });
  test('writing a read-only counter is illegal', () => {
    // csrw cycle,a0
    assert.equal(run(machine('73 10 05 c0').cpu).trap?.kind, 'undefined');
  });
  test('sret returns to sepc in the mode SPP names', () => {
    // csrw sepc,a0; sret  (SPP = 0: to user mode)
    const { cpu } = machine('73 10 15 14 73 00 20 10');
    set(cpu, 'a0', BigInt(CODE + 0x100));
    const r = run(cpu);
    assert.equal(r.trap, null);
    assert.equal(cpu.userMode, true);
    assert.equal(cpu.getPc(), BigInt(CODE + 0x100));
  });
});

describe('rv64 CPU plumbing', () => {
  test('a code write drops the cached decode', () => {
    // li a0,1 (addi a0,zero,1); ebreak
    const { cpu, mem } = machine('13 05 10 00 73 00 10 00');
    run(cpu);
    assert.equal(get(cpu, 'a0'), 1n);
    mem.write32(CODE, 0x00200513); // li a0,2
    cpu.setPc(BigInt(CODE));
    run(cpu);
    assert.equal(get(cpu, 'a0'), 2n);
  });
  test('pt_regs: epc is the pc, x1..x31 by name, status/badaddr/cause/orig_a0', () => {
    const { cpu } = machine('73 00 10 00');
    cpu.setReg(regIndex(riscv64, 'epc'), BigInt(CODE + 4));
    assert.equal(cpu.getPc(), BigInt(CODE + 4));
    cpu.setReg(regIndex(riscv64, 'a0'), 5n);
    assert.equal(get(cpu, 'a0'), 5n);
    cpu.setReg(regIndex(riscv64, 'orig_a0'), 9n);
    assert.equal(cpu.getReg(regIndex(riscv64, 'orig_a0')), 9n);
    assert.throws(() => cpu.getReg(99), /no register index 99/);
  });
  test('saveContext / restoreContext round-trip; a foreign context is refused', () => {
    const { cpu } = machine('73 00 10 00');
    set(cpu, 's11', 0x8000000000000001n);
    const ctx = cpu.saveContext();
    set(cpu, 's11', 0n);
    cpu.restoreContext(ctx);
    assert.equal(get(cpu, 's11'), 0x8000000000000001n);
    assert.throws(() => cpu.restoreContext({ arch: 'x86_64' }), /cannot restore a x86_64 context/);
  });
  test('initThread / initUser', () => {
    const { cpu } = machine('73 00 10 00');
    riscv64.initThread(cpu, BigInt(CODE), 0x7fe00fn, 42n, 0xffffffff80001000n);
    assert.equal(get(cpu, 'sp'), 0x7fe000n);
    assert.equal(get(cpu, 'a0'), 42n);
    assert.equal(get(cpu, 'ra'), 0xffffffff80001000n);
    assert.equal(cpu.userMode, false);
    riscv64.initUser(cpu, BigInt(CODE), 0x7fe000n);
    assert.equal(cpu.userMode, true);
    assert.equal(cpu.getPc(), BigInt(CODE));
  });
  test('decode classifies control flow for kprobes', () => {
    const d = (hex: string) => riscv64.decodeBytes(Uint8Array.from(hex.split(' ').map(x => parseInt(x, 16))), 0xffffffff80000000n);
    assert.equal(d('82 80')?.flow, 'ret');               // ret (c.jr ra)
    assert.equal(d('ef 00 80 00')?.flow, 'call');        // jal ra, 8
    assert.equal(d('6f 00 80 00')?.flow, 'jump');        // j 8
    assert.equal(d('e7 80 e0 12')?.flow, 'indirectCall'); // jalr 302(ra)
    assert.equal(d('63 07 a9 00')?.flow, 'condJump');    // beq s2,a0,14
    assert.equal(d('63 07 a9 00')?.target, 0xffffffff8000000en);
    assert.equal(d('17 25 00 00')?.ipRelative, true);   // auipc
    assert.equal(d('73 00 10 00')?.flow, 'trap');
  });
});

describe('rv64 decode from memory', () => {
  test('decode reads 2 or 4 bytes as the instruction needs; unmapped or truncated is null', () => {
    const { mem } = machine('13 05 10 00 02 90');
    assert.equal(riscv64.decode(mem, BigInt(CODE))?.mnemonic, 'li');
    assert.equal(riscv64.decode(mem, BigInt(CODE + 4))?.mnemonic, 'ebreak');
    assert.equal(riscv64.decode(mem, BigInt(CODE + 4))?.length, 2);
    assert.equal(riscv64.decode(mem, 0x10000n), null);
    mem.write16(CODE + 0x10000 - 2, 0x0513); // first half of a 4-byte addi at the very end of the text region
    assert.equal(riscv64.decode(mem, BigInt(CODE + 0x10000 - 2)), null);
    assert.equal(riscv64.decode(mem, 1n << 63n), null, 'non-canonical');
  });
});
