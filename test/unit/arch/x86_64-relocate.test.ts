/**
 * x86_64 relocate(): a copied instruction moved from its original address
 * to another keeps addressing the same bytes (RIP-relative disp32) and, with
 * the 'retarget' policy, branching to the same place (rel8/rel32); what no
 * longer reaches is refused with a reason, as Linux's __copy_instruction
 * refuses (a copy is never re-encoded).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { relocate, Relocated, RelocationRefusal } from '../../../emulator/arch/x86_64/relocate';
import { decodeBytes } from '../../../emulator/arch/x86_64/decoder';
import { fromVAddr, mustVAddr } from '../../../emulator/memory/address';
import { hexBytes } from '../../fixtures/x86/harness';

const FROM = 0xffffffff81000000n;
const GiB2 = 2n ** 31n;

function ok(r: Relocated | RelocationRefusal): Relocated {
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r;
}
function refused(r: Relocated | RelocationRefusal): RelocationRefusal {
  assert.ok(!r.ok, 'refused');
  return r;
}
/** absolute address of the memory operand of the one instruction `bytes` at `at` */
function operandAt(bytes: Uint8Array, at: bigint): bigint {
  const i = decodeBytes(bytes, mustVAddr(at));
  assert.ok(i?.ripRel);
  return fromVAddr(i.disp);
}
function branchTarget(bytes: Uint8Array, at: bigint): bigint {
  const i = decodeBytes(bytes, mustVAddr(at));
  assert.ok(i);
  return fromVAddr(i.target);
}

describe('x86 relocate: RIP-relative operands', () => {
  const load = hexBytes('48 8b 05 10 00 00 00'); // mov rax, qword ptr [rip + 0x10]
  const target = FROM + 7n + 0x10n;

  for (const [name, to] of [
    ['moved up by 2 GiB - 4 KiB', FROM + GiB2 - 0x1000n],
    ['moved down by 2 GiB - 4 KiB', FROM - GiB2 + 0x1000n],
    ['moved to the slot page next door', FROM + 0x1000n],
  ] as const) {
    test(`${name}: the copy reads the same address`, () => {
      const r = ok(relocate(load, FROM, to, { branches: 'keep' }));
      assert.equal(r.bytes.length, load.length, 'same length');
      assert.equal(operandAt(r.bytes, to), target);
      assert.deepEqual([...r.bytes.subarray(0, 3)], [0x48, 0x8b, 0x05], 'only the displacement changes');
      assert.deepEqual([...load], [0x48, 0x8b, 0x05, 0x10, 0, 0, 0], 'the input is not modified');
    });
  }

  test('out of rel32 reach: refused, naming the instruction and the operand', () => {
    const to = FROM + GiB2 + 0x100n;
    const r = refused(relocate(load, FROM, to, { branches: 'keep' }));
    assert.equal(r.kind, 'reach');
    assert.equal(r.offset, 0);
    assert.match(r.reason, /^0xffffffff81000000: RIP-relative operand 0xffffffff81000017 is out of rel32 reach/);
  });

  test('a rip-relative store with an immediate after the displacement keeps its immediate', () => {
    const st = hexBytes('48 c7 05 10 00 00 00 2a 00 00 00'); // mov qword ptr [rip + 0x10], 0x2a
    const to = FROM - 0x40000000n;
    const r = ok(relocate(st, FROM, to, { branches: 'keep' }));
    assert.equal(operandAt(r.bytes, to), FROM + 11n + 0x10n);
    assert.deepEqual([...r.bytes.subarray(7)], [0x2a, 0, 0, 0]);
  });

  test('eip-relative (67 prefix) reaches from anywhere: the address is taken modulo 2^32', () => {
    const e = hexBytes('67 8b 05 10 00 00 00'); // mov eax, dword ptr [eip + 0x10]
    const to = FROM + 4n * GiB2 + 0x123n;
    const r = ok(relocate(e, FROM, to, { branches: 'keep' }));
    assert.equal(operandAt(r.bytes, to), operandAt(e, FROM));
  });

  test('a sequence: each instruction is moved by its own offset', () => {
    // push rbp; mov rax, [rip + 0x10]; mov rbp, rsp
    const seq = hexBytes('55 48 8b 05 10 00 00 00 48 89 e5');
    const to = FROM + 0x10000000n;
    const r = ok(relocate(seq, FROM, to, { branches: 'keep' }));
    assert.equal(r.insns.length, 3);
    assert.equal(operandAt(r.bytes.subarray(1, 8), to + 1n), FROM + 8n + 0x10n);
    assert.equal(r.bytes[0], 0x55);
    assert.deepEqual([...r.bytes.subarray(8)], [0x48, 0x89, 0xe5]);
  });
});

describe('x86 relocate: relative branches', () => {
  test("'keep' copies a branch unchanged (the kprobe slot: resume_execution adjusts ip)", () => {
    const jcc = hexBytes('74 10');
    const r = ok(relocate(jcc, FROM, FROM + 0x100000n, { branches: 'keep' }));
    assert.deepEqual([...r.bytes], [...jcc]);
  });

  test("'retarget' jcc rel8 within reach: same target", () => {
    const jcc = hexBytes('74 10'); // je +0x10
    const to = FROM + 0x40n;
    const r = ok(relocate(jcc, FROM, to, { branches: 'retarget' }));
    assert.equal(r.bytes.length, 2, 'not re-encoded');
    assert.equal(branchTarget(r.bytes, to), FROM + 0x12n);
  });

  test("'retarget' jcc rel8 out of reach: refused (Linux never widens a copied jcc to rel32)", () => {
    const r = refused(relocate(hexBytes('74 10'), FROM, FROM + 0x1000n, { branches: 'retarget' }));
    assert.equal(r.kind, 'reach');
    assert.match(r.reason, /je rel8 to 0xffffffff81000012 does not reach from 0xffffffff81001000 \(a copied instruction is not re-encoded\)/);
  });

  test("'retarget' jcc rel32 and call rel32 moved by 1 GiB: same targets", () => {
    const to = FROM + GiB2 / 2n;
    const jne = hexBytes('0f 85 00 01 00 00');
    assert.equal(branchTarget(ok(relocate(jne, FROM, to, { branches: 'retarget' })).bytes, to), FROM + 6n + 0x100n);
    const call = hexBytes('e8 fb 0f 00 00');
    assert.equal(branchTarget(ok(relocate(call, FROM, to, { branches: 'retarget' })).bytes, to), FROM + 0x1000n);
  });

  test("'retarget' call rel32 beyond 2 GiB: refused", () => {
    const r = refused(relocate(hexBytes('e8 00 00 00 00'), FROM, FROM - GiB2 - 0x10n, { branches: 'retarget' }));
    assert.equal(r.kind, 'reach');
    assert.match(r.reason, /call rel32/);
  });

  test('loop rel8 (second instruction of a sequence) is retargeted at its own offset', () => {
    const seq = hexBytes('90 e2 fe'); // nop; loop self
    const to = FROM + 0x20n;
    const r = ok(relocate(seq, FROM, to, { branches: 'retarget' }));
    assert.equal(branchTarget(r.bytes.subarray(1), to + 1n), FROM + 1n);
  });
});

describe('x86 relocate: refusals of bad input', () => {
  test('a truncated instruction', () => {
    const r = refused(relocate(hexBytes('48 8b 05 10'), FROM, FROM + 0x1000n, { branches: 'keep' }));
    assert.equal(r.kind, 'decode');
    assert.match(r.reason, /0xffffffff81000000: the bytes are not a whole instruction/);
  });
  test('undecodable bytes after a good instruction name their offset', () => {
    const r = refused(relocate(hexBytes('90 0f 0f'), FROM, FROM + 0x1000n, { branches: 'keep' }));
    assert.equal(r.kind, 'decode');
    assert.equal(r.offset, 1);
    assert.match(r.reason, /^0xffffffff81000001: /);
  });
  test('a non-canonical original address', () => {
    const r = refused(relocate(hexBytes('90'), 0x8000000000000000n, FROM, { branches: 'keep' }));
    assert.match(r.reason, /not canonical/);
  });
});
