/**
 * The artefacts of test/linux/kbuild/: Linux's samples/kprobes modules built
 * with Kbuild against Debian's own headers (fetch-headers.sh,
 * build-samples.sh) and the cpio that adds them to the initramfs
 * (modules-cpio.sh). Debian's kernel loads a module only when its vermagic
 * string equals the kernel's own, so the oracle is a module Debian built for
 * that kernel (test/linux/fetch-kernel.sh's cache): its .modinfo vermagic.
 *
 * Nothing is fetched or built here: outside CI a missing cache is a skip that
 * says what to run; in CI (CI=true) the fetch/build steps run first, so a
 * missing artefact fails.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseElf } from '../../../emulator/elf/elfFile';
import { ElfImage } from '../../../emulator/elf/types';
import { repoPath } from '../../util/paths';
import { unfetched } from '../../util/fetched';

const KBUILD = repoPath('test', 'linux', 'kbuild');
const MODULES = join(KBUILD, 'cache', 'modules');
const KERNEL = repoPath('test', 'linux', 'cache', 'kernel');
const SAMPLES = ['kprobe_example', 'kretprobe_example'];
const EM_X86_64 = 62;
const ET_REL = 1;
const RUN = 'test/linux/fetch-kernel.sh; test/linux/kbuild/fetch-headers.sh; test/linux/kbuild/build-samples.sh; test/linux/kbuild/modules-cpio.sh';

function unavailable(t: { skip(msg: string): void }, what: string): void {
  const why = `${what} (run ${RUN})`;
  unfetched(t, why);
}

/** the key=value strings of a module's .modinfo (NUL-separated) */
function modinfo(image: ElfImage): Map<string, string[]> {
  const s = image.section('.modinfo');
  assert.ok(s, `${image.path}: no .modinfo section`);
  const info = new Map<string, string[]>();
  for (const kv of Buffer.from(s.data).toString('latin1').split('\0')) {
    const eq = kv.indexOf('=');
    if (eq <= 0) continue;
    const k = kv.slice(0, eq);
    info.set(k, [...(info.get(k) ?? []), kv.slice(eq + 1)]);
  }
  return info;
}

/** the first module (in C-locale path order) Debian built for the fetched kernel */
function debianModule(): string | undefined {
  if (!existsSync(join(KERNEL, 'RELEASE'))) return undefined;
  const root = join(KERNEL, 'lib', 'modules', readFileSync(join(KERNEL, 'RELEASE'), 'utf8').trim(), 'kernel');
  const walk = (dir: string): string | undefined => {
    const names = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of names) {
      const p = join(dir, e.name);
      if (e.isFile() && e.name.endsWith('.ko')) return p;
      if (e.isDirectory()) {
        const found = walk(p);
        if (found) return found;
      }
    }
    return undefined;
  };
  return existsSync(root) ? walk(root) : undefined;
}

interface CpioEntry { name: string; mode: number; mtime: number; uid: number; gid: number; data: Buffer }

/** a newc archive's entries up to its TRAILER!!!, checking the magic and the 4-byte alignment as Linux's unpacker does */
function readNewc(raw: Buffer): CpioEntry[] {
  const entries: CpioEntry[] = [];
  let at = 0;
  const align = (n: number) => (n + 3) & ~3;
  for (;;) {
    assert.equal(raw.toString('latin1', at, at + 6), '070701', `newc magic at offset ${at}`);
    const field = (i: number) => parseInt(raw.toString('latin1', at + 6 + 8 * i, at + 14 + 8 * i), 16);
    const namesize = field(11);
    const size = field(6);
    const name = raw.toString('latin1', at + 110, at + 110 + namesize - 1);
    const dataAt = align(at + 110 + namesize);
    if (name === 'TRAILER!!!') break;
    entries.push({ name, mode: field(1), uid: field(2), gid: field(3), mtime: field(5), data: raw.subarray(dataAt, dataAt + size) });
    at = align(dataAt + size);
  }
  return entries;
}

describe('test/linux/kbuild: Linux kprobes samples built for Debian kernel', () => {
  for (const name of SAMPLES) {
    test(`${name}.ko is an x86-64 relocatable object whose vermagic is the kernel's`, (t) => {
      const ko = join(MODULES, `${name}.ko`);
      if (!existsSync(ko)) return unavailable(t, `no test/linux/kbuild/cache/modules/${name}.ko`);
      const ref = debianModule();
      if (!ref) return unavailable(t, 'no Debian kernel modules in test/linux/cache/kernel');
      const image = parseElf(readFileSync(ko), ko);
      assert.equal(image.elfClass, 64);
      assert.equal(image.endian, 'little');
      assert.equal(image.machine, EM_X86_64);
      assert.equal(image.type, ET_REL);
      assert.ok(image.section('.gnu.linkonce.this_module'), 'the struct module Kbuild links in');
      const info = modinfo(image);
      const want = modinfo(parseElf(readFileSync(ref), ref)).get('vermagic');
      assert.equal(want?.length, 1, `${ref}: one vermagic`);
      assert.deepEqual(info.get('vermagic'), want, `vermagic of ${name}.ko vs ${ref}`);
      assert.deepEqual(info.get('name'), [name]);
      assert.deepEqual(info.get('license'), ['GPL']);
    });
  }

  test('samples.cpio.gz holds the two modules byte for byte under lib/modules/samples, sorted, owner 0, mtime 0', (t) => {
    const cpio = join(KBUILD, 'cache', 'samples.cpio.gz');
    if (!existsSync(cpio)) return unavailable(t, 'no test/linux/kbuild/cache/samples.cpio.gz');
    const entries = readNewc(gunzipSync(readFileSync(cpio)));
    assert.deepEqual(entries.map(e => e.name), [
      'lib', 'lib/modules', 'lib/modules/samples',
      ...SAMPLES.map(n => `lib/modules/samples/${n}.ko`),
    ]);
    for (const e of entries) {
      assert.deepEqual([e.uid, e.gid, e.mtime], [0, 0, 0], e.name);
      if (e.name.endsWith('.ko')) {
        assert.equal(e.mode, 0o100644, e.name);
        assert.ok(e.data.equals(readFileSync(join(MODULES, e.name.slice('lib/modules/samples/'.length)))), `${e.name}: the built module's bytes`);
      } else {
        assert.equal(e.mode, 0o040755, e.name);
      }
    }
  });
});
