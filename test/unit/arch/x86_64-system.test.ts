/**
 * x86_64 traps and system instructions: int3, TF single-step, #UD, #PF,
 * #GP, vmcall, syscall, hlt, rdtsc, cpuid, flag instructions; the Cpu
 * interface (pt_regs registers, contexts) and the ArchOps table / registry.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, getReg, setReg, CODE, DATA, STACK_TOP } from '../../fixtures/x86/harness';
import { x86_64 } from '../../../emulator/arch/x86_64/index';
import { archForElfMachine, archByName, supportedArchNames } from '../../../emulator/arch/registry';
import { regIndex } from '../../../emulator/arch/types';
import { CF, ZF, SF, TF } from '../../../emulator/arch/x86_64/flags';
import { Memory, PERM_R, PERM_W, PERM_X } from '../../../emulator/memory/memory';

describe('x86 traps', () => {
  test('int3 reports the address after the int3 and counts as executed', () => {
    const { cpu } = machine('90 cc 90');
    const r = cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'breakpoint', pc: BigInt(CODE + 2) });
    assert.equal(r.executed, 2);
    assert.equal(cpu.getPc(), BigInt(CODE + 2));
  });
  test('TF single-step: trap after each instruction with pc = next', () => {
    const { cpu } = machine('b8 01 00 00 00 ff c0 f4');
    cpu.setRflags(0x2 | TF);
    let r = cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'singleStep', pc: BigInt(CODE + 5) });
    assert.equal(r.executed, 1);
    r = cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'singleStep', pc: BigInt(CODE + 7) });
    assert.equal(getReg(cpu, 'rax'), 2n);
  });
  test('TF: no single-step trap after an instruction that traps itself', () => {
    const { cpu } = machine('cc 90');
    cpu.setRflags(0x2 | TF);
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'breakpoint');
  });
  test('popf setting TF traps after the following instruction', () => {
    // pushf ; or qword ptr [rsp], 0x100 ; popf ; nop ; nop
    const { cpu } = machine('9c 48 81 0c 24 00 01 00 00 9d 90 90 f4');
    const r = cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'singleStep', pc: BigInt(CODE + 11) });
    assert.equal(r.executed, 4);
  });
  test('#UD for undecodable bytes and ud2, pc at the instruction', () => {
    for (const code of ['90 0f 0b', '90 0f 0f 00', '90 8d c0']) {
      const { cpu } = machine(code);
      const r = cpu.run(10);
      assert.deepEqual(r.trap, { kind: 'undefined', pc: BigInt(CODE + 1) }, code);
      assert.equal(r.executed, 1);
    }
  });
  test('#PF on an unmapped read: pc at insn, registers unchanged', () => {
    const { cpu } = machine('48 8b 03 f4');
    setReg(cpu, 'rbx', 0x1000n); setReg(cpu, 'rax', 42n);
    const r = cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'pageFault', pc: BigInt(CODE), addr: 0x1000n, access: 'read', present: false, user: false });
    assert.equal(getReg(cpu, 'rax'), 42n);
  });
  test('#PF on a write to read-only memory leaves memory and flags unchanged', () => {
    const mem = new Memory('t');
    mem.map(CODE, 0x1000, PERM_R | PERM_X, 'text');
    mem.map(DATA, 0x1000, PERM_R, 'ro');
    mem.writeBytes(CODE, Uint8Array.from([0xf9, 0x48, 0x83, 0x00, 0x01, 0xf4])); // stc ; add qword ptr [rax], 1
    mem.writeBytes(DATA, Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
    const cpu = x86_64.createCpu(0, mem);
    cpu.setPc(BigInt(CODE));
    cpu.setReg(regIndex(x86_64, 'ax'), BigInt(DATA));
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'pageFault');
    if (r.trap?.kind === 'pageFault') { assert.equal(r.trap.access, 'write'); assert.equal(r.trap.present, true); }
    assert.equal(r.trap?.pc, BigInt(CODE + 1));
    assert.equal(mem.read32(DATA), 0xffffffff);
    const flags = Number(cpu.getReg(regIndex(x86_64, 'flags')));
    assert.equal(flags & (CF | ZF), CF, 'flags are those of stc, not of the faulting add');
  });
  test('#PF on instruction fetch from non-executable memory', () => {
    const { cpu } = machine('ff e0'); // jmp rax
    setReg(cpu, 'rax', BigInt(DATA));
    const r = cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'pageFault', pc: BigInt(DATA), addr: BigInt(DATA), access: 'exec', present: true, user: false });
  });
  test('push onto an unmapped stack faults with rsp unchanged', () => {
    const { cpu } = machine('50 f4');
    setReg(cpu, 'rsp', 0x2000n);
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'pageFault');
    assert.equal(getReg(cpu, 'rsp'), 0x2000n);
  });
  test('#GP for non-canonical data addresses', () => {
    const { cpu } = machine('8b 03 f4');
    setReg(cpu, 'rbx', 0x0000800000000000n);
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'generalProtection');
    assert.equal(r.trap?.pc, BigInt(CODE));
  });
  test('user mode: hlt and cli are #GP, vmcall is #UD, kernel pages are #PF user', () => {
    for (const [code, kind] of [['f4', 'generalProtection'], ['fa', 'generalProtection'], ['0f 01 c1', 'undefined']] as const) {
      const { cpu } = machine(code, { user: true });
      cpu.userMode = true;
      const r = cpu.run(10);
      assert.equal(r.trap?.kind, kind, code);
      assert.equal(r.trap?.pc, BigInt(CODE));
    }
    const { cpu } = machine('8b 03', { user: false });
    cpu.userMode = true;
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'pageFault');
    if (r.trap?.kind === 'pageFault') { assert.equal(r.trap.user, true); assert.equal(r.trap.access, 'exec'); }
  });
  test('kernel mode: vmcall is a hypercall, hlt halts, both with pc = next', () => {
    const { cpu } = machine('0f 01 c1 f4');
    let r = cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'hypercall', pc: BigInt(CODE + 3) });
    r = cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'halt', pc: BigInt(CODE + 4) });
  });
  test('syscall in user mode: rcx = next rip, r11 = rflags', () => {
    const { cpu } = machine('f9 0f 05 f4', { user: true });
    cpu.userMode = true;
    const r = cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'syscall', pc: BigInt(CODE + 3) });
    assert.equal(getReg(cpu, 'rcx'), BigInt(CODE + 3));
    assert.equal(getReg(cpu, 'r11') & 0x1n, 1n);
    assert.equal(r.executed, 2);
  });
});

describe('x86 system instructions', () => {
  test('rdtsc reads the retired-instruction clock', () => {
    const { cpu } = machine('90 90 90 0f 31 f4');
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 3n);
    assert.equal(getReg(cpu, 'rdx'), 0n);
  });
  test('cpuid is deterministic', () => {
    const { cpu } = machine('31 c0 0f a2 f4');
    cpu.run(10);
    const vendor = [getReg(cpu, 'rbx'), getReg(cpu, 'rdx'), getReg(cpu, 'rcx')]
      .map(v => Buffer.from([0, 8, 16, 24].map(s => Number((v >> BigInt(s)) & 0xffn))).toString('latin1')).join('');
    assert.equal(vendor, 'KprobeDbgX86');
  });
  test('clc/stc/cmc, lahf/sahf, pushf/popf round trip', () => {
    // stc ; cmc ; cmc ; lahf ; clc ; sahf ; pushfq ; pop rbx
    const { cpu } = machine('f9 f5 f5 9f f8 9e 9c 5b f4');
    cpu.run(20);
    assert.equal(getReg(cpu, 'rbx') & BigInt(CF), 1n);
    assert.equal(getReg(cpu, 'rbx') & 0x2n, 2n, 'reserved bit 1 reads as 1');
  });
  test('nop forms and endbr64 are no-ops', () => {
    const { cpu } = machine('66 90 0f 1f 00 66 2e 0f 1f 84 00 00 00 00 00 f3 0f 1e fa f3 90 0f 1f 44 00 00 f4');
    const r = cpu.run(20);
    assert.equal(r.trap?.kind, 'halt');
    assert.equal(r.executed, 7);
  });
});

describe('x86 Cpu interface and ArchOps', () => {
  test('pt_regs register order and names', () => {
    assert.deepEqual(x86_64.regs.map(r => r.name), ['r15', 'r14', 'r13', 'r12', 'bp', 'bx', 'r11', 'r10', 'r9', 'r8',
      'ax', 'cx', 'dx', 'si', 'di', 'orig_ax', 'ip', 'cs', 'flags', 'sp', 'ss', 'fs_base', 'gs_base']);
    const { cpu } = machine('f4');
    setReg(cpu, 'r13', 0xfedcba9876543210n);
    assert.equal(cpu.getReg(regIndex(x86_64, 'r13')), 0xfedcba9876543210n);
    cpu.setReg(regIndex(x86_64, 'bx'), -2n);
    assert.equal(getReg(cpu, 'rbx'), 0xfffffffffffffffen);
    cpu.setReg(regIndex(x86_64, 'fs_base'), 0xffffffff81000000n);
    assert.equal(cpu.getReg(regIndex(x86_64, 'fs_base')), 0xffffffff81000000n);
    assert.equal(cpu.getReg(regIndex(x86_64, 'ip')), BigInt(CODE));
    assert.equal(cpu.getReg(regIndex(x86_64, 'cs')), 0x10n);
    assert.throws(() => cpu.setPc(0x0000800000000000n), /not canonical/);
  });
  test('ABI facts', () => {
    const n = (i: number) => x86_64.regs[i].name;
    assert.deepEqual(x86_64.abi.argRegs.map(n), ['di', 'si', 'dx', 'cx', 'r8', 'r9']);
    assert.deepEqual(x86_64.abi.syscall.args.map(n), ['di', 'si', 'dx', 'r10', 'r8', 'r9']);
    assert.equal(n(x86_64.abi.retReg), 'ax');
    assert.equal(n(x86_64.abi.pcReg), 'ip');
    assert.equal(n(x86_64.abi.fpReg), 'bp');
    assert.deepEqual([...x86_64.breakpointInsn], [0xcc]);
    assert.equal(x86_64.breakpointPcOffset, 1);
    assert.equal(x86_64.abi.trapNumbers.pageFault, 14);
  });
  test('saveContext/restoreContext', () => {
    const { cpu } = machine('48 ff c0 f4');
    setReg(cpu, 'rax', 5n);
    const ctx = cpu.saveContext();
    cpu.run(10);
    assert.equal(getReg(cpu, 'rax'), 6n);
    cpu.restoreContext(ctx);
    assert.equal(getReg(cpu, 'rax'), 5n);
    assert.equal(cpu.getPc(), BigInt(CODE));
  });
  test('initThread: rsp = 8 (mod 16) with the return address pushed, rdi = arg', () => {
    const { cpu, mem } = machine('f4');
    x86_64.initThread(cpu, BigInt(CODE), BigInt(STACK_TOP - 3), 0x1234n, 0xffffffff81000abcn);
    const sp = getReg(cpu, 'rsp');
    assert.equal(sp % 16n, 8n);
    assert.equal(mem.read32(Number(sp)), 0x81000abc);
    assert.equal(mem.read32(Number(sp) + 4), 0xffffffff);
    assert.equal(getReg(cpu, 'rdi'), 0x1234n);
    assert.equal(cpu.getPc(), BigInt(CODE));
    assert.equal(cpu.userMode, false);
    assert.equal(cpu.getRflags(), 0x2);
  });
  test('initUser: user mode, rsp, rdx = 0', () => {
    const { cpu } = machine('f4');
    setReg(cpu, 'rdx', 9n);
    x86_64.initUser(cpu, BigInt(CODE), BigInt(STACK_TOP - 0x100));
    assert.equal(cpu.userMode, true);
    assert.equal(getReg(cpu, 'rsp'), BigInt(STACK_TOP - 0x100));
    assert.equal(getReg(cpu, 'rdx'), 0n);
  });
  test('registry', () => {
    assert.equal(archForElfMachine(62), x86_64);
    assert.equal(archForElfMachine(3), undefined);
    assert.equal(archByName('x86_64'), x86_64);
    assert.ok(supportedArchNames().includes('x86_64'));
  });
  test('several CPUs share an address space and its decode cache', () => {
    const mem = new Memory('smp');
    mem.map(CODE, 0x1000, PERM_R | PERM_X | PERM_W, 'text');
    mem.writeBytes(CODE, Uint8Array.from([0xff, 0xc0, 0xf4])); // inc eax ; hlt
    const a = x86_64.createCpu(0, mem), b = x86_64.createCpu(1, mem);
    a.setPc(BigInt(CODE)); b.setPc(BigInt(CODE));
    assert.equal(a.run(10).trap?.kind, 'halt');
    mem.write8(CODE + 1, 0xc1); // inc ecx
    assert.equal(b.run(10).trap?.kind, 'halt');
    assert.equal(b.getReg(regIndex(x86_64, 'cx')), 1n);
    assert.equal(b.getReg(regIndex(x86_64, 'ax')), 0n);
  });
});

describe('x86 ud0/ud1', () => {
  test('ud1 and ud0 raise #UD and are classified as traps', () => {
    for (const code of ['0f b9 00', '0f ff c1']) {
      const { cpu } = machine(code);
      assert.deepEqual(cpu.run(10).trap, { kind: 'undefined', pc: BigInt(CODE) });
      assert.equal(x86_64.decodeBytes(Uint8Array.from(Buffer.from(code.replace(/ /g, ''), 'hex')), 0n)?.flow, 'trap');
    }
  });
});
