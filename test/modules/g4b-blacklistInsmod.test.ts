/**
 * A module's kprobe blacklist as a user sees it on Linux: Debian's busybox
 * (test/userspace/debian/fetch.sh) insmods test/modules/g4b-blacklist's
 * module (built at test time), reads /sys/kernel/debug/kprobes/blacklist
 * (the module's NOKPROBE_SYMBOL, __kprobes and noinstr functions, each
 * "0xSTART-0xEND\tfn [g4b_blacklist]"), rmmods it and reads the file again
 * (the entries are gone).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';
import { debianBusybox } from '../userspace/debian/busybox';
import { builtModule, kbuild, unavailable } from './kbuild';
import { unfetched } from '../util/fetched';

describe('a module\'s kprobe blacklist from user space (busybox insmod, cat debugfs, rmmod)', () => {
  for (const [deb, arch] of [['amd64', 'x86_64'], ['arm64', 'aarch64']] as const) {
    test(`${arch}: the module's entries are in kprobes/blacklist while it is loaded, gone after rmmod`, async t => {
      const bb = debianBusybox(deb);
      if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
      const b = kbuild(repoPath('test', 'modules', 'g4b-blacklist'), arch);
      if ('missing' in b) { unavailable(t, b.missing); return; }
      const root = mkdtempSync(join(tmpdir(), 'kprobe-g4b-blacklist-'));
      try {
        mkdirSync(join(root, 'bin'));
        mkdirSync(join(root, 'lib'));
        copyFileSync(bb, join(root, 'bin', 'busybox'));
        copyFileSync(builtModule(b.out, 'g4b_blacklist'), join(root, 'lib', 'g4b_blacklist.ko'));
        const script = [
          'insmod /lib/g4b_blacklist.ko; echo rc=$?; echo @1',
          'cat /sys/kernel/debug/kprobes/blacklist | grep g4b; echo @2',
          'rmmod g4b_blacklist; echo rc=$?; cat /sys/kernel/debug/kprobes/blacklist | grep -c g4b; echo @3',
        ].join('; ');
        const c = captureIo();
        const code = await runCli(['run', repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`), '--rootfs', root,
          '--exec', `/bin/busybox sh -c '${script}'`], c.io);
        const out = c.stdout().split('\n').filter(l => !/unimplemented syscall|_handler:|^kworker|^joined /.test(l)).join('\n');
        assert.equal(code, 0, c.stderr() + out);
        const between = (a: string, z: string): string => {
          const i = out.indexOf(`${a}\n`), j = out.indexOf(`${z}\n`);
          assert.ok(i >= 0 && j > i, `${a}/${z} in\n${out}`);
          return out.slice(i + a.length + 1, j);
        };
        assert.match(out.slice(0, out.indexOf('@1\n')), /g4b_blacklist: g4b_nokprobe: register_kprobe -22\n(?:.*\n)*rc=0\n$/);
        const hex = '0x[0-9a-f]{16}';
        assert.match(between('@1', '@2'), new RegExp(['g4b_nokprobe', 'g4b_kprobes_a', 'g4b_kprobes_b', 'g4b_noinstr']
          .map(f => `${hex}-${hex}\\t${f} \\[g4b_blacklist\\]\\n`).join('') + '$'));
        assert.equal(between('@2', '@3'), 'rc=0\n0\n');
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  }
});
