/**
 * aarch64 loads and stores: pre/post-index writeback, register offsets
 * with extend, sign extension, pairs, exclusive pairs (ldaxr/stlxr with a
 * lost reservation), LSE ldadd/cas, and page faults with the faulting pc.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { runWords, getX, setX, DATA, CODE } from '../../fixtures/a64/harness';

const D = BigInt(DATA);

describe('a64 load/store addressing', () => {
  test('ldr x0, [x1, #8]! writes the base back before; ldr x0, [x1], #-16 after', () => {
    const pre = runWords([0xf8408c20], { x1: D });
    pre.mem.write64(DATA + 8, 0x1122334455667788n);
    pre.cpu.setPc(BigInt(CODE)); setX(pre.cpu, 'x1', D);
    pre.cpu.run(1);
    assert.equal(getX(pre.cpu, 'x0'), 0x1122334455667788n);
    assert.equal(getX(pre.cpu, 'x1'), D + 8n);
    const post = runWords([0xf85f0420], { x1: D + 32n });
    assert.equal(getX(post.cpu, 'x0'), 0n);
    assert.equal(getX(post.cpu, 'x1'), D + 16n);
  });
  test('ldrsb x0, [x1, w2, sxtw]: negative 32-bit index, sign-extended byte', () => {
    const m = runWords([0x38a2c820], { x1: D + 0x100n, x2: 0xfffffff0n }, 0);
    m.mem.write8(DATA + 0xf0, 0x80);
    m.cpu.run(1);
    assert.equal(getX(m.cpu, 'x0'), 0xffffffffffffff80n);
  });
  test('stp x2, x3, [x4], #32 then ldp x0, x1, [sp, #-16]! round trip', () => {
    const m = runWords([0xa8820c82], { x2: 0xaan, x3: 0xbbn, x4: D });
    assert.equal(m.mem.read64(DATA), 0xaan);
    assert.equal(m.mem.read64(DATA + 8), 0xbbn);
    assert.equal(getX(m.cpu, 'x4'), D + 32n);
    const l = runWords([0xa9ff07e0], { sp: D + 16n }, 0);
    l.mem.write64(DATA, 7n); l.mem.write64(DATA + 8, 9n);
    l.cpu.run(1);
    assert.deepEqual([getX(l.cpu, 'x0'), getX(l.cpu, 'x1'), getX(l.cpu, 'sp')], [7n, 9n, D]);
  });
});

describe('a64 exclusives and atomics', () => {
  test('ldaxr/stlxr succeed when nothing intervened and fail after the value changed', () => {
    const ok = runWords([0xc85ffc20, 0xc802fc23], { x1: D, x3: 42n }, 2);
    assert.equal(getX(ok.cpu, 'x2'), 0n);
    assert.equal(ok.mem.read64(DATA), 42n);
    const lost = runWords([0xc85ffc20], { x1: D, x3: 42n }, 1);
    lost.mem.write64(DATA, 5n); // another agent's store
    lost.mem.writeBytes(CODE + 4, Uint8Array.of(0x23, 0xfc, 0x02, 0xc8));
    lost.cpu.run(1);
    assert.equal(getX(lost.cpu, 'x2'), 1n);
    assert.equal(lost.mem.read64(DATA), 5n);
  });
  test('stlxr without a reservation fails', () => {
    const m = runWords([0xc802fc23], { x1: D, x3: 42n });
    assert.equal(getX(m.cpu, 'x2'), 1n);
    assert.equal(m.mem.read64(DATA), 0n);
  });
  test('ldadd x2, x0, [x1] and cas x0, x2, [x1]', () => {
    const a = runWords([0xf8220020], { x1: D, x2: 5n }, 0);
    a.mem.write64(DATA, 10n); a.cpu.run(1);
    assert.equal(getX(a.cpu, 'x0'), 10n);
    assert.equal(a.mem.read64(DATA), 15n);
    const c = runWords([0xc8a07c22], { x0: 3n, x1: D, x2: 99n }, 0);
    c.mem.write64(DATA, 3n); c.cpu.run(1);
    assert.equal(c.mem.read64(DATA), 99n);
    assert.equal(getX(c.cpu, 'x0'), 3n);
    const f = runWords([0xc8a07c22], { x0: 4n, x1: D, x2: 99n }, 0);
    f.mem.write64(DATA, 3n); f.cpu.run(1);
    assert.equal(f.mem.read64(DATA), 3n, 'compare failed: memory unchanged');
    assert.equal(getX(f.cpu, 'x0'), 3n, 'old value returned');
  });
});

describe('a64 memory faults', () => {
  test('a load from an unmapped address is a page fault at the load, not retired', () => {
    const m = runWords([0xd503201f /* nop */, 0xf8408c20], { x1: 0x100000n }, 2);
    assert.equal(m.res.executed, 1);
    assert.deepEqual(m.res.trap, { kind: 'pageFault', pc: BigInt(CODE + 4), addr: 0x100008n, access: 'read', present: false, user: false });
    assert.equal(getX(m.cpu, 'x1'), 0x100000n, 'no writeback');
    assert.equal(m.cpu.getPc(), BigInt(CODE + 4));
  });
  test('a pair store to an unmapped address is a write page fault', () => {
    const m = runWords([0xa8820c82], { x4: 0x900000n }, 1);
    assert.deepEqual(m.res.trap, { kind: 'pageFault', pc: BigInt(CODE), addr: 0x900000n, access: 'write', present: false, user: false });
  });
});
