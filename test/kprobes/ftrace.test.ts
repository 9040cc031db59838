/**
 * Kprobes on ftrace (CONFIG_KPROBES_ON_FTRACE) on the sample kernel:
 * traced_function begins with `call __fentry__` (an ftrace location); a
 * probe there is ftrace-based — [FTRACE] in the list, no int3, the call
 * redirected to the ftrace trampoline — and its handlers see what
 * kprobe_ftrace_handler gives them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bytesAt, hexBytes, Rig, rig, snapshot } from './harness';
import { Errno } from '../../emulator/kernel/abi';
import {
  formatKprobeList, Jprobe, Kprobe, KPROBE_FLAG_DISABLED, KPROBE_FLAG_FTRACE, Kretprobe,
} from '../../emulator/kprobes';
import type { KprobesArchHooks } from '../../emulator/kprobes';
import { x86_64KprobesHooks } from '../../emulator/arch/x86_64/kprobes';
import { hex64, mustVAddr } from '../../emulator/memory/address';

/** the x86_64 hooks with the native entries switched off (the trampoline's template runs as instructions) */
const TEMPLATE_ONLY: KprobesArchHooks = {
  ...x86_64KprobesHooks,
  optprobes: { ...(x86_64KprobesHooks.optprobes as NonNullable<KprobesArchHooks['optprobes']>), enterNative: undefined },
};

/** target of the call rel32 at addr */
function callTarget(r: Rig, addr: bigint): bigint {
  const b = r.machine.kernel.mem.readBytes(mustVAddr(addr), 5);
  assert.equal(b[0], 0xe8, 'a call rel32');
  return addr + 5n + BigInt(new DataView(b.buffer, b.byteOffset, 5).getInt32(1, true));
}

// x86_64 only: kprobes on ftrace call sites (call __fentry__) exist only in the x86 port
describe('KPROBES_ON_FTRACE: registration and arming', () => {
  test('a probe at `call __fentry__` is [FTRACE]: no int3, the call goes to the ftrace trampoline; unregister restores the call', () => {
    const r = rig();
    const site = r.sym('traced_function');
    const orig = bytesAt(r, site, 5);
    assert.equal(callTarget(r, site), r.sym('__fentry__'));
    const kp: Kprobe = { symbol_name: 'traced_function', pre_handler: () => 0 };
    assert.equal(r.engine.registerKprobe(kp), 0);
    assert.equal((kp.flags ?? 0) & KPROBE_FLAG_FTRACE, KPROBE_FLAG_FTRACE);
    assert.equal(formatKprobeList(r.engine), `${hex64(site)}  k  traced_function+0x0    [FTRACE]\n`);
    assert.notEqual(bytesAt(r, site, 1)[0], 0xcc, 'not armed with int3');
    assert.equal(callTarget(r, site), r.engine.ftrace.trampoline);
    assert.deepEqual([...r.engine.arming.readTextWithoutProbes(r.machine.kernel.mem, site, 5)], orig, 'the debugger sees the original call');
    assert.equal(r.engine.describer.info(kp).ftrace, true);
    assert.match(r.engine.optimizer.status(site).reason ?? '', /ftrace-based/);
    r.engine.unregisterKprobe(kp);
    assert.deepEqual(bytesAt(r, site, 5), orig);
    assert.equal(formatKprobeList(r.engine), '');
  });

  test('disabled: the original call is back and the line shows [DISABLED][FTRACE]; enable redirects again', () => {
    const r = rig();
    const site = r.sym('traced_function');
    const orig = bytesAt(r, site, 5);
    const kp: Kprobe = { symbol_name: 'traced_function', flags: KPROBE_FLAG_DISABLED };
    assert.equal(r.engine.registerKprobe(kp), 0);
    assert.deepEqual(bytesAt(r, site, 5), orig);
    assert.equal(formatKprobeList(r.engine), `${hex64(site)}  k  traced_function+0x0    [DISABLED][FTRACE]\n`);
    assert.equal(r.engine.enableKprobe(kp), 0);
    assert.equal(callTarget(r, site), r.engine.ftrace.trampoline);
    r.engine.setEnabled(false);
    assert.deepEqual(bytesAt(r, site, 5), orig, 'debugfs enabled=0 disarms it too');
    r.engine.setEnabled(true);
    assert.equal(callTarget(r, site), r.engine.ftrace.trampoline);
  });

  test('inside the call site: -EILSEQ; elsewhere and with KPROBES_ON_FTRACE off: ordinary int3 probes', () => {
    const r = rig();
    const site = r.sym('traced_function');
    for (let i = 1n; i < 5n; i++) assert.equal(r.engine.registerKprobe({ addr: site + i }), -Errno.EILSEQ);
    const body: Kprobe = { symbol_name: 'traced_function_body' };
    assert.equal(r.engine.registerKprobe(body), 0);
    assert.equal((body.flags ?? 0) & KPROBE_FLAG_FTRACE, 0);
    const r2 = rig({ engine: { kprobesOnFtrace: false } });
    const kp: Kprobe = { symbol_name: 'traced_function' };
    assert.equal(r2.engine.registerKprobe(kp), 0);
    assert.equal((kp.flags ?? 0) & KPROBE_FLAG_FTRACE, 0);
    assert.equal(bytesAt(r2, site, 1)[0], 0xcc);
    assert.doesNotMatch(formatKprobeList(r2.engine), /FTRACE/);
  });
});

describe('KPROBES_ON_FTRACE: hits', () => {
  test('pre_handler sees the int3 probe\'s registers (ip = site+1); post_handler ip = site+5; results unchanged', () => {
    const run = (ftrace: boolean): { pre: string[]; post: bigint[]; lines: string[]; r: Rig } => {
      const r = rig({ cpus: 1, engine: { kprobesOnFtrace: ftrace } });
      const pre: string[] = [];
      const post: bigint[] = [];
      const kp: Kprobe = {
        symbol_name: 'traced_function',
        pre_handler: (_p, regs) => {
          pre.push(`${snapshot(regs)} [sp]=${regs.cpu.mem.read64(mustVAddr(regs.sp)).toString(16)}`);
          return 0;
        },
        post_handler: (p, regs) => { post.push(regs.ip - (p.addr as bigint)); },
      };
      assert.equal(r.engine.registerKprobe(kp), 0);
      return { pre, post, lines: r.run(), r };
    };
    const ft = run(true), bp = run(false);
    assert.equal(ft.pre.length, 4 * 24, 'every worker iteration calls traced_function');
    assert.deepEqual(ft.pre, bp.pre, 'same registers and return address as the int3 probe shows');
    const site = ft.r.sym('traced_function');
    assert.ok(ft.pre.every(s => s.includes(` ip=${(site + 1n).toString(16)} `)));
    assert.deepEqual(new Set(ft.post), new Set([5n]), 'as if the 5-byte call site were single-stepped');
    assert.equal(ft.r.engine.stats.ftraceHits, ft.pre.length);
    assert.equal(ft.r.engine.stats.int3Hits, 0);
    assert.equal(ft.r.engine.stats.singleSteps, 0);
    assert.deepEqual([...ft.lines].sort(), [...bp.lines].sort(), 'the kernel prints the same');
    assert.deepEqual([...ft.lines].sort(), [...rig({ cpus: 1 }).run()].sort(), 'as without probes');
  });

  test('a pre_handler that changes ip and returns 1: no post_handler, execution resumes there', () => {
    const r = rig();
    const body = r.sym('traced_function_body');
    let posts = 0;
    const kp: Kprobe = {
      symbol_name: 'traced_function',
      pre_handler: (_p, regs) => { regs.set('di', 7n); regs.ip = body; return 1; },
      post_handler: () => { posts++; },
    };
    const rets: bigint[] = [];
    const rp: Kretprobe = { kp: { symbol_name: 'traced_function_body' }, handler: (_ri, regs) => { rets.push(regs.returnValue); return 0; } };
    assert.equal(r.engine.registerKprobe(kp), 0);
    assert.equal(r.engine.registerKretprobe(rp), 0);
    const lines = r.run();
    assert.equal(posts, 0);
    assert.equal(rets.length, kp.hits);
    assert.deepEqual(new Set(rets), new Set([15n]), 'the body ran with the argument the handler set');
    assert.ok(!lines.some(l => /Oops|BUG/.test(l)));
  });

  test('a kretprobe on traced_function (ftrace-based entry) sees every return value; a hit during a handler is missed', () => {
    const r = rig();
    const rets: bigint[] = [];
    const args: bigint[] = [];
    const rp: Kretprobe = {
      kp: { symbol_name: 'traced_function' }, data_size: 8,
      entry_handler: (ri, regs) => { regs.cpu.mem.write64(mustVAddr(ri.data), regs.arg(0)); return 0; },
      handler: (ri, regs) => { args.push(regs.cpu.mem.read64(mustVAddr(ri.data))); rets.push(regs.returnValue); return 0; },
    };
    assert.equal(r.engine.registerKretprobe(rp), 0);
    assert.match(formatKprobeList(r.engine), /  r  traced_function\+0x0    \[FTRACE\]\n$/);
    // a handler calling the traced function: its ftrace hit counts as missed (kprobe_running())
    const tf = r.sym('traced_function');
    const nested: bigint[] = [];
    const kp: Kprobe = { symbol_name: 'kprobe_target', pre_handler: (_p, regs) => { nested.push(r.engine.nested.call(regs.cpu, tf, [20n])); return 0; } };
    assert.equal(r.engine.registerKprobe(kp), 0);
    const lines = r.run();
    assert.ok(rets.length > 0);
    assert.equal(rets.length, (rp.kp.hits ?? 0));
    for (let i = 0; i < rets.length; i++) assert.equal(rets[i], args[i] * 2n + 1n);
    assert.equal(rp.kp.nmissed, kp.hits, 'each nested call of traced_function was missed');
    assert.deepEqual(new Set(nested), new Set([41n]));
    assert.ok(!lines.some(l => /Oops|BUG/.test(l)));
  });

  test('a jprobe on traced_function (ftrace-based): arguments seen, registers restored, output unchanged', () => {
    const r = rig();
    const args: bigint[] = [];
    const jp: Jprobe = {
      kp: { symbol_name: 'traced_function' },
      entry: (a, regs) => { args.push(a[0]); regs.set('di', 999n); r.engine.jprobeReturn(); },
    };
    assert.equal(r.engine.registerJprobe(jp), 0);
    assert.match(formatKprobeList(r.engine), /  j  traced_function\+0x0    \[FTRACE\]\n$/);
    const lines = r.run();
    assert.equal(args.length, 4 * 24);
    assert.deepEqual(new Set(args), new Set(Array.from({ length: 24 }, (_v, i) => BigInt(i))), 'each worker passes its loop index');
    assert.deepEqual([...lines].sort(), [...rig().run()].sort(), 'the argument change was undone');
  });

  test('native entry and the trampoline template run as instructions: same registers, frame bytes and output', () => {
    const run = (native: boolean): { during: string[]; after: string[]; lines: string[]; insns: number; r: Rig } => {
      const r = rig({ cpus: 1, engine: native ? {} : { hooks: TEMPLATE_ONLY } });
      const mem = r.machine.kernel.mem;
      const during: string[] = [];
      const after: string[] = [];
      const kp: Kprobe = {
        symbol_name: 'traced_function',
        pre_handler: (_p, regs) => { during.push(snapshot(regs)); return 0; },
        post_handler: (_p, regs) => { during.push(`post ${snapshot(regs)}`); },
      };
      // at traced_function_body+0 the stack below sp holds what the trampoline left (frame + resume slot)
      const body: Kprobe = {
        symbol_name: 'traced_function_body',
        pre_handler: (_p, regs) => { after.push(hexBytes(mem.readBytes(mustVAddr(regs.sp - 168n), 168))); return 0; },
        post_handler: () => undefined,
      };
      assert.equal(r.engine.registerKprobes([kp, body]), 0);
      const exit = r.machine.run();
      assert.equal(exit.reason, 'poweroff');
      return { during, after, lines: r.machine.printkRecords.map(x => x.text), insns: exit.instructions, r };
    };
    const n = run(true), t = run(false);
    assert.ok(n.r.engine.stats.nativeFtraceFrames > 0);
    assert.equal(t.r.engine.stats.nativeFtraceFrames, 0);
    assert.equal(t.r.engine.stats.ftraceHits, n.r.engine.stats.ftraceHits);
    assert.deepEqual(n.during, t.during);
    assert.deepEqual(n.after, t.after);
    assert.deepEqual(n.lines, t.lines);
    const tpl = x86_64KprobesHooks.optprobes?.nativeTemplates?.ftrace;
    assert.ok(tpl);
    // per hit the template's instructions are not run: the save (push, pushf, sub, 15 pushes), the callback int3,
    // the restore (15 pops, add, popf, lea, ret); the native entry's int3 is retired either way
    const perHit = 1 + 1 + 1 + 15 + 1 + 15 + 1 + 1 + 1 + 1;
    assert.equal(t.insns - n.insns, perHit * n.r.engine.stats.ftraceHits);
  });
});
