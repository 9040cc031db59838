/**
 * Exceptions and interrupts of the system half (SDM vol. 3 ch. 6): IDT
 * delivery from CPL 3 with the stack switch to RSP0, IST stacks, gate DPL
 * for INT n, interrupt vs trap gates, IRETQ to the same and to an outer
 * level, external interrupts at instruction boundaries only with IF = 1
 * and after the STI shadow, HLT waiting for one, NMI blocking until IRET,
 * #PF with CR2, #DF on a fault during delivery, a triple fault as a
 * machine event.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SysMachine, installHandlers, runToHandler, KCODE, UCODE, UDATA, RAX, RBX, USER_CS, USER_DS, KSTACK, ISTSTACK, USTACK, KERNEL_CS } from './harness';
import { runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';

const IF = 0x200;

describe('IDT delivery and IRETQ', () => {
  test('INT 0x80 from CPL 3 through a DPL 3 gate: CPL 0 on RSP0 with SS RSP RFLAGS CS RIP pushed; IRETQ returns to CPL 3', () => {
    const m = new SysMachine();
    m.gate(0x80, KCODE + 0x100, { dpl: 3 });
    m.code(KCODE + 0x100, '48 8b 5c 24 18 48 ff c0 48 cf'); // mov rbx, [rsp+24] (the user rsp); inc rax; iretq
    m.code(UCODE, 'cd 80 48 ff c0 eb fe'); // int 0x80; inc rax; jmp $
    m.toUser(UCODE);
    m.cpu.setRflags(0x202);
    runSystemCpu(m.cpu, 1);
    assert.deepEqual([m.sys.cpl, m.cpu.getPc(), Number(m.reg(4))], [0, BigInt(KCODE + 0x100), KSTACK - 40]);
    const frame = [...Array(5)].map((_, k) => new DataView(m.phys.readBytes(KSTACK - 40 + 8 * k, 8).buffer).getBigUint64(0, true));
    assert.deepEqual(frame, [BigInt(UCODE + 2), BigInt(USER_CS), 0x202n, BigInt(USTACK), BigInt(USER_DS)]);
    assert.equal(m.cpu.getRflags() & IF, 0, 'an interrupt gate clears IF');
    runSystemCpu(m.cpu, 5);
    assert.deepEqual([m.sys.cpl, m.sys.ss, Number(m.reg(4)), m.reg(RAX), m.reg(RBX)], [3, USER_DS, USTACK, 2n, BigInt(USTACK)]);
    assert.equal(m.cpu.getRflags() & IF, IF);
  });
  test('INT n through a DPL 0 gate from CPL 3: #GP(vector * 8 + 2)', () => {
    const m = new SysMachine();
    installHandlers(m);
    m.gate(0x81, KCODE + 0x100);
    m.code(UCODE, 'cd 81');
    m.toUser(UCODE);
    const d = runToHandler(m);
    assert.deepEqual([d.vector, d.errorCode, d.rip, d.cs], [13, 0x81 * 8 + 2, BigInt(UCODE), USER_CS]);
  });
  test('a trap gate leaves IF set; a gate naming IST1 switches to it even at CPL 0', () => {
    const m = new SysMachine();
    m.gate(0x82, KCODE + 0x100, { type: 0xf, ist: 1 });
    m.code(KCODE + 0x100, 'f4');
    m.code(KCODE, 'cd 82');
    m.cpu.setRflags(0x202);
    runSystemCpu(m.cpu, 5);
    assert.equal(Number(m.reg(4)), ISTSTACK - 40);
    assert.equal(m.cpu.getRflags() & IF, IF);
  });
  test('#PF: the error code, CR2, and the faulting instruction\'s rip', () => {
    const m = new SysMachine();
    installHandlers(m);
    m.code(UCODE, '48 89 18'); // mov [rax], rbx
    m.setReg(RAX, 0x7000123n);
    m.toUser(UCODE);
    const d = runToHandler(m);
    assert.deepEqual([d.vector, d.errorCode, d.rip, m.sys.cr2], [14, 6, BigInt(UCODE), 0x7000123]);
  });
  test('#GP(0) for a non-canonical address and #UD, #DE, #BP (after the int3) delivered with their frames', () => {
    const cases: [string, number, number | undefined, number][] = [
      ['48 b8 00 00 00 00 00 80 00 00 48 8b 00', 13, 0, 10], ['0f 0b', 6, undefined, 0], ['31 c9 f7 f1', 0, undefined, 2], ['cc', 3, undefined, 1],
    ];
    for (const [code, vector, err, at] of cases) {
      const m = new SysMachine();
      installHandlers(m);
      m.code(KCODE, code);
      const d = runToHandler(m);
      assert.deepEqual([d.vector, d.errorCode, d.rip, d.cs], [vector, err, BigInt(KCODE + at), KERNEL_CS], code);
    }
  });
});

describe('external interrupts, HLT, NMI', () => {
  test('taken only with IF = 1, after the instruction following STI; acknowledged once', () => {
    const m = new SysMachine();
    m.gate(0x30, KCODE + 0x100);
    m.code(KCODE + 0x100, 'f4');
    m.code(KCODE, '48 ff c0 fb 48 ff c0 48 ff c0 f4'); // inc rax; sti; inc rax; inc rax
    m.platform.pending.push(0x30);
    runSystemCpu(m.cpu, 100);
    assert.equal(m.reg(RAX), 2n, 'the instruction after STI ran, the next did not');
    assert.deepEqual(m.platform.acked, [0x30]);
    assert.equal(m.cpu.getPc(), BigInt(KCODE + 0x101));
    const rip = new DataView(m.phys.readBytes(Number(m.reg(4)), 8).buffer).getBigUint64(0, true);
    assert.equal(rip, BigInt(KCODE + 7));
    assert.equal(m.cpu.getRflags() & IF, 0);
  });
  test('HLT waits: the run ends halted; an interrupt wakes it and returns after the HLT', () => {
    const m = new SysMachine();
    m.gate(0x31, KCODE + 0x100);
    m.code(KCODE + 0x100, '48 ff c0 48 cf'); // inc rax; iretq
    m.code(KCODE, 'fb 90 f4 48 ff c3 f4');
    let r = runSystemCpu(m.cpu, 100);
    assert.deepEqual([r.halted, r.executed, m.cpu.getPc()], [true, 3, BigInt(KCODE + 3)]);
    r = runSystemCpu(m.cpu, 100);
    assert.deepEqual([r.halted, r.executed], [true, 0], 'nothing pending: still halted');
    m.platform.pending.push(0x31);
    r = runSystemCpu(m.cpu, 100);
    assert.deepEqual([r.halted, m.reg(RAX), m.reg(RBX), m.cpu.getPc()], [true, 1n, 1n, BigInt(KCODE + 7)]);
  });
  test('NMI: taken with IF = 0, blocked until IRETQ', () => {
    const m = new SysMachine();
    m.gate(2, KCODE + 0x100, { ist: 1 });
    m.code(KCODE + 0x100, '48 ff c0 48 cf'); // inc rax; iretq
    m.code(KCODE, '48 ff c3 eb fb'); // loop: inc rbx; jmp loop
    m.platform.nmi = true;
    runSystemCpu(m.cpu, 1);
    assert.deepEqual([m.cpu.getPc(), m.reg(RAX), m.reg(RBX)], [BigInt(KCODE + 0x103), 1n, 0n], 'delivered before any instruction, on IST1');
    assert.equal(Number(m.reg(4)), ISTSTACK - 40);
    m.platform.nmi = true; // a second NMI while the handler runs
    runSystemCpu(m.cpu, 1);
    assert.deepEqual([m.cpu.getPc(), m.reg(RAX), m.platform.nmi], [BigInt(KCODE), 1n, true], 'blocked: the IRETQ ran, the NMI waits');
    runSystemCpu(m.cpu, 1);
    assert.equal(m.reg(RAX), 2n, 'unblocked by the IRETQ');
  });
});

describe('double and triple faults', () => {
  test('#PF whose gate is not present: #NP during delivery makes #DF (error code 0), on its IST stack', () => {
    const m = new SysMachine();
    installHandlers(m);
    m.gate(14, KCODE + 0x100, { present: false });
    m.code(UCODE, '8b 04 25 00 00 00 07'); // mov eax, [0x7000000]
    m.toUser(UCODE);
    const d = runToHandler(m);
    assert.deepEqual([d.vector, d.errorCode], [8, 0]);
    assert.ok(Number(m.reg(4)) < ISTSTACK && Number(m.reg(4)) > ISTSTACK - 64);
    assert.equal(m.sys.cr2, 0x7000000);
  });
  test('a fault delivering #DF is a triple fault: a machine event, not a host exception', () => {
    const m = new SysMachine();
    m.sys.idtLimit = 0;
    m.code(KCODE, '0f 0b');
    const r = runSystemCpu(m.cpu, 100);
    assert.equal(r.event?.kind, 'tripleFault');
    assert.match(r.event?.detail ?? '', /triple fault/);
    void UDATA;
  });
});

describe('the paths Linux takes', () => {
  test('safe_halt (sti; hlt) with an interrupt already pending: HLT runs in the STI shadow, then the interrupt wakes it', () => {
    const m = new SysMachine();
    m.gate(0xec, KCODE + 0x100);
    m.code(KCODE + 0x100, '48 ff c0 48 cf'); // inc rax; iretq
    m.code(KCODE, 'fb f4 48 ff c3 fa f4'); // sti; hlt; inc rbx; cli; hlt
    m.platform.pending.push(0xec);
    const r = runSystemCpu(m.cpu, 100);
    assert.deepEqual([r.halted, m.reg(RAX), m.reg(RBX), m.cpu.getPc()], [true, 1n, 1n, BigInt(KCODE + 7)]);
    assert.deepEqual(m.platform.acked, [0xec]);
  });
  test('lretq to __KERNEL_CS (head_64.S reloads CS this way); a non-code selector #GP(sel)', () => {
    const m = new SysMachine();
    installHandlers(m);
    // push 0x10; lea rax, [rip+3]; push rax; lretq; (target) inc rbx; hlt
    m.code(KCODE, '6a 10 48 8d 05 03 00 00 00 50 48 cb 48 ff c3 f4');
    runSystemCpu(m.cpu, 10);
    assert.deepEqual([m.reg(RBX), m.sys.cs, Number(m.reg(4))], [1n, KERNEL_CS, KSTACK]);
    const b = new SysMachine(); installHandlers(b);
    b.code(KCODE, '6a 18 6a 00 48 cb'); // push 0x18 (data); push 0; lretq
    const d = runToHandler(b);
    assert.deepEqual([d.vector, d.errorCode], [13, 0x18]);
  });
});
