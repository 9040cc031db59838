/**
 * uprobes from .kprobe files, the probe manager and kprobe-run (user-space
 * probes written and managed as kernel ones are):
 * the `uprobe PATH:0xOFF | PATH:symbol[+off]` / `uretprobe PATH:symbol` blocks
 * and uprobe_events lines (`p:GRP/NAME PATH:OFF`, `r:...`) parse and check
 * with positions; handlers see the user task's registers, `current` and
 * user memory (user_string / get_user); handler faults follow the policy;
 * enable / disable / remove register and unregister the consumer; bad
 * targets give one line naming the file and offset; kprobe-run exec
 * --probes --list prints uprobe_events and the hit counts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { compileProbeFile, parseProbeFile } from '../../emulator/handlers';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';
import { probesOf } from '../../emulator/probes/attach';

const BIN = (arch: string, opt = 'O2'): string => repoPath('test', 'uprobes', 'bin', `uprobed-${arch}-gcc-${opt}.elf`);
const GOLDEN = (opt = 'O2'): string => readFileSync(repoPath('test', 'uprobes', 'golden', `uprobed-x86_64-gcc-${opt}.out`), 'utf8');
const CLI = repoPath('dist', 'cli.js');
const X86 = ['ip', 'sp', 'flags', 'ax', 'bx', 'cx', 'dx', 'si', 'di', 'bp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15'];

/** The program as /prog of a machine's filesystem (a rootfs directory), run with a probe file. */
function runWith(arch: string, probes: string, opts: { handlerFaults?: 'oops' | 'report'; opt?: string } = {}):
  { out: string; log: string[]; m: Machine; errors: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'kprobe-uprobe-files-'));
  try {
    copyFileSync(BIN(arch, opts.opt), join(root, 'prog'));
    chmodSync(join(root, 'prog'), 0o755);
    let out = '';
    const log: string[] = [];
    const m = Machine.forUserProgram(loadElf(BIN(arch, opts.opt)), ['/prog'], {
      stdout: b => { out += Buffer.from(b).toString(); }, stderr: b => { out += Buffer.from(b).toString(); },
    }, { cpus: 2, rootfs: root, execPath: '/prog', probes: { handlerFaults: opts.handlerFaults } });
    m.onPrintk(r => log.push(r.text));
    const r = probesOf(m).addProbeFile(probes, 't.kprobe');
    assert.deepEqual(r.diagnostics.filter(d => d.severity === 'error'), []);
    m.run();
    return { out, log, m, errors: r.errors };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('.kprobe files: uprobe / uretprobe / uprobe_events syntax', () => {
  test('targets parse as PATH:0xOFFSET, PATH:symbol and PATH:symbol+off; events get their group and name', () => {
    const { file, diagnostics } = parseProbeFile([
      'uprobe /bin/app:0x1136 { pre { } }',
      'uprobe /usr/bin/my-app.v2:main+0x8 { pre { } }',
      'uretprobe /bin/app:leaf { return { } }',
      'p:grp/ev /bin/app:0x10',
      'r /bin/app:0x20',
      'r:/bin/app:0x20',
    ].join('\n'), 't.kprobe');
    // `r /bin/app:0x20` is uprobetracer.rst's own form; `r:/bin/app:0x20` names no event
    assert.equal(diagnostics.length, 1, JSON.stringify(diagnostics));
    assert.match(diagnostics[0].message, /Group name is not specified/);
    assert.equal(diagnostics[0].line, 6);
    assert.deepEqual(file.probes.map(p => [p.kind, p.target, p.event && { group: p.event.group, name: p.event.name }]), [
      ['uprobe', { kind: 'user', path: '/bin/app', offset: 0x1136n }, undefined],
      ['uprobe', { kind: 'user', path: '/usr/bin/my-app.v2', symbol: 'main', symOffset: 8n }, undefined],
      ['uretprobe', { kind: 'user', path: '/bin/app', symbol: 'leaf', symOffset: 0n }, undefined],
      ['uprobe', { kind: 'user', path: '/bin/app', offset: 0x10n }, { group: 'grp', name: 'ev' }],
      ['uretprobe', { kind: 'user', path: '/bin/app', offset: 0x20n }, { group: 'uprobes', name: 'p_app_0x20' }], // trace_uprobe.c names a return probe "p_..." too
    ]);
  });

  test('checks: handler kinds, placement, paths, fetch arguments — one error each at its position', () => {
    const errs = (text: string): string[] =>
      compileProbeFile(text, 't.kprobe', { regNames: X86, imageArch: 'x86_64' }).diagnostics.filter(d => d.severity === 'error').map(d => `${d.line}:${d.column} ${d.message}`);
    assert.deepEqual(errs('uprobe /bin/app:main { post { } }'), ["1:24 'post' handlers belong to kprobes; a uprobe has pre, fault handlers"]);
    assert.deepEqual(errs('uretprobe /bin/app:main+4 { return { } }'), ['1:11 a uretprobe must be placed at a function entry (offset 0), not /bin/app:main+4']);
    assert.deepEqual(errs('uprobe bin/app:0x10 { pre { } }'), ["1:8 the program's path must be absolute in the machine's filesystem (e.g. /bin/app), not 'bin/app'"]);
    assert.deepEqual(errs('kprobe /bin/app:0x10 { pre { } }'), ['1:8 invalid probe target \'/bin/app:0x10\' (expected symbol, symbol+offset, 0xaddress or file.c:line)']);
    assert.deepEqual(errs('uprobe do_fork { pre { } }'), ["1:8 invalid uprobe target 'do_fork' (expected PATH:0xOFFSET or PATH:symbol[+0xoff], e.g. /bin/app:0x1136 or /bin/app:main)"]);
    assert.deepEqual(errs('p:g/e /bin/app:0x10 %di'), []);
    assert.deepEqual(errs('p:g/e /bin/app:0x10 %foo'), ["1:21 Invalid register name '%foo' for x86_64: expected one of " + X86.map(r => `%${r}`).join(' ')]);
    assert.deepEqual(errs('uprobe /bin/app:0x10 disabled { pre { printk("%s\\n", user_string((char *)regs->di)); } }'), []);
  });
});

describe('uprobes from probe files on a machine', () => {
  test('x86_64: a uprobe handler sees the user task (arguments, current, user memory); a uretprobe the return value; output unchanged', () => {
    const r = runWith('x86_64', [
      'uprobe /prog:leaf { pre { printk("leaf(%ld) in %s[%d] first code byte %lx\\n", regs->di, current->comm, current->pid, get_user((void *)regs->ip) & 0xff); } }',
      'uretprobe /prog:tail { return { printk("tail -> %ld\\n", regs->ax); } }',
      'uprobe /prog:cstart { pre { printk("argv[0] %s\\n", user_string(*(char **)(regs->di + 8))); } }',
      'p:test/leafev /prog:leaf n=%di:s32 c=$comm',
    ].join('\n'));
    assert.equal(r.out, GOLDEN());
    assert.deepEqual(r.errors, []);
    const lines = r.log.filter(l => !/^ *\S+-\d+ +\[\d{3}\] /.test(l));
    assert.equal(lines[0], 'argv[0] /prog');
    // the handler reads the process's memory: the breakpoint it runs under (int3) is what is there
    assert.equal(lines[1], 'leaf(2) in prog[1] first code byte cc');
    assert.ok(lines.includes('tail -> 16'));
    // the trace line of the uprobe_events line: leaf(2) is the first call (above), by pid 1 "prog"
    const ev = r.log.find(l => / leafev: /.test(l)) ?? '';
    assert.match(ev, new RegExp(`^ {12}prog-1 {7}\\[000\\] \\.{5} +\\d+\\.\\d{6}: leafev: \\(0x${probesOf(r.m).list()[3].user?.vaddr?.toString(16)}\\) n=2 c="prog"$`), r.log.slice(0, 5).join('\n'));
    const leaf = probesOf(r.m).list()[0];
    assert.equal(leaf.kind, 'uprobe');
    assert.equal(leaf.hits, 30); // 20 in work, 5 in the child, 1 each of leaf/tail/after longjmp/child/exec
    assert.equal(probesOf(r.m).list()[1].hits, 1);
    assert.match(probesOf(r.m).uprobeEvents(), /^p:uprobes\/p_prog_0x[0-9a-f]+ \/prog:0x[0-9a-f]{16}\nr:uprobes\/r_prog_0x[0-9a-f]+ \/prog:0x[0-9a-f]{16}\np:uprobes\/p_prog_0x[0-9a-f]+ \/prog:0x[0-9a-f]{16}\np:test\/leafev \/prog:0x[0-9a-f]{16}\n$/);
  });

  for (const arch of ['aarch64', 'riscv64']) {
    test(`${arch}: uprobe and uretprobe handlers on the same functions; output unchanged`, () => {
      const arg = arch === 'aarch64' ? 'x0' : 'a0';
      const r = runWith(arch, `uprobe /prog:leaf { pre { printk("leaf(%ld)\\n", regs->${arg}); } }\nuretprobe /prog:fact { return { printk("fact = %ld\\n", regs->${arg}); } }`);
      assert.equal(r.out, GOLDEN());
      assert.equal(r.log.filter(l => l.startsWith('leaf(')).length, 30);
      assert.deepEqual(r.log.filter(l => l.startsWith('fact = ')).slice(-2), ['fact = 120', 'fact = 720']);
    });
  }

  test('bad targets: one line each naming the file and what is wrong; nothing inserted', () => {
    const r = runWith('x86_64', [
      'uprobe /nope:main { pre { } }',
      'uprobe /prog:nosuch { pre { } }',
      'uprobe /prog:0x1 { pre { } }',
      'uprobe /prog:0x7fffffff { pre { } }',
      'uprobe /prog:leaf+1 { pre { } }',
    ].join('\n'));
    assert.equal(r.out, GOLDEN());
    assert.equal(r.errors.length, 5, r.errors.join('\n'));
    assert.match(r.errors[0], /^t\.kprobe:1:1: uprobe \/nope:main: \/nope: no such file in the machine's filesystem/);
    assert.match(r.errors[1], /^t\.kprobe:2:1: uprobe \/prog:nosuch: \/prog has no symbol 'nosuch'/);
    assert.match(r.errors[2], /^t\.kprobe:3:1: uprobe \/prog:0x1: uprobe_register failed: -EINVAL \(\/prog:0x1: the offset is in no executable segment/);
    assert.match(r.errors[3], /uprobe_register failed: -EINVAL \(\/prog:0x7fffffff: offset is outside the file/);
    assert.match(r.errors[4], /uprobe_register failed: -EINVAL \(\/prog:0x[0-9a-f]+: not on an instruction boundary: 0x[0-9a-f]+ is inside \S+ at leaf\+0x0/);
    assert.equal(r.m.uprobes.list().length, 0);
    assert.ok(probesOf(r.m).list().every(p => !p.verified));
  });

  test('a handler fault: reported and the program goes on (report), or the CPU oopses naming the handler (oops, the default)', () => {
    const text = 'uprobe /prog:leaf { pre { printk("%ld\\n", *(long *)8); } }';
    const rep = runWith('x86_64', text, { handlerFaults: 'report' });
    assert.equal(rep.out, GOLDEN());
    assert.ok(rep.log.some(l => /^t\.kprobe:1:\d+: pre handler of uprobe \/prog:leaf faulted at 0x[0-9a-f]+: /.test(l)), rep.log.slice(0, 3).join('\n'));
    const oops = runWith('x86_64', text);
    assert.notEqual(oops.out, GOLDEN());
    assert.ok(oops.log.some(l => /pre handler of uprobe \/prog:leaf faulted/.test(l)), oops.log.join('\n'));
    assert.ok(oops.log.some(l => /^BUG: kernel NULL pointer dereference/.test(l)), oops.log.join('\n'));
  });

  test('disable / enable / remove: the consumer is unregistered and registered again (breakpoints removed and inserted)', () => {
    const root = mkdtempSync(join(tmpdir(), 'kprobe-uprobe-enable-'));
    try {
      copyFileSync(BIN('x86_64'), join(root, 'prog'));
      chmodSync(join(root, 'prog'), 0o755);
      let out = '';
      const m = Machine.forUserProgram(loadElf(BIN('x86_64')), ['/prog'], { stdout: b => { out += Buffer.from(b).toString(); }, stderr: () => {} },
        { cpus: 1, rootfs: root, execPath: '/prog' });
      const regions = (): string[] => m.kernel.processes.get(1)!.mm.allRegions().map(x => `${x.base.toString(16)}-${x.end.toString(16)}`);
      const before = regions();
      const r = probesOf(m).addProbeFile('uprobe /prog:leaf { pre { } }', 't.kprobe');
      assert.notDeepEqual(regions(), before, 'the probed page is a private copy');
      const id = r.probes[0].id;
      const inode = m.kernel.fs.lookup('/prog', m.kernel.fs.root);
      assert.ok(inode.ok);
      const u = () => m.uprobes.get(inode.inode, r.probes[0].user!.offset);
      assert.equal(u()?.insertions.size, 1);
      assert.equal(probesOf(m).setEnabled(id, false), undefined);
      assert.equal(u(), undefined);
      assert.deepEqual(regions(), before, 'the file page is back and the mapping one region again');
      assert.equal(probesOf(m).get(id)?.enabled, false);
      assert.equal(probesOf(m).get(id)?.sites[0].flags, '[DISABLED]');
      assert.equal(probesOf(m).setEnabled(id, true), undefined);
      assert.equal(u()?.insertions.size, 1);
      m.run();
      assert.equal(out, GOLDEN());
      assert.equal(probesOf(m).get(id)?.hits, 30);
      assert.equal(probesOf(m).remove(id), true);
      assert.equal(u(), undefined);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('kprobe-run exec --probes --list with uprobes', () => {
  test('the program runs with its probes; --list prints uprobe_events and each probe\'s hits', () => {
    const root = mkdtempSync(join(tmpdir(), 'kprobe-uprobe-cli-'));
    try {
      mkdirSync(join(root, 'bin'));
      copyFileSync(BIN('aarch64'), join(root, 'bin', 'prog'));
      chmodSync(join(root, 'bin', 'prog'), 0o755);
      const probes = join(root, 'u.kprobe');
      require('node:fs').writeFileSync(probes, 'p:demo/leaf /bin/prog:leaf\nuretprobe /bin/prog:fact { return { } }\nuprobe /bin/prog:nosuch { pre { } }\n');
      const r = spawnSync(process.execPath, [CLI, 'exec', '--rootfs', root, '--probes', probes, '--list', '/bin/prog'], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.ok(r.stdout.startsWith(GOLDEN()), r.stdout);
      const tail = r.stdout.slice(GOLDEN().length);
      assert.match(tail, /^# cat \/sys\/kernel\/debug\/tracing\/uprobe_events\np:demo\/leaf \/bin\/prog:0x[0-9a-f]{16}\nr:uprobes\/r_prog_0x[0-9a-f]+ \/bin\/prog:0x[0-9a-f]{16}\n/);
      assert.match(tail, /# cat \/sys\/kernel\/debug\/tracing\/uprobe_profile\n {2}\/bin\/prog leaf {40} {14}30\n {2}\/bin\/prog r_prog_0x[0-9a-f]+ +3\n/);
      assert.match(tail, /u\.kprobe:1:1 uprobe \/bin\/prog:leaf: 30 hits, 0 missed\n/);
      assert.match(tail, /u\.kprobe:2:1 uretprobe \/bin\/prog:fact: 3 hits, 0 missed\n/);
      assert.match(tail, /u\.kprobe:3:1 uprobe \/bin\/prog:nosuch: not registered\n/);
      assert.match(r.stderr, /u\.kprobe:3:1: uprobe \/bin\/prog:nosuch: \/bin\/prog has no symbol 'nosuch'/);
      assert.match(r.stderr, /^ {12}prog-1 {7}\[000\] \.{5} +\d+\.\d{6}: leaf: \(0x[0-9a-f]+\)$/m);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
