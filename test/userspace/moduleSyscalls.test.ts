/**
 * insmod / lsmod / rmmod from user space: Debian's busybox-static (test/
 * userspace/debian/fetch.sh) loads and unloads the project's modules
 * through init_module / finit_module / delete_module on the sample kernel,
 * x86_64 and aarch64. Expected: the module's own lines (its init plants the
 * kprobe, its exit removes it), /proc/modules' line as lsmod shows it, and
 * busybox's messages for the errors Linux gives (EEXIST loading twice,
 * ENOENT removing a module that is not loaded, ENOEXEC for a file that is
 * no module).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';
import { debianBusybox } from './debian/busybox';
import { splitModuleParams } from '../../emulator/kernel/user/moduleSyscalls';
import { unfetched } from '../util/fetched';



describe('module system calls from user space (busybox insmod / lsmod / rmmod)', () => {
  test('parse_args splits the parameter string: blanks between pairs, quotes around a value with blanks', () => {
    assert.deepEqual(splitModuleParams('symbol=do_fork  n=3 s="a b"'), ['symbol=do_fork', 'n=3', 's=a b']);
    assert.deepEqual(splitModuleParams(''), []);
  });

  for (const [deb, arch] of [['amd64', 'x86_64'], ['arm64', 'aarch64']] as const) {
    test(`${arch}: insmod runs the module's init (its kprobe is listed), a second insmod is EEXIST, lsmod shows /proc/modules, rmmod runs its exit; a bad file is ENOEXEC, an unknown module ENOENT`, async t => {
      const bb = debianBusybox(deb);
      if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
      const root = mkdtempSync(join(tmpdir(), 'kprobe-insmod-'));
      try {
        mkdirSync(join(root, 'bin'));
        mkdirSync(join(root, 'lib'));
        copyFileSync(bb, join(root, 'bin', 'busybox'));
        copyFileSync(repoPath('examples', 'modules', 'build', `kprobe_example-${arch}.ko`), join(root, 'lib', 'kprobe_example.ko'));
        const script = [
          'insmod /lib/kprobe_example.ko symbol=do_fork; echo rc=$?; echo @1; lsmod; cat /sys/kernel/debug/kprobes/list; echo @2',
          'insmod /lib/kprobe_example.ko; echo rc=$?; insmod /bin/busybox; echo rc=$?; echo @3',
          'rmmod kprobe_example; echo rc=$?; echo @4; lsmod; cat /sys/kernel/debug/kprobes/list; rmmod kprobe_example; echo rc=$?; echo @5',
        ].join('; ');
        const c = captureIo();
        const code = await runCli(['run', repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`), '--rootfs', root,
          '--exec', `/bin/busybox sh -c '${script}'`], c.io);
        const out = c.stdout().split('\n').filter(l => !/unimplemented syscall|_handler:|^kworker|^joined /.test(l)).join('\n');
        assert.equal(code, 0, c.stderr() + out);
        const between = (a: string, b: string): string => {
          const i = out.indexOf(`${a}\n`), j = out.indexOf(`${b}\n`);
          assert.ok(i >= 0 && j > i, `${a}/${b} in\n${out}`);
          return out.slice(i + a.length + 1, j);
        };
        // init ran before insmod returned: its line comes first, then the exit status; the parameter reached the loader
        const head = out.slice(0, out.indexOf('@1\n'));
        assert.match(head, /kprobe_example: unknown parameter 'symbol' ignored\n/);
        assert.match(head, /Planted kprobe at (0x[0-9a-f]+)\n(?:.*\n)*rc=0\n$/);
        const addr = /Planted kprobe at 0x([0-9a-f]+)/.exec(head)![1];
        assert.match(between('@1', '@2'), new RegExp(`^Module +Size +Used by +Not tainted\\nkprobe_example +\\d+ +0 \\n${addr}  k  do_fork\\+0x0 +(\\[OPTIMIZED\\])?\\n$`));
        // busybox's insmod exits with the errno: 17 EEXIST, 8 ENOEXEC (the loader's line for each of finit_module and init_module)
        assert.match(between('@2', '@3'), /^insmod: can't insert '\/lib\/kprobe_example.ko': File exists\nrc=17\n(?:f?init_module: not a relocatable object .*\n){2}insmod: can't insert '\/bin\/busybox': invalid module format\nrc=8\n$/);
        assert.match(between('@3', '@4'), new RegExp(`^kprobe at 0x${addr} unregistered\\nrc=0\\n$`));
        assert.equal(between('@4', '@5'), 'Module                  Size  Used by    Not tainted\n' +
          "rmmod: can't unload module 'kprobe_example': No such file or directory\nrc=1\n");
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  }
});
