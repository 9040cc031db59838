/**
 * kprobe_events lines end to end on the bundled x86_64 sample kernel
 * (examples/kernel): through a .kprobe file on the Machine / ProbeManager,
 * as function breakpoints, and through `kprobe-run run --event ... --list`.
 * Expected values come from the sample kernel's source:
 *   - main.c kprobes_selftest() runs first, on CPU 0 in the boot task
 *     (pid 1, "init"), and calls kprobe_target(rand1 = 0x2545f491), which
 *     returns rand1 / 3, then sys_open("/nonexistent", O_RDONLY, 0), which
 *     returns -ENOENT (fs.c);
 *   - guarded_value = 0x6b70726f6265, and address 0x10 is mapped by nothing
 *     (main.c UNMAPPED_ADDR);
 *   - kprobe_target and sys_open run once in the self-test and once per
 *     worker iteration (4 workers x 24).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileProbeFile } from '../../emulator/handlers';
import { kprobeEvents, kprobeProfile } from '../../emulator/tracing/events';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { RAND1, SAMPLE_IMAGE, TARGET_CALLS, addFile, probeRig, runAll, sampleImage } from '../probes/helpers';

const SYS_OPEN_CALLS = 1 + 4 * 24;

function sym(name: string): { value: bigint; size: bigint } {
  const s = sampleImage().symbols.lookup(name);
  assert.ok(s, name);
  return s;
}
const fmt = (a: bigint): string => sampleImage().symbols.format(a, true);

/** the context columns of a line printed at virtual time ns by pid 1 ("init") on CPU 0 */
function initContext(ns: bigint): string {
  const us = (ns + 500n) / 1000n;
  return `            init-1       [000] d.... ${String(us / 1_000_000n).padStart(5)}.${String(us % 1_000_000n).padStart(6, '0')}: `;
}

const FILE = `
// kprobe_events lines in a probe file
p:tgt kprobe_target a=%di:u32 a1=$arg1:u32 gv=@guarded_value bad=+0(\\16):u64 c=$comm
r:tret kprobe_target $retval:u32
p:t2 kprobe_target2 ra=$stack0:symbol ra2=$stack0
p:op sys_open path=+0(%di):string flags=%si:s32   # a tracefs comment
r:oret sys_open rv=$retval:s64
p:gone do_fork
-:gone
`;

describe('kprobe_events lines in a .kprobe file, on the sample kernel', () => {
  test('trace lines with registers, $argN, $stack0, memory, a fault, $comm, strings and $retval; kprobe_events and kprobe_profile', () => {
    const { machine, mgr } = probeRig();
    const r = addFile(mgr, FILE);
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.probes.map(p => [p.kind, p.target, p.verified]), [
      ['kprobe', 'kprobe_target', true], ['kretprobe', 'kprobe_target', true], ['kprobe', 'kprobe_target2', true], ['kprobe', 'sys_open', true], ['kretprobe', 'sys_open', true],
    ]);
    const out = runAll(machine);
    assert.equal(out.exit.reason, 'poweroff');
    assert.equal(out.exit.code, 0);
    assert.deepEqual(out.stops, []);
    const recs = out.records.filter(x => /^ +\S+-\d+ +\[\d{3}\] d\.\.\.\. +\d+\.\d{6}: (tgt|tret|t2|op|oret): /.test(x.text));
    assert.ok(recs.every(x => x.source === 'probe'));
    const tgt = recs.filter(x => / tgt: /.test(x.text));
    const tret = recs.filter(x => / tret: /.test(x.text));
    assert.equal(tgt.length, TARGET_CALLS);
    assert.equal(tret.length, TARGET_CALLS);
    assert.equal(recs.filter(x => / op: /.test(x.text)).length, SYS_OPEN_CALLS);

    // the self-test's kprobe_target(rand1) returns rand1 / 3 into kprobes_selftest
    const ret = /^ +init-1 +\[000\] d\.\.\.\. +\d+\.\d{6}: tret: \((\S+) <- kprobe_target\) arg1=(\d+)$/.exec(tret[0].text);
    assert.ok(ret, tret[0].text);
    assert.equal(ret[2], String(RAND1 / 3n));
    assert.match(ret[1], /^kprobes_selftest\+0x[0-9a-f]+\/0x[0-9a-f]+$/);
    const kt = sym('kprobe_target');
    assert.equal(tgt[0].text, `${initContext(machine.printkRecords.find(x => x.text === tgt[0].text)!.timeNs)}tgt: (kprobe_target+0x0/0x${kt.size.toString(16)}) `
      + `a=${RAND1} a1=${RAND1} gv=0x6b70726f6265 bad=(fault) c="init"`);
    // $stack0 at kprobe_target2's entry: the return address, where a kretprobe on it returns (a run of its own: a
    // kretprobe on the same function would have replaced the stack slot with its trampoline)
    const t2 = recs.find(x => / t2: /.test(x.text));
    assert.ok(t2);
    const m2 = /t2: \(kprobe_target2\+0x0\/0x[0-9a-f]+\) ra=(kprobes_selftest\+0x[0-9a-f]+\/0x[0-9a-f]+) ra2=0x([0-9a-f]+)$/.exec(t2.text);
    assert.ok(m2, t2.text);
    assert.equal(fmt(BigInt('0x' + m2[2])), m2[1]);
    const other = probeRig();
    addFile(other.mgr, 'r:t2r kprobe_target2 $retval:u32');
    const t2r = runAll(other.machine).lines.find(l => / t2r: /.test(l));
    assert.equal(/ t2r: \((\S+) <- kprobe_target2\)/.exec(t2r ?? '')?.[1], m2[1]);
    // kprobe_target2 returns rand1 / 3 + 1 (test_kprobes.c)
    assert.ok(t2r?.endsWith(` arg1=${RAND1 / 3n + 1n}`), t2r);
    // the self-test's sys_open("/nonexistent", O_RDONLY, 0) = -ENOENT
    const op = out.records.find(x => / op: /.test(x.text) && x.text.startsWith('            init-1 '));
    assert.ok(op);
    assert.equal(op.text, `${initContext(machine.printkRecords.find(x => x.text === op.text)!.timeNs)}op: (${fmt(sym('sys_open').value)}) path="/nonexistent" flags=0`);
    assert.equal(sym('sys_open').size > 0n && fmt(sym('sys_open').value), `sys_open+0x0/0x${sym('sys_open').size.toString(16)}`);
    const oret = out.records.find(x => / oret: /.test(x.text) && x.text.startsWith('            init-1 '));
    assert.ok(oret);
    assert.match(oret.text, /oret: \(kprobes_selftest\+0x[0-9a-f]+\/0x[0-9a-f]+ <- sys_open\) rv=-2$/);
    // every worker's open: a path of main.c's table, each return one of fs.c's results
    const paths = new Set(out.records.filter(x => / op: /.test(x.text)).map(x => /path="([^"]*)"/.exec(x.text)?.[1]));
    assert.deepEqual([...paths].sort(), ['/etc/hostname', '/etc/motd', '/nonexistent', '/proc/version', '/root/secret', '/tmp/missing']);
    const rvs = new Set(out.records.filter(x => / oret: /.test(x.text)).map(x => /rv=(-?\d+)$/.exec(x.text)?.[1]));
    // fs.c: -EACCES for /root/secret, -ENOENT for missing files, else the lowest free fd >= 3 (two CPUs may hold one each)
    assert.deepEqual([...rvs].sort(), ['-13', '-2', '3', '4']);
    // the printed comm and pid are the current task's
    for (const x of recs.filter(y => / kworker/.test(y.text))) {
      const m = /^ +(kworker\/\d:\d)-(\d+) +\[(\d{3})\]/.exec(x.text);
      assert.ok(m, x.text);
      assert.equal(Number(m[3]), x.cpu);
    }

    assert.equal(kprobeEvents(machine.kernel),
      'p:kprobes/tgt kprobe_target a=%di:u32 a1=$arg1:u32 gv=@guarded_value bad=+0(\\16):u64 c=$comm\n'
      + 'r:kprobes/tret kprobe_target arg1=$retval:u32\n'
      + 'p:kprobes/t2 kprobe_target2 ra=$stack0:symbol ra2=$stack0\n'
      + 'p:kprobes/op sys_open path=+0(%di):string flags=%si:s32\n'
      + 'r:kprobes/oret sys_open rv=$retval:s64\n');
    const row = (n: string, h: number): string => `  ${n.padEnd(44)} ${String(h).padStart(15)} ${'0'.padStart(15)}\n`;
    assert.equal(kprobeProfile(machine.kernel), row('tgt', TARGET_CALLS) + row('tret', TARGET_CALLS) + row('t2', TARGET_CALLS) + row('op', SYS_OPEN_CALLS) + row('oret', SYS_OPEN_CALLS));
    // an event whose probe is removed is no longer listed
    mgr.remove(r.probes[0].id);
    assert.equal(kprobeProfile(machine.kernel).split('\n')[0], row('tret', TARGET_CALLS).trimEnd());
  });

  test('compile errors at line:column: bad register, bad type, $retval on p, -: of an unknown event, a duplicate event', () => {
    const text = [
      'kprobe do_fork { pre { } }',
      '  p:e1 do_fork %foo',
      'p:e2 do_fork x=%di:u128',
      'p:e3 do_fork $retval',
      '-:nosuch',
      'p:e4 do_fork',
      'p:e4 sys_open',
      'r:e5 do_fork+4',
      'p:e6 do_fork v=@no_such_symbol',
      'p:ok kprobe_target %di',
    ].join('\n');
    const r = compileProbeFile(text, 't.kprobe', { regNames: probeRig().machine.arch.regs.map(x => x.name), imageArch: 'x86_64', symbolExists: n => sampleImage().symbols.lookup(n) !== undefined });
    assert.deepEqual(r.diagnostics.filter(d => d.severity === 'error').sort((a, b) => a.line - b.line).map(d => `${d.line}:${d.column} ${d.message.replace(/: expected one of.*/, '')}`), [
      "2:16 Invalid register name '%foo' for x86_64",
      "3:20 Unknown type 'u128': expected u8, u16, u32, u64, s8, s16, s32, s64, x8, x16, x32, x64, string, ustring or symbol",
      '4:14 $retval is not available on probe: it is for return probes (r...)',
      "5:3 no event 'nosuch' is defined before this line (-: removes an event an earlier line of this file defined)",
      "7:1 event 'kprobes/e4' is already defined at line 6 (remove it first with -:kprobes/e4)",
      '8:6 Retprobe address must be an function entry: a return probe takes SYM or SYM+0, not do_fork+4',
      "9:17 Invalid memory address: the image has no symbol 'no_such_symbol' (@SYM)",
    ]);
    assert.deepEqual(r.probes.map(p => p.event?.name ?? p.kind), ['kprobe', 'e4', 'ok']);
  });

  test('an unknown probe point is a registration error naming the symbol; the other events run', () => {
    const { machine, mgr } = probeRig();
    const r = mgr.addProbeFile('p:e nosuch_function %di\np:k kprobe_target %di:u32', 'u.kprobe');
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0], /^u\.kprobe:1:1: kprobe nosuch_function: register_kprobe failed: -ENOENT/);
    const out = runAll(machine);
    assert.equal(out.lines.filter(l => / k: \(kprobe_target\+0x0\//.test(l)).length, TARGET_CALLS);
    assert.equal(kprobeEvents(machine.kernel), 'p:kprobes/k kprobe_target arg1=%di:u32\n');
  });
});

describe('kprobe_events definitions as function breakpoints', () => {
  test('an event breakpoint writes trace lines and never stops; a condition filters its hits', () => {
    const { machine, mgr } = probeRig();
    const e = mgr.addBreakpoint({ target: 'p:bp kprobe_target x=%di:u32' });
    assert.equal(e.verified, true, e.message);
    assert.equal(e.kind, 'kprobe');
    const rr = mgr.addBreakpoint({ target: 'r4:bpr sys_open $retval:s64', condition: '(long)regs->ax == -2' });
    assert.equal(rr.verified, true, rr.message);
    assert.equal(rr.kind, 'kretprobe');
    const out = runAll(machine);
    assert.deepEqual(out.stops, []);
    const bp = out.lines.filter(l => / bp: \(kprobe_target\+0x0\/0x[0-9a-f]+\) x=\d+$/.test(l));
    assert.equal(bp.length, TARGET_CALLS);
    assert.match(bp[0], new RegExp(`^            init-1 +\\[000\\] d\\.\\.\\.\\. +\\d+\\.\\d{6}: bp: \\(kprobe_target\\+0x0/0x[0-9a-f]+\\) x=${RAND1}$`));
    const bpr = out.lines.filter(l => / bpr: /.test(l));
    assert.ok(bpr.length > 1 && bpr.every(l => l.endsWith(' arg1=-2')), bpr.join('\n'));
    assert.equal(kprobeEvents(machine.kernel), 'p:kprobes/bp kprobe_target x=%di:u32\nr4:kprobes/bpr sys_open arg1=$retval:s64\n');
    assert.equal(mgr.get(rr.id)?.conditionHits, bpr.length);
  });

  test('bad definitions come back unverified with the column; -: says to delete the breakpoint', () => {
    const { mgr } = probeRig();
    const msg = (target: string): string | undefined => {
      const e = mgr.addBreakpoint({ target });
      assert.equal(e.verified, false, target);
      return e.message;
    };
    assert.match(msg('p:bp kprobe_target %foo') ?? '', /^kprobe_events: column 20: Invalid register name '%foo' for x86_64: expected one of %r15/);
    assert.equal(msg('p:bp kprobe_target x=%di:u7'), "kprobe_events: column 26: Unknown type 'u7': expected u8, u16, u32, u64, s8, s16, s32, s64, x8, x16, x32, x64, string, ustring or symbol");
    assert.equal(msg('r:bp kprobe_target+8'), 'kprobe_events: column 6: Retprobe address must be an function entry: a return probe takes SYM or SYM+0, not kprobe_target+8');
    assert.equal(msg('p5:bp kprobe_target'), 'kprobe_events: column 2: Maxactive is not for kprobe: only a return probe (r5) takes MAXACTIVE');
    assert.equal(msg('-:bp'), 'kprobe_events: column 1: -:bp removes an event in tracefs; to remove an event breakpoint, delete the breakpoint');
    assert.match(msg('p:bp no_such_fn %di') ?? '', /register_kprobe failed: -ENOENT/);
    // the perf-probe style prefixes keep their meaning: a stopping breakpoint
    const plain = mgr.addBreakpoint({ target: 'r:sys_open' });
    assert.equal(plain.verified, true);
    assert.equal(plain.kind, 'kretprobe');
  });
});

describe('kprobe-run run --event', () => {
  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const c = captureIo();
    const code = await runCli(argv, c.io);
    return { code, out: c.stdout(), err: c.stderr() };
  }

  test('trace lines on stdout, kprobe_events and kprobe_profile in --list', async () => {
    const r = await cli('run', SAMPLE_IMAGE, '--event', 'p:op sys_open path=+0(%di):string c=$comm', '--event', 'r:oret sys_open $retval:s64', '--list');
    assert.equal(r.err, '');
    assert.equal(r.code, 0);
    const lines = r.out.split('\n');
    const first = lines.findIndex(l => / op: /.test(l));
    assert.match(lines[first], new RegExp(`^            init-1       \\[000\\] d\\.\\.\\.\\. +\\d+\\.\\d{6}: op: \\(sys_open\\+0x0/0x${sym('sys_open').size.toString(16)}\\) path="/nonexistent" c="init"$`));
    assert.match(lines[first + 1], /^ {12}init-1 {7}\[000\] d\.{4} +\d+\.\d{6}: oret: \(kprobes_selftest\+0x[0-9a-f]+\/0x[0-9a-f]+ <- sys_open\) arg1=-2$/);
    assert.equal(lines[first + 2], 'selftest: sys_open("/nonexistent") = -2');
    const at = r.out.indexOf('# cat /sys/kernel/debug/tracing/kprobe_events\n');
    assert.ok(at > 0);
    assert.ok(r.out.slice(at).startsWith('# cat /sys/kernel/debug/tracing/kprobe_events\n'
      + 'p:kprobes/op sys_open path=+0(%di):string c=$comm\n'
      + 'r:kprobes/oret sys_open arg1=$retval:s64\n'
      + '# cat /sys/kernel/debug/tracing/kprobe_profile\n'
      + `  op${' '.repeat(42)} ${String(SYS_OPEN_CALLS).padStart(15)} ${'0'.padStart(15)}\n`
      + `  oret${' '.repeat(40)} ${String(SYS_OPEN_CALLS).padStart(15)} ${'0'.padStart(15)}\n`), r.out.slice(at, at + 600));
  });

  test("a bad definition: the kernel's error_log with '^' under the column, exit 1 before boot", async () => {
    const r = await cli('run', SAMPLE_IMAGE, '--event', 'p:ok do_fork', '--event', 'p:myprobe do_sys_open %foo');
    assert.equal(r.code, 1);
    assert.equal(r.out, '');
    const lines = r.err.split('\n');
    assert.match(lines[0], /^--event 2: trace_kprobe: error: Invalid register name '%foo' for x86_64: expected one of /);
    assert.equal(lines[1], '  Command: p:myprobe do_sys_open %foo');
    assert.equal(lines[2], '                                 ^');
    assert.match(r.err, /1 error/);
  });
});
