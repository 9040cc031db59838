/**
 * The PC's reset paths Linux's reboot code uses (arch/x86/kernel/reboot.c):
 *   0xcf9  the Reset Control Register: a write with RST_CPU (bit 2) resets
 *          (SYS_RST, bit 1, makes it a hard reset); it reads back;
 *   0x92   System Control Port A: a 0 -> 1 transition of bit 0 (fast
 *          reset) resets; bit 1 is the A20 gate (always on here), both read back;
 *   0x64   the keyboard controller's command port: 0xfe pulses the reset line.
 * No i8042 is emulated: 0x60 and 0x64 read all ones, so Linux's i8042 driver
 * finds no controller, and reboot's kb_wait() sees no input-buffer-full
 * wait for long; then 0xfe resets. 0x80 (the POST diagnostic port Linux
 * writes as an I/O delay) decodes and drops what it is given.
 */
import type { PortDevice } from './ioBus';

export type ResetReason = 'cf9' | 'port92' | 'kbc';

export class ResetControl implements PortDevice {
  readonly name = 'reset (0xcf9)';
  readonly byteWide = true;
  private rcr = 0;
  constructor(private readonly reset: (why: ResetReason, hard: boolean) => void) {}
  in(): number { return this.rcr; }
  out(_port: number, _size: 1 | 2 | 4, value: number): void {
    this.rcr = value & 0x0e;
    if (value & 0x04) this.reset('cf9', (value & 0x02) !== 0);
  }
}

export class SystemControlA implements PortDevice {
  readonly name = 'system control port A (0x92)';
  readonly byteWide = true;
  private value = 0x02; // A20 on
  constructor(private readonly reset: (why: ResetReason, hard: boolean) => void) {}
  in(): number { return this.value; }
  out(_port: number, _size: 1 | 2 | 4, v: number): void {
    const rising = (v & 1) && !(this.value & 1);
    this.value = (v & 0xff) | 0x02;
    if (rising) this.reset('port92', false);
  }
}

/** 0x60 / 0x64 without a keyboard controller behind them, but with its reset command */
export class KeyboardControllerReset implements PortDevice {
  readonly name = 'keyboard-controller reset (0x64)';
  readonly byteWide = true;
  constructor(private readonly reset: (why: ResetReason, hard: boolean) => void) {}
  in(): number { return 0xff; }
  out(port: number, _size: 1 | 2 | 4, v: number): void {
    if ((port & 0xff) === 0x64 && (v & 0xff) === 0xfe) this.reset('kbc', true);
  }
}

export class PostCodePort implements PortDevice {
  readonly name = 'POST code (0x80)';
  readonly byteWide = true;
  last = 0;
  in(): number { return 0xff; }
  out(_port: number, _size: 1 | 2 | 4, v: number): void { this.last = v & 0xff; }
}
