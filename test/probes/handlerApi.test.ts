/**
 * The kernel's API in handlers (what a module's handler could call) and
 * run-time probe actions from .kprobe files.
 * - static variables keep their value across hits (per probe and handler);
 *   their initializer must be a constant;
 * - ri->rp: maxactive (the default when registered with maxactive <= 0,
 *   accepted as -1 / 0 as the documentation says) and nmissed;
 * - unregister_kprobe(p) / disable_kprobe(p) / unregister_kretprobe(ri->rp)
 *   from a handler: queued, carried out at the end of the scheduling round
 *   (Linux may sleep in them), through the probe manager (one log line);
 * - calling a function of the image from a handler on the probed CPU: its
 *   return value, and reentry: the called function's own probe is not run
 *   and counts nmissed (kprobes' reentrancy rule), on every arch with a CPU;
 *   a fault inside the called function is the handler's fault, positioned;
 * - batch { }: register_kprobes() semantics, all or none, with rollback.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../emulator/machine';
import { readKprobesEnabled, formatKprobeList } from '../../emulator/kprobes';
import { mustVAddr } from '../../emulator/memory/address';
import { addFile, probeRig, runAll, sampleImage, sym } from './helpers';
import { sampleImage as imageFor } from '../kprobes/harness';
import { PORTS } from '../../emulator/ports';
import { probesOf } from '../../emulator/probes/attach';

const hitsOf = (lines: string[], text: string): number => lines.filter(l => l === text).length;
const emulatorLines = (m: Machine): string[] => m.printkRecords.filter(r => r.source === 'emulator').map(r => r.text);

describe('handler kernel API (what a module\'s handler could call)', () => {
  test('static variables count across hits; locals start at zero each hit', () => {
    const { machine, mgr } = probeRig();
    addFile(mgr, 'kprobe do_fork { pre { static int n; static long base = 100; int local; local++; n++; printk("%d %ld %d\\n", n, base + n, local); return 0; } }\n');
    const out = runAll(machine).lines.filter(l => /^\d+ \d+ \d+$/.test(l));
    assert.ok(out.length >= 10);
    out.forEach((l, i) => assert.equal(l, `${i + 1} ${100 + i + 1} 1`));
    const bad = mgr.addProbeFile('kprobe do_fork { pre { static int k = jiffies; return 0; } }\n', 'bad.kprobe');
    assert.match(bad.diagnostics.map(d => d.message).join('\n'), /the initializer of static 'k' must be a constant/);
  });

  test('ri->rp->maxactive and nmissed; maxactive=-1 and 0 get the default max(10, 2*NR_CPUS)', () => {
    const { machine, mgr } = probeRig({ cpus: 2 });
    const r = addFile(mgr, 'kretprobe alloc_pid maxactive=-1 { return { static int once; if (!once++) printk("rp %d %d\\n", ri->rp->maxactive, ri->rp->nmissed); } }\n'
      + 'kretprobe do_fork maxactive=0 { entry { static int once; if (!once++) printk("fork rp %d\\n", ri->rp->maxactive); return 0; } }\n');
    assert.deepEqual(r.errors, []);
    const lines = runAll(machine).lines;
    assert.ok(lines.includes('rp 10 0'), lines.filter(l => l.startsWith('rp')).join('|'));
    assert.ok(lines.includes('fork rp 10'));
    const m6 = probeRig({ cpus: 6 });
    addFile(m6.mgr, 'kretprobe alloc_pid maxactive=-5 { return { static int once; if (!once++) printk("rp %d\\n", ri->rp->maxactive); } }\n');
    assert.ok(runAll(m6.machine).lines.includes('rp 12'), '2 * 6 CPUs');
  });

  test('disable_kprobe(p) from a handler: deferred to the end of the round, then [DISABLED] and no more handler runs', () => {
    const { machine, mgr } = probeRig();
    const r = addFile(mgr, 'kprobe do_fork { pre { static int n; printk("hit %d\\n", ++n); if (n == 2) disable_kprobe(p); return 0; } }\n', 'once.kprobe');
    const out = runAll(machine);
    const hits = out.lines.filter(l => l.startsWith('hit '));
    assert.ok(hits.length >= 2 && hits.length < 20, `${hits.length} hits: deferred, then off`);
    assert.deepEqual(emulatorLines(machine).filter(l => l.includes('by its handler')), ['once.kprobe:1:1: kprobe do_fork: disabled by its handler (disable_kprobe)']);
    const e = mgr.get(r.probes[0].id);
    assert.equal(e?.enabled, false);
    assert.match(formatKprobeList(machine.kprobes), /do_fork\+0x0 +\[DISABLED\]/);
  });

  test('unregister_kprobe(p) / unregister_kretprobe(ri->rp) from a handler: gone from debugfs, original text back', () => {
    const { machine, mgr } = probeRig();
    const orig = machine.kernel.mem.readBytes(mustVAddr(sym('do_fork')), 8);
    addFile(mgr, 'kprobe do_fork { pre { unregister_kprobe(p); return 0; } }\n'
      + 'kretprobe alloc_pid { return { unregister_kretprobe(ri->rp); } }\n');
    assert.equal(formatKprobeList(machine.kprobes).trim().split('\n').length, 2);
    runAll(machine);
    assert.equal(formatKprobeList(machine.kprobes), '');
    assert.deepEqual(machine.kernel.mem.readBytes(mustVAddr(sym('do_fork')), 8), orig);
    assert.equal(emulatorLines(machine).filter(l => l.includes('unregistered by its handler')).length, 2);
    assert.equal(readKprobesEnabled(machine.kprobes), '1\n');
  });

  test('the control functions check their argument: p in kprobe handlers, ri->rp in kretprobe handlers', () => {
    const { mgr } = probeRig();
    const d = (t: string): string => mgr.compileProbeFile(t, 'c.kprobe').diagnostics.map(x => x.message).join('\n');
    assert.match(d('kretprobe do_fork { return { unregister_kprobe(p); } }\n'), /use unregister_kretprobe\(ri->rp\)/);
    assert.match(d('kprobe do_fork { pre { disable_kprobe(regs); return 0; } }\n'), /takes this handler's probe, p/);
    assert.match(d('kretprobe do_fork { entry { enable_kretprobe(p); return 0; } }\n'), /takes this handler's return probe, ri->rp/);
  });

  test('a called image function: its result; a hit of its own probe inside is a reentry counted in nmissed', () => {
    const { machine, mgr } = probeRig();
    const r = addFile(mgr, 'kprobe kprobe_target { pre { printk("t2(%d) = %ld\\n", 30, kprobe_target2(30)); return 0; } }\n'
      + 'kprobe kprobe_target2 { pre { printk("inner\\n"); return 0; } }\n');
    const out = runAll(machine);
    const calls = hitsOf(out.lines, 't2(30) = 11'); // 30 / 3 + 1 (the kernel's div_factor is 3)
    assert.ok(calls > 10, `${calls} calls`);
    const inner = mgr.get(r.probes[1].id);
    assert.equal(inner?.nmissed, calls, 'one miss per nested call');
    assert.equal(hitsOf(out.lines, 'inner'), inner?.hits, 'the inner handler ran only for the kernel\'s own calls (hits count handler runs)');
    assert.equal(machine.kernel.oopsCount, 0);
  });

  test('calls: unknown function names are positioned errors; a fault inside the called function oopses as in Linux', () => {
    const { machine, mgr } = probeRig();
    const d = mgr.compileProbeFile('kprobe do_fork {\n  pre { kprobe_targett(1); return 0; }\n}\n', 'u.kprobe').diagnostics;
    assert.equal(d.length, 1);
    assert.equal(d[0].line, 2);
    assert.equal(d[0].column, 9);
    assert.match(d[0].message, /unknown function 'kprobe_targett'.*nor a function of the image/);
    // the image's memcpy reading from 0x20: a real page fault in kernel code while the kprobe is active;
    // no fault snippet handles it and nothing fixes it up, so the CPU oopses at the faulting instruction
    addFile(mgr, 'kprobe do_fork { pre { static int n; if (!n++) memcpy(0x10, 0x20, 8); return 0; } }\n', 'f.kprobe');
    const out = runAll(machine);
    assert.equal(machine.kernel.oopsCount, 1);
    assert.ok(out.lines.includes('BUG: kernel NULL pointer dereference, address: 0000000000000020'), out.lines.slice(0, 8).join('\n'));
    assert.ok(out.lines.some(l => /^RIP: memcpy\+0x[0-9a-f]+\/0x[0-9a-f]+$/.test(l)));
  });

  for (const port of PORTS.filter(p => p.hasCpu)) {
    test(`${port.name}: a handler calls an image function; its probe's hit inside counts nmissed`, () => {
      const m = new Machine(imageFor(port.name), { cpus: 2, maxInstructions: 50_000_000 });
      const r = addFile(probesOf(m), 'kprobe kprobe_target { pre { static int n; if (n++ < 3) printk("t2 = %ld\\n", kprobe_target2(30)); return 0; } }\n'
        + 'kprobe kprobe_target2 { pre { return 0; } }\n');
      assert.deepEqual(r.errors, []);
      const out = runAll(m);
      assert.equal(hitsOf(out.lines, 't2 = 11'), 3);
      assert.equal(probesOf(m).get(r.probes[1].id)?.nmissed, 3);
      assert.ok(out.lines.some(l => l.startsWith('summary:') && l.endsWith('checksum f5eea83031290534')), 'the kernel\'s results are unchanged');
    });
  }

  test('batch { }: one failure rolls the batch back (text restored, no hits); the next batch registers', () => {
    const { machine, mgr } = probeRig();
    const orig = machine.kernel.mem.readBytes(mustVAddr(sym('do_fork')), 8);
    const r = mgr.addProbeFile('batch {\n  kprobe do_fork { pre { printk("A\\n"); return 0; } }\n  kretprobe alloc_pid { return { printk("B\\n"); } }\n'
      + '  kprobe no_such_function { pre { return 0; } }\n  kprobe fib { pre { return 0; } }\n}\nbatch { kprobe kprobe_target { pre { printk("C\\n"); return 0; } } }\n', 'b.kprobe');
    assert.deepEqual(r.errors, ['b.kprobe:1:1: batch: register_kprobes failed at probe 3 of 4 (b.kprobe:4:3: kprobe no_such_function: '
      + "register_kprobe failed: -ENOENT (unknown symbol 'no_such_function')); 2 registered probes of the batch unregistered again"]);
    assert.deepEqual(r.probes.map(p => p.verified), [false, false, false, true]);
    assert.match(r.probes[0].message ?? '', /rolled back/);
    assert.deepEqual(machine.kernel.mem.readBytes(mustVAddr(sym('do_fork')), 8), orig, 'do_fork text restored');
    assert.deepEqual(formatKprobeList(machine.kprobes).trim().split('\n').map(l => l.split(/\s+/)[2]), ['kprobe_target+0x0']);
    const out = runAll(machine);
    assert.equal(hitsOf(out.lines, 'A') + hitsOf(out.lines, 'B'), 0);
    assert.ok(hitsOf(out.lines, 'C') > 0);
  });

  test('batch { } with a probe that does not compile registers nothing', () => {
    const { machine, mgr } = probeRig();
    const r = mgr.addProbeFile('batch {\n  kprobe do_fork { pre { return 0; } }\n  kprobe fib { pre { return nope; } }\n}\n', 'c.kprobe');
    assert.ok(r.diagnostics.some(d => d.severity === 'error' && /'nope' is not declared/.test(d.message)));
    assert.deepEqual(r.errors, ['c.kprobe:1:1: batch: not registered: 1 of its 2 probes did not compile (register_kprobes() registers all or none)']);
    assert.equal(formatKprobeList(machine.kprobes), '');
    assert.ok(sampleImage());
  });

  test('symbol@0xaddr sets both fields of struct kprobe: -EINVAL as documented, the other probes register', () => {
    const { mgr } = probeRig();
    const at = `0x${sym('do_fork').toString(16)}`;
    const r = mgr.addProbeFile(`kprobe do_fork@${at} { pre { return 0; } }\nkprobe fib { pre { return 0; } }\n`, 'both.kprobe');
    assert.deepEqual(r.diagnostics, []);
    assert.deepEqual(r.errors, [`both.kprobe:1:1: kprobe do_fork@${at}: register_kprobe failed: -EINVAL (give either a symbol or an address)`]);
    assert.deepEqual(r.probes.map(p => p.verified), [false, true]);
  });
});
