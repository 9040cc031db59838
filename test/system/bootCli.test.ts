/**
 * `kprobe-run boot` on bad input and on guests that end badly: one clear
 * line each (the file and what is wrong with it), exit status 1, never a
 * JavaScript stack. Synthetic bzImages (test/system/boot/syntheticBzImage.ts)
 * carry a few instructions at the 64-bit entry (load address + 0x200).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { cpio } from '../userspace/cpio';
import { bzImage } from './boot/syntheticBzImage';

const SETUP_SECTS = 4;
/** a synthetic bzImage whose 64-bit entry runs `code` */
function withEntryCode(code: number[]): Uint8Array {
  const img = bzImage({ kernelBytes: 0x1000, setupSects: SETUP_SECTS });
  img.set(code, (SETUP_SECTS + 1) * 512 + 0x200);
  return img;
}
const outByte = (port: number, v: number): number[] => [0x66, 0xba, port & 0xff, port >> 8, 0xb0, v, 0xee];

describe('kprobe-run boot: bad input and bad ends', () => {
  let dir = '';
  const file = (name: string, data: Uint8Array | string): string => { const p = join(dir, name); writeFileSync(p, data); return p; };
  before(() => { dir = mkdtempSync(join(tmpdir(), 'kp-boot-')); });
  after(() => { rmSync(dir, { recursive: true, force: true }); });

  async function boot(args: string[]): Promise<{ code: number; err: string; out: string }> {
    const c = captureIo();
    const code = await runCli(['boot', ...args], c.io);
    assert.doesNotMatch(c.stderr(), /\n\s+at /, 'no JavaScript stack');
    return { code, err: c.stderr(), out: c.stdout() };
  }
  const initrd = (): string => file('initrd.cpio', cpio([{ name: 'init', mode: 0o100755, data: '#!/bin/sh\n' }]));

  test('a file that is not a bzImage', async () => {
    const k = file('notes.txt', 'hello, this is not a kernel\n'.repeat(40));
    const r = await boot(['--kernel', k, '--append', 'console=ttyS0']);
    assert.equal(r.code, 1);
    assert.match(r.err, new RegExp(`notes\\.txt.*not .*bzImage`, 'i'));
  });

  test('an initrd that is not a cpio archive', async () => {
    const k = file('bz1', bzImage());
    const i = file('initrd.txt', 'plain text, not an archive');
    const r = await boot(['--kernel', k, '--initrd', i, '--append', 'console=ttyS0']);
    assert.equal(r.code, 1);
    assert.match(r.err, /initrd\.txt.*is not an initramfs/);
  });

  test('a command line over the kernel\'s cmdline_size', async () => {
    const k = file('bz2', bzImage({ cmdlineSize: 255 }));
    const r = await boot(['--kernel', k, '--initrd', initrd(), '--append', 'x'.repeat(300)]);
    assert.equal(r.code, 1);
    assert.match(r.err, /the command line is 300 bytes; this kernel takes at most 255/);
  });

  test('--memory too small for the kernel', async () => {
    const k = file('bz3', bzImage({ initSize: 0x4000000 }));
    const r = await boot(['--kernel', k, '--memory', '16', '--append', 'console=ttyS0']);
    assert.equal(r.code, 1);
    assert.match(r.err, /--memory 16 MiB is too small/);
  });

  test('a guest that triple-faults (ud2 with no IDT: #UD, #GP, #DF, shutdown)', async () => {
    const k = file('bz4', withEntryCode([0x0f, 0x0b]));
    const r = await boot(['--kernel', k, '--initrd', initrd(), '--append', 'console=ttyS0', '--cpus', '1']);
    assert.equal(r.code, 1);
    assert.match(r.err, /boot: the guest triple-faulted: .* at cpu0 rip 0x/);
  });

  test('a guest that panics: its panic line shown, then the reset it asked for', async () => {
    const text = 'Kernel panic - not syncing: synthetic\n';
    const code = [...text].flatMap(ch => outByte(0x3f8, ch.charCodeAt(0))).concat(outByte(0xcf9, 6), [0xf4]);
    const k = file('bz5', withEntryCode(code));
    const r = await boot(['--kernel', k, '--initrd', initrd(), '--append', 'console=ttyS0', '--cpus', '1']);
    assert.equal(r.out, text);
    assert.equal(r.code, 1);
    assert.match(r.err, /boot: the guest panicked: Kernel panic - not syncing: synthetic \(\d+ instructions/);
  });

  test('an I/O port and an MSR the platform does not have: one line each with the rip', async () => {
    // in al, 0x99; mov ecx, 0x3a; rdmsr (no IDT: the #GP then triple-faults)
    const k = file('bz6', withEntryCode([0xe4, 0x99, 0xb9, 0x3a, 0, 0, 0, 0x0f, 0x32]));
    const r = await boot(['--kernel', k, '--initrd', initrd(), '--append', 'console=ttyS0', '--cpus', '1']);
    const lines = r.err.split('\n');
    assert.equal(lines.filter(l => /no device at I\/O port 0x99 \(in, 1 byte\) at cpu0 rip 0x/.test(l)).length, 1, r.err);
    assert.equal(lines.filter(l => /rdmsr 0x3a: no such MSR \(#GP\) at rip 0x/.test(l)).length, 1, r.err);
    assert.equal(lines.filter(l => /msr 0x3a|MSR 0x3a/i.test(l)).length, 1, `one line for the MSR, not one from the machine and one from the CPU:\n${r.err}`);
    assert.match(r.err, /boot: the guest triple-faulted/);
  });

  test('two CPUs with acpi=off: Linux would find only one (no MP table): said before booting', async () => {
    const k = file('bz7', bzImage());
    const r = await boot(['--kernel', k, '--initrd', initrd(), '--append', 'console=ttyS0 acpi=off', '--cpus', '2']);
    assert.equal(r.code, 1);
    assert.match(r.err, /boot: --cpus 2 needs ACPI .*use --cpus 1 with acpi=off/);
  });

  test('--no-translate runs the guest on the interpreter alone: the same console and instruction count as --translate on, none of them translated', async () => {
    // mov ecx, 200000; l: dec ecx; jnz l; the text; reset through 0xcf9
    const loop = [0xb9, 0x40, 0x0d, 0x03, 0x00, 0xff, 0xc9, 0x75, 0xfc];
    const code = loop.concat(...[...'looped\n'].map(ch => outByte(0x3f8, ch.charCodeAt(0))), outByte(0xcf9, 6), [0xf4]);
    const k = file('bz8', withEntryCode(code));
    const args = ['--kernel', k, '--initrd', initrd(), '--append', 'console=ttyS0', '--cpus', '1'];
    const count = (err: string, mode: string): { instructions: number; translated: number } => {
      const m = new RegExp(`\\((\\d+) instructions, (\\d+) translated \\(translator ${mode}\\)`).exec(err);
      assert.ok(m, err);
      return { instructions: Number(m[1]), translated: Number(m[2]) };
    };
    const on = await boot([...args, '--translate', 'on']);
    const off = await boot([...args, '--no-translate']);
    assert.equal(on.code, 0, on.err);
    assert.equal(off.code, 0, off.err);
    assert.equal(on.out, 'looped\n');
    assert.equal(off.out, on.out);
    const a = count(on.err, 'on'), b = count(off.err, 'off');
    assert.ok(a.instructions > 400_000, on.err);
    assert.equal(b.instructions, a.instructions, 'the same instructions retired');
    assert.ok(a.translated > 300_000, `the loop ran translated with --translate on: ${on.err}`);
    assert.equal(b.translated, 0, `nothing translated with --no-translate: ${off.err}`);
  });

  test('--translate with a mode it does not know: one line', async () => {
    const r = await boot(['--kernel', file('bz9', bzImage()), '--translate', 'fast']);
    assert.equal(r.code, 1);
    assert.match(r.err, /boot: --translate fast: expected on, off or lockstep/);
  });
});
