/**
 * x86_64 debug registers (Intel SDM vol. 3 ch. 17): DR7 decoding into the
 * CPU's match unit (enables, R/W conditions, LEN with the address's low
 * bits ignored), data breakpoints as traps after the access, execute
 * breakpoints as faults before the instruction with RF, DR6 status bits,
 * MOV to/from DRn, rep string instructions stopping after the iteration
 * that hit, and the port's hw_breakpoint hooks.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, getReg, setReg, CODE, DATA } from '../../fixtures/x86/harness';
import { x86_64, port } from '../../../emulator/arch/x86_64/index';
import type { X86Cpu } from '../../../emulator/arch/x86_64/cpu';
import { TF, ZF } from '../../../emulator/arch/x86_64/flags';
import { PERM_R } from '../../../emulator/memory/memory';
import type { Trap } from '../../../emulator/arch/types';

const RW_EXEC = 0, RW_WRITE = 1, RW_IO = 2, RW_RW = 3;
/** LEN encodings by byte count */
const LEN: Record<number, number> = { 1: 0, 2: 1, 4: 3, 8: 2 };
const DR6_FIXED = 0xffff0ff0n, BS = 0x4000n, RF = 0x10000;

/** program breakpoint k as a kernel would: DRk = addr, then DR7's Gk (or Lk) and R/W + LEN nibble */
function arm(cpu: X86Cpu, k: number, addr: number | bigint, rw: number, len = 1, enable: 'G' | 'L' = 'G'): void {
  cpu.writeDr(k, BigInt(addr));
  const en = (enable === 'G' ? 2 : 1) << (2 * k);
  const bits = ((LEN[len] << 2) | rw) << (16 + 4 * k);
  cpu.writeDr(7, cpu.readDr(7) | BigInt((en | bits) >>> 0));
}

/** what the match unit's slot k watches (its public fields) */
function slotOf(cpu: X86Cpu, k: number): { lo: number; len: number; exec: boolean; read: boolean; write: boolean } | null {
  const s = cpu.hw.slot(k);
  return s && { lo: s.lo, len: s.len, exec: s.exec, read: s.read, write: s.write };
}

function hw(t: Trap | null): Extract<Trap, { kind: 'hwBreakpoint' }> {
  assert.ok(t && t.kind === 'hwBreakpoint', `expected a hwBreakpoint trap, got ${JSON.stringify(t, (_k, v) => typeof v === 'bigint' ? `0x${v.toString(16)}` : v)}`);
  return t;
}

describe('x86 DR7 decoding', () => {
  for (const len of [1, 2, 4, 8]) {
    test(`LEN ${len}: the address's low bits are ignored; exactly the ${len} aligned bytes match a byte store`, () => {
      const base = DATA + 0x40;
      for (let b = -1; b <= len; b++) {
        // mov byte ptr [rbx], al ; hlt
        const { cpu, mem } = machine('88 03 f4');
        arm(cpu, 0, base + len - 1, RW_WRITE, len); // DR0 points at the range's last byte
        assert.deepEqual(slotOf(cpu, 0), { lo: base, len, exec: false, read: false, write: true });
        setReg(cpu, 'rbx', BigInt(base + b)); setReg(cpu, 'rax', 0x5an);
        const r = cpu.run(10);
        assert.equal(mem.read8(base + b), 0x5a, 'the store happened either way');
        if (b >= 0 && b < len) {
          const t = hw(r.trap);
          assert.equal(t.pc, BigInt(CODE + 2), `byte +${b}`);
          assert.equal(t.hits, 1);
          assert.equal(t.addr, BigInt(base + b));
          assert.equal(t.access, 'write');
        } else assert.equal(r.trap?.kind, 'halt', `byte ${b} is outside the ${len}-byte range`);
      }
    });
  }

  test('a byte store inside a watched qword hits; its neighbours do not', () => {
    for (const [off, hit] of [[0, true], [3, true], [7, true], [8, false], [-1, false]] as const) {
      const { cpu } = machine('88 03 f4');
      arm(cpu, 2, DATA + 0x80, RW_WRITE, 8);
      setReg(cpu, 'rbx', BigInt(DATA + 0x80 + off));
      const r = cpu.run(10);
      if (hit) assert.equal(hw(r.trap).hits, 1 << 2, `+${off}`);
      else assert.equal(r.trap?.kind, 'halt', `+${off}`);
    }
  });

  test('R/W 01 (write) ignores loads; R/W 11 (read/write) matches loads and stores', () => {
    // mov al, byte ptr [rbx] ; hlt
    let m = machine('8a 03 f4');
    arm(m.cpu, 0, DATA, RW_WRITE, 1);
    setReg(m.cpu, 'rbx', BigInt(DATA));
    assert.equal(m.cpu.run(10).trap?.kind, 'halt');

    m = machine('8a 03 f4');
    arm(m.cpu, 0, DATA, RW_RW, 1);
    setReg(m.cpu, 'rbx', BigInt(DATA));
    const t = hw(m.cpu.run(10).trap);
    assert.equal(t.access, 'read');
    assert.equal(t.pc, BigInt(CODE + 2));

    m = machine('88 03 f4');
    arm(m.cpu, 0, DATA, RW_RW, 1);
    setReg(m.cpu, 'rbx', BigInt(DATA));
    assert.equal(hw(m.cpu.run(10).trap).access, 'write');
  });

  test('L (local) enables a breakpoint like G; with neither, or R/W 10 (I/O), it is off', () => {
    let m = machine('88 03 f4');
    arm(m.cpu, 1, DATA, RW_WRITE, 1, 'L');
    setReg(m.cpu, 'rbx', BigInt(DATA));
    assert.equal(hw(m.cpu.run(10).trap).hits, 2);

    m = machine('88 03 f4');
    m.cpu.writeDr(1, BigInt(DATA));
    m.cpu.writeDr(7, BigInt((RW_WRITE << 20) >>> 0)); // condition without an enable
    setReg(m.cpu, 'rbx', BigInt(DATA));
    assert.equal(m.cpu.hw.slot(1), null);
    assert.equal(m.cpu.run(10).trap?.kind, 'halt');

    m = machine('88 03 f4');
    arm(m.cpu, 1, DATA, RW_IO, 1);
    setReg(m.cpu, 'rbx', BigInt(DATA));
    assert.equal(m.cpu.hw.slot(1), null, 'I/O breakpoints (CR4.DE = 0: undefined) are not armed');
    assert.equal(m.cpu.run(10).trap?.kind, 'halt');
  });

  test('clearing the enable disarms; rewriting DRn moves an armed breakpoint', () => {
    const { cpu } = machine('88 03 f4');
    arm(cpu, 3, DATA, RW_WRITE, 1);
    cpu.writeDr(3, BigInt(DATA + 0x10));
    assert.equal(cpu.hw.slot(3)?.lo, DATA + 0x10);
    cpu.writeDr(7, cpu.readDr(7) & ~(3n << 6n));
    assert.equal(cpu.hw.slot(3), null);
    assert.equal(cpu.hw.dataArmed, false);
  });

  test('execute breakpoints ignore LEN (the SDM leaves LEN != 00 undefined): one byte at DRn as written', () => {
    const { cpu } = machine('90 90 f4');
    arm(cpu, 0, CODE + 1, RW_EXEC, 4);
    assert.deepEqual(slotOf(cpu, 0), { lo: CODE + 1, len: 1, exec: true, read: false, write: false });
  });

  test('a non-canonical DRn matches nothing (disarmed); the register keeps all 64 bits', () => {
    const { cpu } = machine('f4');
    arm(cpu, 0, 0x0000800000000000n, RW_WRITE, 1);
    assert.equal(cpu.readDr(0), 0x0000800000000000n);
    assert.equal(cpu.hw.slot(0), null);
    arm(cpu, 1, 0xffffffff81000007n, RW_WRITE, 8);
    assert.equal(cpu.readDr(1), 0xffffffff81000007n);
    assert.equal(cpu.hw.slot(1)?.lo, -0x7f000000, 'kernel address, masked to 8, as a VAddr');
  });

  test('reserved bits read as their fixed values; DR6/DR7 start at 0xffff0ff0 / 0x400', () => {
    const { cpu } = machine('f4');
    assert.equal(cpu.readDr(6), DR6_FIXED);
    assert.equal(cpu.readDr(7), 0x400n);
    cpu.writeDr(7, 0n); assert.equal(cpu.readDr(7), 0x400n);
    cpu.writeDr(7, 0xffffffffn); assert.equal(cpu.readDr(7), 0xffff27ffn);
    cpu.writeDr(6, 0xffffffffn); assert.equal(cpu.readDr(6), 0xffffefffn);
    cpu.writeDr(6, 0n); assert.equal(cpu.readDr(6), DR6_FIXED);
  });
});

describe('x86 data breakpoint traps', () => {
  test('trap after the instruction: pc = next instruction, the store done, the next not run', () => {
    // mov qword ptr [rbx], rax ; mov ecx, 1 ; hlt
    const { cpu, mem } = machine('48 89 03 b9 01 00 00 00 f4');
    arm(cpu, 0, DATA + 3, RW_WRITE, 1);
    setReg(cpu, 'rbx', BigInt(DATA)); setReg(cpu, 'rax', 0x1122334455667788n);
    const r = cpu.run(10);
    const t = hw(r.trap);
    assert.equal(t.pc, BigInt(CODE + 3));
    assert.equal(r.executed, 1);
    assert.equal(cpu.getPc(), BigInt(CODE + 3));
    assert.equal(mem.read64(DATA), 0x1122334455667788n);
    assert.equal(getReg(cpu, 'rcx'), 0n);
    const r2 = cpu.run(10);
    assert.equal(r2.trap?.kind, 'halt');
    assert.equal(getReg(cpu, 'rcx'), 1n);
  });

  test('a store that page-faults reports no hit: pageFault trap, memory and DR6 unchanged', () => {
    // read-only page: the watch matches, the store faults
    const { cpu, mem } = machine('89 03 f4');
    const RO = 0x620000;
    mem.map(RO, 0x1000, PERM_R, 'ro');
    arm(cpu, 0, RO, RW_WRITE, 4);
    setReg(cpu, 'rbx', BigInt(RO)); setReg(cpu, 'rax', 0x12345678n);
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'pageFault');
    assert.equal(r.trap?.pc, BigInt(CODE));
    assert.equal(mem.read32(RO), 0);
    assert.equal(cpu.hw.hits, 0);
    assert.equal(cpu.readDr(6), DR6_FIXED);
    // the restart faults again, still without a hit
    assert.equal(cpu.run(10).trap?.kind, 'pageFault');

    // a qword store running off the end of the data region: its first half is watched
    const m = machine('48 89 03 f4');
    const end = DATA + 0x10000 - 4;
    arm(m.cpu, 1, end, RW_WRITE, 4);
    setReg(m.cpu, 'rbx', BigInt(end)); setReg(m.cpu, 'rax', -1n);
    const r2 = m.cpu.run(10);
    assert.equal(r2.trap?.kind, 'pageFault');
    assert.equal(m.mem.read32(end), 0);
    assert.equal(m.cpu.readDr(6), DR6_FIXED);
  });

  test('determinism: the hit lands on the same instret across runs and budget chunkings', () => {
    // xor ecx, ecx ; L: mov [rbx + rcx*8], rax ; inc ecx ; cmp ecx, 100 ; jne L ; hlt
    const prog = '31 c9 48 89 04 cb ff c1 83 f9 64 75 f5 f4';
    const at: number[] = [];
    for (const chunk of [1_000_000, 7, 1]) {
      const { cpu } = machine(prog);
      arm(cpu, 0, DATA + 8 * 37, RW_WRITE, 8);
      setReg(cpu, 'rbx', BigInt(DATA));
      let r;
      do r = cpu.run(chunk); while (r.trap === null);
      const t = hw(r.trap);
      assert.equal(t.pc, BigInt(CODE + 6));
      assert.equal(getReg(cpu, 'rcx'), 37n);
      at.push(cpu.instret);
    }
    assert.deepEqual(at, [1 + 37 * 4 + 1, 1 + 37 * 4 + 1, 1 + 37 * 4 + 1]);
  });
});

describe('x86 execute breakpoints and RF', () => {
  // xor ecx, ecx ; L: mov [rbx + rcx*8], rax ; inc ecx ; cmp ecx, 100 ; jne L ; hlt
  const loop = '31 c9 48 89 04 cb ff c1 83 f9 64 75 f5 f4';

  test('fault before the instruction: pc = the instruction, not executed', () => {
    const { cpu } = machine(loop);
    setReg(cpu, 'rbx', BigInt(DATA));
    arm(cpu, 1, CODE + 6, RW_EXEC);
    const r = cpu.run(100);
    const t = hw(r.trap);
    assert.equal(t.pc, BigInt(CODE + 6));
    assert.equal(t.access, 'exec');
    assert.equal(t.hits, 2);
    assert.equal(r.executed, 2);
    assert.equal(getReg(cpu, 'rcx'), 0n, 'inc ecx did not run');
    assert.equal(cpu.readDr(6), DR6_FIXED | 2n);
  });

  test('RF suppresses exactly one repeat: the next pass hits again', () => {
    const { cpu } = machine(loop);
    setReg(cpu, 'rbx', BigInt(DATA));
    arm(cpu, 0, CODE + 6, RW_EXEC);
    assert.equal(hw(cpu.run(100).trap).pc, BigInt(CODE + 6));
    for (let pass = 1; pass <= 3; pass++) {
      cpu.resumeFlag = true;
      const r = cpu.run(100);
      assert.equal(hw(r.trap).pc, BigInt(CODE + 6));
      assert.equal(r.executed, 4, 'inc, cmp, jne, mov');
      assert.equal(getReg(cpu, 'rcx'), BigInt(pass));
      assert.equal(cpu.resumeFlag, false);
    }
    // RF through rflags (bit 16), as an iret from the #DB handler restores it
    cpu.setRflags(cpu.getRflags() | RF);
    assert.equal(cpu.getRflags() & RF, RF);
    cpu.run(100);
    assert.equal(getReg(cpu, 'rcx'), 4n);
    assert.equal(cpu.getRflags() & RF, 0);
  });

  test('pushf stores RF as 0; popf clears RF', () => {
    // pushf ; pop rax ; push rax ; popf ; hlt
    const { cpu } = machine('9c 58 50 9d f4');
    cpu.resumeFlag = true;
    cpu.setRflags(cpu.getRflags() | RF);
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'halt');
    assert.equal(Number(getReg(cpu, 'rax')) & RF, 0);
    assert.equal(cpu.resumeFlag, false);
  });

  test('the debug registers are per CPU, not in the task context; RF is (rflags)', () => {
    const { cpu } = machine('f4');
    arm(cpu, 0, DATA, RW_WRITE, 4);
    cpu.resumeFlag = true;
    const ctx = cpu.saveContext();
    cpu.resumeFlag = false;
    cpu.writeDr(0, BigInt(DATA + 0x100));
    cpu.restoreContext(ctx);
    assert.equal(cpu.readDr(0), BigInt(DATA + 0x100));
    assert.equal(cpu.hw.slot(0)?.lo, DATA + 0x100);
    assert.equal(cpu.resumeFlag, true);
  });
});

describe('x86 DR6', () => {
  test('two breakpoints hitting in one instruction set both B bits; B bits are sticky until software clears DR6', () => {
    // mov qword ptr [rbx], rax ; mov byte ptr [rbx + 0x100], al ; xor eax, eax ; mov dr6, rax ; hlt
    const { cpu } = machine('48 89 03 88 83 00 01 00 00 31 c0 0f 23 f0 f4');
    setReg(cpu, 'rbx', BigInt(DATA));
    arm(cpu, 0, DATA, RW_WRITE, 4);
    arm(cpu, 1, DATA + 4, RW_RW, 4);
    arm(cpu, 2, DATA + 0x100, RW_WRITE, 1);
    let t = hw(cpu.run(10).trap);
    assert.equal(t.hits, 0b011);
    assert.equal(cpu.readDr(6), DR6_FIXED | 0b011n);
    t = hw(cpu.run(10).trap);
    assert.equal(t.hits, 0b100);
    assert.equal(cpu.readDr(6), DR6_FIXED | 0b111n, 'sticky');
    assert.equal(cpu.run(10).trap?.kind, 'halt');
    assert.equal(cpu.readDr(6), DR6_FIXED, 'mov dr6, 0 cleared them');
  });

  test('BS with a single-step trap, and with B0 when a step hits a data breakpoint', () => {
    // nop ; mov byte ptr [rbx], al ; hlt
    const { cpu } = machine('90 88 03 f4');
    setReg(cpu, 'rbx', BigInt(DATA));
    cpu.setRflags(0x2 | TF);
    assert.equal(cpu.run(10).trap?.kind, 'singleStep');
    assert.equal(cpu.readDr(6), DR6_FIXED | BS);
    cpu.writeDr(6, 0n);
    arm(cpu, 0, DATA, RW_WRITE, 1);
    const t = hw(cpu.run(10).trap);
    assert.equal(t.step, true);
    assert.equal(t.pc, BigInt(CODE + 3));
    assert.equal(cpu.readDr(6), DR6_FIXED | BS | 1n);
  });
});

describe('x86 rep string instructions and data breakpoints', () => {
  test('rep movsb traps after the iteration that hit (pc at the rep, rcx/rsi/rdi mid-way) and resumes to completion', () => {
    const { cpu, mem } = machine('f3 a4 f4');
    const src = DATA, dst = DATA + 0x100;
    for (let k = 0; k < 16; k++) mem.write8(src + k, 0x40 + k);
    setReg(cpu, 'rsi', BigInt(src)); setReg(cpu, 'rdi', BigInt(dst)); setReg(cpu, 'rcx', 16n);
    arm(cpu, 0, dst + 5, RW_WRITE, 1);
    const r = cpu.run(10);
    const t = hw(r.trap);
    assert.equal(t.pc, BigInt(CODE), 'iterations remain: the rep instruction itself');
    assert.equal(t.addr, BigInt(dst + 5));
    assert.equal(getReg(cpu, 'rcx'), 10n);
    assert.equal(getReg(cpu, 'rsi'), BigInt(src + 6));
    assert.equal(getReg(cpu, 'rdi'), BigInt(dst + 6));
    assert.equal(mem.read8(dst + 5), 0x45);
    assert.equal(mem.read8(dst + 6), 0, 'the next iteration did not run');
    const r2 = cpu.run(10);
    assert.equal(r2.trap?.kind, 'halt');
    assert.equal(getReg(cpu, 'rcx'), 0n);
    for (let k = 0; k < 16; k++) assert.equal(mem.read8(dst + k), 0x40 + k);
  });

  test('rep stosb: a hit on the last iteration reports the next instruction', () => {
    const { cpu, mem } = machine('f3 aa f4');
    setReg(cpu, 'rdi', BigInt(DATA)); setReg(cpu, 'rcx', 8n); setReg(cpu, 'rax', 0xeen);
    arm(cpu, 0, DATA + 7, RW_WRITE, 1);
    const t = hw(cpu.run(10).trap);
    assert.equal(t.pc, BigInt(CODE + 2));
    assert.equal(getReg(cpu, 'rcx'), 0n);
    assert.equal(getReg(cpu, 'rdi'), BigInt(DATA + 8));
    assert.equal(mem.read64(DATA), 0xeeeeeeeeeeeeeeeen);
    assert.equal(cpu.run(10).trap?.kind, 'halt');
  });

  test('rep stosb with a watched qword: one trap per iteration inside it, then completion', () => {
    const { cpu, mem } = machine('f3 aa f4');
    setReg(cpu, 'rdi', BigInt(DATA)); setReg(cpu, 'rcx', 32n); setReg(cpu, 'rax', 0x11n);
    arm(cpu, 3, DATA + 8, RW_WRITE, 8);
    const rcx: bigint[] = [];
    let r;
    while ((r = cpu.run(10)).trap?.kind === 'hwBreakpoint') rcx.push(getReg(cpu, 'rcx'));
    assert.equal(r.trap?.kind, 'halt');
    assert.deepEqual(rcx, [23n, 22n, 21n, 20n, 19n, 18n, 17n, 16n]);
    for (let k = 0; k < 32; k++) assert.equal(mem.read8(DATA + k), 0x11);
  });

  test('67 rep stosb (edi/ecx) traps mid-way the same way', () => {
    const { cpu } = machine('67 f3 aa f4');
    setReg(cpu, 'rdi', BigInt(DATA)); setReg(cpu, 'rcx', 10n);
    arm(cpu, 0, DATA + 2, RW_WRITE, 1);
    const t = hw(cpu.run(10).trap);
    assert.equal(t.pc, BigInt(CODE));
    assert.equal(getReg(cpu, 'rcx'), 7n);
    assert.equal(getReg(cpu, 'rdi'), BigInt(DATA + 3));
    assert.equal(cpu.run(10).trap?.kind, 'halt');
    assert.equal(getReg(cpu, 'rcx'), 0n);
    assert.equal(getReg(cpu, 'rdi'), BigInt(DATA + 10));
  });

  test('repe cmpsb: a read watch on the source traps mid-way; the compare resumes with the same result', () => {
    const { cpu, mem } = machine('f3 a6 f4');
    const a = DATA, b = DATA + 0x100;
    for (let k = 0; k < 10; k++) { mem.write8(a + k, k); mem.write8(b + k, k); }
    setReg(cpu, 'rsi', BigInt(a)); setReg(cpu, 'rdi', BigInt(b)); setReg(cpu, 'rcx', 10n);
    arm(cpu, 0, a + 4, RW_RW, 1);
    const t = hw(cpu.run(10).trap);
    assert.equal(t.access, 'read');
    assert.equal(t.pc, BigInt(CODE));
    assert.equal(getReg(cpu, 'rcx'), 5n);
    assert.equal(getReg(cpu, 'rsi'), BigInt(a + 5));
    assert.equal(cpu.run(10).trap?.kind, 'halt');
    assert.equal(getReg(cpu, 'rcx'), 0n);
    assert.equal(cpu.getRflags() & ZF, ZF);
  });

  test('no watch armed: rep movsb runs as one instruction', () => {
    const { cpu } = machine('f3 a4 f4');
    setReg(cpu, 'rsi', BigInt(DATA)); setReg(cpu, 'rdi', BigInt(DATA + 0x100)); setReg(cpu, 'rcx', 100n);
    arm(cpu, 0, CODE + 0x100, RW_EXEC); // an execute breakpoint elsewhere does not slow or split it
    const r = cpu.run(10);
    assert.equal(r.trap?.kind, 'halt');
    assert.equal(r.executed, 2);
  });
});

describe('x86 MOV to/from debug registers', () => {
  test('ring 0: mov DRn, r64 programs a breakpoint that the next store hits; mov r64, DRn reads back; DR4/DR5 alias DR6/DR7', () => {
    const code = [
      '48 b8 13 00 60 00 00 00 00 00', // mov rax, DATA + 0x13
      '0f 23 c0', //                      mov dr0, rax
      'b8 02 00 0d 00', //                mov eax, 0xd0002 (G0, R/W0 = 01, LEN0 = 11)
      '0f 23 f8', //                      mov dr7, rax
      '0f 21 c1', //                      mov rcx, dr0
      '0f 21 fa', //                      mov rdx, dr7
      '0f 21 e6', //                      mov rsi, dr4
      '0f 21 ef', //                      mov rdi, dr5
      '88 43 12', //                      mov byte ptr [rbx + 0x12], al
      'f4',
    ].join(' ');
    const { cpu } = machine(code);
    setReg(cpu, 'rbx', BigInt(DATA));
    const r = cpu.run(20);
    const t = hw(r.trap);
    assert.equal(t.pc, BigInt(CODE + 10 + 3 + 5 + 3 + 4 * 3 + 3));
    assert.equal(t.addr, BigInt(DATA + 0x12));
    assert.equal(getReg(cpu, 'rcx'), BigInt(DATA + 0x13));
    assert.equal(getReg(cpu, 'rdx'), 0xd0402n);
    assert.equal(getReg(cpu, 'rsi'), DR6_FIXED);
    assert.equal(getReg(cpu, 'rdi'), 0xd0402n);
    assert.deepEqual(slotOf(cpu, 0), { lo: DATA + 0x10, len: 4, exec: false, read: false, write: true });
  });

  test('ring 3: #GP for both directions, nothing changed', () => {
    for (const bytes of ['0f 21 c1', '0f 23 c0']) {
      const { cpu } = machine(`${bytes} f4`, { user: true });
      setReg(cpu, 'rax', BigInt(DATA)); setReg(cpu, 'rcx', 7n);
      const r = cpu.run(10);
      assert.equal(r.trap?.kind, 'generalProtection', bytes);
      assert.equal(r.trap?.pc, BigInt(CODE));
      assert.equal(r.executed, 0);
      assert.equal(getReg(cpu, 'rcx'), 7n);
      assert.equal(cpu.readDr(0), 0n);
    }
  });

  test('DR8+ (REX.R) and LOCK: #UD; a 1 in bits 63:32 of DR6/DR7: #GP', () => {
    for (const bytes of ['44 0f 21 c1', '44 0f 23 c0', 'f0 0f 23 c0']) {
      const { cpu } = machine(`${bytes} f4`);
      assert.deepEqual(cpu.run(10).trap, { kind: 'undefined', pc: BigInt(CODE) }, bytes);
    }
    for (const bytes of ['0f 23 f0', '0f 23 f8', '0f 23 e0']) { // dr6, dr7, dr4
      const { cpu } = machine(`${bytes} f4`);
      setReg(cpu, 'rax', 1n << 32n);
      assert.equal(cpu.run(10).trap?.kind, 'generalProtection', bytes);
      assert.equal(cpu.readDr(7), 0x400n);
      assert.equal(cpu.readDr(6), DR6_FIXED);
    }
    // DR0-DR3 take any 64-bit value
    const { cpu } = machine('0f 23 d8 f4'); // mov dr3, rax
    setReg(cpu, 'rax', 0xdead000000000001n);
    assert.equal(cpu.run(10).trap?.kind, 'halt');
    assert.equal(cpu.readDr(3), 0xdead000000000001n);
  });

  test('ModRM.mod is ignored (always register to register); disassembly names DRn', () => {
    const d = x86_64.decodeBytes(Uint8Array.from([0x0f, 0x23, 0x00, 0x90]), BigInt(CODE));
    assert.equal(d?.length, 3);
    assert.equal(d?.operands, 'dr0, rax');
    for (const [bytes, text] of [
      [[0x0f, 0x21, 0xc1], 'rcx, dr0'], [[0x0f, 0x23, 0xf8], 'dr7, rax'], [[0x41, 0x0f, 0x21, 0xf7], 'r15, dr6'],
      [[0x44, 0x0f, 0x21, 0xc1], 'rcx, dr8'], [[0x66, 0x0f, 0x21, 0xc1], 'rcx, dr0'],
    ] as const) {
      const x = x86_64.disassemble!(Uint8Array.from(bytes), BigInt(CODE));
      assert.equal(x?.mnemonic, 'mov');
      assert.equal(x?.operands, text);
      assert.equal(x?.length, bytes.length);
    }
    // mod = 00 executes as mov dr0, rax
    const { cpu } = machine('0f 23 00 f4');
    setReg(cpu, 'rax', 0x1234n);
    assert.equal(cpu.run(10).trap?.kind, 'halt');
    assert.equal(cpu.readDr(0), 0x1234n);
  });
});

describe('x86 hw_breakpoint arch hooks', () => {
  const hooks = port.hwDebug!;

  test('pools and register names', () => {
    assert.deepEqual(hooks.pools, { data: 4, exec: 'shared' });
    assert.deepEqual([0, 1, 2, 3].map(i => hooks.registerName('data', i)), ['DR0', 'DR1', 'DR2', 'DR3']);
    assert.equal(hooks.registerName('exec', 2), 'DR2');
  });

  test('validate: lengths, alignment, read-only and execute lengths (-EINVAL with a reason)', () => {
    const A = 0xffffffff81001000n;
    for (const len of [1, 2, 4, 8]) {
      assert.equal(hooks.validate({ addr: A, len, type: 'w' }), null);
      assert.equal(hooks.validate({ addr: A, len, type: 'rw' }), null);
    }
    for (const len of [0, 3, 5, 16]) assert.equal(hooks.validate({ addr: A, len, type: 'w' })?.errno, -22, `len ${len}`);
    assert.equal(hooks.validate({ addr: A + 2n, len: 4, type: 'w' })?.errno, -22);
    assert.equal(hooks.validate({ addr: A + 4n, len: 8, type: 'rw' })?.errno, -22);
    assert.equal(hooks.validate({ addr: A + 2n, len: 2, type: 'w' }), null);
    assert.deepEqual(hooks.validate({ addr: A, len: 4, type: 'r' }), { errno: -22, reason: 'x86 debug registers cannot watch reads only (use rw)' });
    assert.equal(hooks.validate({ addr: A + 3n, len: 1, type: 'x' }), null);
    assert.equal(hooks.validate({ addr: A, len: 8, type: 'x' })?.errno, -22);
    assert.equal(hooks.validate({ addr: 0x0000800000000000n, len: 1, type: 'w' })?.errno, -22);
  });

  test('install writes DRn and DR7 (Gn + GE, R/W, LEN) as encode_dr7; the CPU traps on it; uninstall clears its bits', () => {
    const { cpu } = machine('88 03 89 43 10 f4'); // mov [rbx], al ; mov [rbx + 0x10], eax ; hlt
    setReg(cpu, 'rbx', BigInt(DATA));
    hooks.install(cpu, 'data', 1, { addr: BigInt(DATA + 0x10), len: 4, type: 'w' });
    assert.equal(cpu.readDr(1), BigInt(DATA + 0x10));
    assert.equal(cpu.readDr(7), 0x400n | 0x200n | 0x8n | (0xdn << 20n));
    hooks.install(cpu, 'exec', 2, { addr: BigInt(CODE + 5), len: 1, type: 'x' });
    assert.equal(cpu.readDr(7), 0x400n | 0x200n | 0x8n | 0x20n | (0xdn << 20n));
    hooks.install(cpu, 'data', 0, { addr: BigInt(DATA), len: 8, type: 'rw' });
    assert.equal(cpu.readDr(7) & 0xf0003n, 0x2n | (0xbn << 16n));
    let t = hw(cpu.run(10).trap);
    assert.equal(t.hits, 1);
    t = hw(cpu.run(10).trap);
    assert.equal(t.hits, 2);
    assert.equal(t.pc, BigInt(CODE + 5));
    t = hw(cpu.run(10).trap);
    assert.equal(t.hits, 4);
    assert.equal(t.access, 'exec');
    assert.deepEqual(hooks.snapshot(cpu).map(r => r.name), ['DR0', 'DR1', 'DR2', 'DR3', 'DR6', 'DR7']);
    assert.equal(hooks.snapshot(cpu).find(r => r.name === 'DR6')?.value, DR6_FIXED | 7n);
    hooks.acknowledge(cpu);
    assert.equal(cpu.readDr(6), DR6_FIXED);
    hooks.uninstall(cpu, 'exec', 2);
    hooks.uninstall(cpu, 'data', 0);
    assert.equal(cpu.readDr(7), 0x400n | 0x200n | 0x8n | (0xdn << 20n));
    assert.equal(cpu.hw.slot(2), null);
    assert.equal(cpu.run(10).trap?.kind, 'halt');
    hooks.uninstall(cpu, 'data', 1);
    assert.equal(cpu.readDr(7), 0x600n, 'GE stays (as Linux leaves it)');
    assert.equal(cpu.hw.dataArmed || cpu.hw.execArmed, false);
  });

  test('installed between runs: a write the kernel makes for the guest before the next run is reported at its boundary', () => {
    const { cpu, mem } = machine('90 f4');
    hooks.install(cpu, 'data', 0, { addr: BigInt(DATA + 8), len: 8, type: 'w' });
    mem.writeBytes(DATA + 12, Uint8Array.from([1, 2]), 'kernel');
    mem.writeBytes(DATA + 16, Uint8Array.from([3]), 'kernel'); // outside the watch
    const r = cpu.run(10);
    assert.equal(r.executed, 0);
    const t = hw(r.trap);
    assert.equal(t.pc, BigInt(CODE));
    assert.equal(t.addr, BigInt(DATA + 12));
    assert.equal(cpu.readDr(6), DR6_FIXED | 1n);
    hooks.uninstall(cpu, 'data', 0);
    mem.writeBytes(DATA + 12, Uint8Array.from([5]), 'kernel');
    assert.equal(cpu.run(10).trap?.kind, 'halt', 'uninstalled: no longer recorded');
  });

  test('acknowledge clears BS too', () => {
    const { cpu } = machine('90 f4');
    cpu.setRflags(0x2 | TF);
    cpu.run(10);
    assert.equal(cpu.readDr(6) & BS, BS);
    hooks.acknowledge(cpu);
    assert.equal(cpu.readDr(6), DR6_FIXED);
  });
});
