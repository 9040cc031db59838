/**
 * The 64-bit bzImage loader (emulator/system/boot/): the x86 boot
 * protocol's setup header read from Debian's real kernel and from
 * synthetic images, boot_params as the kernel reads it, the identity map
 * walked as the MMU would, and one clear line for each bad input.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseSetupHeader, BootError, XLF_KERNEL_64 } from '../../../emulator/system/boot/setupHeader';
import { planLinuxBoot, applyBootPlan, inRam, type LinuxBootRequest } from '../../../emulator/system/boot/loader';
import { BP, LOADER_UNDEFINED } from '../../../emulator/system/boot/bootParams';
import { E820_RAM } from '../../../emulator/system/boot/e820';
import { initrdFormat } from '../../../emulator/system/boot/initrd';
import { Memory, PERM_R, PERM_W, PERM_X } from '../../../emulator/memory/memory';
import { cpio } from '../../userspace/cpio';
import { debianKernel, busyboxInitramfs } from '../linuxFiles';
import { gzipSync } from 'node:zlib';
import { bzImage } from './syntheticBzImage';

const MIB = 1024 * 1024;

const newc = (): Uint8Array => cpio([{ name: 'init', mode: 0o100755, data: '#!/bin/sh\n' }]);
const req = (over: Partial<LinuxBootRequest> = {}): LinuxBootRequest => ({
  kernel: { name: 'bzImage', data: bzImage() },
  initrd: { name: 'initrd.cpio', data: newc() },
  cmdline: 'console=ttyS0 nokaslr acpi=off',
  memoryBytes: 64 * MIB,
  ...over,
});
/** the one line a bad input gives */
function bootError(f: () => unknown): string {
  try { f(); } catch (e) {
    assert.ok(e instanceof BootError, `not a BootError: ${e}`);
    assert.ok(!e.message.includes('\n'), e.message);
    return e.message;
  }
  assert.fail('no error');
}

/** The physical address `va` maps to through the 4-level tables at cr3 (2 MiB pages), or undefined. */
function walk(mem: Memory, cr3: bigint, va: number): number | undefined {
  let table = Number(cr3 & ~0xfffn);
  const idx = [39, 30, 21].map(s => Math.floor(va / 2 ** s) % 512);
  for (let level = 0; level < 3; level++) {
    const e = mem.read64(table + idx[level] * 8);
    if (!(e & 1n)) return undefined;
    if (level === 2) {
      assert.ok(e & 0x80n, 'the PD entry is a 2 MiB page');
      return Number(e & 0xfffffffe00000n) + va % (2 * MIB);
    }
    assert.equal(e & 0x80n, 0n, 'no 1 GiB pages: the CPU need not offer them');
    table = Number(e & 0xffffffffff000n);
  }
  return undefined;
}

function ram(plan: ReturnType<typeof planLinuxBoot>): Memory {
  const mem = new Memory('physical');
  for (const e of plan.e820) if (e.type === E820_RAM) mem.map(e.addr, e.size, PERM_R | PERM_W | PERM_X, `ram@${e.addr.toString(16)}`);
  return mem;
}

describe('bzImage loader: Debian\'s kernel', () => {
  test('the setup header: protocol >= 2.12 with a 64-bit entry, relocatable, its version string', t => {
    const k = debianKernel(t);
    if (!k) return;
    const h = parseSetupHeader(k.path, k.data);
    assert.ok(h.version >= 0x020c, h.version.toString(16));
    assert.ok(h.xloadflags & XLF_KERNEL_64);
    assert.ok(h.relocatable);
    assert.equal(h.prefAddress % BigInt(h.kernelAlignment), 0n);
    assert.ok(h.initSize > h.syssize * 16, 'init_size covers the decompressed kernel, more than the compressed one');
    assert.equal(h.kernelOffset + h.syssize * 16, k.data.length, 'setup + syssize paragraphs is the whole file');
    assert.match(h.kernelVersion, /^6\.1\.0-\d+-cloud-amd64 \(debian-kernel@lists\.debian\.org\) #1 SMP/);
  });

  test('the plan: kernel at pref_address, startup_64 at +0x200, boot_params as the kernel reads it, initrd at the top of low RAM', t => {
    const k = debianKernel(t), rd = busyboxInitramfs(t);
    if (!k || !rd) return;
    const cmdline = 'console=ttyS0 nokaslr acpi=off panic=-1';
    const plan = planLinuxBoot({ kernel: { name: k.path, data: k.data }, initrd: { name: rd.path, data: rd.data }, cmdline, memoryBytes: 512 * MIB });
    const h = plan.header;
    assert.equal(plan.loadAddress, Number(h.prefAddress));
    assert.equal(plan.entry.rip, h.prefAddress + 0x200n);
    assert.equal(plan.entry.rsi, BigInt(plan.bootParams));
    assert.equal(plan.initrd?.format, 'gzip');
    assert.equal(plan.initrd!.addr % 4096, 0);
    assert.ok(plan.initrd!.addr + rd.data.length <= 512 * MIB && plan.initrd!.addr + rd.data.length > 512 * MIB - 4096);
    assert.ok(plan.initrd!.addr >= plan.kernelEnd);
    for (const w of plan.writes) assert.ok(inRam(plan, w.addr, w.bytes.length), `${w.what} at 0x${w.addr.toString(16)} is in E820 RAM`);

    const mem = ram(plan);
    applyBootPlan(mem, plan);
    const bp = plan.bootParams;
    // the kernel's own view: the header copied in, the loader's fields set
    assert.equal(new TextDecoder().decode(mem.readBytes(bp + 0x202, 4)), 'HdrS');
    assert.equal(mem.read16(bp + 0x206), h.version);
    assert.equal(mem.read8(bp + BP.typeOfLoader), LOADER_UNDEFINED);
    const cmdAt = mem.read32(bp + BP.cmdLinePtr) + mem.read32(bp + BP.extCmdLinePtr) * 2 ** 32;
    assert.equal(new TextDecoder().decode(mem.readBytes(cmdAt, cmdline.length + 1)), cmdline + '\0');
    const rdAt = mem.read32(bp + BP.ramdiskImage) + mem.read32(bp + BP.extRamdiskImage) * 2 ** 32;
    assert.equal(mem.read32(bp + BP.ramdiskSize), rd.data.length);
    assert.deepEqual(mem.readBytes(rdAt, 16), rd.data.subarray(0, 16));
    const n = mem.read8(bp + BP.e820Entries);
    const e820 = Array.from({ length: n }, (_, i) => ({
      addr: Number(mem.read64(bp + BP.e820Table + i * 20)), size: Number(mem.read64(bp + BP.e820Table + i * 20 + 8)), type: mem.read32(bp + BP.e820Table + i * 20 + 16),
    }));
    assert.deepEqual(e820, plan.e820);
    assert.equal(e820.filter(e => e.type === E820_RAM).reduce((a, e) => a + e.size, 0), 0x9fc00 + 511 * MIB, 'all RAM but the EBDA and the BIOS area');
    // the protected-mode kernel, byte for byte, where startup_64 will run
    assert.deepEqual(mem.readBytes(plan.loadAddress, 4096), k.data.subarray(h.kernelOffset, h.kernelOffset + 4096));
    // the identity map covers the kernel, boot_params, the command line and the initrd
    for (const a of [plan.loadAddress + 0x200, plan.kernelEnd - 1, bp, cmdAt, rdAt, rdAt + rd.data.length - 1]) {
      assert.equal(walk(mem, plan.entry.cr3, a), a);
    }
  });
});

describe('bzImage loader: the 64-bit entry state', () => {
  test('long mode: CR0.PE|PG, CR4.PAE, EFER.LME|LMA; CS = __BOOT_CS a flat 64-bit code segment in the loaded GDT', () => {
    const plan = planLinuxBoot(req());
    const e = plan.entry;
    assert.equal(e.cr0 & 0x80000001n, 0x80000001n);
    assert.equal(e.cr4 & 0x20n, 0x20n);
    assert.equal(e.efer & 0x500n, 0x500n);
    assert.equal(e.rflags & 0x200n, 0n, 'interrupts off');
    assert.equal(e.cs.selector, 0x10);
    assert.equal(e.ds.selector, 0x18);
    const mem = ram(plan);
    applyBootPlan(mem, plan);
    const cs = mem.read64(Number(e.gdtr.base) + e.cs.selector);
    assert.equal((cs >> 53n) & 1n, 1n, 'L');
    assert.equal((cs >> 54n) & 1n, 0n, 'D clear with L');
    assert.equal((cs >> 47n) & 1n, 1n, 'present');
    assert.equal((cs >> 43n) & 1n, 1n, 'code');
    assert.equal((cs >> 45n) & 3n, 0n, 'DPL 0');
    assert.ok(e.gdtr.limit >= e.ds.selector + 7);
    assert.equal(walk(mem, e.cr3, 0xfee00000), 0xfee00000, 'the first 4 GiB: the local APIC too');
    assert.equal(walk(mem, e.cr3, 0x100000000), undefined);
  });

  test('a non-relocatable kernel goes to its pref_address; a relocatable one with pref_address 0 to 2 MiB alignment above 1 MiB', () => {
    assert.equal(planLinuxBoot(req({ kernel: { name: 'k', data: bzImage({ relocatable: false, pref: 0x1400000n }) } })).loadAddress, 0x1400000);
    assert.equal(planLinuxBoot(req({ kernel: { name: 'k', data: bzImage({ pref: 0n }) } })).loadAddress, 0x200000);
  });

  test('no initrd: boot_params says none', () => {
    const plan = planLinuxBoot(req({ initrd: undefined }));
    const bp = plan.writes.find(w => w.what === 'boot_params')!.bytes;
    const dv = new DataView(bp.buffer);
    assert.equal(dv.getUint32(BP.ramdiskImage, true), 0);
    assert.equal(dv.getUint32(BP.ramdiskSize, true), 0);
  });

  test('RAM beyond 3 GiB continues at 4 GiB; the initrd stays below initrd_addr_max', () => {
    const plan = planLinuxBoot(req({ memoryBytes: 4096 * MIB }));
    assert.deepEqual(plan.e820.at(-1), { addr: 0x100000000, size: 1024 * MIB, type: E820_RAM });
    assert.ok(plan.initrd!.addr + plan.initrd!.size <= 0x80000000);
  });
});

describe('bzImage loader: bad input, one line each', () => {
  test('an ELF vmlinux', () => {
    const elf = new Uint8Array(64);
    elf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
    new DataView(elf.buffer).setUint16(18, 62, true);
    assert.match(bootError(() => planLinuxBoot(req({ kernel: { name: 'vmlinux', data: elf } }))), /^vmlinux: is an ELF file \(x86_64\), not a bzImage/);
  });
  test('an arm64 Image and a riscv64 Image', () => {
    const arm = new Uint8Array(0x1000);
    new DataView(arm.buffer).setUint32(0x38, 0x644d5241, true);
    assert.match(bootError(() => planLinuxBoot(req({ kernel: { name: 'Image', data: arm } }))), /^Image: is an arm64 kernel Image/);
    const rv = new Uint8Array(0x1000);
    new DataView(rv.buffer).setUint32(0x38, 0x05435352, true);
    assert.match(bootError(() => planLinuxBoot(req({ kernel: { name: 'Image', data: rv } }))), /riscv64 kernel Image/);
  });
  test('random bytes, a tiny file', () => {
    assert.match(bootError(() => planLinuxBoot(req({ kernel: { name: 'x', data: new Uint8Array(4096).fill(0x41) } }))), /^x: is not an x86 bzImage \(no "HdrS"/);
    assert.match(bootError(() => planLinuxBoot(req({ kernel: { name: 'x', data: new Uint8Array(10) } }))), /10 bytes/);
  });
  test('boot protocol older than 2.12', () => {
    assert.match(bootError(() => planLinuxBoot(req({ kernel: { name: 'old', data: bzImage({ version: 0x020a }) } }))), /boot protocol 2\.10 is older than 2\.12/);
  });
  test('no 64-bit entry (XLF_KERNEL_64 clear)', () => {
    assert.match(bootError(() => planLinuxBoot(req({ kernel: { name: 'k32', data: bzImage({ xloadflags: 0 }) } }))), /no 64-bit entry point \(xloadflags 0x0000 lacks XLF_KERNEL_64\)/);
  });
  test('a truncated image (syssize beyond the file)', () => {
    assert.match(bootError(() => planLinuxBoot(req({ kernel: { name: 'k', data: bzImage({ truncate: 3000 }) } }))), /truncated: the setup header says \d+ bytes .* the file has 3000/);
  });
  test('a command line over cmdline_size', () => {
    const ok = 'x'.repeat(255);
    assert.doesNotThrow(() => planLinuxBoot(req({ cmdline: ok, kernel: { name: 'k', data: bzImage({ cmdlineSize: 255 }) } })));
    assert.match(bootError(() => planLinuxBoot(req({ cmdline: ok + 'y', kernel: { name: 'k', data: bzImage({ cmdlineSize: 255 }) } }))), /the command line is 256 bytes; this kernel takes at most 255 \(cmdline_size\)/);
  });
  test('an initrd that is not a cpio (the formats the kernel unpacks are accepted)', () => {
    assert.match(bootError(() => planLinuxBoot(req({ initrd: { name: 'rootfs.ext4', data: new Uint8Array(4096).fill(0x53) } }))), /^rootfs\.ext4: is not an initramfs: it starts 53 53 53 53 53 53/);
    assert.match(bootError(() => planLinuxBoot(req({ initrd: { name: 'empty', data: new Uint8Array(0) } }))), /empty/);
    assert.equal(initrdFormat('a', newc()), 'cpio newc');
    assert.equal(initrdFormat('a', gzipSync(newc())), 'gzip');
    assert.equal(initrdFormat('a', Uint8Array.of(0x02, 0x21, 0x4c, 0x18, 0)), 'lz4 (legacy)');
    assert.equal(initrdFormat('a', Uint8Array.of(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00)), 'xz');
    assert.equal(initrdFormat('a', Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd)), 'zstd');
  });
  test('--memory too small for init_size, and for init_size + the initrd', () => {
    const k = bzImage({ initSize: 40 * MIB });
    assert.match(bootError(() => planLinuxBoot(req({ kernel: { name: 'k', data: k }, initrd: undefined, memoryBytes: 32 * MIB }))), /--memory 32 MiB is too small: the kernel needs \[0x1000000, \+init_size 0x2800000\): at least 56 MiB/);
    const big = new Uint8Array(8 * MIB); big.set(newc());
    assert.doesNotThrow(() => planLinuxBoot(req({ kernel: { name: 'k', data: k }, initrd: undefined, memoryBytes: 56 * MIB })));
    assert.match(bootError(() => planLinuxBoot(req({ kernel: { name: 'k', data: k }, initrd: { name: 'rd', data: big }, memoryBytes: 60 * MIB }))), /and the initrd 8388608 bytes above it: at least 64 MiB/);
  });
});
