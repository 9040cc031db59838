/**
 * The CMOS RTC against the MC146818 datasheet, on the virtual clock: the
 * date from a fixed start plus virtual seconds (BCD and binary, 24 and 12
 * hour), UIP before each update, register C flags and IRQ8 for update,
 * alarm and periodic interrupts, SET to write the time, the NMI mask bit,
 * CMOS RAM.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CmosRtc, REG_A, REG_B, REG_C, REG_D, B_24H, B_DM, B_SET, B_UIE, B_AIE, B_PIE, C_UF, C_AF, C_PF, C_IRQF, A_UIP } from '../../../emulator/system/devices/cmosRtc';
import { TestClock, TestLine } from './fakeClock';

const START = new Date(Date.UTC(2026, 10, 28, 23, 59, 58)); // a Saturday
const S = 1_000_000_000n;

function rtc() {
  const clock = new TestClock(), line = new TestLine();
  const r = new CmosRtc(clock, line.fn, START);
  const get = (reg: number): number => { r.out(0x70, 1, reg); return r.in(0x71); };
  const set = (reg: number, v: number): void => { r.out(0x70, 1, reg); r.out(0x71, 1, v); };
  return { r, clock, line, get, set };
}

describe('CMOS RTC', () => {
  test('the fixed start in BCD, 24-hour: seconds .. year, day of week, century; register D says the battery is good', () => {
    const { get } = rtc();
    assert.deepEqual([0, 2, 4, 6, 7, 8, 9, 0x32].map(get), [0x58, 0x59, 0x23, 0x07, 0x28, 0x11, 0x26, 0x20]);
    assert.equal(get(REG_B), B_24H);
    assert.equal(get(REG_D), 0x80);
    assert.equal(get(REG_A) & 0x7f, 0x26);
  });

  test('virtual seconds advance the date across midnight and the month', () => {
    const { get, clock } = rtc();
    clock.ns = 2n * S + 5n;
    assert.deepEqual([0, 2, 4, 7, 8].map(get), [0x00, 0x00, 0x00, 0x29, 0x11]);
    clock.ns = (2n + 2n * 86400n) * S;
    assert.deepEqual([7, 8].map(get), [0x01, 0x12]);
  });

  test('binary mode (DM) and 12-hour mode with the PM bit', () => {
    const { get, set } = rtc();
    set(REG_B, B_DM);
    assert.equal(get(4), 11 | 0x80, '23:00 is 11 PM');
    assert.equal(get(0), 58);
    set(REG_B, B_DM | B_24H);
    assert.equal(get(4), 23);
  });

  test('UIP is set in the 244 us before each update, never while SET holds the clock', () => {
    const { get, set, clock } = rtc();
    clock.ns = S - 244_001n;
    assert.equal(get(REG_A) & A_UIP, 0);
    clock.ns = S - 244_000n;
    assert.equal(get(REG_A) & A_UIP, A_UIP);
    set(REG_B, B_SET | B_24H);
    assert.equal(get(REG_A) & A_UIP, 0);
  });

  test('update-ended interrupt: UF each second, IRQF and IRQ8 only with UIE, reading C clears both', () => {
    const { r, get, set, clock, line } = rtc();
    set(REG_B, B_24H | B_UIE);
    assert.equal(r.nextEventNs(), S);
    clock.ns = S; r.advance(clock.ns);
    assert.equal(line.level, true);
    assert.equal(get(REG_C), C_IRQF | C_UF | C_PF, 'PF too: the periodic flag runs at register A\'s rate whether or not PIE is set');
    assert.equal(line.level, false);
    assert.equal(get(REG_C), 0);
    set(REG_B, B_24H);
    clock.ns = 2n * S; r.advance(clock.ns);
    assert.equal(line.level, false);
    assert.equal(get(REG_C) & (C_UF | C_IRQF), C_UF, 'the flag is set without the enable, but no IRQF');
  });

  test('alarm: matches seconds/minutes/hours with 0xC0-0xFF as "don\'t care"', () => {
    const { r, get, set, clock, line } = rtc();
    set(1, 0x01); set(3, 0xc0); set(5, 0xff);
    set(REG_B, B_24H | B_AIE);
    clock.ns = 2n * S; r.advance(clock.ns);
    assert.equal(line.level, false, '00:00:00 is not :01');
    get(REG_C);
    clock.ns = 3n * S; r.advance(clock.ns);
    assert.equal(line.level, true);
    assert.equal(get(REG_C) & (C_AF | C_IRQF), C_AF | C_IRQF);
  });

  test('periodic interrupt at register A\'s rate (RS=6: 1024 Hz)', () => {
    const { r, get, set, clock, line } = rtc();
    set(REG_B, B_24H | B_PIE);
    const p = S / 1024n;
    assert.equal(r.nextEventNs(), p);
    clock.ns = p; r.advance(clock.ns);
    assert.equal(line.level, true);
    assert.equal(get(REG_C) & C_PF, C_PF);
    set(REG_A, 0x2f); // 2 Hz
    assert.equal(r.nextEventNs(), clock.ns + S / 2n);
  });

  test('SET holds the clock while the guest writes the time; clearing it starts from what was written', () => {
    const { get, set, clock } = rtc();
    set(REG_B, B_SET | B_24H);
    set(0, 0x30); set(2, 0x15); set(4, 0x10); set(7, 0x01); set(8, 0x01); set(9, 0x27);
    clock.ns = 5n * S;
    assert.equal(get(0), 0x30, 'no updates while SET');
    set(REG_B, B_24H);
    clock.ns = 7n * S;
    assert.deepEqual([0, 2, 4, 7, 8, 9].map(get), [0x32, 0x15, 0x10, 0x01, 0x01, 0x27]);
  });

  test('port 0x70 bit 7 masks NMI; the other CMOS bytes are RAM', () => {
    const { r, get, set } = rtc();
    r.out(0x70, 1, 0x80 | 0x0f);
    assert.equal(r.nmiMasked, true);
    set(0x40, 0xa5);
    assert.equal(r.nmiMasked, false);
    assert.equal(get(0x40), 0xa5);
  });
});
