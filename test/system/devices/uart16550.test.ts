/**
 * The 16550A UART against its datasheet: register map and DLAB, FIFO
 * control and trigger levels, the interrupt identification priorities,
 * THRE behaviour, loopback with the modem-control-to-status wiring, line
 * status errors, the character timeout in virtual time, and the IRQ pin
 * gated by OUT2 — and Linux's 8250 autoconfig probe sequence reads it as
 * a 16550A.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  Uart16550, COM1, IIR_NONE, IIR_RDI, IIR_THRI, IIR_TIMEOUT, IIR_RLSI, IIR_MSI, LSR_DR, LSR_OE, LSR_THRE, LSR_TEMT,
  MCR_LOOP, MCR_OUT2, MCR_RTS, MCR_DTR, MCR_OUT1, IER_RDI, IER_THRI, IER_RLSI, IER_MSI,
} from '../../../emulator/system/devices/uart16550';
import { TestClock, TestLine } from './fakeClock';

const RBR = COM1, IER = COM1 + 1, IIR = COM1 + 2, FCR = COM1 + 2, LCR = COM1 + 3, MCR = COM1 + 4, LSR = COM1 + 5, MSR = COM1 + 6, SCR = COM1 + 7;

function uart() {
  const clock = new TestClock(), line = new TestLine(), out: number[] = [];
  const u = new Uart16550('ttyS0', COM1, clock, line.fn, b => out.push(b));
  const w = (p: number, v: number): void => u.out(p, 1, v);
  const r = (p: number): number => u.in(p);
  return { u, clock, line, out, w, r };
}

describe('16550A UART', () => {
  test('reset state: IIR no interrupt, LSR THRE|TEMT, IER 0, MSR shows a ready terminal', () => {
    const { r } = uart();
    assert.equal(r(IIR), IIR_NONE);
    assert.equal(r(LSR), LSR_THRE | LSR_TEMT);
    assert.equal(r(IER), 0);
    assert.equal(r(MSR) & 0xf0, 0xb0);
  });

  test('THR writes reach the sink; DLAB switches offsets 0/1 to the divisor latch without touching THR/IER', () => {
    const { u, w, r, out } = uart();
    w(RBR, 0x41);
    w(LCR, 0x80 | 0x03);
    w(RBR, 0x01); w(IER, 0x00); // 115200 baud
    assert.equal(r(RBR), 0x01);
    assert.equal(r(IER), 0x00);
    w(LCR, 0x03);
    assert.equal(u.baud, 115200);
    w(RBR, 0x42);
    assert.deepEqual(out, [0x41, 0x42]);
    assert.equal(r(IER), 0, 'IER unchanged by the DLM write');
  });

  test('IER keeps its low four bits; SCR is a scratch byte', () => {
    const { w, r } = uart();
    w(IER, 0xff);
    assert.equal(r(IER), 0x0f);
    w(SCR, 0x5a);
    assert.equal(r(SCR), 0x5a);
  });

  test('THRE interrupt: set when THRI is enabled with THR empty, cleared by reading IIR, set again by a THR write', () => {
    const { w, r, line } = uart();
    w(MCR, MCR_OUT2);
    w(IER, IER_THRI);
    assert.equal(line.level, true);
    assert.equal(r(IIR), IIR_THRI);
    assert.equal(r(IIR), IIR_NONE, 'reading IIR cleared the THRE source');
    assert.equal(line.level, false);
    w(RBR, 0x61);
    assert.equal(line.level, true);
    assert.equal(r(IIR), IIR_THRI);
  });

  test('received data: DR, the RDI interrupt and the FIFO trigger level; bytes in order; IIR FIFO bits', () => {
    const { u, w, r, line } = uart();
    w(MCR, MCR_OUT2);
    w(FCR, 0x01 | 0x80); // FIFO on, trigger 8
    w(IER, IER_RDI);
    assert.equal(r(IIR), IIR_NONE | 0xc0);
    u.receive([1, 2, 3, 4, 5, 6, 7]);
    assert.equal(r(LSR) & LSR_DR, LSR_DR);
    assert.equal(line.level, false, '7 bytes are below the trigger level of 8');
    u.receive([8]);
    assert.equal(line.level, true);
    assert.equal(r(IIR), IIR_RDI | 0xc0);
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8].map(() => r(RBR)), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.equal(r(LSR) & LSR_DR, 0);
    assert.equal(line.level, false);
  });

  test('more input than the 16-byte FIFO waits on the host side, no overrun', () => {
    const { u, w, r } = uart();
    w(FCR, 0x01);
    u.receive(Array.from({ length: 20 }, (_, i) => i));
    assert.equal(u.queuedInput, 4);
    const got: number[] = [];
    while (r(LSR) & LSR_DR) got.push(r(RBR));
    assert.deepEqual(got, Array.from({ length: 20 }, (_, i) => i));
    assert.equal(r(LSR) & LSR_OE, 0);
  });

  test('character timeout: data below the trigger level interrupts after 4 character times of virtual time', () => {
    const { u, w, r, line, clock } = uart();
    w(LCR, 0x83); w(RBR, 0x01); w(IER, 0); w(LCR, 0x03); // 115200 8N1: 10 bits = 86.8 us
    w(MCR, MCR_OUT2);
    w(FCR, 0x01 | 0xc0); // trigger 14
    w(IER, IER_RDI);
    u.receive([0x33]);
    const due = u.nextEventNs()!;
    assert.equal(due, 4n * 86805n, 'four 10-bit characters at 115200 baud');
    clock.ns = due - 1n; u.advance();
    assert.equal(line.level, false);
    clock.ns = due; u.advance();
    assert.equal(line.level, true);
    assert.equal(r(IIR), IIR_TIMEOUT | 0xc0);
    assert.equal(u.nextEventNs(), null, 'the pin is up: nothing more happens by itself');
    assert.equal(r(RBR), 0x33);
    assert.equal(r(IIR), IIR_NONE | 0xc0);
    assert.equal(u.nextEventNs(), null);
    w(IER, 0);
    u.receive([0x34]);
    assert.equal(u.nextEventNs(), null, 'RDI off: no interrupt to schedule (a polling driver reads LSR)');
  });

  test('FCR: clearing the receive FIFO, and turning FIFOs off and on resets them', () => {
    const { u, w, r } = uart();
    w(FCR, 0x01);
    u.receive([9, 9, 9]);
    w(FCR, 0x01 | 0x02);
    assert.equal(r(LSR) & LSR_DR, 0);
    u.receive([7]);
    w(FCR, 0x00);
    assert.equal(r(LSR) & LSR_DR, 0, 'turning the FIFOs off reset them: the byte is gone, as the datasheet says');
    assert.equal(r(IIR) & 0xc0, 0);
  });

  test('loopback: THR comes back on RBR, nothing reaches the sink, MSR = MCR wiring (CTS=RTS, DSR=DTR, RI=OUT1, DCD=OUT2), IRQ pin off', () => {
    const { w, r, out, line } = uart();
    w(IER, IER_RDI);
    w(MCR, MCR_LOOP | MCR_OUT2 | MCR_RTS);
    w(RBR, 0x55);
    assert.deepEqual(out, []);
    assert.equal(r(LSR) & LSR_DR, LSR_DR);
    assert.equal(r(IIR), IIR_RDI, 'the interrupt is identified');
    assert.equal(line.level, false, 'but the PC\'s OUT2 gate is open in loopback');
    assert.equal(r(RBR), 0x55);
    assert.equal(r(MSR) & 0xf0, 0x90);
    w(MCR, MCR_LOOP | MCR_DTR | MCR_OUT1);
    assert.equal(r(MSR), 0x60 | 0x01 | 0x02 | 0x08, 'CTS and DCD fell, DSR and RI rose: delta bits');
    assert.equal(r(MSR) & 0x0f, 0, 'reading MSR cleared the deltas');
    w(MCR, MCR_LOOP);
    assert.equal(r(MSR) & 0x04, 0x04, 'TERI: the trailing edge of RI');
  });

  test('loopback overrun sets OE and the line-status interrupt, which outranks received data; reading LSR clears it', () => {
    const { w, r } = uart();
    w(IER, IER_RDI | IER_RLSI);
    w(MCR, MCR_LOOP);
    w(RBR, 1); w(RBR, 2);
    assert.equal(r(IIR), IIR_RLSI);
    assert.equal(r(LSR) & LSR_OE, LSR_OE);
    assert.equal(r(LSR) & LSR_OE, 0);
    assert.equal(r(IIR), IIR_RDI);
    assert.equal(r(RBR), 2, 'the later character overwrote the holding register');
  });

  test('modem status interrupt is the lowest priority', () => {
    const { w, r } = uart();
    w(IER, IER_MSI | IER_THRI);
    w(MCR, MCR_LOOP | MCR_RTS);
    assert.equal(r(IIR), IIR_THRI);
    assert.equal(r(IIR), IIR_MSI);
    r(MSR);
    assert.equal(r(IIR), IIR_NONE);
  });

  test('Linux\'s 8250 autoconfig reads it as a 16550A', () => {
    // the probe of drivers/tty/serial/8250/8250_port.c autoconfig(): IER scratch test, loopback test, FIFO type
    const { w, r } = uart();
    w(IER, 0);
    assert.equal(r(IER) & 0x0f, 0);
    w(IER, 0x0f);
    assert.equal(r(IER) & 0x0f, 0x0f);
    w(IER, 0);
    w(MCR, MCR_LOOP | 0x0a);
    assert.equal(r(MSR) & 0xf0, 0x90, 'loopback test passes');
    w(MCR, 0);
    w(FCR, 0x01);
    assert.equal(r(IIR) >> 6, 3, 'FIFO bits both set: a 16550A, not a 16550 or 16450');
    w(LCR, 0x80); // UART_LCR_CONF_MODE_A: an EFR would read 0 here on a ST16C650V1
    assert.notEqual(r(IIR), 0);
    w(LCR, 0xbf);
    w(FCR, 0x01 | 0x20); // the 16750's 64-byte FIFO bit is not there
    w(LCR, 0);
    assert.equal(r(IIR) & 0x20, 0);
  });
});
