/**
 * The I/O port bus (dispatch, byte splitting, unknown ports read all ones
 * and are reported once) and the small fixed-function ports: PCI
 * configuration with no devices, the reset paths, the POST code port.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { IoBus, type PortDevice } from '../../../emulator/system/devices/ioBus';
import { PciConfigNoDevices } from '../../../emulator/system/devices/pciConfig';
import { ResetControl, SystemControlA, KeyboardControllerReset, PostCodePort, type ResetReason } from '../../../emulator/system/devices/reset';

class Bytes implements PortDevice {
  readonly name = 'bytes';
  readonly byteWide = true;
  readonly seen: string[] = [];
  in(port: number): number { this.seen.push(`in ${port.toString(16)}`); return port & 0xff; }
  out(port: number, _s: 1 | 2 | 4, v: number): void { this.seen.push(`out ${port.toString(16)}=${v.toString(16)}`); }
}

describe('I/O port bus', () => {
  test('a wide access to a byte-wide device is byte accesses at consecutive ports, little-endian', () => {
    const bus = new IoBus(), d = new Bytes();
    bus.register(0x100, 4, d);
    assert.equal(bus.in(0x100, 4), 0x03020100);
    bus.out(0x102, 2, 0xbbaa);
    assert.deepEqual(d.seen.slice(4), ['out 102=aa', 'out 103=bb']);
  });

  test('an unknown port reads all ones for its size, drops writes, and is reported once', () => {
    const bus = new IoBus(), reports: string[] = [];
    bus.onUnknown = (p, s, w) => reports.push(`${w ? 'out' : 'in'} ${p.toString(16)}/${s}`);
    assert.equal(bus.in(0x2f8, 1), 0xff);
    assert.equal(bus.in(0x2f8, 2), 0xffff);
    assert.equal(bus.in(0x510, 4), 0xffffffff);
    bus.out(0x510, 1, 0);
    assert.deepEqual(reports, ['in 2f8/1', 'in 510/4']);
  });

  test('overlapping registrations are refused, naming both', () => {
    const bus = new IoBus();
    bus.register(0x3f8, 8, new Bytes());
    assert.throws(() => bus.register(0x3ff, 1, new PostCodePort()), /port 0x3ff is already bytes's/);
  });
});

describe('PCI configuration ports with no devices', () => {
  test('CONFIG_ADDRESS reads back a dword write (pci_check_type1), CONFIG_DATA reads all ones: vendor 0xffff everywhere', () => {
    const bus = new IoBus(), pci = new PciConfigNoDevices();
    bus.register(0xcf8, 8, pci);
    bus.out(0xcfb, 1, 0x01);
    bus.out(0xcf8, 4, 0x80000000);
    assert.equal(bus.in(0xcf8, 4), 0x80000000);
    for (const dev of [0, 1, 31]) {
      bus.out(0xcf8, 4, 0x80000000 | (dev << 11));
      assert.equal(bus.in(0xcfc, 4), 0xffffffff);
      assert.equal(bus.in(0xcfc, 2), 0xffff);
      assert.equal(bus.in(0xcfe, 1), 0xff);
    }
    bus.out(0xcf8, 4, 0x80001a0c);
    assert.deepEqual(pci.selected, { enabled: true, bus: 0, device: 3, fn: 2, reg: 0x0c });
    bus.out(0xcfc, 4, 0x12345678);
    assert.equal(bus.in(0xcfc, 4), 0xffffffff);
  });
});

describe('reset paths', () => {
  function withResets() {
    const resets: [ResetReason, boolean][] = [];
    const fn = (why: ResetReason, hard: boolean): void => { resets.push([why, hard]); };
    const bus = new IoBus();
    bus.register(0xcf8, 8, new PciConfigNoDevices(new ResetControl(fn)));
    bus.register(0x92, 1, new SystemControlA(fn));
    const kbc = new KeyboardControllerReset(fn);
    bus.register(0x60, 1, kbc);
    bus.register(0x64, 1, kbc);
    bus.register(0x80, 1, new PostCodePort());
    return { bus, resets };
  }
  test('0xcf9: SYS_RST alone arms, with RST_CPU it resets (hard); the register reads back', () => {
    const { bus, resets } = withResets();
    bus.out(0xcf9, 1, 0x02);
    assert.equal(bus.in(0xcf9, 1), 0x02);
    assert.deepEqual(resets, []);
    bus.out(0xcf9, 1, 0x06);
    assert.deepEqual(resets, [['cf9', true]]);
    bus.out(0xcf8, 4, 0x80000000);
    assert.equal(bus.in(0xcf8, 4), 0x80000000, 'a dword at 0xcf8 is still CONFIG_ADDRESS, not a reset');
    assert.equal(resets.length, 1);
  });
  test('0x92: a rising edge of bit 0 resets; A20 reads as on', () => {
    const { bus, resets } = withResets();
    assert.equal(bus.in(0x92, 1) & 0x02, 0x02);
    bus.out(0x92, 1, 0x03);
    bus.out(0x92, 1, 0x03);
    assert.deepEqual(resets, [['port92', false]]);
  });
  test('0x64: 0xfe pulses reset; no controller answers (reads all ones, so i8042 finds none); 0x80 takes writes quietly', () => {
    const { bus, resets } = withResets();
    assert.equal(bus.in(0x64, 1), 0xff);
    bus.out(0x64, 1, 0xad);
    bus.out(0x60, 1, 0xfe);
    assert.deepEqual(resets, []);
    bus.out(0x64, 1, 0xfe);
    assert.deepEqual(resets, [['kbc', true]]);
    bus.out(0x80, 1, 0x12);
  });
});
