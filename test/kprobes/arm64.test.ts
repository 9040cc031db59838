/**
 * arm64 kprobes (emulator/arch/aarch64/kprobes): decode-insn's verdicts,
 * simulation of pc-relative instructions, out-of-line single-step ended by
 * the slot's step breakpoint, kretprobes through the link register, no jump
 * optimization — on the aarch64 sample kernel, checked against the
 * unprobed run and against the x86_64 machine.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Errno } from '../../emulator/kernel/abi';
import type { Kprobe, Kretprobe } from '../../emulator/kprobes';
import { rig, insns } from './harness';

const A64 = { arch: 'aarch64', cpus: 2 };

/** Functions the sample kernel runs many times, with branches, calls, loads of literals and adrp. */
const FUNCS = ['do_fork', 'copy_process', 'alloc_pid', 'sys_open', 'path_lookup', 'fib', 'kprobe_target'];

describe('arm64 kprobes', () => {
  test('decode-insn: unaligned addresses and exception-generating instructions are -EINVAL; others slot or simulate', () => {
    const r = rig(A64);
    const doFork = r.sym('do_fork');
    assert.equal(r.engine.registerKprobe({ addr: doFork + 2n }), -Errno.EINVAL, 'unaligned');
    let sawReject = false, sawSim = false, sawSlot = false;
    for (const f of FUNCS) {
      for (const i of insns(r, f)) {
        const kp: Kprobe = { addr: i.addr };
        const rc = r.engine.registerKprobe(kp);
        const mode = kp.ainsn?.mode;
        // exception generation and exclusive load/store (an ldaxr..stlxr sequence) are refused
        if (i.flow === 'trap' || /^(ld|st)[al]?x[rp]/.test(i.mnemonic)) { assert.equal(rc, -Errno.EINVAL, `${i.mnemonic} at ${f}`); sawReject = true; continue; }
        assert.equal(rc, 0, `${i.mnemonic} ${i.operands} at ${f}`);
        const pcRelative = ['b', 'bl', 'br', 'blr', 'ret', 'cbz', 'cbnz', 'tbz', 'tbnz', 'adr', 'adrp'].includes(i.mnemonic)
          || i.mnemonic.startsWith('b.') || (i.mnemonic.startsWith('ldr') && !i.operands.includes('['));
        assert.equal(mode, pcRelative ? 'simulate' : 'slot', `${i.mnemonic} ${i.operands}`);
        if (mode === 'simulate') sawSim = true; else sawSlot = true;
      }
    }
    // the hypercall stub holds hvc #0: a probe there is refused
    const hvc = insns(r, 'kp_power_off').find(i => i.mnemonic === 'hvc');
    assert.ok(hvc, 'kp_power_off makes the power-off hypercall');
    assert.equal(r.engine.registerKprobe({ addr: hvc.addr }), -Errno.EINVAL);
    assert.ok(sawSim && sawSlot && sawReject, `sim ${sawSim} slot ${sawSlot} reject ${sawReject}`);
  });

  test('a probe on every instruction of busy functions: the kernel runs exactly as without probes, every probe hit', () => {
    const plain = rig(A64).run();
    const r = rig(A64);
    const kps: Kprobe[] = [];
    let posts = 0;
    for (const f of FUNCS) {
      for (const i of insns(r, f)) {
        if (i.flow === 'trap' || /^(ld|st)[al]?x[rp]/.test(i.mnemonic)) continue;
        const kp: Kprobe = { addr: i.addr, pre_handler: () => 0, post_handler: () => { posts++; } };
        assert.equal(r.engine.registerKprobe(kp), 0);
        kps.push(kp);
      }
    }
    const lines = r.run();
    assert.equal(r.machine.exit?.reason, 'poweroff');
    // the probes cost time, so lines of different CPUs may interleave differently; every line is the same
    assert.deepEqual(lines.filter(l => !l.startsWith('kprobe')).sort(), [...plain].sort(), 'simulated and stepped instructions behave as the real ones');
    assert.ok(lines.some(l => /^summary: .*checksum f5eea83031290534$/.test(l)));
    const hit = kps.filter(k => (k.hits ?? 0) > 0).length;
    assert.ok(hit > kps.length / 2, `${hit} of ${kps.length} probes hit`);
    assert.equal(kps.reduce((n, k) => n + (k.nmissed ?? 0), 0), 0);
    assert.equal(posts, kps.reduce((n, k) => n + (k.hits ?? 0), 0), 'a post handler per hit');
  });

  test('kretprobe on sys_open (link register hijack) sees the return values; same hit counts as on x86_64; never [OPTIMIZED]', () => {
    const counts = (arch: string): { k: number; r: number; neg: number; optimized: boolean } => {
      const r = rig({ arch, cpus: 2 });
      const kp: Kprobe = { symbol_name: 'do_fork', pre_handler: () => 0 };
      let neg = 0;
      const rp: Kretprobe = { kp: { symbol_name: 'sys_open' }, maxactive: 20, handler: (_ri, regs) => { if (BigInt.asIntN(64, regs.returnValue) < 0n) neg++; return 0; } };
      assert.equal(r.engine.registerKprobe(kp), 0);
      assert.equal(r.engine.registerKretprobe(rp), 0);
      r.engine.waitForOptimizer();
      const optimized = r.engine.isOptimized(kp.addr as bigint);
      r.run();
      return { k: kp.hits ?? 0, r: rp.kp.hits ?? 0, neg, optimized };
    };
    const a = counts('aarch64'), x = counts('x86_64');
    assert.equal(a.optimized, false);
    assert.equal(x.optimized, true, 'x86_64 optimizes the same probe');
    assert.deepEqual({ k: a.k, r: a.r, neg: a.neg }, { k: x.k, r: x.r, neg: x.neg });
    assert.ok(a.r > 0 && a.neg > 0);
    const st = rig(A64);
    const kp: Kprobe = { symbol_name: 'do_fork' };
    st.engine.registerKprobe(kp);
    assert.match(st.engine.optimizationStatus(kp.addr as bigint).reason ?? '', /no jump optimization on aarch64/);
  });
});
