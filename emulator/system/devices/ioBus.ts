/**
 * The PC's I/O port space: 64 Ki ports, each decoded by at most one
 * device. A byte-wide device (the UART, the PICs, the PIT, the RTC) sees a
 * 16- or 32-bit access as that many byte accesses at consecutive ports, as
 * the ISA bus splits it; a wider device (PCI configuration) sees the access
 * whole. A port nothing decodes reads as all ones and drops writes; each
 * such port is reported once (onUnknown), with what the CPU was doing if
 * the machine tells the bus (`where`).
 */
import type { IoPorts } from '../types';

export interface PortDevice {
  readonly name: string;
  /** true: accesses wider than a byte arrive as byte accesses at consecutive ports */
  readonly byteWide: boolean;
  in(port: number, size: 1 | 2 | 4): number;
  out(port: number, size: 1 | 2 | 4, value: number): void;
}

export type UnknownPortReport = (port: number, size: 1 | 2 | 4, write: boolean, value: number | undefined) => void;

const ONES = [0, 0xff, 0xffff, 0, 0xffffffff] as const;

export class IoBus implements IoPorts {
  private readonly owner: (PortDevice | undefined)[] = new Array(0x10000).fill(undefined);
  private readonly reported = new Set<number>();
  /** told once per port nothing decodes */
  onUnknown: UnknownPortReport | null = null;

  /** Decode ports [first, first + count) to `dev`; overlapping another device is an error. */
  register(first: number, count: number, dev: PortDevice): void {
    if (first < 0 || count < 1 || first + count > 0x10000) throw new RangeError(`${dev.name}: ports 0x${first.toString(16)}+${count} are outside the I/O space`);
    for (let p = first; p < first + count; p++) {
      const o = this.owner[p];
      if (o) throw new RangeError(`${dev.name}: port 0x${p.toString(16)} is already ${o.name}'s`);
    }
    for (let p = first; p < first + count; p++) this.owner[p] = dev;
  }

  /** the device decoding `port`, if any */
  deviceAt(port: number): PortDevice | undefined { return this.owner[port & 0xffff]; }

  in(port: number, size: 1 | 2 | 4): number {
    const dev = this.owner[port & 0xffff];
    if (!dev) return this.unknown(port, size, false, undefined);
    if (size === 1 || !dev.byteWide) return dev.in(port, size);
    let v = 0;
    for (let i = 0; i < size; i++) v += this.in((port + i) & 0xffff, 1) * 2 ** (8 * i);
    return v;
  }

  out(port: number, size: 1 | 2 | 4, value: number): void {
    const dev = this.owner[port & 0xffff];
    if (!dev) { this.unknown(port, size, true, value); return; }
    if (size === 1 || !dev.byteWide) { dev.out(port, size, value); return; }
    for (let i = 0; i < size; i++) this.out((port + i) & 0xffff, 1, Math.floor(value / 2 ** (8 * i)) & 0xff);
  }

  private unknown(port: number, size: 1 | 2 | 4, write: boolean, value: number | undefined): number {
    if (!this.reported.has(port)) {
      this.reported.add(port);
      this.onUnknown?.(port, size, write, value);
    }
    return ONES[size];
  }
}
