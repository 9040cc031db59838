/**
 * Load-time address checks (a bad image is a clear error, not a JS
 * exception): a non-canonical e_entry, a LOAD segment that wraps past 2^64,
 * leaves the canonical range or overlaps another are ImageErrors naming the
 * field and the file, from parseElf and from `kprobe-run run` (never
 * "internal error").
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageError, parseElf, PT_LOAD } from '../../../emulator/elf';
import { isCanonical } from '../../../emulator/elf/addressChecks';
import { runCli } from '../../../emulator/cli/main';
import { captureIo } from '../../../emulator/cli/io';
import { repoPath } from '../../util/paths';

const KERNEL = readFileSync(repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf'));

/** The sample kernel's bytes with fields rewritten (little-endian ELF64). */
function patched(edit: (d: DataView, phdr: (i: number) => number, loads: number[]) => void): Uint8Array {
  const b = new Uint8Array(KERNEL);
  const d = new DataView(b.buffer);
  const phoff = Number(d.getBigUint64(32, true));
  const phentsize = d.getUint16(54, true), phnum = d.getUint16(56, true);
  const phdr = (i: number): number => phoff + i * phentsize;
  const loads: number[] = [];
  for (let i = 0; i < phnum; i++) if (d.getUint32(phdr(i), true) === PT_LOAD) loads.push(i);
  edit(d, phdr, loads);
  return b;
}

function imageError(bytes: Uint8Array, pattern: RegExp): void {
  assert.throws(() => parseElf(bytes, 'bad.elf'), (e: unknown) => {
    assert.ok(e instanceof ImageError, `ImageError, got ${String(e)}`);
    assert.equal(e.file, 'bad.elf');
    assert.match(e.message, pattern);
    return true;
  });
}

const tmp = mkdtempSync(join(tmpdir(), 'kprobe-elf-addr-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('ELF address checks at load time', () => {
  test('isCanonical: 48-bit rule', () => {
    assert.ok(isCanonical(0xffffffff81000000n, 48));
    assert.ok(isCanonical(0x00007fffffffffffn, 48));
    assert.ok(!isCanonical(0x8000000000000000n, 48));
    assert.ok(!isCanonical(0x0000800000000000n, 48));
    assert.ok(isCanonical(0xfff8000000000000n, 52));
    assert.ok(!isCanonical(0xfff0000000000000n, 52));
  });

  test('the unmodified sample kernel loads', () => {
    assert.equal(parseElf(patched(() => undefined), 'ok.elf').archName, 'x86_64');
  });

  test('a non-canonical e_entry names e_entry', () => {
    imageError(patched(d => d.setBigUint64(24, 0x8000000000000000n, true)), /e_entry 0x8000000000000000 is not a canonical x86_64 address/);
  });

  test('a LOAD segment at 0xffffffffffffffff that wraps names p_vaddr + p_memsz', () => {
    imageError(patched((d, ph, loads) => d.setBigUint64(ph(loads[0]) + 16, 0xffffffffffffffffn, true)),
      /segment \d \(LOAD at p_vaddr 0xffffffffffffffff, p_memsz 0x[0-9a-f]+\): p_vaddr \+ p_memsz = 0x1[0-9a-f]{16} wraps past the end of the 64-bit address space/);
  });

  test('a LOAD segment with a non-canonical p_vaddr, or crossing out of the canonical half', () => {
    imageError(patched((d, ph, loads) => d.setBigUint64(ph(loads[0]) + 16, 0x0000900000000000n, true)), /p_vaddr is not a canonical x86_64 address/);
    imageError(patched((d, ph, loads) => d.setBigUint64(ph(loads[0]) + 16, 0x00007ffffffff000n, true)), /its last byte 0x80000000[0-9a-f]+ is not a canonical/);
  });

  test('overlapping LOAD segments name both', () => {
    imageError(patched((d, ph, loads) => d.setBigUint64(ph(loads[1]) + 16, d.getBigUint64(ph(loads[0]) + 16, true) + 0x10n, true)),
      /LOAD segments 0 \[0xffffffff81000000, 0x[0-9a-f]+\) and 1 \[0xffffffff81000010, 0x[0-9a-f]+\) overlap/);
  });

  test('kprobe-run run / info: one image error line naming the file and the field, exit 1', async () => {
    const cases: [string, Uint8Array, RegExp][] = [
      ['entry.elf', patched(d => d.setBigUint64(24, 0x8000000000000000n, true)), /e_entry 0x8000000000000000/],
      ['seg.elf', patched((d, ph, loads) => d.setBigUint64(ph(loads[0]) + 16, 0xffffffffffffffffn, true)), /p_vaddr 0xffffffffffffffff.*wraps/],
    ];
    for (const [name, bytes, pattern] of cases) {
      const path = join(tmp, name);
      writeFileSync(path, bytes);
      for (const cmd of ['run', 'info']) {
        const c = captureIo();
        const code = await runCli([cmd, path], c.io);
        assert.equal(code, 1, `${cmd} ${name}`);
        assert.equal(c.stdout(), '');
        assert.ok(c.stderr().startsWith(`kprobe-run: ${path}: `), c.stderr());
        assert.match(c.stderr(), pattern);
        assert.ok(!c.stderr().includes('internal error'), c.stderr());
      }
    }
  });
});
