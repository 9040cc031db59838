/**
 * The full-system PC without a CPU: what the CPU side will see when it
 * plugs in — the loaded kernel and ACPI tables in physical memory, the
 * MMIO pages, the console on COM1, the timer interrupt reaching CPU 0
 * through the 8259s (acpi=off) and through the IO-APIC and local APIC
 * (ACPI), the reset and soft-off paths, unknown ports reported once.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PcMachine, type PcMachineOptions } from '../../emulator/system/pcMachine';
import { BootError } from '../../emulator/system/boot/setupHeader';
import { BP } from '../../emulator/system/boot/bootParams';
import { R } from '../../emulator/system/devices/localApic';
import { PM1A_CNT } from '../../emulator/system/devices/acpiPm';
import { cpio } from '../userspace/cpio';
import { bzImage } from './boot/syntheticBzImage';
import { debianKernel, busyboxInitramfs } from './linuxFiles';

const base = (over: Partial<PcMachineOptions> = {}): PcMachineOptions => ({
  kernel: { name: 'bzImage', data: bzImage() },
  initrd: { name: 'initrd', data: cpio([{ name: 'init', mode: 0o100755, data: '#!/bin/sh\n' }]) },
  cmdline: 'console=ttyS0 nokaslr',
  memoryMiB: 64,
  tscHz: 2_000_000_000n,
  apicTimerHz: 1_000_000_000n,
  ...over,
});
const outb = (m: PcMachine, port: number, v: number): void => m.io.out(port, 1, v);
/** Linux's init_8259A: vectors 0x30.. and 0x38.., all masked but IRQ0 */
function linuxPics(m: PcMachine): void {
  for (const [p, v] of [[0x20, 0x11], [0x21, 0x30], [0x21, 4], [0x21, 1], [0xa0, 0x11], [0xa1, 0x38], [0xa1, 2], [0xa1, 1], [0x21, 0xfe], [0xa1, 0xff]]) outb(m, p, v);
}
/** PIT channel 0, mode 2, 100 Hz */
function pit100Hz(m: PcMachine): void { outb(m, 0x43, 0x34); outb(m, 0x40, 0x9c); outb(m, 0x40, 0x2e); }

describe('PcMachine', () => {
  test('physical memory: the kernel at its load address, boot_params pointing at the ACPI RSDP in the BIOS area, the VGA window open bus', () => {
    const m = new PcMachine(base());
    const k = bzImage();
    assert.deepEqual(m.memory.readBytes(m.boot.loadAddress, 64), k.subarray(m.boot.header.kernelOffset, m.boot.header.kernelOffset + 64));
    assert.equal(m.memory.read64(m.boot.bootParams + BP.acpiRsdpAddr), 0xf0000n);
    assert.equal(new TextDecoder().decode(m.memory.readBytes(0xf0000, 8)), 'RSD PTR ');
    assert.equal(m.memory.read32(0xb8000), 0xffffffff);
    assert.equal(m.memory.read16(0x40e) << 4, 0x9fc00, 'BDA: the EBDA segment');
    assert.equal(m.memory.read16(0x413), 639, 'BDA: 639 KiB of conventional memory');
    assert.equal(m.entry.rip, BigInt(m.boot.loadAddress + 0x200));
  });

  test('the local APIC page answers with the current CPU\'s APIC; the IO-APIC page is there', () => {
    const m = new PcMachine(base());
    m.currentCpu = 1;
    assert.equal(m.memory.read32(0xfee00000 + R.id) >>> 24, 1);
    m.currentCpu = 0;
    assert.equal(m.memory.read32(0xfee00000 + R.id) >>> 24, 0);
    m.memory.write32(0xfec00000, 1);
    assert.equal(m.memory.read32(0xfec00010) & 0xff, 0x20);
  });

  test('COM1 is the console: THR bytes to the listeners, typed bytes in RBR', () => {
    const m = new PcMachine(base());
    const out: number[] = [];
    m.onConsole(b => out.push(b));
    for (const c of 'ok\n') outb(m, 0x3f8, c.charCodeAt(0));
    assert.equal(String.fromCharCode(...out), 'ok\n');
    m.consoleInput([0x6c, 0x73]);
    assert.equal(m.io.in(0x3fd, 1) & 1, 1);
    assert.equal(m.io.in(0x3f8, 1), 0x6c);
  });

  test('acpi=off, one CPU: the PIT\'s IRQ0 reaches CPU 0 through the 8259s and LINT0 (virtual wire)', () => {
    const m = new PcMachine(base({ acpi: false, cpus: 1 }));
    linuxPics(m);
    pit100Hz(m);
    const due = m.nextEventNs()!;
    assert.ok(due > 10_000_000n && due < 10_100_000n, `${due}`);
    m.advanceDevices(due - 1n);
    assert.equal(m.interruptLine(0).pendingVector(), -1);
    m.advanceDevices(due);
    assert.equal(m.interruptLine(0).pendingVector(), 0x30);
    m.interruptLine(0).acknowledge(0x30);
    outb(m, 0x20, 0x20);
    assert.equal(m.interruptLine(0).pendingVector(), -1);
  });

  test('ACPI, two CPUs: IRQ0 goes to IO-APIC pin 2 (the MADT override) and on to the local APIC named in the entry', () => {
    const m = new PcMachine(base());
    linuxPics(m);
    outb(m, 0x21, 0xff); // Linux masks the 8259s in APIC mode
    m.currentCpu = 1;
    m.memory.write32(0xfee00000 + R.svr, 0x1ff);
    m.memory.write32(0xfec00000, 0x10 + 2 * 2); m.memory.write32(0xfec00010, 0x31);
    m.memory.write32(0xfec00000, 0x11 + 2 * 2); m.memory.write32(0xfec00010, 1 << 24);
    pit100Hz(m);
    m.advanceDevices(m.nextEventNs()!);
    assert.equal(m.interruptLine(0).pendingVector(), -1);
    assert.equal(m.interruptLine(1).pendingVector(), 0x31);
  });

  test('a halted machine skips from event to event: the PIT at "100 Hz" (11932 ticks of 1.193182 MHz: 10.000151 ms) interrupts 99 times in a virtual second, at the same times every run', () => {
    const run = (): bigint[] => {
      const m = new PcMachine(base({ acpi: false, cpus: 1 }));
      linuxPics(m);
      pit100Hz(m);
      const times: bigint[] = [];
      for (;;) {
        const t = m.nextEventNs();
        assert.ok(t !== null && t >= m.clock.nowNs(), 'the next event is never in the past');
        if (t > 1_000_000_000n) break;
        m.advanceDevices(t);
        const line = m.interruptLine(0);
        if (line.pendingVector() === 0x30) { line.acknowledge(0x30); outb(m, 0x20, 0x20); times.push(t); }
      }
      return times;
    };
    const a = run();
    assert.equal(a.length, 99, 'the 100th edge comes at 1.0000159 s');
    assert.equal(a[1] - a[0], 10_000_151n);
    assert.deepEqual(run(), a);
  });

  test('the reset paths and ACPI soft-off stop the machine, saying which', () => {
    const a = new PcMachine(base());
    outb(a, 0xcf9, 0x06);
    assert.deepEqual(a.stopped, { kind: 'reset', via: 'cf9' });
    const b = new PcMachine(base());
    outb(b, 0x64, 0xfe);
    assert.deepEqual(b.stopped, { kind: 'reset', via: 'kbc' });
    const c = new PcMachine(base());
    c.io.out(PM1A_CNT, 2, (5 << 10) | (1 << 13));
    assert.deepEqual(c.stopped, { kind: 'poweroff' });
  });

  test('a port with no device is logged once, with where the CPU was', () => {
    const m = new PcMachine(base());
    const lines: string[] = [];
    m.onLog(l => lines.push(l));
    m.where = () => 'cpu0 rip 0xffffffff81234567';
    assert.equal(m.io.in(0x2f9, 1), 0xff);
    m.io.in(0x2f9, 1);
    assert.deepEqual(lines, ['no device at I/O port 0x2f9 (in, 1 byte) at cpu0 rip 0xffffffff81234567: reads all ones']);
  });

  test('an MSR the platform does not have is #GP and logged once per MSR and direction; IA32_APIC_BASE is there', () => {
    const m = new PcMachine(base());
    const lines: string[] = [];
    m.onLog(l => lines.push(l));
    m.where = () => 'cpu1 rip 0xffffffff81000123';
    assert.equal(m.msrs.rdmsr(1, 0xc0011029), undefined);
    assert.equal(m.msrs.rdmsr(1, 0xc0011029), undefined);
    assert.equal(m.msrs.wrmsr(1, 0xc0011029, 1n), false);
    assert.equal(m.msrs.rdmsr(1, 0x1b), 0xfee00800n);
    assert.deepEqual(lines, [
      'no MSR 0xc0011029 on this platform (rdmsr) at cpu1 rip 0xffffffff81000123: #GP',
      'no MSR 0xc0011029 on this platform (wrmsr 0x1) at cpu1 rip 0xffffffff81000123: #GP',
    ]);
  });

  test('bad setups: two CPUs without ACPI, a file that is not a bzImage', () => {
    assert.throws(() => new PcMachine(base({ acpi: false })), /--cpus 2 needs ACPI/);
    assert.throws(() => new PcMachine(base({ kernel: { name: 'vmlinux', data: new Uint8Array(4096) } })), BootError);
  });

  test('Debian\'s kernel and the busybox initramfs load into a 512 MiB machine', t => {
    const k = debianKernel(t), rd = busyboxInitramfs(t);
    if (!k || !rd) return;
    const m = new PcMachine(base({ kernel: { name: k.path, data: k.data }, initrd: { name: rd.path, data: rd.data }, memoryMiB: 512, cmdline: 'console=ttyS0 nokaslr panic=-1' }));
    assert.equal(m.entry.rip, 0x1000200n);
    assert.equal(m.boot.initrd?.format, 'gzip');
    assert.deepEqual(m.memory.readBytes(m.boot.initrd!.addr, 2), Uint8Array.of(0x1f, 0x8b));
  });
});
