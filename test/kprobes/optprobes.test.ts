/**
 * Jump optimization (CONFIG_OPTPROBES) on the sample kernel: the safety
 * checks, the delayed optimizer, the hit-before-optimized path,
 * unoptimization on each trigger, the sysctl, [OPTIMIZED] exactly while
 * the jmp is in place, and identical results optimized or not. Probe
 * sites are found by decoding the image (never hard-coded offsets).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bytesAt, insns, Rig, rig } from './harness';
import {
  formatKprobeList, Kprobe, KPROBE_FLAG_DISABLED, KprobesEngine, Kretprobe, OPTIMIZE_DELAY_NS,
} from '../../emulator/kprobes';
import { mustVAddr } from '../../emulator/memory/address';

function isJmpTo(r: Rig, addr: bigint, target: bigint): boolean {
  const b = r.machine.kernel.mem.readBytes(mustVAddr(addr), 5);
  if (b[0] !== 0xe9) return false;
  const rel = BigInt(new DataView(b.buffer, b.byteOffset, 5).getInt32(1, true));
  return addr + 5n + rel === target;
}

/** Run until `pred` holds (checked on every slice), failing after `limit` slices. */
function runUntil(r: Rig, pred: () => boolean, limit = 400): void {
  for (let i = 0; i < limit && !pred(); i++) {
    const s = r.machine.runSlice(2_000);
    if (s.kind === 'exited' || s.kind === 'limit') break;
  }
  assert.ok(pred(), 'condition reached');
}

/** [OPTIMIZED] appears in the list line of addr */
function listedOptimized(r: Rig, addr: bigint): boolean {
  const line = formatKprobeList(r.engine).split('\n').find(l => l.startsWith(addr.toString(16).padStart(16, '0')));
  assert.ok(line, 'listed');
  return line.includes('[OPTIMIZED]');
}

function assertOptimized(r: Rig, addr: bigint, msg?: string): void {
  const st = r.engine.optimizer.status(addr);
  assert.equal(st.state, 'optimized', `${msg ?? ''} ${st.reason ?? ''}`);
  assert.ok(isJmpTo(r, addr, st.buffer as bigint), 'e9 rel32 to the detour buffer');
  assert.equal(listedOptimized(r, addr), true);
}

function assertNotOptimized(r: Rig, addr: bigint, reason?: RegExp): void {
  const st = r.engine.optimizer.status(addr);
  assert.notEqual(st.state, 'optimized');
  if (reason) assert.match(st.reason ?? '', reason);
  assert.equal(bytesAt(r, addr, 1)[0], 0xcc, 'still an int3 probe');
  assert.equal(listedOptimized(r, addr), false);
}

// x86_64 only: jump optimization (CONFIG_OPTPROBES) exists only in the x86 port; arm64.test.ts and riscv64.test.ts check no probe is ever optimized there
describe('safety checks', () => {
  test('fib+0: optimizable (push/mov/push, the recursive call targets the first byte only)', () => {
    const r = rig();
    const a = r.sym('fib');
    assert.equal(r.engine.registerKprobe({ addr: a, pre_handler: () => 0 }), 0);
    assert.equal(bytesAt(r, a, 1)[0], 0xcc, 'first an ordinary int3 probe');
    assert.equal(r.engine.optimizer.status(a).state, 'queued');
    assert.equal(r.engine.optimizer.status(a).size, 6);
    r.engine.waitForOptimizer();
    assertOptimized(r, a);
  });

  test('a function with a jump table (indirect jmp) is not optimized', () => {
    const r = rig();
    const ins = insns(r, 'syscall_dispatch');
    assert.ok(ins.some(d => d.flow === 'indirectJump'));
    const a = r.sym('syscall_dispatch');
    assert.equal(r.engine.registerKprobe({ addr: a }), 0);
    r.engine.waitForOptimizer();
    assertNotOptimized(r, a, /indirect jump/);
  });

  test('a call inside the detoured region is refused (traced_function: call __fentry__, KPROBES_ON_FTRACE off)', () => {
    // with KPROBES_ON_FTRACE on, traced_function+0 is an ftrace-based probe instead (ftrace.test.ts)
    const r = rig({ engine: { kprobesOnFtrace: false } });
    const a = r.sym('traced_function');
    assert.equal(insns(r, 'traced_function')[0].flow, 'call');
    assert.equal(r.engine.registerKprobe({ addr: a }), 0);
    r.engine.waitForOptimizer();
    assertNotOptimized(r, a, /not relocatable.*call/);
  });

  test('JTPR: a jump targeting the region past its first byte refuses; at its first byte it is fine', () => {
    const r = rig();
    // find an instruction whose detoured region (>= 5 bytes of whole instructions) covers a jump target
    let site: { fn: string; addr: bigint; target: bigint } | undefined;
    for (const fn of ['vfs_read', 'fib', 'sys_open', 'do_fork', 'tcp_v4_rcv']) {
      const ins = insns(r, fn);
      const targets = ins.filter(d => (d.flow === 'condJump' || d.flow === 'jump') && d.target !== undefined).map(d => d.target as bigint);
      for (let i = 0; i < ins.length && !site; i++) {
        let size = 0;
        for (let j = i; j < ins.length && size < 5; j++) size += ins[j].length;
        const a = ins[i].addr;
        const t = targets.find(x => x > a && x < a + BigInt(size));
        if (t !== undefined && ins.slice(i).every(d => d.flow !== 'indirectJump')) site = { fn, addr: a, target: t };
      }
      if (site) break;
    }
    assert.ok(site, 'a site with a jump into its region');
    assert.equal(r.engine.registerKprobe({ addr: site.addr }), 0);
    r.engine.waitForOptimizer();
    assertNotOptimized(r, site.addr, /jumps into the detoured region/);
    assert.equal(r.engine.optimizer.status(site.addr).state, 'none', 'a permanent refusal (safety check), not a temporary one');
    // fib+0 is the target of fib's own recursive call: a jump/call to the first byte is allowed
    const f = r.sym('fib');
    assert.ok(insns(r, 'fib').some(d => d.flow === 'call' && d.target === f));
    assert.equal(r.engine.registerKprobe({ addr: f }), 0);
    r.engine.waitForOptimizer();
    assertOptimized(r, f, 'a call to the first byte of the region is allowed');
  });

  test('a region crossing the end of the function is refused', () => {
    const r = rig();
    const ins = insns(r, 'kprobe_target');
    const last = ins[ins.length - 1]; // ret: 1 byte, the function ends right after it
    assert.equal(last.flow, 'ret');
    assert.equal(r.engine.registerKprobe({ addr: last.addr }), 0);
    r.engine.waitForOptimizer();
    assertNotOptimized(r, last.addr, /crosses the end of the function/);
  });

  test('__ex_table: no probe in a function with an exception table entry is optimized (can_optimize); others are', () => {
    const r = rig();
    const ins = insns(r, 'probe_kernel_read_long');
    const fn = r.image.symbols.lookup('probe_kernel_read_long');
    assert.ok(fn);
    const sec = r.image.section('__ex_table');
    assert.ok(sec);
    const dv = new DataView(sec.data.buffer, sec.data.byteOffset, sec.data.byteLength);
    let fault = 0n, fixup = 0n;
    for (let o = 0; o + 16 <= dv.byteLength; o += 16) {
      const insn = dv.getBigUint64(o, true);
      if (r.image.symbols.resolve(insn)?.sym.name === 'probe_kernel_read_long') { fault = insn; fixup = dv.getBigUint64(o + 8, true); }
    }
    assert.ok(fault && fixup);
    // three sites: the entry (its region holds the faulting load), the instruction before the
    // fixup (its region covers the fixup), and the join point after the fixup (the target of a
    // jmp, far from both): every one is refused because the function has a table entry
    const k = ins.findIndex(d => d.addr === fixup);
    const beforeFixup = ins[k - 1];
    const join = ins.find(d => d.flow === 'jump')?.target;
    assert.ok(join);
    const sites = [fn.value, beforeFixup.addr, join];
    for (const a of sites) assert.equal(r.engine.registerKprobe({ addr: a }), 0);
    r.engine.waitForOptimizer();
    for (const a of sites) {
      assertNotOptimized(r, a, /exception table entry .*__ex_table.*fixup code could jump into the detoured region/);
      assert.equal(r.engine.optimizer.status(a).state, 'none', 'a permanent refusal (safety check)');
    }
    assert.deepEqual(r.run().filter(l => /fault|EFAULT|-14/.test(l)), rig().run().filter(l => /fault|EFAULT|-14/.test(l)));
    // functions without table entries still optimize
    const r2 = rig();
    for (const name of ['kprobe_target', 'kprobe_target2']) {
      const a = r2.sym(name);
      assert.ok(![...Array(dv.byteLength / 16).keys()].some(i => r2.image.symbols.resolve(dv.getBigUint64(i * 16, true))?.sym.name === name));
      assert.equal(r2.engine.registerKprobe({ addr: a }), 0);
    }
    r2.engine.waitForOptimizer();
    assertOptimized(r2, r2.sym('kprobe_target'));
    assertOptimized(r2, r2.sym('kprobe_target2'));
  });

  test('a probe with a post_handler, a disabled probe: not optimized (temporary: optimized once it changes)', () => {
    const r = rig();
    const post: Kprobe = { symbol_name: 'fib', post_handler: () => undefined };
    const dis: Kprobe = { symbol_name: 'kprobe_target', flags: KPROBE_FLAG_DISABLED };
    assert.equal(r.engine.registerKprobe(post), 0);
    assert.equal(r.engine.registerKprobe(dis), 0);
    r.engine.waitForOptimizer();
    assert.equal(r.engine.optimizer.status(r.sym('fib')).state, 'prepared');
    assert.match(r.engine.optimizer.status(r.sym('fib')).reason ?? '', /post_handler/);
    assert.match(r.engine.optimizer.status(r.sym('kprobe_target')).reason ?? '', /disabled|not armed/);
    assert.equal(listedOptimized(r, r.sym('fib')), false);
    // the conditions change: both get optimized
    r.engine.unregisterKprobe(post);
    assert.equal(r.engine.registerKprobe({ symbol_name: 'fib' }), 0);
    assert.equal(r.engine.enableKprobe(dis), 0);
    r.engine.waitForOptimizer();
    assertOptimized(r, r.sym('fib'));
    assertOptimized(r, r.sym('kprobe_target'));
  });

  test('jprobes are never optimized', () => {
    const r = rig();
    assert.equal(r.engine.registerJprobe({ kp: { symbol_name: 'do_fork' }, entry: () => r.engine.jprobeReturn() }), 0);
    r.engine.waitForOptimizer();
    assert.match(r.engine.optimizer.status(r.sym('do_fork')).reason ?? '', /jprobe/);
  });
});

describe('the optimizer', () => {
  test('delay: hits before the deadline resume in the detour buffer (no single-step), then the jmp appears', () => {
    const r = rig({ cpus: 1 });
    const a = r.sym('fib');
    const kp: Kprobe = { addr: a, pre_handler: () => 0 };
    const t0 = r.machine.kernel.timeNs();
    assert.equal(r.engine.registerKprobe(kp), 0);
    assert.equal(r.engine.optimizer.status(a).state, 'queued');
    runUntil(r, () => (kp.hits ?? 0) > 0);
    // hit while queued: breakpoint trap, then straight into the copied instructions
    if (!r.engine.optimizer.isOptimized(a)) {
      assert.ok(r.engine.stats.detourHits > 0);
      assert.equal(r.engine.stats.singleSteps, 0, 'no single-step for a queued probe');
    }
    runUntil(r, () => r.engine.optimizer.isOptimized(a));
    assert.ok(r.machine.kernel.timeNs() - t0 >= BigInt(OPTIMIZE_DELAY_NS), 'not before the delay');
    assertOptimized(r, a);
    const int3Before = r.engine.stats.int3Hits;
    const cbBefore = r.engine.stats.optCallbacks;
    r.run();
    assert.equal(r.engine.stats.int3Hits, int3Before, 'the probed site no longer traps');
    assert.ok(r.engine.stats.optCallbacks > cbBefore);
    assert.equal(kp.hits, r.engine.stats.detourHits + r.engine.stats.optCallbacks);
    assert.equal(r.engine.stats.singleSteps, 0);
  });

  test('the handler sees the probed context (ip = addr+1, sp, args); register changes are kept, ip changes ignored', () => {
    const r = rig();
    const a = r.sym('kprobe_target');
    const seen: { ip: bigint; sp: bigint; ret: bigint }[] = [];
    const kp: Kprobe = {
      addr: a,
      pre_handler: (_p, regs) => {
        seen.push({ ip: regs.ip, sp: regs.sp, ret: regs.cpu.mem.read64(mustVAddr(regs.sp)) });
        regs.ip = r.sym('kprobe_target2'); // ignored when optimized (documented)
        return 1;
      },
    };
    assert.equal(r.engine.registerKprobe(kp), 0);
    r.engine.waitForOptimizer();
    assertOptimized(r, a);
    const lines = r.run();
    assert.equal(seen.length, 97);
    for (const s of seen) {
      assert.equal(s.ip, a + 1n);
      assert.ok(r.image.symbols.resolve(s.ret), 'the word at sp is the caller\'s return address');
    }
    assert.ok(lines.some(l => /^selftest: kprobe_target\(625341585\) = 208447195$/.test(l)), 'ip change ignored');
  });
});

describe('unoptimization triggers', () => {
  const setup = (): { r: Rig; a: bigint; kp: Kprobe } => {
    const r = rig();
    const a = r.sym('fib');
    const kp: Kprobe = { addr: a, pre_handler: () => 0 };
    assert.equal(r.engine.registerKprobe(kp), 0);
    r.engine.waitForOptimizer();
    assertOptimized(r, a);
    return { r, a, kp };
  };
  const orig = (r: Rig, a: bigint): number[] => [...r.engine.arming.readTextWithoutProbes(r.machine.kernel.mem, a, 6)];

  test('original bytes are shown while optimized', () => {
    const { r, a } = setup();
    const o = orig(r, a);
    assert.deepEqual(o.slice(0, 4), [0x55, 0x48, 0x89, 0xe5]);
  });

  test('unregister: the original bytes come back, no breakpoint', () => {
    const { r, a, kp } = setup();
    const o = orig(r, a);
    const ev: string[] = [];
    r.engine.events.on(e => ev.push(e.type));
    r.engine.unregisterKprobe(kp);
    assert.deepEqual(bytesAt(r, a, 6), o);
    assert.deepEqual(ev, ['unoptimized', 'unregistered']);
  });

  test('disable: unoptimized and disarmed; enable: queued again', () => {
    const { r, a, kp } = setup();
    const o = orig(r, a);
    r.engine.disableKprobe(kp);
    assert.deepEqual(bytesAt(r, a, 6), o);
    assert.equal(r.engine.optimizer.status(a).state, 'prepared');
    r.engine.enableKprobe(kp);
    assert.equal(bytesAt(r, a, 1)[0], 0xcc);
    assert.equal(r.engine.optimizer.status(a).state, 'queued');
  });

  test('a new probe inside the region: jmp replaced by int3 + original bytes, both probes hit', () => {
    const { r, a, kp } = setup();
    const o = orig(r, a);
    const inner: Kprobe = { addr: a + 1n, pre_handler: () => 0 }; // mov %rsp,%rbp
    assert.equal(r.engine.registerKprobe(inner), 0);
    assert.deepEqual(bytesAt(r, a, 2), [0xcc, 0xcc]);
    assert.deepEqual(bytesAt(r, a + 2n, 4), o.slice(2));
    assert.match(r.engine.optimizer.status(a).reason ?? '', /inside the region/);
    r.engine.waitForOptimizer();
    assert.equal(r.engine.optimizer.isOptimized(a), false);
    r.run();
    assert.equal(kp.hits, inner.hits);
    assert.ok((kp.hits ?? 0) > 0);
    r.engine.unregisterKprobe(inner);
    assert.equal(r.engine.optimizer.status(a).state, 'queued', 'retried when the blocking probe goes away');
  });

  test('a post_handler added (aggregate member): unoptimized; its removal lets it optimize again', () => {
    const { r, a } = setup();
    const withPost: Kprobe = { addr: a, post_handler: () => undefined };
    assert.equal(r.engine.registerKprobe(withPost), 0);
    assert.equal(r.engine.optimizer.isOptimized(a), false);
    assert.equal(bytesAt(r, a, 1)[0], 0xcc);
    assert.doesNotMatch(formatKprobeList(r.engine), /OPTIMIZED/);
    r.engine.unregisterKprobe(withPost);
    r.engine.waitForOptimizer();
    assertOptimized(r, a);
  });

  test('debugfs enabled=0 unoptimizes and disarms; =1 optimizes again after the delay', () => {
    const { r, a } = setup();
    r.engine.setEnabled(false);
    assert.deepEqual(bytesAt(r, a, 6), orig(r, a));
    r.engine.setEnabled(true);
    r.engine.waitForOptimizer();
    assertOptimized(r, a);
  });
});

describe('sysctl debug.kprobes_optimization', () => {
  test('0 unoptimizes every probe and stops new ones; 1 optimizes again', () => {
    const r = rig();
    const a = r.sym('fib'), b = r.sym('kprobe_target');
    assert.equal(r.engine.registerKprobe({ addr: a }), 0);
    r.engine.waitForOptimizer();
    assertOptimized(r, a);
    const sysctl = r.machine.kernel.sysctl, PROC = '/proc/sys/debug/kprobes-optimization';
    assert.equal(sysctl.read(PROC), '1\n');
    assert.equal(sysctl.write(PROC, '0\n').errno, 0);
    assert.equal(sysctl.read(PROC), '0\n');
    assertNotOptimized(r, a, /kprobes_optimization is 0/);
    assert.equal(r.engine.registerKprobe({ addr: b }), 0);
    r.engine.waitForOptimizer();
    assertNotOptimized(r, b, /kprobes_optimization is 0/);
    assert.equal(sysctl.write(PROC, 'x').errno, -22);
    r.engine.setOptimization(1);
    r.engine.waitForOptimizer();
    assertOptimized(r, a);
    assertOptimized(r, b);
  });

  test('the engine registers its sysctl at boot (one engine per kernel); unknown names and bad values are -EINVAL', () => {
    const r0 = rig();
    // the engine's (debug.*); the tracing subsystem adds kernel.stack_tracer_enabled where there is a function tracer
    assert.deepEqual(r0.machine.kernel.sysctl.names().filter(n => n.startsWith('debug.')), ['debug.kprobes_optimization']);
    assert.equal(r0.machine.writeSysctl('debug.no_such', '1').errno, -22);
    assert.equal(r0.machine.writeSysctl('debug.kprobes_optimization', '2').errno, -22);
    assert.equal(r0.machine.writeSysctl('debug.kprobes_optimization', '0').errno, 0);
    assert.equal(r0.engine.optimization, false);
    assert.throws(() => new KprobesEngine(r0.machine.kernel), /already has a kprobes engine/);
  });
});

describe('same results optimized or not', () => {
  test('handlers see the same values and the kernel prints the same per-task output', () => {
    const run = (opt: boolean): { lines: string[]; args: string[]; rets: string[]; optimized: number } => {
      const r = rig();
      r.engine.setOptimization(opt ? 1 : 0);
      const args: string[] = [];
      const rets: string[] = [];
      // integer arguments only (stack addresses depend on the interleaving)
      const argIdx: Record<string, number[]> = { fib: [0], kprobe_target: [0], vfs_read: [2], do_fork: [0, 3], sys_open: [1, 2], read_boot_counter: [] };
      const kps: Kprobe[] = Object.keys(argIdx).map(s => ({
        symbol_name: s,
        pre_handler: (p, regs) => {
          args.push(`${p.symbol_name}(${argIdx[s].map(i => regs.arg(i)).join(',')}) ip=${regs.ip - (p.addr as bigint)}`);
          return 0;
        },
      }));
      const rp: Kretprobe = { kp: { symbol_name: 'kprobe_target2' }, handler: (_ri, regs) => { rets.push(String(regs.returnValue)); return 0; } };
      assert.equal(r.engine.registerKprobes(kps), 0);
      assert.equal(r.engine.registerKretprobe(rp), 0);
      const lines = r.run();
      let optimized = 0;
      for (const k of kps) if (r.engine.optimizer.isOptimized(k.addr as bigint)) optimized++;
      return { lines, args, rets, optimized };
    };
    const on = run(true), off = run(false);
    assert.ok(on.optimized >= 4, `most probes optimized (${on.optimized})`);
    assert.equal(off.optimized, 0);
    assert.deepEqual([...on.lines].sort(), [...off.lines].sort());
    assert.deepEqual([...on.args].sort(), [...off.args].sort());
    assert.deepEqual([...on.rets].sort(), [...off.rets].sort());
  });
});
