/**
 * rv64 F/D in the CPU (the arithmetic itself is checked bit for bit against
 * qemu-riscv64 by the fpops conformance programs): NaN-boxing of singles,
 * fmv.x.w sign extension, the floating-point CSRs from user mode, a
 * division by zero raising DZ, and the FP state carried by a context
 * switch (saveContext / restoreContext).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, run, get, set, DATA } from './riscv64-harness';

// flw fa0,0(a0); fmv.x.w a1,fa0; fcvt.d.s fa1,fa0; fadd.d fa2,fa1,fa1; fsd fa2,8(a0); frflags a2; fsrm a3;
// frcsr a4; fdiv.d fa3,fa1,ft0; frflags a5; ebreak
const CODE = '07 25 05 00 d3 05 05 e0 d3 05 05 42 53 f6 b5 02 27 34 c5 00 73 26 10 00 73 90 26 00 73 27 30 00 d3 f6 05 1a f3 27 10 00 73 00 10 00';

describe('rv64 F/D', () => {
  test('singles are NaN-boxed, fmv.x.w sign-extends, the FP CSRs work in user mode, x/0 raises DZ', () => {
    const { cpu, mem } = machine(CODE, { user: true });
    mem.writeBytes(DATA, new Uint8Array(new Float32Array([-1.5]).buffer));
    set(cpu, 'a0', BigInt(DATA));
    set(cpu, 'a3', 3n); // frm = rup
    const r = run(cpu);
    assert.equal(r.trap?.kind, 'breakpoint');
    assert.equal(cpu.f[10], 0xffffffffbfc00000n, 'fa0 boxed');
    assert.equal(get(cpu, 'a1'), 0xffffffffbfc00000n, 'fmv.x.w sign-extends bit 31');
    assert.equal(new DataView(mem.readBytes(DATA + 8, 8).buffer).getFloat64(0, true), -3);
    assert.equal(get(cpu, 'a2'), 0n, 'exact so far');
    assert.equal(get(cpu, 'a4'), 3n << 5n, 'fcsr = frm << 5 | fflags');
    assert.equal(get(cpu, 'a5'), 8n, 'DZ');
    assert.equal(cpu.f[13], 0xfff0000000000000n, '-1.5 / +0 = -inf');
  });

  test('a context switch saves and restores the f registers, fflags and frm', () => {
    const { cpu } = machine('73 00 10 00');
    cpu.f[5] = 0x400921fb54442d18n;
    cpu.fflags = 0x11; cpu.frm = 2;
    const ctx = cpu.saveContext();
    cpu.f[5] = 0n; cpu.fflags = 0; cpu.frm = 0;
    cpu.restoreContext(ctx);
    assert.equal(cpu.f[5], 0x400921fb54442d18n);
    assert.equal(cpu.fflags, 0x11);
    assert.equal(cpu.frm, 2);
  });
});
