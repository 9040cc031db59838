/**
 * The committed example kernel images must match their sources:
 * examples/kernel/build/MANIFEST.sha256 (written by examples/kernel/build.sh)
 * lists the sha256 of every source input and of each image. A source edited
 * without a rebuild, a new source file, or a missing image fails here.
 * Needs no compiler.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from '../../util/paths';

const EXAMPLES = repoPath('examples');
const MANIFEST = join(EXAMPLES, 'kernel', 'build', 'MANIFEST.sha256');
const ARCHES: ReadonlyArray<{ arch: string; machine: number }> = [
  { arch: 'x86_64', machine: 62 },
  { arch: 'aarch64', machine: 183 },
  { arch: 'riscv64', machine: 243 },
];

interface ManifestEntry {
  hash: string;
  path: string; // relative to examples/
  line: number;
}

function readManifest(): ManifestEntry[] {
  assert.ok(existsSync(MANIFEST), `${MANIFEST} is missing: run examples/kernel/build.sh`);
  const out: ManifestEntry[] = [];
  readFileSync(MANIFEST, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (text.trim() === '') return;
      const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(text);
      assert.ok(m, `${MANIFEST}:${i + 1}: malformed line: ${JSON.stringify(text)}`);
      out.push({ hash: m[1], path: m[2], line: i + 1 });
    });
  return out;
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Every file build.sh treats as a source input, relative to examples/. */
function sourceInputs(): string[] {
  const kernel = readdirSync(join(EXAMPLES, 'kernel'))
    .filter((f) => /\.(c|h|lds)$/.test(f) || f === 'build.sh')
    .map((f) => `kernel/${f}`);
  const include = readdirSync(join(EXAMPLES, 'include'))
    .filter((f) => f.endsWith('.h'))
    .map((f) => `include/${f}`);
  return [...kernel, ...include].sort();
}

describe('example kernel images are fresh', () => {
  const entries = readManifest();
  const listed = new Set(entries.map((e) => e.path));

  test('every listed file exists and has the recorded sha256', () => {
    const stale: string[] = [];
    for (const e of entries) {
      const file = join(EXAMPLES, e.path);
      if (!existsSync(file)) {
        stale.push(`examples/${e.path} (listed at MANIFEST.sha256:${e.line}) is missing`);
        continue;
      }
      if (sha256(file) !== e.hash) stale.push(`examples/${e.path} changed since the last build`);
    }
    assert.deepEqual(stale, [], `${stale.join('; ')} - run examples/kernel/build.sh and commit its outputs`);
  });

  test('every source input is listed in the manifest', () => {
    const unlisted = sourceInputs().filter((p) => !listed.has(p));
    assert.deepEqual(unlisted, [], `not in MANIFEST.sha256 (new source without a rebuild?): ${unlisted.join(', ')}`);
    assert.ok(listed.has('include/kprobe_image.h'), 'MANIFEST.sha256 does not list include/kprobe_image.h');
  });

  for (const { arch, machine } of ARCHES) {
    test(`kernel-${arch}.elf exists, is listed and is an ELF64 for ${arch}`, () => {
      const rel = `kernel/build/kernel-${arch}.elf`;
      const file = join(EXAMPLES, rel);
      assert.ok(existsSync(file), `examples/${rel} is missing: run examples/kernel/build.sh`);
      assert.ok(listed.has(rel), `examples/${rel} is not listed in MANIFEST.sha256`);
      const head = readFileSync(file).subarray(0, 20);
      assert.deepEqual([...head.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46], `examples/${rel}: not an ELF file`);
      assert.equal(head[4], 2, `examples/${rel}: not ELFCLASS64`);
      assert.equal(head[5], 1, `examples/${rel}: not little-endian`);
      assert.equal(head.readUInt16LE(16), 2, `examples/${rel}: not ET_EXEC`);
      assert.equal(head.readUInt16LE(18), machine, `examples/${rel}: e_machine is not ${arch}`);
    });
  }
});
