/**
 * PCI configuration mechanism #1 with no devices: CONFIG_ADDRESS at 0xcf8
 * (a 32-bit register that reads back what was written, so Linux's
 * pci_check_type1() finds the mechanism) and CONFIG_DATA at 0xcfc..0xcff,
 * which read all ones for every bus/device/function ("no device": vendor
 * 0xffff) and drop writes. Byte and word accesses to 0xcf8..0xcfb do not
 * touch CONFIG_ADDRESS (only a dword access at 0xcf8 does), as on the
 * PIIX/ICH host bridges; a byte access at 0xcf9 is the chipset's reset
 * control register, when one is given.
 */
import type { PortDevice } from './ioBus';

export const PCI_CONFIG_ADDRESS = 0xcf8;

export class PciConfigNoDevices implements PortDevice {
  readonly name = 'pci-config';
  readonly byteWide = false;
  private address = 0;
  private bytesCf8 = [0, 0, 0, 0];

  constructor(private readonly resetControl: PortDevice | null = null) {}

  in(port: number, size: 1 | 2 | 4): number {
    if (port === 0xcf9 && size === 1 && this.resetControl) return this.resetControl.in(port, 1);
    if (port === PCI_CONFIG_ADDRESS && size === 4) return this.address;
    if (port < 0xcfc) {
      let v = 0;
      for (let i = 0; i < size; i++) v += (this.bytesCf8[(port - PCI_CONFIG_ADDRESS + i) & 3] ?? 0) * 2 ** (8 * i);
      return v;
    }
    return size === 4 ? 0xffffffff : size === 2 ? 0xffff : 0xff;
  }

  out(port: number, size: 1 | 2 | 4, value: number): void {
    if (port === 0xcf9 && size === 1 && this.resetControl) { this.resetControl.out(port, 1, value); return; }
    if (port === PCI_CONFIG_ADDRESS && size === 4) { this.address = (value & 0x80fffffc) >>> 0; return; }
    if (port < 0xcfc) for (let i = 0; i < size; i++) this.bytesCf8[(port - PCI_CONFIG_ADDRESS + i) & 3] = Math.floor(value / 2 ** (8 * i)) & 0xff;
  }

  /** the bus/device/function/register CONFIG_ADDRESS selects, with its enable bit */
  get selected(): { enabled: boolean; bus: number; device: number; fn: number; reg: number } {
    const a = this.address;
    return { enabled: (a & 0x80000000) !== 0, bus: (a >>> 16) & 0xff, device: (a >>> 11) & 0x1f, fn: (a >>> 8) & 7, reg: a & 0xfc };
  }
}
