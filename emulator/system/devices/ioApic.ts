/**
 * The I/O APIC (Intel 82093AA register interface, version 0x20 as on the
 * ICH chipsets: with the EOI register) at 0xfec00000: IOREGSEL at 0x00
 * selects a register, IOWIN at 0x10 reads / writes it; registers ID (0),
 * version (1: 24 redirection entries), arbitration ID (2), and the
 * redirection table (0x10 + 2n: vector, delivery mode, logical
 * destination, delivery status, polarity, remote IRR, trigger mode, mask;
 * 0x11 + 2n: destination). An edge-triggered pin sends a message on its
 * active edge (lost while masked); a level-triggered one sends while
 * asserted and sets remote IRR until the local APIC's EOI for its vector
 * comes back (the broadcast, or the EOI register at 0x40), then sends
 * again if still asserted.
 */
import type { Device } from '../../memory/memory';
import { ApicBus, DeliveryMode, Shorthand, type EoiListener } from './apicBus';

export const IOAPIC_DEFAULT_BASE = 0xfec00000;
export const IOAPIC_PINS = 24;
export const IOAPIC_VERSION = 0x20 | ((IOAPIC_PINS - 1) << 16);
export const RTE_MASKED = 1 << 16, RTE_LEVEL = 1 << 15, RTE_REMOTE_IRR = 1 << 14, RTE_ACTIVE_LOW = 1 << 13, RTE_PENDING = 1 << 12, RTE_LOGICAL = 1 << 11;

export class IoApic implements Device, EoiListener {
  private regsel = 0;
  private id = 0;
  private readonly lo = new Uint32Array(IOAPIC_PINS).fill(RTE_MASKED);
  private readonly hi = new Uint32Array(IOAPIC_PINS);
  /** the pins' input levels as wired (before the polarity) */
  private readonly levels = new Array<boolean>(IOAPIC_PINS).fill(false);

  constructor(private readonly bus: ApicBus, apicId: number) {
    this.id = apicId;
    bus.listenEoi(this);
  }

  /** An input pin changed level. */
  setIrq(pin: number, level: boolean): void {
    if (pin < 0 || pin >= IOAPIC_PINS) return;
    const was = this.levels[pin];
    this.levels[pin] = level;
    const lo = this.lo[pin];
    const active = (l: boolean): boolean => ((lo & RTE_ACTIVE_LOW) ? !l : l);
    if (lo & RTE_LEVEL) this.service(pin);
    else if (active(level) && !active(was) && !(lo & RTE_MASKED)) this.send(pin);
  }

  /** the local APICs' EOI for `vector`: level entries with that vector may fire again */
  eoi(vector: number): void {
    for (let pin = 0; pin < IOAPIC_PINS; pin++) {
      if ((this.lo[pin] & 0xff) === vector && (this.lo[pin] & RTE_REMOTE_IRR)) {
        this.lo[pin] &= ~RTE_REMOTE_IRR;
        this.service(pin);
      }
    }
  }

  /** redirection entry of `pin` as 64 bits (for inspection) */
  entry(pin: number): bigint { return (BigInt(this.hi[pin]) << 32n) | BigInt(this.lo[pin]); }

  read(offset: number, size: 1 | 2 | 4 | 8): bigint {
    const o = offset & 0xff;
    let v = 0;
    if (o === 0x00) v = this.regsel;
    else if (o === 0x10) v = this.readReg(this.regsel);
    else return size === 8 ? 0xffffffffffffffffn : BigInt(2 ** (size * 8) - 1);
    return BigInt(v >>> 0);
  }

  write(offset: number, _size: 1 | 2 | 4 | 8, value: bigint): void {
    const o = offset & 0xff, v = Number(value & 0xffffffffn);
    if (o === 0x00) this.regsel = v & 0xff;
    else if (o === 0x10) this.writeReg(this.regsel, v);
    else if (o === 0x40) this.eoi(v & 0xff);
  }

  private readReg(r: number): number {
    if (r === 0) return this.id << 24;
    if (r === 1) return IOAPIC_VERSION;
    if (r === 2) return this.id << 24;
    const pin = (r - 0x10) >> 1;
    if (r < 0x10 || pin >= IOAPIC_PINS) return 0;
    return r & 1 ? this.hi[pin] : this.lo[pin];
  }

  private writeReg(r: number, v: number): void {
    if (r === 0) { this.id = (v >>> 24) & 0xf; return; }
    const pin = (r - 0x10) >> 1;
    if (r < 0x10 || pin >= IOAPIC_PINS) return;
    if (r & 1) { this.hi[pin] = v & 0xff000000; return; }
    // delivery status and remote IRR are read-only
    this.lo[pin] = (v & ~(RTE_PENDING | RTE_REMOTE_IRR) & 0x1ffff) | (this.lo[pin] & RTE_REMOTE_IRR);
    if (!(this.lo[pin] & RTE_LEVEL)) this.lo[pin] &= ~RTE_REMOTE_IRR;
    this.service(pin);
  }

  /** a level-triggered pin asserted, unmasked and not awaiting EOI sends its message */
  private service(pin: number): void {
    const lo = this.lo[pin];
    if (!(lo & RTE_LEVEL) || (lo & (RTE_MASKED | RTE_REMOTE_IRR))) return;
    const asserted = (lo & RTE_ACTIVE_LOW) ? !this.levels[pin] : this.levels[pin];
    if (!asserted) return;
    this.lo[pin] |= RTE_REMOTE_IRR;
    this.send(pin);
  }

  private send(pin: number): void {
    const lo = this.lo[pin];
    this.bus.send({
      vector: lo & 0xff,
      mode: ((lo >> 8) & 7) as DeliveryMode,
      dest: this.hi[pin] >>> 24,
      logical: (lo & RTE_LOGICAL) !== 0,
      levelTriggered: (lo & RTE_LEVEL) !== 0,
      assert: true,
      shorthand: Shorthand.None,
    }, null);
  }
}
