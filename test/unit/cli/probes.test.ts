/**
 * kprobe-run run --probes / --list / --kprobes-enabled, through runCli with a
 * capturing io: the documentation's three sample probe files to power-off,
 * compile errors before boot, registration errors per probe, the debugfs
 * list, determinism.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../emulator/cli/main';
import { captureIo } from '../../../emulator/cli/io';
import { loadElf } from '../../../emulator/elf';
import { hex64 } from '../../../emulator/memory/address';
import { repoPath } from '../../util/paths';

const SAMPLES = ['kprobe_example', 'kretprobe_example', 'jprobe_example'].map(n => repoPath('examples', 'probes', `${n}.kprobe`));
const IMAGE = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const image = loadElf(IMAGE);
const addr = (name: string): bigint => {
  const s = image.symbols.lookup(name);
  assert.ok(s, name);
  return s.value;
};
/** do_fork: 4 workers x 24 iterations */
const FORKS = 4 * 24;

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo();
  const code = await runCli(argv, c.io);
  return { code, out: c.stdout(), err: c.stderr() };
}

const tmp = mkdtempSync(join(tmpdir(), 'kprobe-cli-probes-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
function probeFile(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

describe('kprobe-run --probes', () => {
  let demo: { code: number; out: string; err: string } | undefined;
  const demoRun = async (): Promise<{ code: number; out: string; err: string }> => {
    demo ??= await cli('run', IMAGE, ...SAMPLES.flatMap(s => ['--probes', s]), '--list');
    return demo;
  };

  test('the three documentation samples run to power-off with exit 0 and print on every hit', async () => {
    const r = await demoRun();
    assert.equal(r.err, '');
    assert.equal(r.code, 0);
    const lines = r.out.split('\n');
    const fork = addr('do_fork');
    const pre = lines.filter(l => l.startsWith(`pre_handler: p->addr=0x${fork.toString(16)}, ip=${(fork + 1n).toString(16)}, flags=0x`));
    const post = lines.filter(l => l.startsWith(`post_handler: p->addr=0x${fork.toString(16)}, flags=0x`));
    const jp = lines.filter(l => /^jprobe: clone_flags=0x[0-9a-f]+, stack_size=0x[0-9a-f]+, regs=0x[0-9a-f]+$/.test(l));
    assert.equal(pre.length, FORKS);
    assert.equal(post.length, FORKS);
    assert.equal(jp.length, FORKS);
    // the jprobe sees do_fork's arguments: every iteration i%3==0 passes CLONE_VM|CLONE_FS|CLONE_FILES|SIGCHLD
    assert.equal(jp.filter(l => l.startsWith('jprobe: clone_flags=0x711,')).length, 4 * 8);
    assert.ok(lines.includes('jprobe: clone_flags=0x711, stack_size=0x0, regs=0x0000000000000000'));
    // dump_stack from the pre handler
    const i = lines.indexOf('Call Trace:');
    assert.match(lines[i + 1], /^ do_fork\+0x0\/0x[0-9a-f]+$/);
    assert.match(lines[i + 2], /^ worker_fn\+0x[0-9a-f]+\/0x[0-9a-f]+$/);
    // the kretprobe reports failed sys_open calls
    const opens = lines.filter(l => /^sys_open: return val = -(2|13) \(duration = \d+ ns\)$/.test(l));
    assert.ok(opens.length > 0);
    const selftest = lines.indexOf('selftest: sys_open("/nonexistent") = -2');
    assert.match(lines[selftest - 1], /^sys_open: return val = -2 \(duration = \d+ ns\)$/);
    assert.ok(lines.includes('Power down.'));
  });

  test('--list prints the debugfs list after the console', async () => {
    const r = await demoRun();
    const at = r.out.indexOf('# cat /sys/kernel/debug/kprobes/list\n');
    assert.ok(at > r.out.indexOf('Power down.'));
    const tail = r.out.slice(at).split('\n');
    assert.deepEqual(tail.slice(1, 3).map(l => l.trimEnd()), [
      `${hex64(addr('do_fork'))}  k  do_fork+0x0`,
      `${hex64(addr('do_fork'))}  j  do_fork+0x0`,
    ]);
    // a kretprobe's entry probe has no post handler: the optimizer may jump-optimize it
    assert.match(tail[3], new RegExp(`^${hex64(addr('sys_open'))}  r  sys_open\\+0x0 *(\\[OPTIMIZED\\])?$`));
    assert.equal(tail[4], '# cat /sys/kernel/debug/kprobes/enabled');
    assert.equal(tail[5], '1');
    assert.ok(tail.includes(`${SAMPLES[0]}:5:1 kprobe do_fork: ${FORKS} hits, 0 missed`), tail.join('\n'));
    assert.ok(tail.includes(`${SAMPLES[2]}:9:1 jprobe do_fork: ${FORKS} hits, 0 missed`), tail.join('\n'));
    assert.ok(tail.some(l => l.startsWith(`${SAMPLES[1]}:6:1 kretprobe sys_open: `)));
  });

  test('the demo output is the same on a second run (determinism)', async () => {
    const a = await demoRun();
    const b = await cli('run', IMAGE, ...SAMPLES.flatMap(s => ['--probes', s]), '--list');
    assert.equal(b.code, a.code);
    assert.equal(b.out, a.out);
  });

  test('compile errors: file:line:col: message on stderr, exit 1, nothing runs', async () => {
    const bad = probeFile('bad.kprobe', 'kprobe do_fork {\n  pre { return regs->nosuch; }\n}\nkprobe no_such_function { pre { return 0; } }\nkprobe do_fork { pre { return 1 +; } }\n');
    const r = await cli('run', IMAGE, '--probes', SAMPLES[0], '--probes', bad);
    assert.equal(r.code, 1);
    assert.equal(r.out, '', 'the kernel did not boot');
    const errs = r.err.trim().split('\n');
    assert.match(errs[0], new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:5:34: expected an expression`));
    assert.match(errs[1], new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:\\d+: .*nosuch`));
    // an unknown target symbol is no compile error: it is that probe's registration failure (-ENOENT)
    assert.ok(!errs.some(l => l.includes('no_such_function')), r.err);
    assert.match(errs[errs.length - 1], /^kprobe-run: run: 2 errors in probe files; nothing was run$/);
  });

  test('a registration error is printed per probe with its errno name; the run goes on', async () => {
    const f = probeFile('reg.kprobe', [
      'kprobe notify_die { pre { return 0; } }',
      'kprobe kprobe_target2 { pre { printk("t2 %u\\n", (u32)arg0); return 0; } }',
    ].join('\n'));
    const r = await cli('run', IMAGE, '--probes', f);
    assert.equal(r.code, 0);
    assert.equal(r.err, `${f}:1:1: kprobe notify_die: register_kprobe failed: -EINVAL (address is inside the kprobe blacklist)\n`);
    assert.ok(r.out.split('\n').includes('t2 625341585'));
  });

  test('a failed batch names Linux\'s call for its kind (register_kretprobes for kretprobes); the rest of the file runs', async () => {
    const f = probeFile('kret-batch.kprobe', 'batch {\n  kretprobe sys_open { return { } }\n  kretprobe no_such_function { return { } }\n}\n'
      + 'kprobe kprobe_target { pre { printk("t\\n"); return 0; } }\n');
    const r = await cli('run', IMAGE, '--probes', f);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /kret-batch\.kprobe:1:1: batch: register_kretprobes failed at probe 2 of 2 \(.*no_such_function.*\); 1 registered probe of the batch unregistered again/);
    assert.doesNotMatch(r.err, /register_kprobes failed/);
    assert.ok(r.out.split('\n').includes('t'));
  });

  test('--kprobes-enabled 0: probes registered but not armed; the list shows them and enabled 0', async () => {
    const f = probeFile('off.kprobe', 'kprobe kprobe_target { pre { printk("hit\\n"); return 0; } }\n');
    const r = await cli('run', IMAGE, '--probes', f, '--kprobes-enabled', '0', '--list');
    assert.equal(r.code, 0);
    const lines = r.out.split('\n');
    assert.ok(!lines.includes('hit'));
    assert.ok(lines.some(l => l.startsWith(`${hex64(addr('kprobe_target'))}  k  kprobe_target+0x0`)));
    assert.equal(lines[lines.indexOf('# cat /sys/kernel/debug/kprobes/enabled') + 1], '0');
    assert.ok(lines.includes(`${f}:1:1 kprobe kprobe_target: 0 hits, 0 missed`));
  });

  test('a probe file written for another image: a warning on stderr, the run goes on', async () => {
    const f = probeFile('other.kprobe', 'image "other-kernel.elf"\nkprobe kprobe_target { pre { printk("hit\\n"); return 0; } }\n');
    const r = await cli('run', IMAGE, '--probes', f);
    assert.equal(r.code, 0);
    assert.equal(r.err, `${f}: warning: written for image other-kernel.elf, running ${IMAGE}\n`);
    assert.equal(r.out.split('\n').filter(l => l === 'hit').length, 1 + 4 * 24);
  });

  test('bad option values and unreadable files are one-line errors', async () => {
    const a = await cli('run', IMAGE, '--kprobes-enabled', '2');
    assert.equal(a.code, 1);
    assert.equal(a.err, "kprobe-run: --kprobes-enabled: expected 0 or 1, got '2'\n");
    const b = await cli('run', IMAGE, '--probes', join(tmp, 'missing.kprobe'));
    assert.equal(b.code, 1);
    assert.equal(b.out, '');
    assert.match(b.err, /^kprobe-run: --probes: cannot read .*missing\.kprobe: no such file\n$/);
  });
});
