/**
 * The 8259A pair against the datasheet: Linux's init sequence
 * (arch/x86/kernel/i8259.c init_8259A: ICW1-4, AEOI off), masks, fully
 * nested priority, EOI forms, rotation, the cascade through IR2, OCW3 reads
 * and poll, level triggering (ELCR), special mask mode, and the spurious
 * IR7.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PicPair } from '../../../emulator/system/devices/pic8259';

/** Linux's init_8259A(0): master vectors 0x30.., slave 0x38.. on IR2 */
function linuxPics(): PicPair {
  const p = new PicPair();
  const o = (port: number, v: number): void => p.out(port, 1, v);
  o(0x21, 0xff); o(0xa1, 0xff);
  o(0x20, 0x11); o(0x21, 0x30); o(0x21, 1 << 2); o(0x21, 0x01);
  o(0xa0, 0x11); o(0xa1, 0x38); o(0xa1, 2); o(0xa1, 0x01);
  o(0x21, 0x00); o(0xa1, 0x00);
  return p;
}
const eoiMaster = (p: PicPair): void => p.out(0x20, 1, 0x20);
const eoiSlave = (p: PicPair): void => p.out(0xa0, 1, 0x20);
const edge = (p: PicPair, irq: number): void => { p.setIrq(irq, true); p.setIrq(irq, false); };

describe('8259A PIC pair', () => {
  test('ICW1-ICW4 set the vector bases; IMR reads back on A0=1', () => {
    const p = linuxPics();
    assert.equal(p.registers(0).vectorBase, 0x30);
    assert.equal(p.registers(1).vectorBase, 0x38);
    p.out(0x21, 1, 0xfb);
    assert.equal(p.in(0x21), 0xfb);
  });

  test('an edge on IRQ0 raises INT; INTA gives base+0, moves it IRR -> ISR; a lower IRQ waits for EOI', () => {
    const p = linuxPics();
    edge(p, 0);
    assert.equal(p.intr(), true);
    assert.equal(p.registers(0).irr, 1);
    assert.equal(p.intAck(), 0x30);
    assert.deepEqual([p.registers(0).irr, p.registers(0).isr], [0, 1]);
    edge(p, 4);
    assert.equal(p.intr(), false, 'IRQ4 is lower priority than IRQ0 in service');
    eoiMaster(p);
    assert.equal(p.peekVector(), 0x34);
  });

  test('a higher-priority request nests over one in service', () => {
    const p = linuxPics();
    edge(p, 4);
    assert.equal(p.intAck(), 0x34);
    edge(p, 1);
    assert.equal(p.intAck(), 0x31);
    assert.equal(p.registers(0).isr, 0x12);
    eoiMaster(p); // non-specific: the highest in service (IRQ1)
    assert.equal(p.registers(0).isr, 0x10);
  });

  test('masked requests stay in IRR and interrupt once unmasked', () => {
    const p = linuxPics();
    p.out(0x21, 1, 0x10);
    edge(p, 4);
    assert.equal(p.intr(), false);
    assert.equal(p.registers(0).irr, 0x10);
    p.out(0x21, 1, 0);
    assert.equal(p.intAck(), 0x34);
  });

  test('the slave cascades through IR2: vector from the slave base, both ISRs set, both need EOI', () => {
    const p = linuxPics();
    edge(p, 8 + 4); // IRQ12
    assert.equal(p.intr(), true);
    assert.equal(p.intAck(), 0x3c);
    assert.equal(p.registers(0).isr, 0x04);
    assert.equal(p.registers(1).isr, 0x10);
    edge(p, 8 + 6);
    assert.equal(p.intr(), false, 'IRQ14 is below IRQ12 on the slave');
    eoiSlave(p);
    assert.equal(p.intr(), false, 'the master still has IR2 in service');
    eoiMaster(p);
    assert.equal(p.intAck(), 0x3e);
  });

  test('OCW3 selects IRR or ISR for A0=0 reads; poll mode acknowledges and reads 0x80|level', () => {
    const p = linuxPics();
    edge(p, 3);
    p.out(0x20, 1, 0x0a);
    assert.equal(p.in(0x20), 0x08);
    p.out(0x20, 1, 0x0b);
    assert.equal(p.in(0x20), 0);
    p.out(0x20, 1, 0x0c);
    assert.equal(p.in(0x20), 0x83);
    p.out(0x20, 1, 0x0b);
    assert.equal(p.in(0x20), 0x08, 'the poll put IRQ3 in service');
    p.out(0x20, 1, 0x0c);
    assert.equal(p.in(0x20), 0, 'nothing pending: poll reads 0');
  });

  test('specific EOI and rotate-on-EOI change the priority order', () => {
    const p = linuxPics();
    edge(p, 5);
    assert.equal(p.intAck(), 0x35);
    p.out(0x20, 1, 0x60 | 5); // specific EOI for IR5
    assert.equal(p.registers(0).isr, 0);
    edge(p, 1);
    assert.equal(p.intAck(), 0x31);
    p.out(0x20, 1, 0xa0); // rotate on non-specific EOI: IR1 becomes the lowest
    edge(p, 1); edge(p, 3);
    assert.equal(p.intAck(), 0x33, 'after rotation IR3 outranks IR1');
    p.out(0x20, 1, 0xc0 | 7); // set priority: IR7 lowest, IR0 highest again
    p.out(0x20, 1, 0x20);
    assert.equal(p.intAck(), 0x31);
  });

  test('a level-triggered IRQ (ELCR) stays requested while the line is high, even after INTA', () => {
    const p = linuxPics();
    p.out(0x4d1, 1, 0xff);
    assert.equal(p.in(0x4d1), 0xde, 'IRQ8 and IRQ13 cannot be level-triggered');
    p.setIrq(9, true);
    assert.equal(p.intAck(), 0x39);
    eoiSlave(p); eoiMaster(p);
    assert.equal(p.peekVector(), 0x39, 'still high: requested again');
    p.setIrq(9, false);
    assert.equal(p.intr(), true, 'the master latched the cascade\'s edge on IR2');
    assert.equal(p.intAck(), 0x3f, 'the slave\'s request went away: its spurious IR7 (IRQ15)');
    assert.equal(p.registers(1).isr, 0);
  });

  test('a level request that goes away before INTA gives the spurious IR7 vector without setting ISR', () => {
    const p = linuxPics();
    p.out(0x4d0, 1, 0x20);
    p.setIrq(5, true);
    assert.equal(p.intr(), true);
    p.setIrq(5, false);
    assert.equal(p.intAck(), 0x37);
    assert.equal(p.registers(0).isr, 0, 'spurious: nothing in service, no EOI owed');
  });

  test('special mask mode: masking the in-service IR lets lower ones through', () => {
    const p = linuxPics();
    edge(p, 2 - 2); // IRQ0
    assert.equal(p.intAck(), 0x30);
    edge(p, 6);
    assert.equal(p.intr(), false);
    p.out(0x21, 1, 0x01);
    p.out(0x20, 1, 0x68); // ESMM | SMM
    assert.equal(p.intAck(), 0x36);
    p.out(0x20, 1, 0x48); // leave special mask mode
  });

  test('automatic EOI (ICW4.AEOI): INTA leaves nothing in service', () => {
    const p = new PicPair();
    p.out(0x20, 1, 0x11); p.out(0x21, 1, 0x08); p.out(0x21, 1, 0x04); p.out(0x21, 1, 0x03);
    edge(p, 1);
    assert.equal(p.intAck(), 0x09);
    assert.equal(p.registers(0).isr, 0);
  });

  test('ICW1 resets: masks cleared, requests forgotten, an edge is needed again', () => {
    const p = linuxPics();
    p.out(0x21, 1, 0xff);
    edge(p, 3);
    p.out(0x20, 1, 0x11); p.out(0x21, 1, 0x30); p.out(0x21, 1, 4); p.out(0x21, 1, 1);
    assert.equal(p.in(0x21), 0);
    assert.equal(p.intr(), false);
  });
});
