/**
 * aarch64 traps and system instructions: svc/hvc/brk/wfi as typed traps
 * with the architectural pc, undefined encodings, EL0 restrictions,
 * tpidr_el0 and nzcv through mrs/msr, and decode-cache invalidation when
 * code is rewritten.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { runWords, getX, CODE, wordsToBytes } from '../../fixtures/a64/harness';
import { aarch64 } from '../../../emulator/arch/aarch64/index';

const PC = BigInt(CODE);

describe('a64 traps', () => {
  test('svc #0 is a syscall (pc = next), hvc #0 a hypercall, wfi a halt', () => {
    assert.deepEqual(runWords([0xd4000001], {}, 5, { user: true }).res, { executed: 1, trap: { kind: 'syscall', pc: PC + 4n } });
    assert.deepEqual(runWords([0xd4000002], {}, 5).res, { executed: 1, trap: { kind: 'hypercall', pc: PC + 4n } });
    assert.deepEqual(runWords([0xd503207f], {}, 5).res, { executed: 1, trap: { kind: 'halt', pc: PC + 4n } });
  });
  test('brk #4 stops with the pc OF the brk and leaves the pc there', () => {
    const m = runWords([0xd503201f, 0xd4200080], {}, 5);
    assert.deepEqual(m.res.trap, { kind: 'breakpoint', pc: PC + 4n });
    assert.equal(m.cpu.getPc(), PC + 4n);
    assert.deepEqual(Array.from(aarch64.breakpointInsn), [0x80, 0x00, 0x20, 0xd4]);
  });
  test('undefined encodings and hvc from EL0 are undefined traps at the instruction', () => {
    assert.deepEqual(runWords([0x00000000], {}, 5).res, { executed: 0, trap: { kind: 'undefined', pc: PC } });
    assert.deepEqual(runWords([0xd4000002], {}, 5, { user: true }).res, { executed: 0, trap: { kind: 'undefined', pc: PC } });
    assert.deepEqual(runWords([0xd538d080 /* mrs x0, tpidr_el1 */], {}, 5, { user: true }).res.trap?.kind, 'undefined');
  });
});

describe('a64 system registers', () => {
  test('msr/mrs tpidr_el0 at EL0, mrs nzcv', () => {
    const m = runWords([0xd51bd041, 0xd53bd040], { x1: 0xdeadbeefcafen }, 2, { user: true });
    assert.equal(getX(m.cpu, 'x0'), 0xdeadbeefcafen);
    assert.equal(m.cpu.tpidr0, 0xdeadbeefcafen);
    const n = runWords([0xeb1f03ff /* cmp xzr, xzr */, 0xd53b4200], {}, 2);
    assert.equal(getX(n.cpu, 'x0'), 0x60000000n); // Z C
    assert.equal(getX(n.cpu, 'pstate') >> 28n, 6n);
  });
});

describe('a64 decode cache', () => {
  test('rewriting an executed instruction takes effect on the next run', () => {
    const m = runWords([0x91000420 /* add x0, x1, #1 */, 0xd503207f], { x1: 1n }, 5);
    assert.equal(getX(m.cpu, 'x0'), 2n);
    m.mem.writeBytes(CODE, wordsToBytes([0x91000820 /* add x0, x1, #2 */]));
    m.cpu.setPc(PC);
    m.cpu.run(5);
    assert.equal(getX(m.cpu, 'x0'), 3n);
  });
  test('a misaligned pc is reported, not decoded', () => {
    const m = runWords([0xd503201f], {}, 0);
    m.cpu.setPc(PC + 2n);
    assert.equal(m.cpu.run(1).trap?.kind, 'generalProtection');
  });
});
