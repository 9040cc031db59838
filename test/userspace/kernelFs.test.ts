/**
 * The kernel's own filesystems as user programs see them: Debian's
 * busybox-static (test/userspace/debian/fetch.sh) mounts, reads and writes
 * them through the ordinary system calls.
 *
 * Expected formats: /proc/mounts lines as a Debian 12 (Linux 6.1) system
 * shows its systemd mounts ("proc /proc proc rw,nosuid,nodev,noexec,relatime
 * 0 0"; a plain `mount -t tmpfs` is "rw,relatime"); error_log entries as
 * Documentation/trace/ftrace.rst shows them ("[ SECONDS] SUBSYSTEM: error:
 * MESSAGE", "  Command: ...", '^' under the position); kprobes/list
 * byte for byte what `kprobe-run run --list` prints under
 * "# cat /sys/kernel/debug/kprobes/list" (the same probe manager text).
 *
 * The kernel side is the userinit fixture (x86_64: it starts the --exec
 * program as init), probed on its fx_puts / fx_putl by symbol.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';
import { debianBusybox } from './debian/busybox';
import { openPseudo } from '../../emulator/kernel/fs/pseudo';
import { attachProbes } from '../../emulator/probes/attach';
import { unfetched } from '../util/fetched';

const KERNEL = repoPath('test', 'fixtures', 'kernel', 'bin', 'userinit.elf');


/** A root filesystem holding /bin/busybox (removed after f). */
async function withRoot<T>(bb: string, f: (root: string) => Promise<T> | T): Promise<T> {
  const root = mkdtempSync(join(tmpdir(), 'kprobe-kernelfs-'));
  try {
    mkdirSync(join(root, 'bin'));
    copyFileSync(bb, join(root, 'bin', 'busybox'));
    return await f(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The console without the kernel's notes on system calls it does not implement (cat tries sendfile first) */
const withoutSyscallNotes = (s: string): string => s.split('\n').filter(l => !/^kprobe-debug: \S+: unimplemented syscall /.test(l)).join('\n');

/** `kprobe-run run userinit.elf --rootfs ROOT --exec "/bin/busybox sh -c SCRIPT" ARGS...` */
async function runScript(root: string, script: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo();
  const code = await runCli(['run', KERNEL, '--rootfs', root, '--exec', `/bin/busybox sh -c '${script.replace(/'/g, `'\\''`)}'`, ...args], c.io);
  return { code, out: withoutSyscallNotes(c.stdout()), err: c.stderr() };
}

/** what `--list` printed under a "# cat FILE" header, up to the next header */
function listBlock(out: string, file: string): string {
  const head = `# cat ${file}\n`;
  const at = out.lastIndexOf(head);
  assert.ok(at >= 0, `no "${head.trim()}" in\n${out}`);
  const rest = out.slice(at + head.length);
  const next = rest.search(/^# /m);
  return next < 0 ? rest : rest.slice(0, next);
}

/** the console between two marker lines the script echoed */
function between(out: string, from: string, to: string): string {
  const a = out.indexOf(`${from}\n`), b = out.indexOf(`${to}\n`);
  assert.ok(a >= 0 && b > a, `markers ${from}/${to} in\n${out}`);
  return out.slice(a + from.length + 1, b);
}

describe('kernel filesystems from user space (busybox-static; fetch: test/userspace/debian/fetch.sh)', () => {
  test('amd64: cat /sys/kernel/debug/kprobes/list is the --list block byte for byte; 0/1 to /proc/sys/debug/kprobes-optimization clears and restores [OPTIMIZED]', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    await withRoot(bb, async root => {
      const L = '/sys/kernel/debug/kprobes/list', OPT = '/proc/sys/debug/kprobes-optimization';
      const r = await runScript(root, [
        `echo @1; cat ${L}; cat ${OPT}`,
        `echo 0 > ${OPT}; echo @2; cat ${L}; cat ${OPT}`,
        `echo 1 > ${OPT}; echo @3; cat ${L}; echo @4`,
        'cat /sys/kernel/tracing/kprobe_profile; echo @5',
      ].join('; '), '--event', 'p:myprobe fx_puts', '--list');
      assert.equal(r.code, 0, r.err + r.out);
      const block = listBlock(r.out, L);
      assert.match(block, /^ffffffff[0-9a-f]{8}  k  fx_puts\+0x0    \[OPTIMIZED\]\n$/);
      assert.equal(between(r.out, '@1', '@2'), `${block}1\n`);
      assert.equal(between(r.out, '@2', '@3'), `${block.replace('[OPTIMIZED]', '')}0\n`);
      assert.equal(between(r.out, '@3', '@4'), block);
      // kprobe_profile's "  %-44s %15lu %15lu" line; the hit count grows until power-off
      assert.match(between(r.out, '@4', '@5'), /^  myprobe {38} +\d+ {15}0\n$/);
      assert.match(listBlock(r.out, '/sys/kernel/debug/tracing/kprobe_profile'), /^  myprobe {38} +\d+ {15}0\n$/);
    });
  });

  test('amd64: kprobe_events: >> adds an event (registered disabled, as Linux does), events/GRP/EVENT/enable arms it, -: removes it (EBUSY while enabled), > clears; a bad definition fails the write with its errno and an error_log entry', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    await withRoot(bb, async root => {
      const EV = '/sys/kernel/tracing/kprobe_events', L = '/sys/kernel/debug/kprobes/list';
      const r = await runScript(root, [
        `echo "p:p2 fx_putl" >> ${EV}; echo @1; cat ${EV}; cat ${L}; cat /sys/kernel/debug/tracing/kprobe_events`,
        `cat /sys/kernel/tracing/events/kprobes/p2/enable; echo 1 > /sys/kernel/tracing/events/kprobes/p2/enable; cat ${L}; echo "-:p2" >> ${EV}; echo rc=$?`,
        `echo 0 > /sys/kernel/tracing/events/kprobes/p2/enable; echo "-:p2" >> ${EV}; echo @2; cat ${EV}; cat ${L}; ls /sys/kernel/tracing/events`,
        `echo "p:p3 fx_putl" >> ${EV}; echo "p:bad nosuch" > ${EV}; echo rc=$?; echo "p:bad2 fx_puts \\$stack10000" >> ${EV}; echo rc=$?`,
        `echo @3; cat ${EV}; cat ${L}; echo @4; cat /sys/kernel/tracing/error_log; echo @5`,
        `echo > /sys/kernel/tracing/error_log; cat /sys/kernel/tracing/error_log; echo @6`,
      ].join('; '), '--event', 'p:myprobe fx_puts');
      assert.equal(r.code, 0, r.err + r.out);
      const puts = /ffffffff[0-9a-f]{8}  k  fx_puts\+0x0    \[OPTIMIZED\]\n/.source, putl = puts.replace('puts', 'putl');
      const putlOff = putl.replace('OPTIMIZED', 'DISABLED');
      assert.match(between(r.out, '@1', '@2'), new RegExp(`^p:kprobes/myprobe fx_puts\\np:kprobes/p2 fx_putl\\n${puts}${putlOff}p:kprobes/myprobe fx_puts\\np:kprobes/p2 fx_putl\\n`
        + `0\\n${puts}${putl}sh: write error: Device or resource busy\\nrc=1\\n$`));
      // `ls events`: the group is gone with its last event; events/enable and the system-call events stay (as in Linux)
      assert.match(between(r.out, '@2', '@3'), new RegExp(`^p:kprobes/myprobe fx_puts\\n${puts}enable\\nsyscalls\\nsh: write error: No such file or directory\\nrc=1\\nsh: write error: Invalid argument\\nrc=1\\n$`));
      // `>` removed p3 (defined here) before the bad line; the --event probe stays
      assert.match(between(r.out, '@3', '@4'), new RegExp(`^p:kprobes/myprobe fx_puts\\n${puts}$`));
      const log = between(r.out, '@4', '@5').split('\n');
      assert.match(log[0], /^\[ +\d+\.\d{6}\] trace_kprobe: error: Invalid probed address or symbol$/);
      assert.equal(log[1], '  Command: p:bad nosuch');
      assert.equal(log[2], `${' '.repeat('  Command: p:bad '.length)}^`);
      assert.match(log[3], /^\[ +\d+\.\d{6}\] trace_kprobe: error: .*stack/i);
      assert.equal(log[4], '  Command: p:bad2 fx_puts $stack10000');
      assert.match(log[5], /^ +\^$/);
      assert.equal(between(r.out, '@5', '@6'), '', 'writing with O_TRUNC clears error_log');
    });
  });

  for (const arch of ['amd64', 'arm64']) {
    test(`${arch}: /proc/mounts as Linux lists it; mount/umount of tmpfs; an unknown type is ENODEV, a missing mount point ENOENT, a non-mount EINVAL; /proc/version`, async t => {
      const bb = debianBusybox(arch);
      if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
      await withRoot(bb, root => {
        let out = '';
        const io = { stdout: (b: Uint8Array) => { out += Buffer.from(b).toString(); }, stderr: (b: Uint8Array) => { out += Buffer.from(b).toString(); } };
        const script = [
          'cat /proc/mounts; mount -t tmpfs none /nonexistent; mkdir /mnt; mount -t nosuchfs none /mnt',
          'mount -t tmpfs scratch /mnt && echo hi > /mnt/f && cat /mnt/f; grep /mnt /proc/mounts; umount /mnt; ls -a /mnt; umount /mnt; echo rc=$?',
          'cat /proc/version',
        ].join('; ');
        const m = Machine.forUserProgram(loadElf(bb), ['/bin/busybox', 'sh', '-c', script], io, { rootfs: root, execPath: '/bin/busybox' });
        const exit = m.run();
        assert.equal(exit.code, 0, out);
        assert.equal(withoutSyscallNotes(out), [
          'rootfs / rootfs rw 0 0',
          'proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0',
          'sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0',
          'debugfs /sys/kernel/debug debugfs rw,nosuid,nodev,noexec,relatime 0 0',
          'tracefs /sys/kernel/tracing tracefs rw,nosuid,nodev,noexec,relatime 0 0',
          'tracefs /sys/kernel/debug/tracing tracefs rw,nosuid,nodev,noexec,relatime 0 0',
          'mount: mounting none on /nonexistent failed: No such file or directory',
          'mount: mounting none on /mnt failed: No such device',
          'hi',
          'scratch /mnt tmpfs rw,relatime 0 0',
          '.', '..',
          'umount: can\'t unmount /mnt: Invalid argument',
          'rc=1',
          'Linux version 6.1.0-kprobe-debug (kprobe-debug@kprobe-debug) (kprobe-debug emulator) #1 SMP',
          '',
        ].join('\n'));
      });
    });
  }

  test('amd64: /proc/self is the caller\'s pid; /proc/<pid>/{status,maps,exe} of each live process (status as proc_pid_status begins)', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    await withRoot(bb, async root => {
      // the shell ($$) and the cat it forks: each reads its own /proc/self
      const r = await runScript(root, 'echo $$; readlink /proc/self; ls -l /proc/self/exe; cat /proc/self/status; cat /proc/$$/status; head -n 1 /proc/$$/maps');
      assert.equal(r.code, 0, r.err + r.out);
      const lines = r.out.slice(r.out.indexOf('kernel: starting user space\n') + 28).split('\n');
      const sh = Number(lines[0]);
      assert.ok(sh > 1, lines[0]);
      // readlink runs as a child of the shell: its own pid
      assert.ok(Number(lines[1]) > sh, lines[1]);
      assert.match(lines[2], /^lrwxrwxrwx +1 0 +0 +12 .* \/proc\/self\/exe -> \/bin\/busybox$/);
      const status = (pid: number, ppid: number, name: string, state: string): string[] => [
        `Name:\t${name}`, 'Umask:\t0022', `State:\t${state}`, `Tgid:\t${pid}`, 'Ngid:\t0', `Pid:\t${pid}`, `PPid:\t${ppid}`,
        'TracerPid:\t0', 'Uid:\t0\t0\t0\t0', 'Gid:\t0\t0\t0\t0'];
      const cat = Number(lines[8].replace('Pid:\t', ''));
      assert.notEqual(cat, sh, 'cat is a child process');
      assert.deepEqual(lines.slice(3, 13), status(cat, sh, 'cat', 'R (running)'));
      assert.deepEqual(lines.slice(13, 23), status(sh, 0, 'busybox', 'S (sleeping)'));
      assert.match(lines[23], /^[0-9a-f]{8}-[0-9a-f]{8} r--p 00000000 00:01 \d+ +\/bin\/busybox$/);
    });
  });

  test('debugfs kprobes/blacklist: the image\'s NOKPROBE_SYMBOL ranges as Linux prints them (0xSTART-0xEND\\tsym), on each arch', () => {
    for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
      const image = loadElf(repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`));
      const m = new Machine(image);
      const r = m.kernel.fs.lookup('/sys/kernel/debug/kprobes/blacklist', m.kernel.fs.root);
      assert.ok(r.ok && r.inode.pseudo, arch);
      const dev = openPseudo(r.inode.pseudo, 0);
      assert.ok(typeof dev !== 'number');
      const text = new TextDecoder().decode(dev.read(1 << 20) as Uint8Array);
      const lines = text.split('\n').slice(0, -1);
      assert.ok(lines.length > 0, `${arch}: the example kernel marks functions NOKPROBE_SYMBOL`);
      for (const l of lines) {
        const mm = /^0x([0-9a-f]{16})-0x([0-9a-f]{16})\t(\S+)$/.exec(l);
        assert.ok(mm, `${arch}: ${JSON.stringify(l)}`);
        const sym = image.symbols.lookup(mm[3]);
        assert.ok(sym, `${arch}: ${mm[3]} is a symbol`);
        assert.equal(BigInt(`0x${mm[1]}`), sym.value, `${arch}: ${mm[3]} starts at its symbol`);
        assert.equal(BigInt(`0x${mm[2]}`), sym.value + sym.size, `${arch}: ${mm[3]} ends after its size`);
      }
      assert.ok(lines.some(l => l.endsWith('\tnotify_die')) || arch !== 'x86_64', text);
    }
  });

  test('/proc/kallsyms (nm\'s type letters, module symbols with \\t[mod]) and /proc/modules (m_show\'s line) follow insmod', () => {
    const image = loadElf(repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf'));
    const m = new Machine(image);
    const read = (path: string): string => {
      const r = m.kernel.fs.lookup(path, m.kernel.fs.root);
      assert.ok(r.ok && r.inode.pseudo, path);
      const dev = openPseudo(r.inode.pseudo, 0);
      assert.ok(typeof dev !== 'number');
      return new TextDecoder().decode(dev.read(1 << 24) as Uint8Array);
    };
    assert.equal(read('/proc/modules'), '');
    const before = read('/proc/kallsyms');
    const fork = image.symbols.lookup('do_fork')!;
    assert.ok(before.includes(`${fork.value.toString(16).padStart(16, '0')} T do_fork\n`), 'a global function: T');
    assert.ok(!before.includes('['), 'no module symbols yet');
    for (const l of before.split('\n').slice(0, -1)) assert.match(l, /^[0-9a-f]{16} [TtDdBbRrAaWwVv] \S+$/);
    const ko = repoPath('examples', 'modules', 'build', 'kprobe_example-x86_64.ko');
    const mod = m.modules.load(new Uint8Array(readFileSync(ko)), ko);
    const base = mod.core.lo.toString(16).padStart(16, '0');
    assert.equal(read('/proc/modules'), `kprobe_example ${mod.core.hi - mod.core.lo + (mod.init ? mod.init.hi - mod.init.lo : 0n)} 0 - Loading 0x${base} (O)\n`);
    m.run();
    assert.match(read('/proc/modules'), new RegExp(`^kprobe_example \\d+ 0 - Live 0x${base} \\(O\\)\\n$`));
    const after = read('/proc/kallsyms');
    assert.ok(after.startsWith(before), 'the kernel\'s symbols first, as before');
    const modLines = after.slice(before.length).split('\n').slice(0, -1);
    assert.ok(modLines.length > 0);
    for (const l of modLines) assert.match(l, /^[0-9a-f]{16} [TtDd] \S+\t\[kprobe_example\]$/);
    const pre = mod.symbols.find(s => s.name === 'handler_pre')!;
    assert.ok(modLines.includes(`${pre.value.toString(16).padStart(16, '0')} ${pre.bind === 'local' ? 't' : 'T'} handler_pre\t[kprobe_example]`));
  });

  test('amd64: writing 0/1 to /sys/kernel/debug/kprobes/enabled is the knob (list flags, --list\'s enabled); other text is EINVAL; /proc/<pid>/stat has do_task_stat\'s 52 fields', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    await withRoot(bb, async root => {
      const EN = '/sys/kernel/debug/kprobes/enabled', L = '/sys/kernel/debug/kprobes/list';
      const r = await runScript(root, [
        `echo @1; echo 0 > ${EN}; cat ${EN}; cat ${L}; echo 1 > ${EN}; cat ${EN}; cat ${L}; echo maybe > ${EN}; echo rc=$?; echo 0 > ${EN}; echo @2`,
        'cat /proc/$$/stat; echo @3',
      ].join('; '), '--event', 'p:myprobe fx_puts', '--list');
      assert.equal(r.code, 0, r.err + r.out);
      const line = /ffffffff[0-9a-f]{8}  k  fx_puts\+0x0    /.source;
      assert.match(between(r.out, '@1', '@2'), new RegExp(`^0\\n${line}\\n1\\n${line}\\[OPTIMIZED\\]\\nsh: write error: Invalid argument\\nrc=1\\n$`));
      assert.equal(listBlock(r.out, EN), '0\n', 'the knob stays where user space left it');
      const stat = between(r.out, '@2', '@3').trimEnd().split(' ');
      assert.equal(stat.length, 52, stat.join(' '));
      assert.match(stat.slice(0, 3).join(' '), /^\d+ \(busybox\) [RS]$/);
    });
  });

  test('tracefs written through its files (no user program): kprobe_events defines an event, its enable file arms it; tracing_on 0 stops its trace lines while kprobe_profile still counts the hits', () => {
    const run = (on: string): { lines: number; profile: string } => {
      const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf')));
      attachProbes(m);
      const open = (path: string, flags: number) => {
        const r = m.kernel.fs.lookup(path, m.kernel.fs.root);
        assert.ok(r.ok && r.inode.pseudo, path);
        const dev = openPseudo(r.inode.pseudo, flags);
        assert.ok(typeof dev !== 'number', path);
        return dev;
      };
      const O_WRONLY = 1, O_TRUNC = 0o1000;
      const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
      assert.equal(open('/sys/kernel/tracing/kprobe_events', O_WRONLY | O_TRUNC).write(enc('p:myprobe do_fork\n')), 18);
      assert.equal(open('/sys/kernel/tracing/events/kprobes/myprobe/enable', O_WRONLY).write(enc('1\n')), 2);
      assert.equal(open('/sys/kernel/tracing/tracing_on', O_WRONLY).write(enc(`${on}\n`)), 2);
      assert.equal(open('/sys/kernel/tracing/tracing_on', O_WRONLY).write(enc('on\n')), -22, 'not a number: -EINVAL');
      assert.equal(new TextDecoder().decode(open('/sys/kernel/tracing/tracing_on', 0).read(10) as Uint8Array), `${on}\n`);
      m.run();
      return {
        lines: m.printkRecords.filter(r => / myprobe: \(do_fork\+0x0\//.test(r.text)).length,
        profile: new TextDecoder().decode(open('/sys/kernel/tracing/kprobe_profile', 0).read(4096) as Uint8Array),
      };
    };
    const on = run('1'), off = run('0');
    const hits = (p: string): number => Number(/^  myprobe +(\d+) +0\n$/.exec(p)?.[1]);
    assert.ok(on.lines > 0 && on.lines === hits(on.profile), `${on.lines} lines, profile ${on.profile}`);
    assert.equal(off.lines, 0, 'tracing_on 0: no trace lines');
    assert.equal(hits(off.profile), hits(on.profile), 'the event still counts its hits');
  });

  test('amd64: tracefs trace buffer: uprobe_events / kprobe_events / dynamic_events each take their own kind; an enabled event fills `trace` under the nop header, trace_pipe consumes and a reader of an empty one sleeps until a line comes, `> trace` clears; events/enable, events/GRP/enable, EVENT/id, uprobe_profile, buffer_size_kb, current_tracer', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    const { offset: off, entry } = entryPoint(bb);
    await withRoot(bb, async root => {
      const T = '/sys/kernel/tracing';
      const r = await runScript(root, [
        `echo @0; echo "p:ub /bin/busybox:0x${off.toString(16)}" > ${T}/uprobe_events; echo "p:kb fx_puts" >> ${T}/uprobe_events; echo rc=$?`,
        `echo "p:ub2 /bin/busybox:0x${off.toString(16)}" >> ${T}/kprobe_events; echo rc=$?; echo "p:kb fx_putl" >> ${T}/kprobe_events`,
        `echo @1; cat ${T}/dynamic_events; echo @2; cat ${T}/kprobe_events; cat ${T}/events/enable ${T}/events/uprobes/ub/id ${T}/events/kprobes/kb/id`,
        `echo 1 > ${T}/events/uprobes/enable; cat ${T}/events/enable ${T}/events/uprobes/enable; /bin/busybox true; /bin/busybox true`,
        `echo @3; cat ${T}/trace; echo @4; cat ${T}/uprobe_events ${T}/uprobe_profile; echo @5; head -n 1 ${T}/trace_pipe | sed s/^/P1:/; echo @6; head -n 1 ${T}/trace_pipe | sed s/^/P2:/`,
        // a reader of an empty trace_pipe sleeps until a line comes: drain it with the event off, start the reader, then hit
        `echo 0 > ${T}/events/enable; head -n 1 ${T}/trace_pipe > /dev/null; (head -n 2 ${T}/trace_pipe | sed s/^/P3:/; echo reader done) & echo 1 > ${T}/events/uprobes/enable`,
        `/bin/busybox true; /bin/busybox true; wait; echo @7`,
        `echo > ${T}/trace; cat ${T}/trace; echo @8; cat ${T}/buffer_size_kb ${T}/current_tracer ${T}/available_tracers; echo function > ${T}/current_tracer; echo rc=$?`,
        `echo > ${T}/uprobe_events; echo rc=$?; echo 0 > ${T}/events/enable; cat ${T}/events/enable; echo > ${T}/uprobe_events; cat ${T}/dynamic_events; echo @9; cat ${T}/error_log`,
      ].join('; '));
      assert.equal(r.code, 0, r.err + r.out);
      const ev = `ub: \\(0x${entry.toString(16)}\\)`;
      // each file refuses the other kind's probe point (error_log below); both events are defined disabled
      assert.match(between(r.out, '@0', '@1'), /^sh: write error: Invalid argument\nrc=1\nsh: write error: Invalid argument\nrc=1\n$/);
      // both events are listed though disabled (the uprobe is registered only when its event is enabled), in the order
      // they were made, as Linux's dyn_event_list keeps them (kernel/trace/trace_dynevent.c dyn_event_seq_show)
      assert.equal(between(r.out, '@1', '@2'), `p:uprobes/ub /bin/busybox:0x${off.toString(16).padStart(16, '0')}\np:kprobes/kb fx_putl\n`);
      assert.equal(between(r.out, '@2', '@3').split('\n').filter(l => !/ ub: /.test(l)).join('\n'),
        'p:kprobes/kb fx_putl\n0\n2000\n2001\nX\n1\n');
      // `trace`: the nop tracer's header, then one line per hit, each by a process exec'd after the enable
      // (the console shows each hit's line too: cat's own exec comes before the file's text)
      const section = between(r.out, '@3', '@4');
      const trace = section.slice(section.indexOf('# tracer: nop')).split('\n').filter(Boolean);
      assert.equal(trace[0], '# tracer: nop');
      const lines = trace.filter(l => !l.startsWith('#'));
      assert.match(trace[2], new RegExp(`^# entries-in-buffer/entries-written: ${lines.length}/${lines.length}   #P:\\d+$`));
      assert.equal(trace[10], '#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION');
      assert.ok(lines.length >= 3, trace.join('\n'));
      for (const l of lines) assert.match(l, new RegExp(`^ +\\S+-\\d+ +\\[\\d{3}\\] \\.{5} +\\d+\\.\\d{6}: ${ev}$`));
      const listed = between(r.out, '@4', '@5').split('\n').filter(l => !/ ub: \(/.test(l));
      assert.equal(listed[0], `p:uprobes/ub /bin/busybox:0x${off.toString(16).padStart(16, '0')}`);
      assert.match(listed[1], /^  \/bin\/busybox ub {43} +\d+$/);
      // trace_pipe takes what it gives: head's read took every line there was (P1 prints the oldest); the next read
      // sees only lines written since (the hits of that head's own exec and sed's)
      const pick = (tag: string, from: string, to: string): string[] => between(r.out, from, to).split('\n').filter(l => l.startsWith(tag)).map(l => l.slice(tag.length));
      const pidOf = (l: string): number => Number(/-(\d+) +\[/.exec(l)![1]);
      assert.deepEqual(pick('P1:', '@5', '@6'), [lines[0]]);
      const p2 = pick('P2:', '@6', '@7');
      assert.equal(p2.length, 1);
      assert.ok(pidOf(p2[0]) > Math.max(...lines.map(pidOf)), `${p2[0]} after ${lines.join('\n')}`);
      // the sleeping reader got the two lines that came after it and ended
      const p3 = between(r.out, '@6', '@7');
      assert.equal(pick('P3:', '@6', '@7').length, 2, p3);
      for (const l of pick('P3:', '@6', '@7')) assert.match(l, new RegExp(`^ +\\S+-\\d+ +\\[\\d{3}\\] \\.{5} +\\d+\\.\\d{6}: ${ev}$`));
      assert.ok(p3.indexOf('reader done') > p3.lastIndexOf('P3:'), p3);
      const cleared = between(r.out, '@7', '@8').split('\n').filter(l => l.startsWith('# entries'));
      assert.match(cleared[0], /^# entries-in-buffer\/entries-written: [01]\/[01]   #P:\d+$/);
      assert.equal(between(r.out, '@8', '@9').split('\n').filter(l => !/ ub: \(/.test(l)).join('\n'),
        '1408\nnop\nnop\nsh: write error: Invalid argument\nrc=1\nsh: can\'t create /sys/kernel/tracing/uprobe_events: Device or resource busy\nrc=1\n0\np:kprobes/kb fx_putl\n');
      const log = r.out.slice(r.out.indexOf('@9\n') + 3).split('\n');
      assert.match(log[0], /^\[ +\d+\.\d{6}\] trace_uprobe: error: /);
      assert.equal(log[1], '  Command: p:kb fx_puts');
      assert.match(log[3], /^\[ +\d+\.\d{6}\] trace_kprobe: error: /);
      assert.equal(log[4], `  Command: p:ub2 /bin/busybox:0x${off.toString(16)}`);
    });
  });
});

describe('tracefs event files', () => {
  test('events/GRP/EVENT/format (trace_events.c f_show: common fields, probe fields, one packed field per argument, print fmt), available_events, set_event (GRP:EVENT, !, *:*, > disables all)', () => {
    const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf')));
    attachProbes(m);
    const file = (path: string, flags: number) => {
      const r = m.kernel.fs.lookup(path, m.kernel.fs.root);
      assert.ok(r.ok && r.inode.pseudo, path);
      const dev = openPseudo(r.inode.pseudo, flags);
      assert.ok(typeof dev !== 'number', path);
      return dev;
    };
    const O_WRONLY = 1, O_TRUNC = 0o1000, O_APPEND = 0o2000;
    const T = '/sys/kernel/tracing';
    const write = (path: string, text: string, flags = O_WRONLY | O_APPEND): number | Uint8Array => file(`${T}/${path}`, flags).write(new TextEncoder().encode(text));
    const read = (path: string): string => new TextDecoder().decode(file(`${T}/${path}`, 0).read(1 << 16) as Uint8Array);
    assert.equal(write('kprobe_events', 'p:myprobe do_fork a=%di:u32 b=%si:s8 c=%dx:x16 d=+0(%di):string e=%cx:symbol\n'), 77);
    assert.equal(write('kprobe_events', 'r:myret do_fork $retval\n'), 24);
    // the kprobe events, and the system-call events every kernel has (syscalls:sys_enter_NAME / sys_exit_NAME)
    const available = read('available_events').split('\n').filter(Boolean);
    assert.deepEqual(available.filter(l => !l.startsWith('syscalls:')), ['kprobes:myprobe', 'kprobes:myret']);
    assert.ok(available.includes('syscalls:sys_enter_openat') && available.includes('syscalls:sys_exit_openat'), available.join(' '));
    // the example of Documentation/trace/events.rst's format, with trace_kprobe's fields: __probe_ip, then the arguments packed
    assert.equal(read('events/kprobes/myprobe/format'), [
      'name: myprobe', 'ID: 2000', 'format:',
      '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;',
      '\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;',
      '\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;',
      '\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;',
      '',
      '\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;',
      '\tfield:u32 a;\toffset:16;\tsize:4;\tsigned:0;',
      '\tfield:s8 b;\toffset:20;\tsize:1;\tsigned:1;',
      '\tfield:x16 c;\toffset:21;\tsize:2;\tsigned:0;',
      '\tfield:__data_loc char[] d;\toffset:23;\tsize:4;\tsigned:0;',
      '\tfield:symbol e;\toffset:27;\tsize:8;\tsigned:0;',
      '',
      'print fmt: "(%lx) a=%u b=%d c=0x%x d=\\"%s\\" e=%pS", REC->__probe_ip, REC->a, REC->b, REC->c, __get_str(d), REC->e',
      '',
    ].join('\n'));
    const ret = read('events/kprobes/myret/format').split('\n');
    assert.deepEqual(ret.slice(0, 2), ['name: myret', 'ID: 2001']);
    assert.deepEqual(ret.slice(8, 11), [
      '\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;',
      '\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;',
      '\tfield:x64 arg1;\toffset:24;\tsize:8;\tsigned:0;',
    ]);
    assert.equal(ret[12], 'print fmt: "(%lx <- %lx) arg1=0x%Lx", REC->__probe_func, REC->__probe_ret_ip, REC->arg1');
    // an array TYPE[N]: one field of N elements, printed {fmt,...} element by element
    assert.equal(write('kprobe_events', 'p:arr do_fork v=+0(%di):u16[3]\n'), 31);
    const arr = read('events/kprobes/arr/format').split('\n');
    assert.equal(arr[9], '\tfield:u16[3] v;\toffset:16;\tsize:6;\tsigned:0;');
    assert.equal(arr[11], 'print fmt: "(%lx) v={%u,%u,%u}", REC->__probe_ip, REC->v[0], REC->v[1], REC->v[2]');
    // set_event: enable by GRP:EVENT, by EVENT alone; '!' disables; an unknown event is -EINVAL; > disables all
    assert.equal(read('set_event'), '');
    assert.equal(write('set_event', 'kprobes:myprobe\n', O_WRONLY | O_TRUNC), 16);
    assert.equal(write('set_event', 'myret\n'), 6);
    assert.equal(read('set_event'), 'kprobes:myprobe\nkprobes:myret\n');
    assert.equal(read('events/kprobes/myprobe/enable'), '1\n');
    assert.equal(write('set_event', '!kprobes:myprobe\n'), 17);
    assert.equal(read('set_event'), 'kprobes:myret\n');
    assert.equal(read('events/enable'), 'X\n');
    assert.equal(write('set_event', 'nosuch:event\n'), -22);
    assert.equal(write('set_event', '*:*\n'), 4);
    assert.equal(read('events/enable'), '1\n');
    assert.equal(write('set_event', '', O_WRONLY | O_TRUNC), 0);
    assert.equal(read('set_event'), '');
    assert.equal(read('events/kprobes/enable'), '0\n');
  });
});

describe('tracefs: several probes on one event', () => {
  test('a definition naming an existing event appends a probe (same kind, type and argument types) or fails with EEXIST and Linux\'s error; -:EVENT PROBEPOINT removes only that probe; README is served', () => {
    const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf')));
    attachProbes(m);
    const file = (path: string, flags: number) => {
      const r = m.kernel.fs.lookup(`/sys/kernel/tracing/${path}`, m.kernel.fs.root);
      assert.ok(r.ok && r.inode.pseudo, path);
      const dev = openPseudo(r.inode.pseudo, flags);
      assert.ok(typeof dev !== 'number', path);
      return dev;
    };
    const O_WRONLY = 1, O_APPEND = 0o2000;
    const write = (text: string): number => file('kprobe_events', O_WRONLY | O_APPEND).write(new TextEncoder().encode(text)) as number;
    const read = (path: string): string => new TextDecoder().decode(file(path, 0).read(1 << 16) as Uint8Array);
    assert.equal(write('p:multi do_fork a=%di:u32\n'), 26);
    assert.equal(write('p:multi sys_open a=%si:u32\n'), 27, 'same kind, type and argument types: appended');
    assert.equal(read('kprobe_events'), 'p:kprobes/multi do_fork a=%di:u32\np:kprobes/multi sys_open a=%si:u32\n');
    assert.equal(write('p:multi sys_open a=%si:u32\n'), -17, 'the same probe again: EEXIST');
    assert.equal(write('r:multi sys_open\n'), -17, 'a return probe on a probe event: EEXIST');
    assert.equal(write('p:multi do_fork a=%di:u64\n'), -17, 'another argument type: EEXIST');
    const log = read('error_log').split('\n');
    assert.match(log[0], /trace_kprobe: error: There is already the exact same probe event$/);
    assert.match(log[3], /trace_kprobe: error: Probe type is different from existing probe$/);
    assert.match(log[6], /trace_kprobe: error: Argument type or name is different from existing probe$/);
    // enabling the event enables both probes; -: with a probe point removes one of them (not while enabled)
    assert.equal(file('events/kprobes/multi/enable', O_WRONLY).write(new TextEncoder().encode('1\n')), 2);
    assert.equal(write('-:multi sys_open\n'), -16, 'EBUSY while enabled');
    assert.equal(file('events/kprobes/multi/enable', O_WRONLY).write(new TextEncoder().encode('0\n')), 2);
    assert.equal(write('-:multi sys_open\n'), 17);
    assert.equal(read('kprobe_events'), 'p:kprobes/multi do_fork a=%di:u32\n');
    assert.equal(write('-:multi nosuch_place\n'), -2, 'no probe at that point: ENOENT');
    assert.equal(write('-:kprobes/\n'), 11, '-:GRP/ removes every event of the group');
    assert.equal(read('kprobe_events'), '');
    // README: the probe-event syntax lines ftracetest looks for (trace_probe_show's mini-HOWTO)
    assert.match(read('README'), /place: \[<module>:\]<symbol>\[\+<offset>\]\|<memaddr>/);
  });
});

describe('procfs /proc/<pid>/cmdline', () => {
  test('amd64: /proc/<pid>/cmdline is the argv strings, each with its NUL, as they lie in the process (proc_pid_cmdline_read)', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    await withRoot(bb, async root => {
      const script = 'echo @1; tr "\\000" "|" < /proc/$$/cmdline; echo; tr "\\000" "|" < /proc/self/cmdline; echo; echo @2';
      const r = await runScript(root, script);
      assert.equal(r.code, 0, r.err + r.out);
      // the shell's own argv (sh -c SCRIPT), then tr's: busybox sh runs the applet tr in a forked child without an exec, so its memory (and argv) is the shell's
      assert.equal(between(r.out, '@1', '@2'), `/bin/busybox|sh|-c|${script}|\n/bin/busybox|sh|-c|${script}|\n`);
    });
  });
});

/** An ELF executable's entry point and its file offset (in the PT_LOAD segment that holds it). */
function entryPoint(path: string): { entry: bigint; offset: bigint } {
  const b = readFileSync(path);
  const entry = b.readBigUInt64LE(0x18), phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36), phnum = b.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) {
    const p = phoff + i * phentsize;
    if (b.readUInt32LE(p) !== 1) continue;
    const offset = b.readBigUInt64LE(p + 8), vaddr = b.readBigUInt64LE(p + 16), filesz = b.readBigUInt64LE(p + 32);
    if (entry >= vaddr && entry < vaddr + filesz) return { entry, offset: entry - vaddr + offset };
  }
  throw new Error(`${path}: no PT_LOAD holds the entry point`);
}
