/**
 * struct kretprobe_instance as the engine keeps it (KretprobeInstanceRec):
 * ret_addr and stack held as VAddr numbers, the BigInt made when read.
 * Unit level: the values round-trip for canonical and non-canonical
 * addresses and through the halves setter. Machine level, on every arch
 * with kprobes: what a return handler reads in ri->ret_addr and ri->stack
 * is the return address and its place as the entry saw them (the stack
 * slot on x86_64, the link register and sp on arm64 / riscv), and the call
 * returns there.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KretprobeInstanceRec, type Kretprobe } from '../../emulator/kprobes/kprobe';
import { KPROBE_ARCHES, returnAddressOnEntry, rig } from './harness';

const rp: Kretprobe = { kp: { symbol_name: 'fib' } };

describe('KretprobeInstanceRec', () => {
  test('ret_addr and stack round-trip canonical kernel and user addresses and zero', () => {
    const ri = new KretprobeInstanceRec(rp, 0x1000n);
    for (const a of [0xffffffff81000123n, 0x00007fffffffe000n, 0n, 0xffff800000000000n]) {
      ri.ret_addr = a;
      ri.stack = a + 8n & 0xffffffffffffffffn;
      assert.equal(ri.ret_addr, a);
      assert.equal(ri.stack, a + 8n & 0xffffffffffffffffn);
    }
  });

  test('a non-canonical value is kept exactly (no number can hold it)', () => {
    const ri = new KretprobeInstanceRec(rp, 0n);
    ri.ret_addr = 0x1234567890abcdefn;
    ri.stack = 0x8000000000000001n;
    assert.equal(ri.ret_addr, 0x1234567890abcdefn);
    assert.equal(ri.stack, 0x8000000000000001n);
    assert.ok(Number.isNaN(ri.retV));
    ri.ret_addr = -1n; // a negative bigint is its 64-bit pattern
    assert.equal(ri.ret_addr, 0xffffffffffffffffn);
  });

  test('setRetHalves gives the 64-bit value of its halves', () => {
    const ri = new KretprobeInstanceRec(rp, 0n);
    ri.setRetHalves(0x81000123 | 0, -1);
    assert.equal(ri.ret_addr, 0xffffffff81000123n);
    ri.setRetHalves(0x90abcdef | 0, 0x12345678);
    assert.equal(ri.ret_addr, 0x1234567890abcdefn);
    ri.setRetHalves(4, 0);
    assert.equal(ri.ret_addr, 4n);
  });
});

describe('kretprobe instances on a running machine', () => {
  for (const arch of KPROBE_ARCHES) {
    test(`${arch}: the return handler reads the entry's return address and its place; the call returns there`, () => {
      const r = rig({ arch, cpus: 1 });
      const entries: { ra: bigint; place: bigint }[] = [];
      let returns = 0;
      const probe: Kretprobe = {
        kp: { symbol_name: 'fib' },
        maxactive: 64,
        entry_handler: (_ri, regs) => {
          const ra = regs.arch.abi.returnAddress;
          entries.push({ ra: returnAddressOnEntry(regs), place: ra.kind === 'stack' ? regs.sp + BigInt(ra.offset) : regs.sp });
          return 0;
        },
        handler: (ri, regs) => {
          const e = entries.pop();
          assert.ok(e, 'a return without an entry');
          assert.equal(ri.ret_addr, e.ra);
          assert.equal(ri.stack, e.place);
          // the handlers see ip at the trampoline; the CPU resumes at ri.ret_addr (checked on the next entry or at the end)
          assert.equal(regs.ip, r.engine.kretprobes.trampoline);
          returns++;
          return 0;
        },
      };
      assert.equal(r.engine.registerKretprobe(probe), 0);
      const exit = r.machine.run();
      assert.equal(exit.reason, 'poweroff', exit.detail);
      assert.ok(returns > 100, `only ${returns} returns`);
      assert.equal(entries.length, 0);
      // every call went back to its real return address: the kernel printed what it prints without probes
      const plain = rig({ arch, cpus: 1 });
      assert.equal(plain.machine.run().reason, 'poweroff');
      const text = (m: typeof r.machine): string[] => m.printkRecords.filter(x => x.source === 'kernel').map(x => x.text);
      assert.deepEqual(text(r.machine), text(plain.machine));
    });
  }
});
