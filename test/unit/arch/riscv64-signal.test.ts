/**
 * riscv64 signal frames against Linux 6.1's struct rt_sigframe
 * (arch/riscv/kernel/signal.c, uapi asm/ucontext.h, asm/sigcontext.h,
 * asm/ptrace.h): siginfo at 0, ucontext at 128 with uc_sigmask at +40 and
 * uc_mcontext at +176 (16-aligned), sc_regs = pc then x1..x31, sc_fpregs
 * f[32] then fcsr, frame size 1088; the handler gets a0 = sig, a1 = &info,
 * a2 = &uc, ra = the `li a7, 139; ecall` trampoline; rt_sigreturn restores
 * everything the frame holds, including what the handler changed there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { riscv64 } from '../../../emulator/arch/riscv64/index';
import { riscv64SignalFrames } from '../../../emulator/arch/riscv64/signal';
import { machine, STACK_TOP } from './riscv64-harness';

const TRAMP = 0x7f0000001000n, HANDLER = 0x401234n;
const SP = BigInt(STACK_TOP - 0x108); // not 16-aligned: the frame is

function delivered() {
  const m = machine('13000000', { user: true });
  for (let i = 1; i <= 31; i++) if (i !== 2) m.cpu.setReg(i, 0x1000n * BigInt(i) + 0xabn);
  m.cpu.setReg(2, SP);
  for (let i = 0; i < 32; i++) m.cpu.f[i] = 0xf00000000n + BigInt(i);
  m.cpu.fflags = 0x13; m.cpu.frm = 3;
  m.cpu.setPc(0x400abcn);
  const ok = riscv64SignalFrames.push(m.cpu, m.mem, { sig: 17, handler: HANDLER, flags: 0n, restorer: 0n, mask: 0x4000n, tramp: () => TRAMP });
  return { ...m, ok };
}

test('riscv64 is registered with signal frames', () => {
  assert.equal(riscv64.signalFrames, riscv64SignalFrames);
});

test('riscv64 signal frame: Linux 6.1 layout and handler entry registers', () => {
  const { cpu, mem, ok } = delivered();
  assert.ok(ok);
  const frame = (SP - 1088n) & ~15n;
  assert.equal(cpu.getReg(2), frame);
  assert.equal(cpu.getPc(), HANDLER);
  assert.equal(cpu.getReg(10), 17n);
  assert.equal(cpu.getReg(11), frame);
  assert.equal(cpu.getReg(12), frame + 128n);
  assert.equal(cpu.getReg(1), TRAMP);
  const b = mem.readBytes(Number(frame), 1088);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  assert.equal(dv.getInt32(0, true), 17, 'si_signo');
  assert.equal(dv.getBigUint64(128 + 40, true), 0x4000n, 'uc_sigmask');
  const mc = 128 + 176;
  assert.equal(dv.getBigUint64(mc, true), 0x400abcn, 'sc_regs.pc');
  assert.equal(dv.getBigUint64(mc + 8, true), 0x10abn, 'sc_regs.ra');
  assert.equal(dv.getBigUint64(mc + 16, true), SP, 'sc_regs.sp');
  assert.equal(dv.getBigUint64(mc + 31 * 8, true), 0x1f0abn, 'sc_regs.t6');
  assert.equal(dv.getBigUint64(mc + 256 + 5 * 8, true), 0xf00000005n, 'sc_fpregs.d.f[5]');
  assert.equal(dv.getUint32(mc + 256 + 256, true), (3 << 5) | 0x13, 'sc_fpregs.d.fcsr');
  // the trampoline page's code: li a7, 139; ecall
  assert.deepEqual([...riscv64SignalFrames.trampoline], [0x93, 0x08, 0xb0, 0x08, 0x73, 0x00, 0x00, 0x00]);
});

test('riscv64 rt_sigreturn restores the registers, FP state and mask from the frame', () => {
  const { cpu, mem } = delivered();
  const frame = cpu.getReg(2);
  const mc = Number(frame) + 128 + 176;
  // the handler clobbers registers and edits the saved pc and f1 in its ucontext
  for (let i = 1; i <= 31; i++) if (i !== 2) cpu.setReg(i, 0n);
  cpu.f.fill(0n); cpu.fflags = 0; cpu.frm = 0;
  const w = new Uint8Array(8); new DataView(w.buffer).setBigUint64(0, 0x400ac0n, true);
  mem.writeBytes(mc, w);
  new DataView(w.buffer).setBigUint64(0, 0x1234n, true);
  mem.writeBytes(mc + 256 + 8, w);
  assert.equal(riscv64SignalFrames.pop(cpu, mem), 0x4000n);
  assert.equal(cpu.getPc(), 0x400ac0n);
  assert.equal(cpu.getReg(2), SP);
  assert.equal(cpu.getReg(1), 0x10abn);
  assert.equal(cpu.getReg(31), 0x1f0abn);
  assert.equal(cpu.f[1], 0x1234n);
  assert.equal(cpu.f[31], 0xf0000001fn);
  assert.equal(cpu.fflags, 0x13);
  assert.equal(cpu.frm, 3);
});

test('riscv64 rt_sigreturn refuses a frame whose reserved FP words are not zero (Linux: -EINVAL, SIGSEGV)', () => {
  const { cpu, mem } = delivered();
  const frame = Number(cpu.getReg(2));
  mem.writeBytes(frame + 128 + 176 + 256 + 516, Uint8Array.of(1));
  assert.equal(riscv64SignalFrames.pop(cpu, mem), null);
});

test('riscv64 signal frame: no room below a bad sp', () => {
  const m = machine('13000000', { user: true });
  m.cpu.setReg(2, 0x100n);
  assert.equal(riscv64SignalFrames.push(m.cpu, m.mem, { sig: 10, handler: HANDLER, flags: 0n, restorer: 0n, mask: 0n, tramp: () => TRAMP }), false);
});
