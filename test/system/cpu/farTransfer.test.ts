/**
 * Far JMP/CALL through memory, far RET, SYSENTER/SYSEXIT, and what the
 * system CPU does with what it does not emulate, register-level against the
 * SDM (vol. 2 "JMP", "CALL", "RET", "SYSENTER", "SYSEXIT" in 64-bit mode, as
 * the GenuineIntel CPUID claims: m16:64 pointers taken with REX.W, SYSENTER
 * valid in 64-bit mode), on the harness's Linux-like GDT plus a few entries.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SysMachine, installHandlers, runToHandler, KCODE, KDATA, KSTACK, UCODE, UDATA, USTACK, RAX, RBX, RCX, RDX, RSP, KERNEL_CS, USER_CS } from './harness';
import { machine } from '../../fixtures/x86/harness';
import { runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';

const CONFORMING = 0x50, NOT_PRESENT = 0x58, CODE32 = 0x60, CALL_GATE = 0x68, DATA = 0x18;

/** the harness's machine with a conforming 64-bit code segment, a not-present one, a 32-bit one and a call gate added */
function withGdt(): SysMachine {
  const m = new SysMachine();
  installHandlers(m);
  m.phys64(0x8000 + CONFORMING, 0x00af9e000000ffffn);
  m.phys64(0x8000 + NOT_PRESENT, 0x00af1a000000ffffn);
  m.phys64(0x8000 + CODE32, 0x00cf9a000000ffffn);
  m.phys64(0x8000 + CALL_GATE, 0x0000ec0000100000n); // 64-bit call gate, DPL 3, to 0x10:0
  m.phys64(0x8000 + CALL_GATE + 8, 0n);
  m.sys.gdtLimit = 0x77;
  return m;
}
/** run again from `at` at CPL 0 on the kernel stack (after a handler's hlt) */
function from(m: SysMachine, at: number): void { m.sys.halted = false; m.cpu.setPc(BigInt(at)); m.setReg(RSP, BigInt(KSTACK)); }
const hex = (v: bigint, bytes: number): string => Array.from({ length: bytes }, (_, k) => ((v >> BigInt(8 * k)) & 0xffn).toString(16).padStart(2, '0')).join(' ');
/** an m16:<size*8> pointer at KDATA */
function pointer(m: SysMachine, off: bigint, sel: number, size: 2 | 4 | 8): void { m.code(KDATA, `${hex(off, size)} ${hex(BigInt(sel), 2)}`); }

describe('far JMP / CALL through memory (ff /5, ff /3) and far RET', () => {
  test('jmp m16:32 and m16:64 (REX.W): rip from the pointer, CS = the selector with RPL = CPL', () => {
    for (const [prefix, size] of [['', 4], ['48 ', 8]] as const) {
      const m = withGdt();
      pointer(m, BigInt(KCODE + 0x100), CONFORMING, size);
      m.setReg(RAX, BigInt(KDATA));
      m.code(KCODE, `${prefix}ff 28`);
      m.code(KCODE + 0x100, '48 ff c3 f4'); // inc rbx; hlt
      const r = runSystemCpu(m.cpu, 10);
      assert.deepEqual([r.halted, m.reg(RBX), m.sys.cs, m.cpu.getPc()], [true, 1n, CONFORMING, BigInt(KCODE + 0x104)], `${prefix}ff 28`);
    }
  });
  test('call m16:64 pushes CS then rip (8 bytes each) and retfq returns; call m16:32 with 4-byte slots and lret', () => {
    for (const [prefix, size, ret] of [['48 ', 8, '48 cb'], ['', 4, 'cb']] as const) {
      const m = withGdt();
      pointer(m, BigInt(KCODE + 0x100), KERNEL_CS, size);
      m.setReg(RAX, BigInt(KDATA));
      const call = `${prefix}ff 18`, len = call.split(' ').length;
      m.code(KCODE, `${call} 48 ff c1 f4`); // call far [rax]; inc rcx; hlt
      // at the target: the two slots, then return
      m.code(KCODE + 0x100, `48 8b 14 24 48 8b 5c 24 ${size.toString(16).padStart(2, '0')} ${ret}`); // mov rdx, [rsp]; mov rbx, [rsp + size]; ret far
      const r = runSystemCpu(m.cpu, 20);
      const mask = size === 8 ? (1n << 64n) - 1n : 0xffffffffn;
      assert.equal(r.halted, true);
      assert.deepEqual([m.reg(RDX) & mask, m.reg(RBX) & mask], [BigInt(KCODE + len), BigInt(KERNEL_CS)], `${call}: the pushed rip and CS`);
      assert.deepEqual([m.reg(RCX), m.reg(RSP), m.sys.cs], [1n, BigInt(KSTACK), KERNEL_CS], `${call}: back after the call`);
    }
  });
  test('the checks: null #GP(0); data #GP(sel); RPL > CPL #GP(sel); not present #NP(sel); non-canonical offset #GP(0); register operand #UD', () => {
    const cases: [bigint, number, number, number | undefined][] = [
      [BigInt(KCODE), 0, 13, 0], [BigInt(KCODE), DATA, 13, DATA], [BigInt(KCODE), KERNEL_CS | 3, 13, KERNEL_CS],
      [BigInt(KCODE), NOT_PRESENT, 11, NOT_PRESENT], [0x0000800000000000n, KERNEL_CS, 13, 0],
    ];
    for (const [off, sel, vector, code] of cases) {
      const m = withGdt();
      pointer(m, off, sel, 8);
      m.setReg(RAX, BigInt(KDATA));
      m.code(KCODE, '48 ff 28');
      const d = runToHandler(m);
      assert.deepEqual([d.vector, d.errorCode, d.rip, d.cs], [vector, code, BigInt(KCODE), KERNEL_CS], `0x${sel.toString(16)}:${off.toString(16)}`);
    }
    const r = withGdt();
    r.code(KCODE, 'ff e8'); // jmp far with a register operand
    assert.equal(runToHandler(r).vector, 6);
  });
  test('at CPL 3: to the user code segment; to the kernel\'s #GP(sel); a call pushes on the user stack', () => {
    const m = withGdt();
    m.code(UDATA, `${hex(BigInt(UCODE + 0x40), 8)} ${hex(BigInt(USER_CS), 2)}`);
    m.code(UCODE, '48 b8 00 00 48 00 00 00 00 00 48 ff 18'); // mov rax, UDATA; call far [rax]
    m.code(UCODE + 0x40, '0f 0b'); // ud2: stop there
    m.toUser(UCODE);
    const d = runToHandler(m);
    assert.deepEqual([d.vector, d.rip, d.cs, d.rsp], [6, BigInt(UCODE + 0x40), USER_CS, BigInt(USTACK - 16)]);
    const k = withGdt();
    k.code(UDATA, `${hex(BigInt(KCODE), 8)} ${hex(BigInt(KERNEL_CS), 2)}`);
    k.code(UCODE, '48 b8 00 00 48 00 00 00 00 00 48 ff 28');
    k.toUser(UCODE);
    const g = runToHandler(k);
    assert.deepEqual([g.vector, g.errorCode, g.cs], [13, KERNEL_CS, USER_CS]);
  });
  test('a call gate and a 32-bit code segment are not emulated: #UD, one log line each with the rip', () => {
    const m = withGdt();
    const lines: string[] = [];
    m.sys.log = l => lines.push(l);
    m.setReg(RAX, BigInt(KDATA));
    m.code(KCODE, 'ff 28');
    for (const sel of [CALL_GATE, CODE32, CODE32]) {
      pointer(m, BigInt(KCODE), sel, 4);
      from(m, KCODE);
      const d = runToHandler(m);
      assert.deepEqual([d.vector, d.rip], [6, BigInt(KCODE)]);
    }
    assert.deepEqual(lines, [
      'cpu 0: jmp far through a call gate is not emulated: #UD at rip 0x10000',
      'cpu 0: jmp far to a 32-bit code segment (compatibility mode) is not emulated: #UD at rip 0x10000',
    ]);
  });
});

describe('SYSENTER / SYSEXIT (Intel, 64-bit mode)', () => {
  /** Linux's values: IA32_SYSENTER_CS = __KERNEL_CS, ESP the entry stack, EIP the entry */
  function linuxMsrs(m: SysMachine): void { m.sys.sysenter[0] = BigInt(KERNEL_CS); m.sys.sysenter[1] = BigInt(KSTACK); m.sys.sysenter[2] = BigInt(KCODE + 0x200); }
  test('from CPL 3 to IA32_SYSENTER_EIP at CPL 0 (CS = SYSENTER_CS, SS = +8, rsp = SYSENTER_ESP, IF RF cleared); SYSEXITQ back to CS +32|3, SS +40|3 at rdx / rcx', () => {
    const m = new SysMachine();
    installHandlers(m);
    linuxMsrs(m);
    m.code(UCODE, '0f 34'); // sysenter
    m.code(KCODE + 0x200, '48 ba 10 00 40 00 00 00 00 00 48 b9 f0 ff 4f 00 00 00 00 00 48 0f 35'); // mov rdx, UCODE+0x10; mov rcx, USTACK-0x10; sysexitq
    m.code(UCODE + 0x10, '0f 0b'); // ud2
    m.toUser(UCODE);
    m.cpu.setRflags(0x10202); // IF RF
    runSystemCpu(m.cpu, 1);
    assert.deepEqual([m.sys.cs, m.sys.ss, m.reg(RSP), m.cpu.getPc(), m.cpu.getRflags() & 0x10200, m.cpu.userMode],
      [KERNEL_CS, 0x18, BigInt(KSTACK), BigInt(KCODE + 0x200), 0, false]);
    runSystemCpu(m.cpu, 3);
    assert.deepEqual([m.sys.cs, m.sys.ss, m.reg(RSP), m.cpu.getPc(), m.cpu.userMode], [USER_CS, 0x3b, BigInt(USTACK - 0x10), BigInt(UCODE + 0x10), true]);
  });
  test('SYSENTER_CS null: SYSENTER and SYSEXIT #GP(0); SYSEXIT at CPL 3 #GP(0); a non-canonical rdx #GP(0); 32-bit SYSEXIT #UD (compatibility mode, logged)', () => {
    const none = new SysMachine(); installHandlers(none);
    none.code(UCODE, '0f 34'); none.toUser(UCODE);
    assert.deepEqual([runToHandler(none).vector, runToHandler(none).errorCode], [13, 0]);
    const user = new SysMachine(); installHandlers(user); linuxMsrs(user);
    user.code(UCODE, '48 0f 35'); user.toUser(UCODE);
    assert.deepEqual([runToHandler(user).vector, runToHandler(user).cs], [13, USER_CS]);
    const bad = new SysMachine(); installHandlers(bad); linuxMsrs(bad);
    bad.setReg(RDX, 0x0000800000000000n);
    bad.code(KCODE, '48 0f 35');
    const d = runToHandler(bad);
    assert.deepEqual([d.vector, d.errorCode, d.cs, d.rip], [13, 0, KERNEL_CS, BigInt(KCODE)]);
    const compat = new SysMachine(); installHandlers(compat); linuxMsrs(compat);
    const lines: string[] = [];
    compat.sys.log = l => lines.push(l);
    compat.code(KCODE, '0f 35');
    assert.equal(runToHandler(compat).vector, 6);
    assert.deepEqual(lines, ['cpu 0: sysexitd (a return to compatibility mode) is not emulated: #UD at rip 0x10000']);
  });
  test('CPUID offers what runs: SEP (leaf 1 edx bit 11) now that both run, and RDPID (leaf 7 ecx bit 22), which ran unoffered', () => {
    const m = new SysMachine();
    m.code(KCODE, '0f a2 f4');
    const q = (leaf: number): [bigint, bigint] => {
      m.setReg(RAX, BigInt(leaf)); m.setReg(RCX, 0n);
      m.sys.halted = false; m.cpu.setPc(BigInt(KCODE));
      runSystemCpu(m.cpu, 5);
      return [m.reg(RCX), m.reg(RDX)];
    };
    assert.notEqual(q(1)[1] & (1n << 11n), 0n, 'SEP');
    assert.notEqual(q(7)[0] & (1n << 22n), 0n, 'RDPID');
  });
});

describe('what the system CPU does not emulate', () => {
  test('bytes no table entry knows: #UD delivered, logged once per opcode with the rip; ud2 (the architecture\'s #UD) is not logged', () => {
    const m = new SysMachine();
    installHandlers(m);
    const lines: string[] = [];
    m.sys.log = l => lines.push(l);
    m.code(KCODE, '0f 37'); // getsec
    m.code(KCODE + 0x10, '0f 0b'); // ud2
    m.code(KCODE + 0x20, '0f 0e'); // femms
    for (const at of [KCODE, KCODE, KCODE + 0x10, KCODE + 0x20]) {
      from(m, at);
      const d = runToHandler(m);
      assert.deepEqual([d.vector, d.rip], [6, BigInt(at)]);
    }
    assert.deepEqual(lines, [
      'cpu 0: no instruction this CPU emulates at bytes 0f 37 00 00 ...: #UD at rip 0x10000',
      'cpu 0: no instruction this CPU emulates at bytes 0f 0e 00 00 ...: #UD at rip 0x10020',
    ]);
  });
  test('without the system half the new instructions keep today\'s meaning: #UD', () => {
    for (const code of ['48 ff 28', 'ff 18', '0f 34', '48 0f 35', '0f 03 c1', '0f 02 c1', '0f 00 e0', '0f 00 e8']) {
      const { cpu } = machine(code);
      assert.equal(cpu.run(1).trap?.kind, 'undefined', code);
    }
  });
});
