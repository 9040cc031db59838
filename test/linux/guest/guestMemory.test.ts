/**
 * GuestMemory's page walk over hand-built x86_64 tables (the SDM's 4-level
 * format): a 4 KiB page, a 2 MiB page, a 1 GiB page, a read crossing from
 * one page into another mapped elsewhere, a page not present and a table
 * outside RAM (GuestReadError naming the address, never a host exception),
 * and findKernel() finding linux_banner at a 2 MiB shift from its link
 * address (a kernel loaded away from it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Memory, PERM_R, PERM_W } from '../../../emulator/memory/memory';
import { GuestMemory, GuestReadError, START_KERNEL_MAP, findKernel } from '../../../emulator/system/guest/guestMemory';

const P = 1n, RW = 2n, PS = 0x80n;

function ram(mib: number): Memory {
  const m = new Memory('physical');
  m.map(0, mib << 20, PERM_R | PERM_W, 'RAM');
  return m;
}
const set = (m: Memory, table: number, index: bigint, value: bigint): void => m.write64(table + Number(index) * 8, value);
const idx = (va: bigint, level: number): bigint => (va >> BigInt(12 + 9 * level)) & 0x1ffn;

test('GuestMemory walks 4 KiB, 2 MiB and 1 GiB pages and reads across a page boundary', () => {
  const m = ram(8);
  const pgd = 0x1000, pud = 0x2000, pmd = 0x3000, pt = 0x4000;
  const va4k = 0xffffc90000001000n, va2m = 0xffffc90000200000n, va1g = 0xffff888000000000n;
  set(m, pgd, idx(va4k, 3), BigInt(pud) | P | RW);
  set(m, pud, idx(va4k, 2), BigInt(pmd) | P | RW);
  set(m, pmd, idx(va4k, 1), BigInt(pt) | P | RW);
  set(m, pt, idx(va4k, 0), 0x5000n | P | RW); // va4k -> 0x5000
  set(m, pt, idx(va4k + 0x1000n, 0), 0x9000n | P | RW); // the next page somewhere else
  set(m, pmd, idx(va2m, 1), 0x400000n | P | RW | PS); // 2 MiB at 4 MiB
  set(m, pgd, idx(va1g, 3), 0x6000n | P | RW);
  set(m, 0x6000, idx(va1g, 2), 0n | P | RW | PS); // 1 GiB at 0
  m.writeBytes(0x5ffc, new Uint8Array([1, 2, 3, 4]));
  m.writeBytes(0x9000, new Uint8Array([5, 6, 7, 8]));
  m.writeBytes(0x400123, new TextEncoder().encode('two megs\0'));
  const g = new GuestMemory(m, { pgd: BigInt(pgd), physBase: 0n });
  assert.equal(g.translate(va4k + 0xabcn), 0x5abcn);
  assert.deepEqual([...g.bytes(va4k + 0xffcn, 8)], [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(g.cstring(va2m + 0x123n), 'two megs');
  assert.equal(g.translate(va1g + 0x5ffcn), 0x5ffcn);
  assert.equal(g.u32(va1g + 0x9000n), 0x08070605);
  assert.throws(() => g.u64(va4k + 0x2000n), (e: unknown) => e instanceof GuestReadError && /0xffffc90000003000: not mapped/.test(e.message));
  set(m, pgd, 0x1ffn, 0x7ff000000n | P); // a table far outside the 8 MiB of RAM
  assert.throws(() => g.u8(0xffffffff80000000n), (e: unknown) => e instanceof GuestReadError && /outside RAM/.test(e.message));
});

test('findKernel reads where the kernel sits: linux_banner at a 2 MiB shift from its link address', () => {
  const m = ram(32);
  const banner = START_KERNEL_MAP + 0x1100000n, pgd = START_KERNEL_MAP + 0x1a10000n;
  const shift = 0x400000n;
  m.writeBytes(Number(banner - START_KERNEL_MAP + shift), new TextEncoder().encode('Linux version 6.1.0 (x)'));
  const place = findKernel(m, { addressOf: n => (n === 'linux_banner' ? banner : n === 'init_top_pgt' ? pgd : undefined) });
  assert.deepEqual(place, { physBase: shift, pgd: pgd - START_KERNEL_MAP + shift });
  assert.throws(() => findKernel(ram(32), { addressOf: n => (n === 'linux_banner' ? banner : n === 'init_top_pgt' ? pgd : undefined) }), /no copy of the vmlinux's linux_banner/);
  assert.throws(() => findKernel(m, { addressOf: () => undefined }), /not an x86_64 Linux vmlinux/);
});
