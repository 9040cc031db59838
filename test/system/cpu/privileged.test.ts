/**
 * Privileged state and instructions of the system half, register-level
 * against the SDM (vol. 2 per instruction, vol. 3 ch. 2, 5): MOV CRn,
 * RDMSR/WRMSR, LGDT/SGDT/LIDT/SIDT/LTR/STR, segment loads, IN/OUT with the
 * IOPL / I/O bitmap check, RDTSC/RDTSCP/RDPID from the virtual clock,
 * CPUID, SWAPGS, SYSCALL/SYSRET; and the same bytes on a CPU without the
 * system half keep today's meaning (#UD).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SysMachine, installHandlers, runToHandler, KCODE, UCODE, RAX, RBX, RCX, RDX, R11, USER_CS, USER_DS, USER32_CS, KERNEL_CS, TSS, GDT, KDATA, USTACK } from './harness';
import { machine } from '../../fixtures/x86/harness';
import { disassembleBytes } from '../../../emulator/arch/x86_64/disasm';
import { runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';
import { MSR_LSTAR, MSR_STAR, MSR_SFMASK, MSR_EFER, EFER_SCE, MSR_KERNEL_GS_BASE } from '../../../emulator/arch/x86_64/sysmode/state';

/** wrmsr of `value` to `msr` as the code to run */
function wrmsrCode(msr: number, value: bigint): string {
  const le = (v: number): string => [0, 8, 16, 24].map(s => ((v >>> s) & 0xff).toString(16).padStart(2, '0')).join(' ');
  return `b9 ${le(msr)} b8 ${le(Number(value & 0xffffffffn))} ba ${le(Number(value >> 32n))} 0f 30`;
}

describe('system instructions without the system half', () => {
  test('keep today\'s meaning: #UD for bytes the emulated kernel\'s CPU never ran', () => {
    for (const code of ['0f 30', '0f 32', '0f 22 d8', '0f 20 d8', 'e4 60', 'ee', '48 cf', '0f 01 f8', '48 0f 07', '0f 00 d8', '8e d8', '0f 01 38', '0f 01 f9', 'cb']) {
      const { cpu } = machine(code);
      assert.equal(cpu.run(1).trap?.kind, 'undefined', code);
    }
  });
});

describe('control registers', () => {
  test('MOV CRn round trip; CR1/CR5 #UD; CR4 bits this CPU lacks #GP(0); CRn at CPL 3 #GP(0)', () => {
    const m = new SysMachine();
    installHandlers(m);
    m.setReg(RAX, 0xfn);
    m.code(KCODE, '44 0f 22 c0 44 0f 20 c3 0f 20 d1 f4'); // mov cr8,rax; mov rbx,cr8; mov rcx,cr2
    m.sys.cr2 = 0x1234;
    runSystemCpu(m.cpu, 10);
    assert.equal(m.reg(RBX), 0xfn);
    assert.equal(m.reg(RCX), 0x1234n);
    const ud = new SysMachine(); installHandlers(ud);
    ud.code(KCODE, '0f 22 e8'); // mov cr5, rax
    assert.equal(runToHandler(ud).vector, 6);
    const la57 = new SysMachine(); installHandlers(la57);
    la57.setReg(RAX, 0x1020n); // PAE | LA57
    la57.code(KCODE, '0f 22 e0');
    assert.deepEqual([runToHandler(la57).vector, runToHandler(la57).errorCode], [13, 0]);
    assert.equal(la57.sys.cr4, 0x20, 'CR4 unchanged');
    const user = new SysMachine(); installHandlers(user);
    user.code(UCODE, '0f 20 c0'); // mov rax, cr0
    user.toUser(UCODE);
    const d = runToHandler(user);
    assert.deepEqual([d.vector, d.errorCode, d.cs, d.rip], [13, 0, USER_CS, BigInt(UCODE)]);
  });
});

describe('MSRs', () => {
  test('EFER, LSTAR, KERNEL_GS_BASE; a non-canonical LSTAR and an unknown MSR #GP(0), logged once with the rip', () => {
    const m = new SysMachine();
    installHandlers(m);
    const lines: string[] = [];
    m.sys.log = l => lines.push(l);
    m.code(KCODE, `${wrmsrCode(MSR_LSTAR, 0xffffffff81000000n)} b9 80 00 00 c0 0f 32 f4`);
    runSystemCpu(m.cpu, 20);
    assert.equal(m.sys.lstar, -0x7f000000);
    assert.equal(m.reg(RAX), 0x500n, 'EFER = LME | LMA');
    m.sys.halted = false;
    m.cpu.setPc(BigInt(KCODE + 0x100));
    m.code(KCODE + 0x100, wrmsrCode(MSR_LSTAR, 0x0000800000000000n));
    assert.deepEqual([runToHandler(m).vector, m.sys.lstar], [13, -0x7f000000]);
    for (let k = 0; k < 2; k++) {
      const u = new SysMachine(); installHandlers(u);
      u.sys.log = l => lines.push(l);
      u.sys.reported.add(k === 1 ? 'rdmsr:4660' : '');
      u.code(KCODE, 'b9 34 12 00 00 0f 32');
      const d = runToHandler(u);
      assert.deepEqual([d.vector, d.errorCode, d.rip], [13, 0, BigInt(KCODE + 5)]);
    }
    assert.deepEqual(lines, ['cpu 0: rdmsr 0x1234: no such MSR (#GP) at rip 0x10005']);
  });
  test('the platform\'s MSRs (IA32_APIC_BASE) are asked for what the CPU does not own', () => {
    const m = new SysMachine();
    m.platform.platformMsrs.set(0x1b, 0xfee00900n);
    m.code(KCODE, `b9 1b 00 00 00 0f 32 89 c3 ${wrmsrCode(0x1b, 0xfee00d00n)} f4`); // rdmsr; mov ebx, eax; wrmsr
    runSystemCpu(m.cpu, 20);
    assert.equal(m.reg(RBX), 0xfee00900n);
    assert.equal(m.platform.platformMsrs.get(0x1b), 0xfee00d00n);
  });
  test('TSC from the virtual clock at the advertised frequency; WRMSR TSC offsets it; RDTSCP ecx = TSC_AUX; RDPID', () => {
    const m = new SysMachine();
    m.platform.ns = 1000n; // 2 GHz: 2000 ticks
    m.code(KCODE, `0f 31 f4 ${wrmsrCode(0x10, 100n)} f4 ${wrmsrCode(0xc0000103, 3n)} 0f 01 f9 f3 48 0f c7 fb f4`);
    runSystemCpu(m.cpu, 10);
    assert.equal(m.reg(RAX), 2000n);
    m.sys.halted = false;
    runSystemCpu(m.cpu, 10);
    assert.equal(m.sys.tsc(), 100n);
    m.platform.ns = 1500n;
    m.sys.halted = false;
    runSystemCpu(m.cpu, 10);
    assert.deepEqual([m.reg(RAX), m.reg(RDX), m.reg(RCX), m.reg(RBX)], [1100n, 0n, 3n, 3n]);
  });
});

describe('descriptor tables and segments', () => {
  test('LGDT/SGDT and LIDT/SIDT round trip a 10-byte pseudo-descriptor', () => {
    const m = new SysMachine();
    m.phys.writeBytes(KDATA, new Uint8Array([0x4f, 0x00, 0x00, 0x80, 0, 0, 0, 0, 0, 0]));
    m.setReg(RAX, BigInt(KDATA));
    m.code(KCODE, '0f 01 18 0f 01 40 10 0f 01 48 20 f4'); // lidt [rax]; sgdt [rax+16]; sidt [rax+32]
    runSystemCpu(m.cpu, 10);
    assert.deepEqual([m.sys.idtBase, m.sys.idtLimit], [0x8000, 0x4f]);
    assert.deepEqual([...m.phys.readBytes(KDATA + 16, 10)], [0x4f, 0, 0x00, 0x80, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual([...m.phys.readBytes(KDATA + 32, 4)], [0x4f, 0, 0x00, 0x80]);
    void GDT;
  });
  test('LTR loads the TSS and marks it busy; LTR of a busy TSS #GP(sel); STR reads it', () => {
    const m = new SysMachine();
    installHandlers(m);
    m.sys.tr = 0; m.sys.trBase = 0;
    m.setReg(RAX, 0x40n);
    m.code(KCODE, '0f 00 d8 0f 00 cb f4'); // ltr ax; str ebx
    runSystemCpu(m.cpu, 10);
    assert.deepEqual([m.sys.tr, m.sys.trBase, m.reg(RBX)], [0x40, TSS, 0x40n]);
    assert.equal(m.phys.readBytes(GDT + 0x45, 1)[0], 0x8b, 'busy');
    m.sys.halted = false;
    m.cpu.setPc(BigInt(KCODE));
    const d = runToHandler(m);
    assert.deepEqual([d.vector, d.errorCode], [13, 0x40]);
  });
  test('segment loads: user data into DS at CPL 0; SS must match CPL (#GP(sel)); beyond the GDT #GP(sel); null SS at CPL 3 #GP(0)', () => {
    const m = new SysMachine();
    installHandlers(m);
    m.setReg(RAX, BigInt(USER_DS));
    m.code(KCODE, '8e d8 8c db f4'); // mov ds, ax; mov ebx, ds
    runSystemCpu(m.cpu, 10);
    assert.deepEqual([m.sys.ds, m.reg(RBX)], [USER_DS, BigInt(USER_DS)]);
    for (const [sel, want] of [[USER_DS, 0x28], [0x98, 0x98], [KERNEL_CS, 0x10]] as const) {
      const s = new SysMachine(); installHandlers(s);
      s.setReg(RAX, BigInt(sel));
      s.code(KCODE, '8e d0'); // mov ss, ax
      const d = runToHandler(s);
      assert.deepEqual([d.vector, d.errorCode], [13, want], `ss <- 0x${sel.toString(16)}`);
    }
    const u = new SysMachine(); installHandlers(u);
    u.code(UCODE, '31 c0 8e d0'); // xor eax,eax; mov ss, ax
    u.toUser(UCODE);
    const d = runToHandler(u);
    assert.deepEqual([d.vector, d.errorCode], [13, 0]);
  });
});

describe('I/O ports', () => {
  test('IN/OUT at CPL 0 reach the platform\'s ports (imm8 and dx forms, 1/2/4 bytes)', () => {
    const m = new SysMachine();
    m.platform.portValues.set(0x60, 0x5a);
    m.platform.portValues.set(0x3fd, 0x60);
    m.setReg(RAX, 0x41n);
    m.code(KCODE, 'e6 80 66 ba f8 03 ee 66 ba fd 03 ec 88 c3 e4 60 66 ef ed f4');
    runSystemCpu(m.cpu, 20);
    assert.deepEqual(m.platform.outs, [[0x80, 1, 0x41], [0x3f8, 1, 0x41], [0x3fd, 2, 0x5a]]);
    assert.equal(m.reg(RBX) & 0xffn, 0x60n);
    assert.equal(m.reg(RAX), 0x60n, 'in eax, dx: the 4-byte read, zero-extended');
  });
  test('at CPL 3 with IOPL 0: #GP(0) unless the TSS\'s I/O bitmap clears every port touched', () => {
    const m = new SysMachine();
    installHandlers(m);
    m.code(UCODE, '66 ba f8 03 ee eb fe');
    m.toUser(UCODE);
    const d = runToHandler(m);
    assert.deepEqual([d.vector, d.errorCode, d.rip], [13, 0, BigInt(UCODE + 4)]);
    // allow 0x3f8: bit 0x3f8 of the bitmap at TSS + 0x68
    m.phys.writeBytes(TSS + 0x68 + (0x3f8 >> 3), new Uint8Array([0xfe]));
    m.sys.halted = false;
    m.toUser(UCODE);
    runSystemCpu(m.cpu, 5);
    assert.deepEqual(m.platform.outs.map(o => o[0]), [0x3f8]);
    assert.equal(m.sys.cpl, 3);
  });
});

describe('CPUID', () => {
  test('GenuineIntel, 4-level paging only (no LA57; 40/48 address bits), the TSC frequency, NX / 1 GiB pages / RDTSCP / long mode', () => {
    const m = new SysMachine();
    const q = (leaf: number, sub = 0): bigint[] => {
      m.setReg(RAX, BigInt(leaf)); m.setReg(RCX, BigInt(sub));
      m.code(KCODE, '0f a2 f4');
      m.sys.halted = false; m.cpu.setPc(BigInt(KCODE));
      runSystemCpu(m.cpu, 5);
      return [m.reg(RAX), m.reg(RBX), m.reg(RCX), m.reg(RDX)];
    };
    const v = q(0);
    const s = (x: bigint): string => String.fromCharCode(...[0n, 8n, 16n, 24n].map(k => Number((x >> k) & 0xffn)));
    assert.equal(s(v[1]) + s(v[3]) + s(v[2]), 'GenuineIntel');
    assert.equal(q(7)[2] & (1n << 16n), 0n, 'no LA57');
    assert.equal(q(0x80000008)[0], 0x3028n);
    assert.deepEqual(q(0x15).slice(0, 3), [1n, 1n, 2_000_000_000n]);
    const e = q(0x80000001)[3];
    for (const b of [11n, 20n, 26n, 27n, 29n]) assert.notEqual(e & (1n << b), 0n, `0x80000001 edx bit ${b}`);
    const l1 = q(1);
    assert.equal(l1[2] & (1n << 26n), 0n, 'no XSAVE');
    assert.notEqual(l1[3] & (1n << 13n), 0n, 'PGE');
  });
});

describe('SWAPGS, SYSCALL, SYSRET', () => {
  test('SWAPGS exchanges GS.base and KERNEL_GS_BASE at CPL 0', () => {
    const m = new SysMachine();
    m.cpu.gsBase = 0x1000;
    m.code(KCODE, `${wrmsrCode(MSR_KERNEL_GS_BASE, 0xffff888000000000n)} 0f 01 f8 f4`);
    runSystemCpu(m.cpu, 10);
    assert.deepEqual([m.cpu.gsBase, m.sys.kernelGsBase], [Number(BigInt.asIntN(64, 0xffff888000000000n)), 0x1000]);
  });
  test('SYSCALL from CPL 3 to LSTAR at CPL 0 (rcx, r11, SFMASK), SYSRETQ back to CPL 3 with Linux\'s STAR layout', () => {
    const m = new SysMachine();
    installHandlers(m);
    const star = (BigInt(USER32_CS) << 48n) | (BigInt(KERNEL_CS) << 32n);
    m.code(KCODE, `${wrmsrCode(MSR_STAR, star)} ${wrmsrCode(MSR_LSTAR, BigInt(KCODE + 0x200))} ${wrmsrCode(MSR_SFMASK, 0x47700n)} b9 80 00 00 c0 0f 32 48 83 c8 01 0f 30 f4`);
    runSystemCpu(m.cpu, 30);
    assert.equal(m.sys.efer & EFER_SCE, EFER_SCE);
    // kernel entry: count in rbx, sysretq
    m.code(KCODE + 0x200, '48 ff c3 48 0f 07');
    m.code(UCODE, 'fb 0f 05 48 ff c2 eb fe'); // sti (IOPL 3 below); syscall; inc rdx; jmp $
    m.sys.halted = false;
    m.toUser(UCODE);
    m.cpu.setRflags(0x3202); // IF, IOPL 3
    runSystemCpu(m.cpu, 2);
    assert.deepEqual([m.sys.cpl, m.sys.cs, m.sys.ss, m.cpu.getPc()], [0, KERNEL_CS, KERNEL_CS + 8, BigInt(KCODE + 0x200)]);
    assert.equal(m.reg(RCX), BigInt(UCODE + 3));
    assert.equal(m.reg(R11) & 0x200n, 0x200n);
    assert.equal(m.cpu.getRflags() & 0x200, 0, 'SFMASK cleared IF');
    runSystemCpu(m.cpu, 4);
    assert.deepEqual([m.sys.cpl, m.sys.cs, m.sys.ss, m.reg(RBX), m.reg(RDX)], [3, USER_CS, USER_DS, 1n, 1n]);
    assert.equal(m.cpu.getRflags() & 0x200, 0x200, 'RFLAGS from r11');
    assert.equal(Number(m.reg(4)), USTACK, 'rsp untouched');
    m.sys.halted = false;
    m.code(UCODE + 0x40, '48 0f 07'); // sysretq at CPL 3
    m.cpu.setPc(BigInt(UCODE + 0x40));
    const d = runToHandler(m);
    assert.deepEqual([d.vector, d.errorCode], [13, 0]);
    void MSR_EFER;
  });
});

describe('string I/O and the rest', () => {
  test('rep outsb / rep insw move rcx items between memory and a port, rsi / rdi stepping', () => {
    const m = new SysMachine();
    m.phys.writeBytes(KDATA, new Uint8Array([0x68, 0x69, 0x0a]));
    m.platform.portValues.set(0x1f0, 0xbeef);
    m.setReg(6, BigInt(KDATA)); m.setReg(7, BigInt(KDATA + 0x100)); m.setReg(RCX, 3n); m.setReg(RDX, 0x3f8n);
    m.code(KCODE, 'f3 6e 66 ba f0 01 b1 02 66 f3 6d f4'); // rep outsb; mov dx, 0x1f0; mov cl, 2; rep insw
    runSystemCpu(m.cpu, 20);
    assert.deepEqual(m.platform.outs, [[0x3f8, 1, 0x68], [0x3f8, 1, 0x69], [0x3f8, 1, 0x0a]]);
    assert.deepEqual([...m.phys.readBytes(KDATA + 0x100, 4)], [0xef, 0xbe, 0xef, 0xbe]);
    assert.deepEqual([m.reg(RCX), m.reg(6), m.reg(7)], [0n, BigInt(KDATA + 3), BigInt(KDATA + 0x104)]);
  });
  test('SYSCALL with EFER.SCE = 0 is #UD; DEBUGCTL reads 0 and refuses LBR/BTF', () => {
    const m = new SysMachine();
    installHandlers(m);
    m.code(KCODE, '0f 05');
    assert.equal(runToHandler(m).vector, 6);
    const d = new SysMachine(); installHandlers(d);
    d.setReg(RBX, 5n);
    d.code(KCODE, `b9 d9 01 00 00 0f 32 89 c3 ${wrmsrCode(0x1d9, 2n)}`); // rdmsr; mov ebx, eax; wrmsr 2
    const x = runToHandler(d);
    assert.deepEqual([d.reg(RBX), x.vector, x.errorCode], [0n, 13, 0]);
  });
});

describe('MSRs Linux writes at every boot', () => {
  test('IA32_SYSENTER_CS/ESP/EIP are kept (syscall_init writes them), a non-canonical SYSENTER_EIP #GP(0)', () => {
    const m = new SysMachine();
    installHandlers(m);
    m.code(KCODE, `${wrmsrCode(0x174, 0x10n)} ${wrmsrCode(0x176, 0xffffffff81c017b0n)} b9 76 01 00 00 0f 32 f4`);
    runSystemCpu(m.cpu, 20);
    assert.deepEqual([m.reg(RAX), m.reg(RDX), m.sys.sysenter[0]], [0x81c017b0n, 0xffffffffn, 0x10n]);
    m.sys.halted = false;
    m.cpu.setPc(BigInt(KCODE + 0x100));
    m.code(KCODE + 0x100, wrmsrCode(0x176, 0x0000800000000000n));
    assert.equal(runToHandler(m).vector, 13);
  });
});

describe('the system instructions in the disassembler', () => {
  test('named as llvm\'s Intel syntax names them (they were undecodable before)', () => {
    const cases: [string, string][] = [
      ['48cf', 'iretq'], ['480f07', 'sysretq'], ['48cb', 'retfq'], ['e460', 'in al, 0x60'], ['ee', 'out dx, al'], ['ed', 'in eax, dx'],
      ['0f20d8', 'mov rax, cr3'], ['440f22c0', 'mov cr8, rax'], ['0f00d8', 'ltr ax'], ['0f01f8', 'swapgs'], ['0f01f9', 'rdtscp'],
      ['0f30', 'wrmsr'], ['0f32', 'rdmsr'], ['f36e', 'rep outsb dx, byte ptr [rsi]'],
    ];
    for (const [hex, text] of cases) {
      const d = disassembleBytes(Buffer.from(hex, 'hex'), 0x1000n);
      assert.equal(`${d?.mnemonic} ${d?.operands}`.trim(), text, hex);
    }
  });
});
