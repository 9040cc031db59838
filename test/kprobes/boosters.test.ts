/**
 * The kprobe booster (can_boost classification, the tristate boostable
 * flag, boosted hits without the single-step trap) and the kretprobe
 * booster trampoline; the `--sysctl` run option.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rig } from './harness';
import { x86_64 } from '../../emulator/arch/x86_64';
import { boostVerdict, canBoost } from '../../emulator/arch/x86_64/kprobes/boost';
import type { Kprobe, Kretprobe } from '../../emulator/kprobes';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';

const BASE = 0xffffffff81000000n;

/** [bytes, boostable, what] */
const CASES: [number[], boolean, string][] = [
  [[0x55], true, 'push rbp'],
  [[0x48, 0x89, 0xe5], true, 'mov rbp, rsp'],
  [[0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00], true, 'RIP-relative load (the copy is re-targeted)'],
  [[0xc3], false, 'ret (a return: listed as not boostable)'],
  [[0xc2, 0x08, 0x00], false, 'ret imm16'],
  [[0xff, 0xe0], true, 'jmp rax (indirect, absolute target)'],
  [[0x0f, 0x1f, 0x44, 0x00, 0x00], true, 'nopl'],
  [[0xf0, 0x48, 0x0f, 0xc1, 0x06], true, 'lock xadd'],
  [[0x9c], true, 'pushfq'],
  [[0xe8, 0x00, 0x00, 0x00, 0x00], false, 'call rel32'],
  [[0xff, 0xd0], false, 'call rax'],
  [[0xe9, 0x00, 0x00, 0x00, 0x00], false, 'jmp rel32'],
  [[0xeb, 0x00], false, 'jmp rel8'],
  [[0x74, 0x05], false, 'je rel8'],
  [[0x0f, 0x84, 0x00, 0x00, 0x00, 0x00], false, 'je rel32'],
  [[0xe2, 0xfe], false, 'loop'],
  [[0xcc], false, 'int3'],
  [[0xcd, 0x80], false, 'int 0x80'],
  [[0x0f, 0x0b], false, 'ud2'],
  [[0xf4], false, 'hlt'],
  [[0x0f, 0x05], false, 'syscall'],
  [[0x0f, 0x01, 0xc1], false, 'vmcall'],
  [[0x0f, 0xa2], false, 'cpuid (hardware side effect)'],
  [[0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00], false, 'CS-override prefix (nopw %cs:...)'],
  [[0x67, 0x8b, 0x07], false, 'address-size prefix'],
];

// x86_64 only: the kprobe booster (can_boost) exists only in the x86 port, as in Linux
describe('can_boost (x86_64)', () => {
  for (const [bytes, want, what] of CASES) {
    test(`${what}: ${want ? 'boostable' : 'not boostable'}`, () => {
      const d = x86_64.decodeBytes(Uint8Array.from(bytes), BASE);
      assert.ok(d, `${what} decodes`);
      assert.equal(d.length, bytes.length);
      assert.equal(canBoost(d), want, JSON.stringify(boostVerdict(d)));
    });
  }
});

describe('kprobe booster', () => {
  test('tristate: 0 after prepare, 1 after the first single-step; later hits skip the single-step trap', () => {
    const r = rig({ cpus: 1 });
    r.engine.setOptimization(0); // isolate the booster from jump optimization
    const kp: Kprobe = { symbol_name: 'fib', pre_handler: () => 0 };
    assert.equal(r.engine.registerKprobe(kp), 0);
    assert.equal(kp.ainsn?.boostable, 0, 'push rbp: boostable, jmp not yet appended');
    r.run();
    assert.equal(kp.ainsn?.boostable, 1);
    const hits = kp.hits ?? 0;
    assert.ok(hits > 100);
    assert.equal(r.engine.stats.int3Hits, hits, 'every hit is a breakpoint trap');
    assert.equal(r.engine.stats.singleSteps, 1, 'only the first hit single-steps');
    assert.equal(r.engine.stats.boostedHits, hits - 1);
  });

  test('a post_handler keeps every hit single-stepped; the booster switch off does too', () => {
    for (const variant of ['post', 'off'] as const) {
      const r = rig({ cpus: 1 });
      r.engine.setOptimization(0);
      if (variant === 'off') r.engine.traps.kprobeBooster = false;
      let posts = 0;
      const kp: Kprobe = { symbol_name: 'kprobe_target', pre_handler: () => 0 };
      if (variant === 'post') kp.post_handler = () => { posts++; };
      assert.equal(r.engine.registerKprobe(kp), 0);
      r.run();
      assert.equal(kp.ainsn?.boostable, 1);
      assert.equal(r.engine.stats.singleSteps, kp.hits, variant);
      assert.equal(r.engine.stats.boostedHits, 0, variant);
      if (variant === 'post') assert.equal(posts, kp.hits);
    }
  });

  test('non-boostable instructions (call, jcc) and __ex_table entries: -1, always single-stepped', () => {
    const r = rig();
    r.engine.setOptimization(0);
    const fib = r.image.symbols.lookup('fib');
    assert.ok(fib);
    let callAt = 0n;
    for (let a = fib.value; a < fib.value + fib.size && !callAt;) {
      const d = r.machine.arch.decode(r.machine.kernel.mem, a);
      assert.ok(d);
      if (d.flow === 'call') callAt = a;
      a += BigInt(d.length);
    }
    assert.ok(callAt, 'fib calls itself');
    const call: Kprobe = { addr: callAt, pre_handler: () => 0 };
    assert.equal(r.engine.registerKprobe(call), 0);
    assert.equal(call.ainsn?.boostable, -1);
    const sec = r.image.section('__ex_table');
    assert.ok(sec);
    const fault = new DataView(sec.data.buffer, sec.data.byteOffset, sec.data.byteLength).getBigUint64(0, true);
    const ex: Kprobe = { addr: fault, pre_handler: () => 0 };
    assert.equal(r.engine.registerKprobe(ex), 0);
    assert.equal(ex.ainsn?.boostable, -1, 'may fault: never boosted');
    const lines = r.run();
    assert.equal(r.engine.stats.boostedHits, 0);
    assert.equal(r.engine.stats.singleSteps, (call.hits ?? 0) + (ex.hits ?? 0) - 5, 'the 5 faulting loads end in the fixup, not a single-step');
    assert.deepEqual([...lines].sort(), [...rig().run()].sort());
  });

  test('boosted probes leave the kernel\'s output unchanged', () => {
    const base = rig().run();
    const r = rig();
    r.engine.setOptimization(0);
    const kps: Kprobe[] = ['fib', 'vfs_read', 'sys_open', 'do_fork', 'read_boot_counter', 'kprobe_target'].map(s => ({ symbol_name: s, pre_handler: () => 0 }));
    assert.equal(r.engine.registerKprobes(kps), 0);
    assert.deepEqual([...r.run()].sort(), [...base].sort());
    assert.ok(r.engine.stats.boostedHits > 0);
  });
});

describe('kretprobe booster', () => {
  const runWith = (boost: boolean): { rets: bigint[]; r: ReturnType<typeof rig> } => {
    const r = rig({ cpus: 1 });
    r.engine.setOptimization(0);
    r.engine.kretprobes.setBoost(boost);
    const rets: bigint[] = [];
    const rp: Kretprobe = {
      kp: { symbol_name: 'kprobe_target' },
      handler: (_ri, regs) => { rets.push(regs.returnValue & 0xffffffffn); assert.equal(regs.ip, r.engine.kretprobes.trampoline); return 0; },
    };
    assert.equal(r.engine.registerKretprobe(rp), 0);
    r.run();
    return { rets, r };
  };

  test('returns go through the booster trampoline (no breakpoint trap); same return values as the classic one', () => {
    const on = runWith(true), off = runWith(false);
    assert.equal(on.rets.length, 97);
    assert.deepEqual(on.rets, off.rets);
    assert.equal(on.r.engine.stats.kretBoostCallbacks, 97);
    assert.equal(on.r.engine.stats.kretTrampolineTraps, 0);
    assert.equal(off.r.engine.stats.kretTrampolineTraps, 97);
    assert.equal(off.r.engine.stats.kretBoostCallbacks, 0);
    assert.notEqual(on.r.engine.kretprobes.trampoline, off.r.engine.kretprobes.trampoline);
  });

  test('recursive fib with an optimized entry probe: every instance returns, output unchanged', () => {
    const r = rig();
    let n = 0;
    const rp: Kretprobe = { kp: { symbol_name: 'fib' }, maxactive: 64, handler: () => { n++; return 0; } };
    assert.equal(r.engine.registerKretprobe(rp), 0);
    const lines = r.run();
    assert.ok(r.engine.optimizer.isOptimized(r.sym('fib')), 'the entry probe got optimized');
    assert.equal(n + (rp.nmissed ?? 0), rp.kp.hits);
    assert.ok(r.engine.stats.optCallbacks > 0 && r.engine.stats.kretBoostCallbacks === n);
    assert.deepEqual([...lines].sort(), [...rig().run()].sort());
  });
});

describe('kprobe-run --sysctl', () => {
  const cli = async (...args: string[]): Promise<{ code: number; err: string }> => {
    const c = captureIo();
    const code = await runCli(args, c.io);
    return { code, err: c.stderr() };
  };
  const KERNEL = repoPath('examples/kernel/build/kernel-x86_64.elf');

  test('accepted values run; unknown names and bad values are one-line errors', async () => {
    assert.equal((await cli('run', KERNEL, '--sysctl', 'debug.kprobes_optimization=0')).code, 0);
    assert.equal((await cli('run', KERNEL, '--sysctl=debug.kprobes_optimization=1')).code, 0);
    const bad = await cli('run', KERNEL, '--sysctl', 'debug.nope=1');
    assert.notEqual(bad.code, 0);
    // x86_64's kernel has a function tracer: the stack tracer's sysctl is there too
    assert.match(bad.err, /--sysctl: unknown sysctl 'debug\.nope' \(known: debug\.kprobes_optimization, kernel\.stack_tracer_enabled\)/);
    const val = await cli('run', KERNEL, '--sysctl', 'debug.kprobes_optimization=yes');
    assert.match(val.err, /expected 0 or 1, got 'yes'/);
    const shape = await cli('run', KERNEL, '--sysctl', 'debug.kprobes_optimization');
    assert.match(shape.err, /expected NAME=VALUE/);
  });
});
