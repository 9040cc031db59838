/**
 * Kprobe events on a module's symbol, MOD:SYM, as Linux's trace_kprobe
 * keeps them (tracing/events/moduleEvents.ts): a definition for a module
 * that is not loaded is accepted ("This probe might be able to register
 * after target module is loaded. Continue."), listed in kprobe_events, and
 * its kprobe registered when the module comes (before its init runs: a
 * probe on init_module sees the init); the module's removal leaves the
 * event defined, its kprobe [GONE]. `nosuchmod:do_fork` waits for a module
 * "nosuchmod" and never probes the kernel's do_fork.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { moduleSymbol } from '../../emulator/tracing/events/parse';
import { checkProbeFile, parseProbeFile } from '../../emulator/handlers';
import { X86_REGS } from '../../emulator/arch/x86_64/regs';
import { repoPath } from '../util/paths';
import { debianBusybox } from '../userspace/debian/busybox';
import { unfetched } from '../util/fetched';

const KERNEL = (arch: string): string => repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`);
const MOD = (arch: string): string => repoPath('examples', 'modules', 'build', `kprobe_example-${arch}.ko`);
const EVENTS = ['p:ev kprobe_example:init_module', 'p:ev2 kprobe_example:cleanup_module', 'p:ev3 nosuchmod:do_fork'];

/** the trace lines of the events, without their timestamps */
const traceLines = (out: string): string[] => out.split('\n').filter(l => / ev\d?: \(/.test(l)).map(l => l.replace(/\d+\.\d+: /, ''));

describe('kprobe events on MOD:SYM', () => {
  test('moduleSymbol: MOD:SYM is registered whole and split at the first colon', () => {
    assert.deepEqual(moduleSymbol({ module: 'mymod', name: 'fn' }), { module: 'mymod', name: 'fn', symbol: 'mymod:fn' });
    assert.deepEqual(moduleSymbol({ name: 'do_fork' }), { name: 'do_fork', symbol: 'do_fork' });
    assert.deepEqual(moduleSymbol('nosuchmod:do_fork'), { module: 'nosuchmod', name: 'do_fork', symbol: 'nosuchmod:do_fork' });
  });

  test('an editor\'s check of a MOD:SYM event reports no unknown symbol (it waits for MOD); a plain unknown symbol still is one', () => {
    const text = 'p:ev nosuchmod:do_fork\np:ev2 nope_fn\n';
    const diags = checkProbeFile(parseProbeFile(text, 'e.kprobe').file, { regNames: X86_REGS.map(r => r.name), symbolExists: n => n === 'do_fork', imageArch: 'x86_64' })
      .filter(d => d.severity === 'error');
    assert.deepEqual(diags.map(d => [d.line, d.message]), [[2, "unknown symbol 'nope_fn' in the image"]]);
  });

  for (const arch of ['x86_64', 'riscv64']) {
    test(`${arch}: --event before or after --module gives the same trace (the init's hit); nosuchmod:do_fork never fires`, async () => {
      const runs: { out: string; err: string }[] = [];
      for (const first of ['event', 'module']) {
        const ev = EVENTS.flatMap(e => ['--event', e]);
        const mod = ['--module', MOD(arch)];
        const c = captureIo();
        const code = await runCli(['run', KERNEL(arch), ...(first === 'event' ? [...ev, ...mod] : [...mod, ...ev]), '--list'], c.io);
        assert.equal(code, 0, c.stderr());
        runs.push({ out: c.stdout(), err: c.stderr() });
      }
      const [a, b] = runs.map(r => traceLines(r.out + r.err));
      assert.deepEqual(a, b, 'the same trace in either order');
      // registered when the module came, before its init ran (the module stays loaded: its exit never runs)
      assert.equal(a.length, 1, a.join('\n'));
      assert.match(a[0], /^ +insmod-\d+ +\[\d+\] \S+ +ev: \(init_module\+0x0\/0x[0-9a-f]+ \[kprobe_example\]\)$/);
      for (const r of runs) {
        assert.match(r.out, /# cat \/sys\/kernel\/debug\/tracing\/kprobe_events\np:kprobes\/ev kprobe_example:init_module\np:kprobes\/ev2 kprobe_example:cleanup_module\np:kprobes\/ev3 nosuchmod:do_fork\n/);
        assert.doesNotMatch(r.out + r.err, /do_fork\+0x0.*\[GONE\]|^.*ev3: \(/m);
      }
      // only where the module was not loaded yet: Linux's warning, once per waiting event
      assert.equal((runs[0].out + runs[0].err).split('This probe might be able to register after target module is loaded. Continue.').length - 1, 3);
      assert.equal((runs[1].out + runs[1].err).split('This probe might be able to register after target module is loaded. Continue.').length - 1, 1);
    });
  }

  test('x86_64: a kprobe_events write for a module not loaded is accepted and listed; insmod arms it; rmmod leaves it defined, its kprobe [GONE]; a second insmod arms it again', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    const root = mkdtempSync(join(tmpdir(), 'g4-modev-'));
    try {
      mkdirSync(join(root, 'bin'));
      mkdirSync(join(root, 'lib'));
      copyFileSync(bb, join(root, 'bin', 'busybox'));
      copyFileSync(MOD('x86_64'), join(root, 'lib', 'kprobe_example.ko'));
      const T = '/sys/kernel/tracing', L = '/sys/kernel/debug/kprobes/list';
      const script = [
        `echo "p:pend kprobe_example:cleanup_module" >> ${T}/kprobe_events; echo rc=$?; echo 1 > ${T}/events/kprobes/pend/enable; echo @1`,
        `cat ${T}/kprobe_events; cat ${L}; echo @2`,
        `insmod /lib/kprobe_example.ko; cat ${L}; echo @3`,
        `rmmod kprobe_example; cat ${T}/trace; echo @4`,
        `cat ${T}/kprobe_events; cat ${L}; echo @5`,
        `insmod /lib/kprobe_example.ko; rmmod kprobe_example; cat ${T}/trace; echo @6`,
      ].join('; ');
      const c = captureIo();
      const code = await runCli(['run', KERNEL('x86_64'), '--rootfs', root, '--exec', `/bin/busybox sh -c '${script}'`], c.io);
      const out = c.stdout().split('\n').filter(l => !/unimplemented syscall|_handler:|^kworker|^joined /.test(l)).join('\n');
      assert.equal(code, 0, c.stderr() + out);
      const between = (x: string, y: string): string => {
        const i = out.indexOf(`${x}\n`), j = out.indexOf(`${y}\n`);
        assert.ok(i >= 0 && j > i, `${x}/${y} in\n${out}`);
        return out.slice(i + x.length + 1, j);
      };
      assert.match(out.slice(0, out.indexOf('@1\n')), /rc=0\n$/);
      assert.equal(between('@1', '@2'), 'p:kprobes/pend kprobe_example:cleanup_module\n', 'listed, no kprobe yet');
      assert.match(between('@2', '@3'), /^[0-9a-f]{16} {2}k {2}cleanup_module\+0x0 {2}kprobe_example (\[OPTIMIZED\])?$/m);
      assert.match(between('@3', '@4'), /^ +rmmod-\d+ +\[\d+\] \S+ +\d+\.\d+: pend: \(cleanup_module\+0x0\/0x[0-9a-f]+ \[kprobe_example\]\)$/m);
      const after = between('@4', '@5');
      assert.match(after, /^p:kprobes\/pend kprobe_example:cleanup_module\n/);
      assert.match(after, /^[0-9a-f]{16} {2}k {2}0x[0-9a-f]+ \[GONE\]$/m);
      // the module loaded again: the event's kprobe registered again at its new address, and its exit traced again
      // (the hit's line is on the console too: the trace file's lines follow its header)
      const traceFile = between('@5', '@6').split('#              | |').pop()!;
      assert.equal([...traceFile.matchAll(/ pend: \(cleanup_module\+0x0\/0x[0-9a-f]+ \[kprobe_example\]\)$/gm)].length, 2, traceFile);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
