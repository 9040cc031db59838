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
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';
import { openPseudo } from '../../emulator/kernel/fs/pseudo';
import { attachProbes } from '../../emulator/probes/attach';

const DEB = repoPath('test', 'userspace', 'debian');
const KERNEL = repoPath('test', 'fixtures', 'kernel', 'bin', 'userinit.elf');

/**
 * busybox for an arch, fetched when missing; undefined (the test skips) when it cannot be had — outside CI only:
 * CI fetches it (.ci/run), so there a missing busybox is a failure, not a skip
 */
function busybox(arch: string): string | undefined {
  const bb = join(DEB, 'cache', arch, 'bin', 'busybox');
  if (!existsSync(bb)) spawnSync(join(DEB, 'fetch.sh'), { stdio: 'ignore', timeout: 300_000 });
  if (existsSync(bb)) return bb;
  if (process.env.CI) throw new Error(`busybox-static:${arch} is missing in CI (test/userspace/debian/fetch.sh)`);
  return undefined;
}

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
    const bb = busybox('amd64');
    if (!bb) { t.skip('busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
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
    const bb = busybox('amd64');
    if (!bb) { t.skip('busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
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
      assert.match(between(r.out, '@2', '@3'), new RegExp(`^p:kprobes/myprobe fx_puts\\n${puts}sh: write error: No such file or directory\\nrc=1\\nsh: write error: Invalid argument\\nrc=1\\n$`));
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
      const bb = busybox(arch);
      if (!bb) { t.skip('busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
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
    const bb = busybox('amd64');
    if (!bb) { t.skip('busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
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
    const bb = busybox('amd64');
    if (!bb) { t.skip('busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
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
});
