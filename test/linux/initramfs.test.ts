/**
 * test/linux/make-initramfs.sh: the archive is a gzip'd newc cpio that
 * Debian's busybox cpio lists, byte-for-byte the same on a second run, with
 * the /init that mounts what a kprobes session needs, the /dev/console node
 * the kernel opens before devtmpfs exists, and Debian's busybox itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { repoPath } from '../util/paths';
import { debianBusybox } from '../userspace/debian/busybox';
import { unfetched } from '../util/fetched';

interface Entry { name: string; mode: number; rdev: [number, number]; data: Uint8Array }

/** a newc reader written from the format (kernel's Documentation/driver-api/early-userspace/buffer-format.rst) */
function readNewc(b: Uint8Array): Entry[] {
  const out: Entry[] = [];
  const text = new TextDecoder('latin1');
  let at = 0;
  for (;;) {
    assert.equal(text.decode(b.subarray(at, at + 6)), '070701', `newc magic at ${at}`);
    const f = (i: number): number => parseInt(text.decode(b.subarray(at + 6 + 8 * i, at + 14 + 8 * i)), 16);
    const mode = f(1), size = f(6), nameSize = f(11), rdev: [number, number] = [f(9), f(10)];
    const name = text.decode(b.subarray(at + 110, at + 110 + nameSize - 1));
    at = Math.ceil((at + 110 + nameSize) / 4) * 4;
    if (name === 'TRAILER!!!') return out;
    out.push({ name, mode, rdev, data: b.subarray(at, at + size) });
    at = Math.ceil((at + size) / 4) * 4;
  }
}

test('make-initramfs.sh: a reproducible newc archive with /init, /dev/console, Debian\'s busybox', t => {
  const bb = debianBusybox('amd64');
  if (!bb) { unfetched(t, 'no Debian busybox-static (test/userspace/debian/fetch.sh)'); return; }
  const dir = mkdtempSync(join(tmpdir(), 'kpd-initramfs-'));
  try {
    const script = repoPath('test', 'linux', 'make-initramfs.sh');
    const make = (out: string): Uint8Array => {
      const r = spawnSync(script, [out], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      return new Uint8Array(readFileSync(out));
    };
    const a = make(join(dir, 'a.cpio.gz')), b = make(join(dir, 'b.cpio.gz'));
    assert.deepEqual(a, b, 'the same inputs give the same bytes');
    const archive = gunzipSync(a);
    const entries = readNewc(new Uint8Array(archive));
    const byName = new Map(entries.map(e => [e.name, e]));
    const listed = spawnSync(bb, ['cpio', '-t'], { input: archive, encoding: 'utf8' });
    assert.equal(listed.status, 0, listed.stderr);
    assert.deepEqual(listed.stdout.trim().split('\n'), entries.map(e => e.name), 'busybox cpio lists the same entries');
    const init = byName.get('init')!;
    assert.equal(init.mode & 0o170111, 0o100111, '/init is an executable file');
    const script0 = new TextDecoder().decode(init.data);
    assert.match(script0, /^#!\/bin\/sh\n/);
    for (const fs of ['proc', 'sysfs', 'devtmpfs', 'tracefs', 'debugfs']) assert.match(script0, new RegExp(`mount -t ${fs} `));
    assert.match(script0, /setsid cttyhack sh/);
    const con = byName.get('dev/console')!;
    assert.equal(con.mode & 0o170000, 0o020000);
    assert.deepEqual(con.rdev, [5, 1]);
    assert.deepEqual(byName.get('bin/busybox')!.data, new Uint8Array(readFileSync(bb)));
    const sh = byName.get('bin/sh')!;
    assert.equal(sh.mode & 0o170000, 0o120000);
    assert.equal(new TextDecoder().decode(sh.data), 'busybox');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
