/**
 * The proof that the kprobes C API behaves as Linux's: Linux's own
 * lib/test_kprobes.c (a KUnit suite), taken from Debian's linux-source
 * packages by test/modules/linux/fetch-test-kprobes.sh and built as a module
 * by test/modules/linux/build.sh against examples/include (<kunit/test.h> is
 * the project's minimal KUnit), is loaded into each arch's sample kernel: its
 * init runs the suite, and the KTAP lines it prints must say that every case
 * of the file ran, in the file's order, and passed.
 *
 * Deliberately broken engines show the lines would say otherwise: probes
 * disarmed (debugfs `enabled` = 0: registration works, no handler ever
 * runs); register_kretprobe() refusing everything (the suite's
 * KUNIT_ASSERTs end their cases, the next cases still run); and stack
 * traces that leave the kretprobe trampoline in place of the real return
 * addresses of the task's other instances (the nested stack-trace case).
 *
 * Linux's source is not committed. As the Debian busybox checks do
 * (test/userspace/debian.test.ts), a missing module is fetched and built
 * here; when that cannot be done (offline, no apt, no clang) each test
 * says what to run and skips — except in CI (CI=true), where .ci/run
 * fetches and builds it first, so it fails.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { LAYOUT } from '../../emulator/kprobes/cApi';
import { mustVAddr } from '../../emulator/memory/address';
import { taskAddress } from '../../emulator/kernel/task';
import { repoPath } from '../util/paths';
import { probesOf } from '../../emulator/probes/attach';
import { unfetched } from '../util/fetched';

const LINUX = repoPath('test', 'modules', 'linux');
const CACHE = join(LINUX, 'cache');
const ARCHES = ['x86_64', 'aarch64', 'riscv64'];
/** the series name when none could be fetched (each test then says so) */
const NONE = '(none fetched)';
const HOWTO = 'run test/modules/linux/fetch-test-kprobes.sh, then test/modules/linux/build.sh (needs apt and clang)';

/** the fetched series (6.1, 6.12...), fetched and built first when none is there */
function series(): string[] {
  const found = (): string[] => (existsSync(CACHE) ? readdirSync(CACHE) : [])
    .filter(d => /^linux-source-[\d.]+$/.test(d) && existsSync(join(CACHE, d, 'lib', 'test_kprobes.c')))
    .map(d => d.slice('linux-source-'.length));
  let s = found();
  if (!s.length) {
    spawnSync('bash', [join(LINUX, 'build.sh')], { stdio: 'ignore', timeout: 600_000 });
    s = found();
  }
  return s.length ? s : [NONE];
}

/** the newest modification time under a path (files and directories, recursively) */
function newest(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return readdirSync(path).reduce((t, n) => Math.max(t, newest(join(path, n))), st.mtimeMs);
}

/** the module of a series for an arch, (re)built when missing or older than its source, the headers or build.sh; else why not */
function moduleFor(ver: string, arch: string): { path: string } | { missing: string } {
  const src = join(CACHE, `linux-source-${ver}`, 'lib', 'test_kprobes.c');
  const ko = join(LINUX, 'build', `linux-source-${ver}`, arch, 'test_kprobes.ko');
  if (!existsSync(src)) {
    return { missing: `Linux's lib/test_kprobes.c (Debian's linux-source${ver === NONE ? '' : `-${ver}`}) is not fetched: ${HOWTO}` };
  }
  const inputs = Math.max(newest(src), newest(repoPath('examples', 'include')), newest(join(LINUX, 'build.sh')));
  if (!existsSync(ko) || statSync(ko).mtimeMs < inputs) {
    const r = spawnSync('bash', [join(LINUX, 'build.sh'), ver], { encoding: 'utf8', timeout: 300_000 });
    if (r.status !== 0 || !existsSync(ko)) {
      return { missing: `test_kprobes.ko for ${arch} could not be built (${(r.stderr || r.error?.message || '').trim()}): ${HOWTO}` };
    }
  }
  return { path: ko };
}

/** skip with the reason, or fail in CI where the module must be there */
function unavailable(t: { skip(msg: string): void }, why: string): void {
  unfetched(t, why);
}

/** the KUNIT_CASE()s of the fetched file, in order (every one is compiled: the emulated kernel's config enables them all) */
function casesOf(ver: string): string[] {
  const text = readFileSync(join(CACHE, `linux-source-${ver}`, 'lib', 'test_kprobes.c'), 'utf8');
  return [...text.matchAll(/^\s*KUNIT_CASE\((\w+)\),/gm)].map(m => m[1]);
}

/** the suite's name (its struct kunit_suite's .name) */
function suiteOf(ver: string): string {
  const text = readFileSync(join(CACHE, `linux-source-${ver}`, 'lib', 'test_kprobes.c'), 'utf8');
  const m = /struct kunit_suite \w+ = \{[^}]*\.name\s*=\s*"([^"]+)"/.exec(text);
  assert.ok(m, 'the file defines a struct kunit_suite with a name');
  return m[1];
}

interface Run { m: Machine; log: string[]; ktap: string[] }

/** boot the arch's sample kernel, load the module (its init runs the suite), run until it is live */
function runSuite(arch: string, ko: string, breakEngine?: (m: Machine) => void): Run {
  const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`)), { cpus: 2 });
  const log: string[] = [];
  m.onPrintk(r => log.push(r.text));
  breakEngine?.(m);
  const mod = m.modules.load(new Uint8Array(readFileSync(ko)), ko);
  for (let i = 0; i < 2000 && mod.state !== 'live' && mod.state !== 'unloaded'; i++) {
    const r = m.runSlice(10_000);
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  assert.equal(mod.state, 'live', `the module's init did not finish:\n${log.slice(-30).join('\n')}`);
  const start = log.indexOf('KTAP version 1');
  assert.ok(start >= 0, `no KTAP output:\n${log.slice(-30).join('\n')}`);
  // the suite's lines: KTAP's own (indented subtest lines, '#' diagnostics, results, plan)
  const ktap = log.slice(start).filter(l => /^( {4})?(KTAP version|#|ok |not ok |1\.\.|Expected| {4})/.test(l));
  return { m, log, ktap };
}

/** the results of the subtest: [n, name, ok] per case line */
function results(ktap: readonly string[]): { n: number; name: string; ok: boolean }[] {
  return ktap.flatMap(l => {
    const r = /^ {4}(ok|not ok) (\d+) (\w+)/.exec(l);
    return r ? [{ n: Number(r[2]), name: r[3], ok: r[1] === 'ok' }] : [];
  });
}

for (const ver of series()) describe(`Linux's lib/test_kprobes.c (KUnit) from Debian's linux-source-${ver}, as a module of the sample kernel`, () => {
  for (const arch of ARCHES) {
    test(`${arch}: every case of the file runs and passes (KTAP)`, t => {
      const ko = moduleFor(ver, arch);
      if ('missing' in ko) { unavailable(t, ko.missing); return; }
      const cases = casesOf(ver);
      const suite = suiteOf(ver);
      assert.ok(cases.length >= 6, `the file's cases: ${cases.join(', ')}`);
      const { m, log, ktap } = runSuite(arch, ko.path);
      const failures = ktap.filter(l => /FAILED at|^ {4}Expected|^ {8}/.test(l));
      assert.deepEqual(failures, [], `failures reported:\n${ktap.join('\n')}`);
      // the plan, each case in the file's order, the counts, the suite's result
      assert.deepEqual(ktap.slice(0, 6), ['KTAP version 1', '1..1', '    KTAP version 1', `    # Subtest: ${suite}`,
        '    # module: test_kprobes', `    1..${cases.length}`], ktap.join('\n'));
      assert.deepEqual(results(ktap), cases.map((name, i) => ({ n: i + 1, name, ok: true })), ktap.join('\n'));
      const n = cases.length;
      assert.deepEqual(ktap.slice(-3), [`# ${suite}: pass:${n} fail:0 skip:0 total:${n}`, `# Totals: pass:${n} fail:0 skip:0 total:${n}`,
        `ok 1 ${suite}`], ktap.join('\n'));
      // nothing left behind: no probe registered, no kretprobe instance pending; the module unloads
      assert.equal(probesOf(m).debugfsList(), '');
      assert.equal(m.modules.unload('test_kprobes'), undefined);
      for (let i = 0; i < 200 && m.modules.get('test_kprobes'); i++) m.runSlice(10_000);
      assert.equal(m.modules.get('test_kprobes'), undefined);
      assert.equal(m.kernel.oopsCount, 0, log.join('\n'));
    });
  }

  test('x86_64, probes disarmed (debugfs enabled = 0): the cases whose handlers must run fail, and the suite is "not ok"', t => {
    const ko = moduleFor(ver, 'x86_64');
    if ('missing' in ko) { unavailable(t, ko.missing); return; }
    const cases = casesOf(ver);
    const suite = suiteOf(ver);
    const { ktap } = runSuite('x86_64', ko.path, m => m.kprobes.setEnabled(false));
    const r = results(ktap);
    assert.equal(r.length, cases.length, ktap.join('\n'));
    const failed = r.filter(x => !x.ok).map(x => x.name);
    // the cases that check what a handler did; the stack-trace cases check inside their handlers only
    const needHandlers = ['test_kprobe', 'test_kprobes', 'test_kprobe_missed', 'test_kretprobe', 'test_kretprobes'].filter(c => cases.includes(c));
    assert.deepEqual(failed, needHandlers, ktap.join('\n'));
    assert.ok(ktap.some(l => /^ {4}# test_kprobe: EXPECTATION FAILED at lib\/test_kprobes\.c:\d+$/.test(l)), ktap.join('\n'));
    assert.ok(ktap.includes('    Expected 0 != preh_val, but'), ktap.join('\n'));
    const n = cases.length, f = needHandlers.length;
    assert.deepEqual(ktap.slice(-3), [`# ${suite}: pass:${n - f} fail:${f} skip:0 total:${n}`,
      `# Totals: pass:${n - f} fail:${f} skip:0 total:${n}`, `not ok 1 ${suite}`]);
  });

  test('x86_64, stack traces without the kretprobe return-address fixup: the nested stack-trace case fails', t => {
    const ko = moduleFor(ver, 'x86_64');
    if ('missing' in ko) { unavailable(t, ko.missing); return; }
    const cases = casesOf(ver);
    const { ktap } = runSuite('x86_64', ko.path, m => {
      // the unwinder's fixup (debugfs.ts fixupStackTrace) finds no live instance: trampoline entries stay as they are
      m.kprobes.kretprobes.instancesOf = () => [];
      m.kprobes.kretprobes.runningOf = () => undefined;
    });
    const r = results(ktap);
    assert.deepEqual(r.map(x => x.name), cases, ktap.join('\n'));
    assert.deepEqual(r.filter(x => !x.ok).map(x => x.name), ['test_stacktrace_on_nested_kretprobe'], ktap.join('\n'));
    assert.ok(ktap.includes('    Expected stack_buf[i + 1] == target_return_address[1], but'), ktap.join('\n'));
  });

  for (const arch of ARCHES) {
    test(`${arch}, register_kretprobe refusing (-ENOMEM): KUNIT_ASSERT ends its case, the later cases still run`, t => {
      const ko = moduleFor(ver, arch);
      if ('missing' in ko) { unavailable(t, ko.missing); return; }
      const cases = casesOf(ver);
      const { ktap } = runSuite(arch, ko.path, m => { m.kprobes.registerKretprobeResult = () => ({ errno: -12, reason: 'a broken engine' }); });
      const r = results(ktap);
      assert.deepEqual(r.map(x => x.name), cases, ktap.join('\n'));
      const kret = cases.filter(c => /kretprobe/.test(c));
      assert.deepEqual(r.filter(x => !x.ok).map(x => x.name), kret, ktap.join('\n'));
      // the stack-trace cases stop at their first ASSERT (register_kretprobe(s) == 0): one failure line each
      for (const c of kret.filter(x => x.startsWith('test_stacktrace'))) {
        const lines = ktap.filter(l => l.startsWith(`    # ${c}: `));
        assert.equal(lines.length, 1, ktap.join('\n'));
        assert.match(lines[0], /^ {4}# \w+: ASSERTION FAILED at lib\/test_kprobes\.c:\d+$/);
      }
    });
  }
});

/**
 * The kernel functions the headers add that lib/test_kprobes.c does not
 * call (or not in every branch), called here the way a module's code
 * calls them: the engine's nested call into their stubs, on a CPU
 * running a task (no fetched source needed).
 */
for (const arch of ARCHES) describe(`the kernel functions for modules beyond lib/test_kprobes.c's (${arch})`, () => {
  function boot(opts: { randomSeed?: bigint } = {}): { m: Machine; log: string[]; cpu: number; call: (name: string, args?: bigint[]) => bigint } {
    const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`)), { cpus: 2, ...opts });
    const log: string[] = [];
    m.onPrintk(r => log.push(r.text));
    m.runSlice(50_000);
    const cpu = [0, 1].find(i => m.kernel.current(i) !== undefined);
    assert.ok(cpu !== undefined, 'a CPU runs a task');
    const call = (name: string, args: bigint[] = []): bigint => {
      const fn = m.kprobes.cApi.symbol(name);
      assert.ok(fn !== undefined, name);
      return m.kprobes.nested.call(m.cpus[cpu], fn, args);
    };
    return { m, log, cpu, call };
  }
  const str = (m: Machine, s: string): bigint => {
    const a = m.kprobes.data.alloc(s.length + 1, 8);
    m.kernel.mem.writeBytes(mustVAddr(a), new TextEncoder().encode(`${s}\0`));
    return a;
  };

  test('raw_smp_processor_id, get_current; outside a probe handler preempt_count() is 0 and interrupts are on (preemptible)', () => {
    const { m, cpu, call } = boot();
    assert.equal(call('raw_smp_processor_id'), BigInt(cpu));
    assert.equal(call('get_current'), taskAddress(m.kernel.current(cpu)));
    assert.equal(call('preempt_count'), 0n);
    assert.equal(call('arch_irqs_disabled'), 0n);
  });

  test('get_random_u32 / _u64 / _bytes: a stream from the machine\'s random seed (same seed, same numbers)', () => {
    const a = boot(), b = boot(), c = boot({ randomSeed: 42n });
    const draw = (x: typeof a): bigint[] => [x.call('get_random_u32'), x.call('get_random_u64'), x.call('get_random_u32')];
    const da = draw(a);
    assert.deepEqual(draw(b), da);
    assert.notDeepEqual(draw(c), da);
    assert.ok(da[0] < 1n << 32n && da[2] < 1n << 32n && da[0] !== da[2]);
    const buf = a.m.kprobes.data.alloc(16, 8);
    a.m.kernel.mem.writeBytes(mustVAddr(buf), new Uint8Array(16).fill(0xee));
    a.call('get_random_bytes', [buf, 11n]);
    const bytes = a.m.kernel.mem.readBytes(mustVAddr(buf), 16);
    assert.ok(bytes.slice(0, 11).some(x => x !== 0xee));
    assert.deepEqual([...bytes.slice(11)], [0xee, 0xee, 0xee, 0xee, 0xee]);
  });

  test('stack_trace_save(store, size, skipnr) and stack_trace_print(entries, nr, spaces)', () => {
    const { m, log, call } = boot();
    const buf = m.kprobes.data.alloc(8 * 16, 8);
    const n = Number(call('stack_trace_save', [buf, 16n, 0n]));
    assert.ok(n >= 3, `${n} entries`);
    const all = Array.from({ length: n }, (_, i) => m.kernel.mem.read64(mustVAddr(buf + BigInt(8 * i))));
    // the caller first (here the engine's nested call), then the interrupted kernel code
    assert.equal(all[0], m.kprobes.nested.stub());
    assert.equal(call('stack_trace_save', [buf, 2n, 1n]), 2n);
    assert.deepEqual([0, 1].map(i => m.kernel.mem.read64(mustVAddr(buf + BigInt(8 * i)))), all.slice(1, 3));
    const before = log.length;
    call('stack_trace_print', [buf, 2n, 3n]);
    const lines = log.slice(before);
    assert.equal(lines.length, 2, lines.join('\n'));
    for (const [i, l] of lines.entries()) assert.equal(l, `    ${m.kernel.image.symbols.format(all[i + 1], true)}`);
  });

  test('register_kprobes: all or nothing (-ENOENT for an unknown symbol, the first unregistered again), num <= 0 -EINVAL; '
    + 'unregister of a probe not registered clears its addr', () => {
    const { m, call } = boot();
    const kp = (sym: string): bigint => {
      const a = m.kprobes.data.alloc(LAYOUT.kprobe.size, 8);
      m.kernel.mem.writeBytes(mustVAddr(a), new Uint8Array(LAYOUT.kprobe.size));
      m.kernel.mem.write64(mustVAddr(a + BigInt(LAYOUT.kprobe.symbol_name)), str(m, sym));
      return a;
    };
    const array = (ps: bigint[]): bigint => {
      const a = m.kprobes.data.alloc(8 * ps.length, 8);
      ps.forEach((p, i) => m.kernel.mem.write64(mustVAddr(a + BigInt(8 * i)), p));
      return a;
    };
    const addrOf = (p: bigint): bigint => m.kernel.mem.read64(mustVAddr(p + BigInt(LAYOUT.kprobe.addr)));
    const doFork = m.kernel.image.symbols.lookup('do_fork')!.value;
    const good = kp('do_fork'), bad = kp('no_such_function');
    assert.equal(BigInt.asIntN(64, call('register_kprobes', [array([good, bad]), 2n])), -2n);
    assert.equal(m.kprobes.probes.probesAt(doFork).length, 0, 'the first is unregistered again');
    assert.equal(BigInt.asIntN(64, call('register_kprobes', [array([good]), 0n])), -22n);
    // as in Linux, the failed call left the first one's addr resolved: with its symbol_name too, that is -EINVAL (KP_CLEAR)
    assert.equal(addrOf(good), doFork);
    assert.equal(BigInt.asIntN(64, call('register_kprobes', [array([good]), 1n])), -22n);
    m.kernel.mem.write64(mustVAddr(good + BigInt(LAYOUT.kprobe.addr)), 0n);
    assert.equal(call('register_kprobes', [array([good]), 1n]), 0n);
    assert.equal(addrOf(good), doFork);
    assert.equal(m.kprobes.probes.probesAt(doFork).length, 1);
    call('unregister_kprobes', [array([good, bad]), 2n]);
    assert.equal(m.kprobes.probes.probesAt(doFork).length, 0);
    assert.equal(addrOf(good), doFork, 'a probe unregistered keeps its addr');
    m.kernel.mem.write64(mustVAddr(bad + BigInt(LAYOUT.kprobe.addr)), 0x1234n);
    call('unregister_kprobes', [array([bad]), 1n]);
    assert.equal(addrOf(bad), 0n, 'one that was not registered gets addr NULL');
  });

  test('kallsyms_lookup_name and symbol_name: "module:symbol" looks in that module only', () => {
    const { m, call } = boot();
    const ko = repoPath('examples', 'modules', 'build', `test_kprobes-${arch}.ko`);
    const mod = m.modules.load(new Uint8Array(readFileSync(ko)), ko);
    for (let i = 0; i < 400 && mod.state !== 'live'; i++) m.runSlice(10_000);
    assert.equal(mod.state, 'live');
    const tk = mod.symbols.find(s => s.name === 'tk_target')!.value;
    assert.equal(call('kallsyms_lookup_name', [str(m, 'test_kprobes:tk_target')]), tk);
    assert.equal(call('kallsyms_lookup_name', [str(m, 'tk_target')]), tk);
    assert.equal(call('kallsyms_lookup_name', [str(m, 'other_module:tk_target')]), 0n);
    assert.equal(call('kallsyms_lookup_name', [str(m, 'test_kprobes:do_fork')]), 0n, 'the kernel\'s symbols are not the module\'s');
    assert.equal(call('kallsyms_lookup_name', [str(m, 'do_fork')]), m.kernel.image.symbols.lookup('do_fork')!.value);
    const p = m.kprobes.data.alloc(LAYOUT.kprobe.size, 8);
    m.kernel.mem.writeBytes(mustVAddr(p), new Uint8Array(LAYOUT.kprobe.size));
    m.kernel.mem.write64(mustVAddr(p + BigInt(LAYOUT.kprobe.symbol_name)), str(m, 'test_kprobes:tk_target'));
    assert.equal(call('register_kprobe', [p]), 0n);
    assert.equal(m.kernel.mem.read64(mustVAddr(p + BigInt(LAYOUT.kprobe.addr))), tk);
    assert.match(probesOf(m).debugfsList(), /^[0-9a-f]{16} {2}k {2}tk_target\+0x0 {2}test_kprobes $/m);
    call('unregister_kprobe', [p]);
    m.kernel.mem.write64(mustVAddr(p + BigInt(LAYOUT.kprobe.addr)), 0n);
    m.kernel.mem.write64(mustVAddr(p + BigInt(LAYOUT.kprobe.symbol_name)), str(m, 'other_module:tk_target'));
    assert.equal(BigInt.asIntN(64, call('register_kprobe', [p])), -2n);
  });
});
