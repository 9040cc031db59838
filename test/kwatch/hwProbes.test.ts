/**
 * Debug-register probes through the ProbeManager on the x86_64 sample
 * kernel: kwatch lines of probe files (register_kwatch), hardware
 * breakpoints (an execute debug register: no byte of code changes), data
 * breakpoints (dataTarget + addDataBreakpoint), and the refusals: a fifth
 * register (-ENOSPC), len=3 and a misaligned address (-EINVAL), unmapped
 * memory (-EFAULT), an expression with no address.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BreakpointHit } from '../../emulator/probes';
import { toVAddr } from '../../emulator/memory/address';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';
import { probeRig, runAll, sampleImage, sym, TARGET_CALLS } from '../probes/helpers';
import { probesOf } from '../../emulator/probes/attach';

/** what read_boot_counter does to boot_counter: one `incq` per call (main.c calls it 96 times) */
const BOOT_COUNTER_CALLS = 96;

function kwatchRun(text: string): { lines: string[]; list: ReturnType<ReturnType<typeof probeRig>['mgr']['list']>; errors: string[] } {
  const { machine, mgr } = probeRig();
  const r = mgr.addProbeFile(text, 'w.kprobe');
  assert.deepEqual(r.diagnostics.filter(d => d.severity === 'error'), []);
  const out = runAll(machine);
  assert.equal(out.exit.code, 0, out.exit.detail);
  return { lines: out.lines, list: mgr.list(), errors: r.errors };
}

describe('kwatch probes (register_kwatch from .kprobe files)', () => {
  test('a write watch on a global the kernel writes: register number, address, access and new value per hit; deterministic', () => {
    const text = 'kwatch last_bad_sport len=2 type=w {\n'
      + '  printk("kw dr%d %lx %d %lu->%lu\\n", debugreg, addr, access, old, new);\n}\n';
    const a = kwatchRun(text);
    assert.deepEqual(a.errors, []);
    const hits = a.lines.filter(l => l.startsWith('kw '));
    assert.ok(hits.length > 0);
    const addr = sym('last_bad_sport').toString(16);
    for (const h of hits) assert.match(h, new RegExp(`^kw dr0 ${addr} 2 \\d+->\\d+$`), h);
    const [e] = a.list;
    assert.equal(e.kind, 'kwatch');
    assert.equal(e.verified, true);
    assert.equal(e.hits, hits.length);
    assert.equal(e.nmissed, 0);
    assert.deepEqual(e.watch, { register: 0, registerName: 'DR0', addr: sym('last_bad_sport'), len: 2, type: 'w', suspended: false });
    assert.deepEqual(e.file, { name: 'w.kprobe', line: 1, column: 1 });
    // the same run again: the same hits, the same values
    const b = kwatchRun(text);
    assert.deepEqual(b.lines.filter(l => l.startsWith('kw ')), hits);
    assert.equal(b.list[0].hits, e.hits);
  });

  test('boot_counter: 96 incq, each a write the handler sees with old + 1 = new', () => {
    const r = kwatchRun('kwatch boot_counter len=8 type=w { printk("bc %lu %lu\\n", old, new); }\n');
    const vals = r.lines.filter(l => l.startsWith('bc ')).map(l => l.split(' ').slice(1).map(BigInt));
    assert.equal(vals.length, BOOT_COUNTER_CALLS);
    vals.forEach(([o, n], i) => { assert.equal(o, BigInt(i)); assert.equal(n, BigInt(i + 1)); });
    assert.equal(r.list[0].hits, BOOT_COUNTER_CALLS);
  });

  test('registration failures: one line each, file:line:col: kwatch X: register_kwatch failed: -ERRNO (reason)', () => {
    const { mgr } = probeRig();
    const r = mgr.addProbeFile([
      'kwatch last_bad_sport len=3 type=w { }',
      'kwatch nr_forks+2 len=4 type=w { }',
      'kwatch 0x10 len=8 type=w { }',
      'kwatch no_such_var len=8 type=w { }',
      'kwatch boot_counter len=8 type=r { }',
    ].join('\n'), 'f.kprobe');
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.errors.length, 5, r.errors.join('\n'));
    assert.match(r.errors[0], /^f\.kprobe:1:1: kwatch last_bad_sport: register_kwatch failed: -EINVAL \(.*1, 2, 4 or 8 bytes, not 3\)$/);
    assert.match(r.errors[1], /^f\.kprobe:2:1: kwatch nr_forks\+0x2: register_kwatch failed: -EINVAL \(.*aligned to 4\)$/);
    assert.match(r.errors[2], /^f\.kprobe:3:1: kwatch 0x10: register_kwatch failed: -EFAULT \(0x10 is not mapped kernel memory\)$/);
    assert.match(r.errors[3], /^f\.kprobe:4:1: kwatch no_such_var: register_kwatch failed: -ENOENT \(unknown symbol 'no_such_var' in the image\)$/);
    assert.match(r.errors[4], /^f\.kprobe:5:1: kwatch boot_counter: register_kwatch failed: -EINVAL \(x86 debug registers cannot watch reads only/);
    assert.ok(mgr.list().every(e => !e.verified && e.message));
  });

  test('four registers: a fifth kwatch is refused with -ENOSPC; disable gives a register back, enable takes one again', () => {
    const { machine, mgr } = probeRig();
    const r = mgr.addProbeFile(['nr_forks', 'open_count', 'rx_packets', 'boot_counter', 'rx_dropped']
      .map(v => `kwatch ${v} len=8 type=w { }`).join('\n'), 'f.kprobe');
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0], /^f\.kprobe:5:1: kwatch rx_dropped: register_kwatch failed: -ENOSPC \(all 4 debug registers are in use/);
    assert.deepEqual(r.probes.map(p => p.watch?.registerName), ['DR0', 'DR1', 'DR2', 'DR3', '']);
    assert.equal(mgr.setEnabled(r.probes[1].id, false), undefined);
    assert.equal(mgr.get(r.probes[1].id)?.sites[0].flags, '[DISABLED]');
    assert.equal(mgr.setEnabled(r.probes[4].id, true), undefined);
    assert.equal(mgr.get(r.probes[4].id)?.watch?.registerName, 'DR1');
    assert.match(mgr.setEnabled(r.probes[1].id, true) ?? '', /-ENOSPC/);
    assert.ok(mgr.remove(r.probes[0].id));
    assert.equal(machine.hwbp.list().length, 3);
    mgr.removeAll();
    assert.equal(machine.hwbp.list().length, 0);
  });

  test('a debugger data breakpoint takes a kwatch\'s register; the kwatch waits suspended and gets it back', () => {
    const { mgr } = probeRig();
    const r = mgr.addProbeFile(['nr_forks', 'open_count', 'rx_packets', 'boot_counter'].map(v => `kwatch ${v} len=8 type=w { }`).join('\n'), 'f.kprobe');
    assert.deepEqual(r.errors, []);
    const d = mgr.addDataBreakpoint({ addr: sym('fib_last_leaf'), len: 4, access: 'write', label: 'fib_last_leaf' });
    assert.equal(d.verified, true, d.message);
    const suspended = mgr.list().filter(e => e.kind === 'kwatch' && e.watch?.suspended);
    assert.equal(suspended.length, 1);
    assert.equal(suspended[0].sites[0].flags, '[SUSPENDED]');
    assert.equal(suspended[0].watch?.registerName, d.watch?.registerName);
    mgr.remove(d.id);
    assert.ok(mgr.list().every(e => !e.watch?.suspended));
  });

  test('a handler fault under the report policy: a console line naming the body\'s position; the watch goes on', () => {
    const { machine, mgr } = probeRig({ handlerFaults: 'report' });
    mgr.addProbeFile('kwatch last_bad_sport len=2 type=w {\n  int x = *(int *)0;\n}\n', 'f.kprobe');
    const out = runAll(machine);
    assert.equal(out.exit.code, 0);
    const faults = out.records.filter(x => x.source === 'emulator' && /f\.kprobe:2:\d+: kwatch body of kwatch last_bad_sport faulted/.test(x.text));
    const hits = mgr.list()[0].hits;
    assert.ok(hits > 1);
    assert.equal(faults.length, hits);
  });

  test('a handler fault under the default oops policy oopses the CPU with the body\'s position', () => {
    const { machine, mgr } = probeRig();
    mgr.addProbeFile('kwatch last_bad_sport len=2 type=w {\n  int x = *(int *)0;\n}\n', 'f.kprobe');
    const out = runAll(machine);
    assert.ok(out.lines.some(l => /f\.kprobe:2:\d+: kwatch body of kwatch last_bad_sport faulted/.test(l)), out.lines.filter(l => /kwatch|BUG/.test(l)).join('\n'));
    assert.ok(out.lines.some(l => /BUG: kernel NULL pointer dereference/.test(l)));
  });
});

describe('debugger breakpoints on debug registers', () => {
  test('a hardware breakpoint stops at the function before it runs; the code bytes never change', () => {
    const { machine, mgr } = probeRig();
    const at = sym('kprobe_target');
    const before = machine.kernel.mem.readBytes(toVAddr(at)!, 16);
    const hits: BreakpointHit[] = [];
    mgr.onBreakpointHit(h => hits.push(h));
    const e = mgr.addBreakpoint({ target: 'kprobe_target', mode: 'hardware' });
    assert.equal(e.verified, true, e.message);
    assert.equal(e.kind, 'hardware');
    assert.deepEqual(e.watch, { register: 0, registerName: 'DR0', addr: at, len: 1, type: 'x', suspended: false, label: undefined });
    assert.deepEqual(machine.kernel.mem.readBytes(toVAddr(at)!, 16), before, 'registering wrote nothing');
    const out = runAll(machine, () => {
      assert.equal(machine.cpus[0].getPc() === at || machine.cpus[1].getPc() === at, true, 'stopped at the instruction');
      assert.deepEqual(machine.kernel.mem.readBytes(toVAddr(at)!, 16), before, 'no breakpoint byte');
    });
    assert.equal(out.exit.code, 0);
    assert.equal(out.stops.length, TARGET_CALLS);
    assert.deepEqual(out.stops[0].request, { reason: 'breakpoint', description: 'hardware breakpoint (DR0) at kprobe_target+0x0', reportPc: at, probeId: hits[0].probeId });
    assert.equal(hits[0].mode, 'hardware');
    assert.equal(hits[0].registerName, 'DR0');
    assert.equal(mgr.get(e.id)?.hits, TARGET_CALLS);
  });

  test('hardware breakpoints: condition and hit condition as for kprobe breakpoints; a log message never stops', () => {
    const a = probeRig();
    a.mgr.addBreakpoint({ target: 'kprobe_target', mode: 'hardware', hitCondition: '%10' });
    assert.equal(runAll(a.machine).stops.length, Math.floor(TARGET_CALLS / 10));
    const b = probeRig();
    const lp = b.mgr.addBreakpoint({ target: 'kprobe_target', mode: 'hardware', logMessage: 'hw {arg0}' });
    assert.equal(lp.verified, true, lp.message);
    const out = runAll(b.machine);
    assert.equal(out.stops.length, 0);
    assert.equal(out.lines.filter(l => l.startsWith('hw ')).length, TARGET_CALLS);
  });

  test('a data breakpoint on a variable through dataTarget stops after each write with the old and new value', () => {
    const { machine, mgr } = probeRig();
    const t = mgr.dataTarget('boot_counter');
    assert.ok(typeof t !== 'string', String(t));
    assert.equal(t.addr, sym('boot_counter'));
    assert.equal(t.len, 8);
    const hits: BreakpointHit[] = [];
    mgr.onBreakpointHit(h => hits.push(h));
    const e = mgr.addDataBreakpoint({ addr: t.addr, len: t.len, access: 'write', label: 'boot_counter' });
    assert.equal(e.verified, true, e.message);
    assert.equal(e.kind, 'watch');
    const out = runAll(machine);
    assert.equal(out.exit.code, 0);
    assert.equal(out.stops.length, BOOT_COUNTER_CALLS);
    assert.equal(out.stops[0].request.reason, 'data breakpoint');
    hits.forEach((h, i) => {
      assert.equal(h.mode, 'data');
      assert.equal(h.registerName, 'DR0');
      assert.equal(h.access, 'write');
      assert.equal(h.oldValue, BigInt(i));
      assert.equal(h.newValue, BigInt(i + 1));
      assert.ok(h.accessAddr! >= t.addr && h.accessAddr! < t.addr + 8n, 'the access is inside the watched bytes');
    });
    assert.match(out.stops[41].request.description, /^watchpoint DR0 hit: write to boot_counter \(0x[0-9a-f]+\): 41 -> 42$/);
    // the stop is reported at the instruction after the access (x86 trap semantics)
    assert.ok(sampleImage().symbols.format(out.stops[0].request.reportPc!, false).startsWith('read_boot_counter+'));
  });

  test('a data breakpoint\'s condition sees the machine after the access', () => {
    const { machine, mgr } = probeRig();
    mgr.addDataBreakpoint({ addr: sym('boot_counter'), len: 8, access: 'write', condition: '*(unsigned long *)symbol("boot_counter") == 50' });
    const out = runAll(machine);
    assert.equal(out.stops.length, 1);
    assert.match(out.stops[0].request.description, /49 -> 50$/);
  });

  test('dataTarget: &sym, a cast pointer, a struct member; expressions without an address give the error text', () => {
    const { mgr } = probeRig();
    const amp = mgr.dataTarget('&boot_counter');
    assert.ok(typeof amp !== 'string');
    assert.deepEqual([amp.addr, amp.len], [sym('boot_counter'), 8]);
    const cast = mgr.dataTarget(`*(u32 *)0x${sym('fib_last_leaf').toString(16)}`);
    assert.ok(typeof cast !== 'string');
    assert.deepEqual([cast.addr, cast.len], [sym('fib_last_leaf'), 4]);
    const u16 = mgr.dataTarget('last_bad_sport');
    assert.ok(typeof u16 !== 'string');
    assert.equal(u16.len, 2);
    assert.equal(mgr.dataTarget('1 + 2'), "'1 + 2' has no address: a data breakpoint needs a variable or a memory location");
    assert.match(String(mgr.dataTarget('jiffies')), /'jiffies' has no address/);
    assert.match(String(mgr.dataTarget('no_such_thing')), /no_such_thing/);
    assert.match(String(mgr.dataTarget('workers[1]')), /is 80 bytes: a debug register watches at most 8/);
  });

  test('refusals make the breakpoint unverified with the reason: a fifth register -ENOSPC, len 3 and misalignment -EINVAL', () => {
    const { mgr } = probeRig();
    const vars = ['nr_forks', 'open_count', 'rx_packets', 'boot_counter'];
    for (const v of vars) assert.equal(mgr.addDataBreakpoint({ addr: sym(v), len: 8, access: 'write', label: v }).verified, true);
    const fifth = mgr.addDataBreakpoint({ addr: sym('rx_dropped'), len: 8, access: 'write' });
    assert.equal(fifth.verified, false);
    assert.match(fifth.message ?? '', /-ENOSPC/);
    const hw = mgr.addBreakpoint({ target: 'kprobe_target', mode: 'hardware' });
    assert.equal(hw.verified, false);
    assert.match(hw.message ?? '', /hardware breakpoint refused: -ENOSPC/);
    mgr.removeAll();
    assert.match(mgr.addDataBreakpoint({ addr: sym('boot_counter'), len: 3, access: 'write' }).message ?? '', /-EINVAL .*not 3/);
    assert.match(mgr.addDataBreakpoint({ addr: sym('nr_forks') + 2n, len: 4, access: 'write' }).message ?? '', /-EINVAL .*aligned to 4/);
    assert.match(mgr.addDataBreakpoint({ addr: sym('boot_counter'), len: 8, access: 'read' }).message ?? '', /-EINVAL .*reads only/);
  });
});

describe('riscv64: no debug registers', () => {
  test('kwatch lines, hardware and data breakpoints are refused saying so (-ENODEV)', () => {
    const machine = new Machine(loadElf(repoPath('examples', 'kernel', 'build', 'kernel-riscv64.elf')), { cpus: 1, maxInstructions: 1_000_000 });
    const mgr = probesOf(machine);
    const r = mgr.addProbeFile('kwatch boot_counter len=8 type=w { }\n', 'r.kprobe');
    assert.deepEqual(r.diagnostics, []);
    assert.deepEqual(r.errors, ['r.kprobe:1:1: kwatch boot_counter: register_kwatch failed: -ENODEV (riscv64: no debug registers are emulated on this architecture\'s CPU)']);
    const hw = mgr.addBreakpoint({ target: 'kprobe_target', mode: 'hardware' });
    assert.equal(hw.verified, false);
    assert.match(hw.message ?? '', /^hardware breakpoints need debug registers: -ENODEV \(riscv64: no debug registers/);
    const d = mgr.addDataBreakpoint({ addr: machine.image.symbols.lookup('boot_counter')!.value, len: 8, access: 'write' });
    assert.equal(d.verified, false);
    assert.match(d.message ?? '', /-ENODEV \(riscv64: no debug registers/);
  });
});
