/**
 * Single-step completion is an arch hook: a hook table that ends the
 * out-of-line single-step the arm64 / riscv way (the slot holds the
 * instruction followed by a step breakpoint; no trace flag is set) drives
 * the core's unchanged state machine (HIT_ACTIVE -> HIT_SS -> HIT_SSDONE,
 * REENTER) on the real x86 CPU: the core no longer assumes a TF trap.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rig, selftestLines } from './harness';
import { Errno } from '../../emulator/kernel/abi';
import { Kprobe, KprobeStatus, KprobesArchHooks } from '../../emulator/kprobes';
import { kprobesArchFor } from '../../emulator/arch/registry';
import { mustVAddr } from '../../emulator/memory/address';

const STATUS_NAMES = ['NONE', 'HIT_ACTIVE', 'HIT_SS', 'REENTER', 'HIT_SSDONE'];
const x86 = kprobesArchFor('x86_64') as KprobesArchHooks;

/** arm64 / riscv style: slot = instruction + step breakpoint; only position-independent, non-branch instructions */
const STEP_BREAKPOINT: KprobesArchHooks = {
  arch: 'x86_64',
  slotSize: 32,
  decodeProbeInsn: (_ctx, _addr, insn) => (insn && insn.flow === 'none' && !insn.ipRelative ? 'slot' : 'reject'),
  prepareKprobe(ctx, p) {
    const addr = p.addr as bigint;
    const orig = ctx.readOriginal(addr, 15);
    const insn = ctx.arch.decodeBytes(orig, addr);
    if (this.decodeProbeInsn(ctx, addr, insn) !== 'slot' || !insn) return -Errno.EINVAL;
    const bp = ctx.arch.breakpointInsn;
    const slot = ctx.slots.get();
    const code = new Uint8Array(insn.length + bp.length);
    code.set(orig.subarray(0, insn.length));
    code.set(bp, insn.length); // arch_prepare_ss_slot: the step breakpoint after the instruction
    ctx.slots.write(slot, code);
    p.opcode = orig.slice(0, bp.length);
    p.ainsn = { insn: slot, length: insn.length, mode: 'slot', arch: {}, boostable: -1 };
    return 0;
  },
  removeKprobe: (ctx, p) => { if (p.ainsn) ctx.slots.put(p.ainsn.insn); },
  prepareKretprobe: x86.prepareKretprobe,
  // setup_singlestep: only the pc moves into the slot (no flag is armed)
  setupSinglestep: (_ctx, p, regs, kcb) => { kcb.oldFlags = kcb.savedFlags = 0n; regs.ip = (p.ainsn as { insn: bigint }).insn; },
  // singlestepDone: absent, the core default (the breakpoint right after the slot's instruction)
  // post_kprobe_handler: instruction_pointer_set(regs, cur->addr + length)
  resumeExecution: (_ctx, p, regs) => { regs.ip = (p.addr as bigint) + BigInt((p.ainsn as { length: number }).length); },
  singlestepFault: (_ctx, p, regs) => { regs.ip = p.addr as bigint; },
  kretprobeTrampolineCode: x86.kretprobeTrampolineCode,
};

// x86_64 only by design: an arm64/riscv-style step-breakpoint hook table driven on the x86 CPU (the real arm64/riscv hooks run in every parametrized test)
describe('single-step completion as an arch hook', () => {
  test('a step breakpoint in the slot ends the single-step: HIT_ACTIVE -> HIT_SS -> HIT_SSDONE, the kernel runs as without probes', () => {
    const expected = selftestLines(rig({ cpus: 1 }).run());
    const r = rig({ cpus: 1, engine: { hooks: STEP_BREAKPOINT } });
    const target = r.sym('kprobe_target');
    const states: string[] = [];
    let postIpOk = 0;
    const kp: Kprobe = {
      symbol_name: 'kprobe_target',
      pre_handler: (_p, regs) => { states.push(`pre:${STATUS_NAMES[r.engine.percpu.ctlblk(regs.cpu.id).status]}`); return 0; },
      post_handler: (p, regs) => {
        states.push(`post:${STATUS_NAMES[r.engine.percpu.ctlblk(regs.cpu.id).status]}`);
        if (regs.ip === target + BigInt(p.ainsn?.length ?? 0)) postIpOk++;
      },
    };
    assert.equal(r.engine.registerKprobe(kp), 0);
    const slot = kp.ainsn?.insn as bigint;
    const len = kp.ainsn?.length as number;
    const bp = r.machine.arch.breakpointInsn;
    assert.deepEqual([...r.machine.kernel.mem.readBytes(mustVAddr(slot + BigInt(len)), bp.length)], [...bp], 'the step breakpoint follows the copy');
    const lines = r.run();
    assert.deepEqual(selftestLines(lines), expected);
    assert.ok((kp.hits ?? 0) > 0);
    assert.equal(kp.nmissed, 0);
    assert.equal(r.engine.stats.singleSteps, kp.hits, 'each hit ended by the step breakpoint');
    assert.equal(postIpOk, kp.hits, 'post_handler sees the address after the probed instruction');
    assert.deepEqual([...new Set(states)], ['pre:HIT_ACTIVE', 'post:HIT_SSDONE']);
    assert.equal(r.engine.percpu.ctlblk(0).status, KprobeStatus.NONE);
    assert.equal(r.engine.breakpointSite(slot + BigInt(len)), 'none', 'a slot is not a probe site');
  });

  test('a probe hit from a handler (REENTER) single-steps with its step breakpoint and gives the control block back', () => {
    /** kprobe_target2(9) called from kprobe_target's pre_handler; the outer probe's state in its post_handler */
    const nested = (hooks: KprobesArchHooks | undefined, probeInner: boolean): { ret: bigint; post: number; inner: Kprobe; outer: Kprobe } => {
      const r = rig({ cpus: 1, engine: { hooks } });
      let ret = -1n, post = -1;
      const inner: Kprobe = { symbol_name: 'kprobe_target2', pre_handler: () => 0 };
      const outer: Kprobe = {
        symbol_name: 'kprobe_target',
        pre_handler: (_p, regs) => {
          if (ret < 0n) ret = r.engine.nested.call(regs.cpu, r.sym('kprobe_target2'), [9n]) & 0xffffffffn;
          return 0;
        },
        post_handler: (_p, regs) => { if (post < 0) post = r.engine.percpu.ctlblk(regs.cpu.id).status; },
      };
      if (probeInner) assert.equal(r.engine.registerKprobe(inner), 0);
      assert.equal(r.engine.registerKprobe(outer), 0);
      r.run();
      return { ret, post, inner, outer };
    };
    const plain = nested(undefined, false);
    const s = nested(STEP_BREAKPOINT, true);
    assert.equal(s.ret, plain.ret, 'kprobe_target2(9) through its reentered probe returns what it returns unprobed');
    assert.equal(s.post, KprobeStatus.HIT_SSDONE, "the outer probe's state came back after the reentry");
    assert.equal(s.inner.nmissed, 1, 'the reentry counts as missed');
    assert.ok((s.outer.hits ?? 0) > 0);
  });
});
