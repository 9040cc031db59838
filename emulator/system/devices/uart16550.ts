/**
 * A National Semiconductor 16550A UART (the PC's COM1 at 0x3f8, IRQ4), at
 * the register level of its datasheet: RBR/THR and the divisor latch
 * (DLAB), IER, IIR with the FIFO bits, FCR, LCR, MCR with loopback, LSR,
 * MSR, SCR; 16-byte FIFOs with the receive trigger levels 1/4/8/14 and the
 * character timeout; the four interrupt sources in the datasheet's priority
 * (line status > received data / timeout > THR empty > modem status),
 * reaching the IRQ pin only through MCR.OUT2 as a PC wires it.
 *
 * The line itself is the host: a byte written to THR goes to the sink at
 * once (the transmitter is always empty again: THRE and TEMT stay set), and
 * input waits in a host queue until the receive FIFO has room (no overrun
 * from typing ahead; a loopback overrun is real). The character timeout
 * counts virtual time, four character times of the programmed baud rate
 * and frame, so it is deterministic.
 */
import type { VirtualClock } from '../types';
import type { PortDevice } from './ioBus';
import type { IrqLine, TimedDevice } from './timed';

export const COM1 = 0x3f8;
export const COM1_IRQ = 4;

/** LSR */
export const LSR_DR = 0x01, LSR_OE = 0x02, LSR_PE = 0x04, LSR_FE = 0x08, LSR_BI = 0x10, LSR_THRE = 0x20, LSR_TEMT = 0x40, LSR_FIFOE = 0x80;
/** IER */
export const IER_RDI = 0x01, IER_THRI = 0x02, IER_RLSI = 0x04, IER_MSI = 0x08;
/** IIR interrupt ids (bit 0 = no interrupt) */
export const IIR_NONE = 0x01, IIR_MSI = 0x00, IIR_THRI = 0x02, IIR_RDI = 0x04, IIR_RLSI = 0x06, IIR_TIMEOUT = 0x0c, IIR_FIFOS = 0xc0;
/** MCR */
export const MCR_DTR = 0x01, MCR_RTS = 0x02, MCR_OUT1 = 0x04, MCR_OUT2 = 0x08, MCR_LOOP = 0x10;
/** MSR */
export const MSR_DCTS = 0x01, MSR_DDSR = 0x02, MSR_TERI = 0x04, MSR_DDCD = 0x08, MSR_CTS = 0x10, MSR_DSR = 0x20, MSR_RI = 0x40, MSR_DCD = 0x80;

const FIFO_SIZE = 16;
const TRIGGER = [1, 4, 8, 14];
/** the 1.8432 MHz crystal: baud = XTAL / (16 * divisor) */
const XTAL_HZ = 1_843_200n;

export class Uart16550 implements PortDevice, TimedDevice {
  readonly byteWide = true;
  private rx: number[] = [];
  private readonly hostInput: number[] = [];
  private ier = 0;
  private lcr = 0;
  private mcr = 0;
  private lsrErrors = 0;
  private msrDelta = 0;
  /** the modem inputs when not in loopback: a terminal that is there and ready (CTS, DSR, DCD) */
  private readonly modemInputs = MSR_CTS | MSR_DSR | MSR_DCD;
  private scr = 0;
  private dll = 0x0c; // 9600 baud until the driver says otherwise
  private dlm = 0;
  private fifoEnabled = false;
  private triggerLevel = 1;
  /** the THR-empty interrupt is latched until IIR reports it or THR is written */
  private thrEmptyPending = false;
  /** virtual ns of the last character moved into or read out of the receive FIFO */
  private lastRxActivityNs = 0n;
  private irqLevel = false;

  constructor(
    readonly name: string,
    private readonly base: number,
    private readonly clock: VirtualClock,
    private readonly irq: IrqLine,
    /** where transmitted bytes go (the console) */
    private readonly sink: (byte: number) => void,
  ) {}

  /** Bytes typed on the host side: they enter the receive FIFO as it has room. */
  receive(bytes: Iterable<number>): void {
    for (const b of bytes) this.hostInput.push(b & 0xff);
    this.refill();
    this.update();
  }

  /** bytes typed but not yet in the FIFO */
  get queuedInput(): number { return this.hostInput.length; }

  in(port: number): number {
    const r = port - this.base;
    const dlab = (this.lcr & 0x80) !== 0;
    switch (r) {
      case 0: {
        if (dlab) return this.dll;
        const v = this.rx.length ? this.rx.shift()! : 0;
        this.lastRxActivityNs = this.clock.nowNs();
        this.refill();
        this.update();
        return v;
      }
      case 1: return dlab ? this.dlm : this.ier;
      case 2: {
        const id = this.interruptId();
        if (id === IIR_THRI) this.thrEmptyPending = false;
        this.update();
        return id | (this.fifoEnabled ? IIR_FIFOS : 0);
      }
      case 3: return this.lcr;
      case 4: return this.mcr;
      case 5: {
        const v = this.lsr();
        this.lsrErrors = 0;
        this.update();
        return v;
      }
      case 6: {
        const v = this.modemStatus() | this.msrDelta;
        this.msrDelta = 0;
        this.update();
        return v;
      }
      default: return this.scr;
    }
  }

  out(port: number, _size: 1 | 2 | 4, value: number): void {
    const r = port - this.base;
    const v = value & 0xff;
    const dlab = (this.lcr & 0x80) !== 0;
    switch (r) {
      case 0:
        if (dlab) { this.dll = v; break; }
        if (this.mcr & MCR_LOOP) this.loopbackReceive(v);
        else this.sink(v);
        // the byte left at once: THR (and the shift register) are empty again
        this.thrEmptyPending = true;
        break;
      case 1:
        if (dlab) { this.dlm = v; break; }
        // enabling THRI with THR empty raises the interrupt at once (the datasheet; Linux's THRE test relies on it)
        if ((v & IER_THRI) && !(this.ier & IER_THRI)) this.thrEmptyPending = true;
        this.ier = v & 0x0f;
        break;
      case 2: this.fcr(v); break;
      case 3: this.lcr = v; break;
      case 4: {
        const before = this.modemStatus();
        this.mcr = v & 0x1f;
        this.noteModemChange(before);
        break;
      }
      case 5: case 6: break; // LSR and MSR are read-only (factory test writes are not modelled)
      default: this.scr = v;
    }
    this.update();
  }

  /** the character timeout, while it can still raise the IRQ pin (not when the pin is already up, RDI is off or OUT2 gates it) */
  nextEventNs(): bigint | null {
    if (!this.timeoutCandidate() || this.irqLevel || !(this.ier & IER_RDI) || (this.mcr & (MCR_OUT2 | MCR_LOOP)) !== MCR_OUT2) return null;
    return this.lastRxActivityNs + this.charTimeNs() * 4n;
  }

  advance(): void { this.update(); }

  /** the baud rate the divisor latch gives (0 divisor: none) */
  get baud(): number { const d = this.divisor; return d ? Number(XTAL_HZ) / 16 / d : 0; }
  private get divisor(): number { return this.dll | (this.dlm << 8); }

  /** one character on the line: start + data + parity + stop bits at the baud rate */
  private charTimeNs(): bigint {
    const bits = 1 + 5 + (this.lcr & 3) + ((this.lcr & 0x08) ? 1 : 0) + ((this.lcr & 0x04) ? 2 : 1);
    const div = BigInt(this.divisor || 0x10000);
    return (BigInt(bits) * 16n * div * 1_000_000_000n) / XTAL_HZ;
  }

  private fcr(v: number): void {
    const enable = (v & 1) !== 0;
    if (enable !== this.fifoEnabled) {
      this.rx = [];
      this.fifoEnabled = enable;
    }
    if (v & 0x02) { this.rx = []; this.lsrErrors &= ~LSR_FIFOE; }
    // bit 2 clears the transmit FIFO: it is always empty here
    this.triggerLevel = TRIGGER[v >> 6];
    this.refill();
  }

  private capacity(): number { return this.fifoEnabled ? FIFO_SIZE : 1; }

  private refill(): void {
    if (this.mcr & MCR_LOOP) return; // the receiver hears only the transmitter in loopback
    let moved = false;
    while (this.hostInput.length && this.rx.length < this.capacity()) {
      this.rx.push(this.hostInput.shift()!);
      moved = true;
    }
    if (moved) this.lastRxActivityNs = this.clock.nowNs();
  }

  private loopbackReceive(v: number): void {
    if (this.rx.length >= this.capacity()) {
      this.lsrErrors |= LSR_OE; // the shift register overwrites: the character is lost
      if (!this.fifoEnabled) this.rx[0] = v;
    } else {
      this.rx.push(v);
    }
    this.lastRxActivityNs = this.clock.nowNs();
  }

  private lsr(): number {
    return (this.rx.length ? LSR_DR : 0) | this.lsrErrors | LSR_THRE | LSR_TEMT;
  }

  private modemStatus(): number {
    if (this.mcr & MCR_LOOP) {
      const m = this.mcr;
      return ((m & MCR_RTS) ? MSR_CTS : 0) | ((m & MCR_DTR) ? MSR_DSR : 0) | ((m & MCR_OUT1) ? MSR_RI : 0) | ((m & MCR_OUT2) ? MSR_DCD : 0);
    }
    return this.modemInputs;
  }

  private noteModemChange(before: number): void {
    const now = this.modemStatus(), changed = before ^ now;
    if (changed & MSR_CTS) this.msrDelta |= MSR_DCTS;
    if (changed & MSR_DSR) this.msrDelta |= MSR_DDSR;
    if (changed & MSR_DCD) this.msrDelta |= MSR_DDCD;
    if ((before & MSR_RI) && !(now & MSR_RI)) this.msrDelta |= MSR_TERI; // trailing edge of ring
  }

  private timeoutCandidate(): boolean {
    return this.fifoEnabled && this.rx.length > 0 && this.rx.length < this.triggerLevel;
  }

  private interruptId(): number {
    if ((this.ier & IER_RLSI) && (this.lsrErrors & (LSR_OE | LSR_PE | LSR_FE | LSR_BI))) return IIR_RLSI;
    if (this.ier & IER_RDI) {
      if (this.rx.length >= (this.fifoEnabled ? this.triggerLevel : 1)) return IIR_RDI;
      if (this.timeoutCandidate() && this.clock.nowNs() >= this.lastRxActivityNs + this.charTimeNs() * 4n) return IIR_TIMEOUT;
    }
    if ((this.ier & IER_THRI) && this.thrEmptyPending) return IIR_THRI;
    if ((this.ier & IER_MSI) && this.msrDelta) return IIR_MSI;
    return IIR_NONE;
  }

  /** the IRQ pin: an interrupt is pending and OUT2 (the PC's interrupt enable) is set, outside loopback */
  private update(): void {
    const level = this.interruptId() !== IIR_NONE && (this.mcr & (MCR_OUT2 | MCR_LOOP)) === MCR_OUT2;
    if (level !== this.irqLevel) {
      this.irqLevel = level;
      this.irq(level);
    }
  }
}
