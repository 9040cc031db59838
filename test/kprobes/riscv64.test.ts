/**
 * RISC-V kprobes (emulator/arch/riscv64/kprobes) on the riscv64 sample
 * kernel: odd addresses and system instructions refused, c.ebreak over
 * compressed instructions and ebreak over 4-byte ones with the original
 * bytes restored exactly, simulation of jal/jalr/auipc/branches and their
 * compressed forms, out-of-line steps ended by the slot's ebreak,
 * kretprobes through ra — checked against the unprobed run and x86_64.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Errno } from '../../emulator/kernel/abi';
import type { Kprobe, Kretprobe } from '../../emulator/kprobes';
import { rig, insns } from './harness';

const RV = { arch: 'riscv64', cpus: 2 };
const FUNCS = ['do_fork', 'copy_process', 'alloc_pid', 'sys_open', 'path_lookup', 'fib', 'kprobe_target'];
/** refused: system instructions, fences, LR/SC (nothing else is in these functions) */
const refused = (mnemonic: string): boolean => /^(ecall|ebreak|c\.ebreak|csr|fence|wfi|sret)/.test(mnemonic);

describe('riscv64 kprobes', () => {
  test('odd address -EINVAL; c.ebreak over 2-byte and ebreak over 4-byte instructions; unregister restores the bytes', () => {
    const r = rig(RV);
    assert.equal(r.engine.registerKprobe({ addr: r.sym('do_fork') + 1n }), -Errno.EINVAL);
    const mem = r.machine.kernel.mem;
    const at = (a: bigint, n: number): number[] => [...mem.readBytes(Number(BigInt.asIntN(64, a)), n)];
    let two = 0, four = 0;
    for (const i of insns(r, 'copy_process').concat(insns(r, 'do_fork'))) {
      if (refused(i.mnemonic)) continue;
      const before = at(i.addr, i.length);
      const kp: Kprobe = { addr: i.addr };
      assert.equal(r.engine.registerKprobe(kp), 0, `${i.mnemonic} ${i.operands}`);
      assert.deepEqual(at(i.addr, i.length), i.length === 2 ? [0x02, 0x90] : [0x73, 0x00, 0x10, 0x00], `${i.mnemonic} (${i.length} bytes)`);
      if (i.length === 2) two++; else four++;
      r.engine.unregisterKprobe(kp);
      assert.deepEqual(at(i.addr, i.length), before);
    }
    assert.ok(two > 0 && four > 0, `${two} compressed, ${four} full-size`);
  });

  test('a probe on every instruction of busy functions: every line the kernel prints is unchanged, every probe hit counted', () => {
    const plain = rig(RV).run();
    const r = rig(RV);
    const kps: Kprobe[] = [];
    let sims = 0;
    for (const f of FUNCS) {
      for (const i of insns(r, f)) {
        if (refused(i.mnemonic)) { assert.equal(r.engine.registerKprobe({ addr: i.addr }), -Errno.EINVAL, i.mnemonic); continue; }
        const kp: Kprobe = { addr: i.addr, pre_handler: () => 0, post_handler: () => undefined };
        assert.equal(r.engine.registerKprobe(kp), 0, `${i.mnemonic} ${i.operands} in ${f}`);
        if (kp.ainsn?.mode === 'simulate') sims++;
        kps.push(kp);
      }
    }
    const lines = r.run();
    assert.equal(r.machine.exit?.reason, 'poweroff');
    assert.deepEqual(lines.filter(l => !l.startsWith('kprobe')).sort(), [...plain].sort());
    assert.ok(lines.some(l => /^summary: .*checksum f5eea83031290534$/.test(l)));
    assert.ok(sims > 10, `${sims} simulated probes`);
    assert.ok(kps.filter(k => (k.hits ?? 0) > 0).length > kps.length / 2);
    assert.equal(kps.reduce((n, k) => n + (k.nmissed ?? 0), 0), 0);
  });

  test('kretprobe through ra: the same counts and return values as on x86_64; never optimized', () => {
    const counts = (arch: string): { k: number; r: number; neg: number } => {
      const r = rig({ arch, cpus: 2 });
      const kp: Kprobe = { symbol_name: 'do_fork', pre_handler: () => 0 };
      let neg = 0;
      const rp: Kretprobe = { kp: { symbol_name: 'sys_open' }, maxactive: 20, handler: (_ri, regs) => { if (BigInt.asIntN(64, regs.returnValue) < 0n) neg++; return 0; } };
      assert.equal(r.engine.registerKprobe(kp), 0);
      assert.equal(r.engine.registerKretprobe(rp), 0);
      r.engine.waitForOptimizer();
      if (arch === 'riscv64') assert.match(r.engine.optimizationStatus(kp.addr as bigint).reason ?? '', /no jump optimization on riscv64/);
      r.run();
      return { k: kp.hits ?? 0, r: rp.kp.hits ?? 0, neg };
    };
    const v = counts('riscv64');
    assert.deepEqual(v, counts('x86_64'));
    assert.ok(v.r > 0 && v.neg > 0);
  });
});
