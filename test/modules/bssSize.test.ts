/**
 * A module whose sections claim more than the module area (a mutated
 * .bss size, as a fuzzer makes it): refused as Linux refuses it when
 * module_alloc fails — "Cannot allocate memory" (-ENOMEM), nothing loaded,
 * no host memory spent — whether the claim is 2 GiB or 1 TiB. A large
 * .bss that fits is loaded and costs the host nothing until written.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';

const KERNEL = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const HELLO = repoPath('test', 'fixtures', 'modules', 'bin', 'hello-x86_64-clang.ko');
const MiB = 1 << 20;

/** hello.ko with its .bss section header claiming `size` bytes */
function withBss(size: bigint): Uint8Array {
  const b = new Uint8Array(readFileSync(HELLO));
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const shoff = Number(dv.getBigUint64(0x28, true));
  const shentsize = dv.getUint16(0x3a, true), shnum = dv.getUint16(0x3c, true), shstrndx = dv.getUint16(0x3e, true);
  const strOff = Number(dv.getBigUint64(shoff + shstrndx * shentsize + 0x18, true));
  for (let i = 0; i < shnum; i++) {
    const h = shoff + i * shentsize;
    const nameAt = strOff + dv.getUint32(h, true);
    const name = Buffer.from(b.subarray(nameAt, b.indexOf(0, nameAt))).toString();
    if (name === '.bss') { dv.setBigUint64(h + 0x20, size, true); return b; }
  }
  throw new Error('hello.ko has no .bss');
}

function boot(): { m: Machine; log: string[] } {
  const m = new Machine(loadElf(KERNEL), { cpus: 1 });
  const log: string[] = [];
  m.onPrintk(r => log.push(r.text));
  return { m, log };
}

describe('module sections larger than the module area', () => {
  for (const [what, size] of [['2 GiB', 2n << 30n], ['1 TiB', 1n << 40n]] as const) {
    test(`a .bss of ${what}: -ENOMEM (Cannot allocate memory), nothing loaded, the next module loads`, () => {
      const { m, log } = boot();
      const rss = process.memoryUsage().rss;
      let msg = '';
      assert.throws(() => m.modules.load(withBss(size), HELLO, []), (e: unknown) => { msg = e instanceof Error ? e.message : String(e); return true; });
      assert.match(msg, /^hello: module_alloc of its core \(\d+ MiB\) failed: larger than the module area \(1024 MiB\) \(Cannot allocate memory, err -12\)$/);
      assert.doesNotMatch(msg, /typed array/i);
      assert.ok(process.memoryUsage().rss - rss < 128 * MiB, 'no host memory spent on the refused module');
      assert.equal(m.modules.get('hello'), undefined, 'nothing loaded');
      assert.equal(m.kernel.image.symbols.lookup('hello_helper'), undefined);
      // the kernel is intact: the unmutated module loads and runs its init
      let done: string | null | undefined;
      m.modules.load(new Uint8Array(readFileSync(HELLO)), HELLO, [], e => { done = e; });
      for (let i = 0; i < 400 && done === undefined; i++) m.runSlice(20_000);
      assert.equal(done, null);
      assert.ok(log.includes('hello: init two 25'), log.join('\n'));
    });
  }

  test('a .bss of 512 MiB fits: loaded, init runs, the host pays for no untouched page', () => {
    const { m, log } = boot();
    const rss = process.memoryUsage().rss;
    let done: string | null | undefined;
    m.modules.load(withBss(512n << 20n), HELLO, [], e => { done = e; });
    for (let i = 0; i < 400 && done === undefined; i++) m.runSlice(20_000);
    assert.equal(done, null);
    assert.ok(log.includes('hello: init two 25'), log.join('\n'));
    const grown = process.memoryUsage().rss - rss;
    assert.ok(grown < 128 * MiB, `host resident memory grew by ${Math.round(grown / MiB)} MiB for a 512 MiB .bss`);
  });
});
