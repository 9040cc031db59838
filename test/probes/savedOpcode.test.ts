// On x86_64 probes whose first byte is the same share one saved-opcode array
// (10,000 probes keep no array of their own for it): each probe still
// restores its own address's byte when it goes, and leaves the others armed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../emulator/machine';
import { mustVAddr } from '../../emulator/memory/address';
import { sampleImage, sym } from './helpers';

const INT3 = 0xcc;

describe('x86_64 kprobes: saved opcodes shared by value', () => {
  test('two probes over the same first byte keep, restore and leave armed their own bytes', () => {
    const m = new Machine(sampleImage(), { cpus: 1 });
    const mem = m.kernel.mem;
    const byte = (a: bigint): number => mem.readBytes(mustVAddr(a), 1)[0];
    // do_fork and the next function (by address) that starts with the same byte and takes a probe
    const a = sym('do_fork');
    const origA = byte(a);
    const pa = { addr: a };
    assert.equal(m.kprobes.registerKprobe(pa), 0);
    let pb: { addr: bigint } | undefined;
    for (const f of sampleImage().symbols.functions()) {
      if (f.value === a || byte(f.value) !== origA) continue;
      const p = { addr: f.value };
      if (m.kprobes.registerKprobe(p) === 0) { pb = p; break; }
    }
    assert.ok(pb, `another function starting with 0x${origA.toString(16)}`);
    const b = pb.addr, origB = origA;
    assert.deepEqual([...(pa as { opcode?: Uint8Array }).opcode ?? []], [origA]);
    assert.deepEqual([...(pb as { opcode?: Uint8Array }).opcode ?? []], [origB]);
    assert.equal(byte(a), INT3);
    assert.equal(byte(b), INT3);
    m.kprobes.unregisterKprobe(pa);
    assert.equal(byte(a), origA, 'the first probe restored its byte');
    assert.equal(byte(b), INT3, 'the second probe is still armed');
    assert.deepEqual([...(pb as { opcode?: Uint8Array }).opcode ?? []], [origB]);
    m.kprobes.unregisterKprobe(pb);
    assert.equal(byte(b), origB);
  });
});
