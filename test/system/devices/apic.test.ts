/**
 * The local APIC and the IO-APIC against the SDM / 82093AA behaviour:
 * acceptance, priority (TPR / PPR), EOI and the level-triggered broadcast,
 * IPIs through the ICR (fixed, shorthands, logical flat / cluster
 * destinations, lowest priority, NMI, INIT / SIPI), the timer in one-shot,
 * periodic and TSC-deadline modes with the divider, ESR, the virtual-wire
 * hand-off state with the PICs on LINT0, IA32_APIC_BASE, and the IO-APIC's
 * redirection table with edge and level pins.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ApicBus, ApicMmio } from '../../../emulator/system/devices/apicBus';
import { LocalApic, R, APIC_VERSION, ESR_SEND_ILLEGAL_VECTOR, type ExtIntSource } from '../../../emulator/system/devices/localApic';
import { IoApic, IOAPIC_VERSION, RTE_REMOTE_IRR } from '../../../emulator/system/devices/ioApic';
import { PcPlatformMsrs, MSR_IA32_APIC_BASE, MSR_IA32_TSC_DEADLINE } from '../../../emulator/system/devices/platformMsrs';
import { PicPair } from '../../../emulator/system/devices/pic8259';
import { TestClock } from './fakeClock';

const TIMER_HZ = 100_000_000n; // 100 MHz: 10 ns a tick

function machine(cpus = 2, extInt: ExtIntSource | null = null) {
  const clock = new TestClock(), bus = new ApicBus();
  const apics = Array.from({ length: cpus }, (_, i) => new LocalApic(i, bus, clock, TIMER_HZ, i === 0, i === 0 ? extInt : null));
  const io = new IoApic(bus, cpus);
  const w = (cpu: number, reg: number, v: number): void => apics[cpu].write(reg, 4, BigInt(v));
  const r = (cpu: number, reg: number): number => Number(apics[cpu].read(reg, 4));
  for (let i = 0; i < cpus; i++) w(i, R.svr, 0x1ff); // software enable, spurious vector 0xff
  return { clock, bus, apics, io, w, r };
}
/** take the interrupt the CPU would take now */
const take = (a: LocalApic): number => { const v = a.pendingVector(); if (v >= 0) a.acknowledge(v); return v; };

describe('local APIC', () => {
  test('ID, version, DFR and SVR reset values', () => {
    const { r, apics } = machine();
    assert.equal(r(1, R.id) >>> 24, 1);
    assert.equal(r(0, R.version), APIC_VERSION);
    assert.equal(r(0, R.version) & 0xff, 0x14);
    assert.equal((r(0, R.version) >> 16) & 0xff, 5, 'six LVT entries');
    assert.equal(r(0, R.dfr) >>> 0, 0xffffffff);
    apics[1].reset();
    assert.equal(r(1, R.svr), 0xff, 'software disabled after reset');
    assert.equal(r(1, R.lvtTimer) & (1 << 16), 1 << 16, 'LVTs masked');
  });

  test('the highest vector above the processor priority is offered; INTA moves it IRR -> ISR; EOI clears the highest ISR', () => {
    const { apics, r, w } = machine();
    const a = apics[0];
    a.accept(0x31, false);
    a.accept(0x41, false);
    assert.equal(a.pendingVector(), 0x41);
    a.acknowledge(0x41);
    assert.equal(r(0, R.isr + 0x20) >>> 1 & 1, 1, 'ISR bit 0x41');
    assert.equal(r(0, R.ppr), 0x40);
    assert.equal(a.pendingVector(), -1, '0x31 is below the in-service class 4');
    a.accept(0x45, false);
    assert.equal(a.pendingVector(), -1, 'same class as in service: not delivered');
    a.accept(0x51, false);
    assert.equal(take(a), 0x51);
    w(0, R.eoi, 0);
    assert.equal(r(0, R.ppr), 0x40);
    w(0, R.eoi, 0);
    assert.equal(take(a), 0x45);
  });

  test('TPR blocks classes at or below it', () => {
    const { apics, w, r } = machine();
    w(0, R.tpr, 0x50);
    apics[0].accept(0x52, false);
    assert.equal(apics[0].pendingVector(), -1);
    assert.equal(r(0, R.ppr), 0x50);
    w(0, R.tpr, 0x40);
    assert.equal(apics[0].pendingVector(), 0x52);
  });

  test('fixed IPIs: physical destination, self, all-excluding-self; a vector below 16 is a send error in ESR', () => {
    const { apics, w, r } = machine(3);
    w(0, R.icrHi, 2 << 24); w(0, R.icrLo, 0x61);
    assert.deepEqual(apics.map(a => a.pendingVector()), [-1, -1, 0x61]);
    w(1, R.icrLo, (1 << 18) | 0x62);
    assert.equal(take(apics[1]), 0x62);
    w(1, R.eoi, 0);
    w(0, R.icrLo, (3 << 18) | 0x63);
    assert.deepEqual(apics.map(a => a.pendingVector()), [-1, 0x63, 0x63]);
    assert.equal(r(0, R.icrLo) & (1 << 12), 0, 'delivery status idle');
    w(0, R.icrLo, 0x05);
    w(0, R.esr, 0);
    assert.equal(r(0, R.esr), ESR_SEND_ILLEGAL_VECTOR);
    w(0, R.esr, 0);
    assert.equal(r(0, R.esr), 0);
  });

  test('logical destinations: flat model bit masks, cluster model; lowest priority picks the lowest TPR, then the lowest ID', () => {
    const { apics, w } = machine(3);
    [0, 1, 2].forEach(i => w(i, R.ldr, (1 << i) << 24));
    w(0, R.icrHi, 0x06 << 24); w(0, R.icrLo, (1 << 11) | 0x70);
    assert.deepEqual(apics.map(a => a.pendingVector()), [-1, 0x70, 0x70]);
    [0, 1, 2].forEach(i => { w(i, R.dfr, 0x0fffffff); w(i, R.ldr, (0x10 | (1 << i)) << 24); });
    w(0, R.icrHi, 0x11 << 24); w(0, R.icrLo, (1 << 11) | 0x71);
    assert.equal(apics[0].pendingVector(), 0x71, 'cluster 1, member 0');
    w(1, R.tpr, 0x20); w(0, R.tpr, 0x30);
    w(0, R.icrHi, 0x17 << 24); w(0, R.icrLo, (1 << 11) | (1 << 8) | 0x80);
    const has80 = (i: number): boolean => (Number(apics[i].read(R.irr + 0x40, 4)) & 1) === 1;
    assert.deepEqual([0, 1, 2].map(has80), [false, false, true], 'APIC 2 has TPR 0: the lowest priority of the three');
  });

  test('INIT resets the target and calls the CPU; SIPI passes its vector; INIT de-assert does nothing; NMI is pending until taken', () => {
    const { apics, w } = machine();
    const log: string[] = [];
    apics[1].onInit = () => log.push('init');
    apics[1].onStartup = v => log.push(`sipi ${v.toString(16)}`);
    w(1, R.tpr, 0x20);
    w(0, R.icrHi, 1 << 24);
    w(0, R.icrLo, 0xc500); // INIT, level assert, level-triggered
    w(0, R.icrLo, 0x8500); // INIT de-assert
    w(0, R.icrLo, 0x0699); // SIPI, vector 0x99: start at 0x99000
    assert.deepEqual(log, ['init', 'sipi 99']);
    assert.equal(Number(apics[1].read(R.tpr, 4)), 0, 'INIT reset the registers');
    w(0, R.icrLo, 0x0400);
    assert.equal(apics[1].nmiPending(), true);
    apics[1].acknowledge(2);
    assert.equal(apics[1].nmiPending(), false);
  });

  test('one-shot timer: counts down at timerHz / divide, interrupts once at zero', () => {
    const { apics, w, r, clock } = machine();
    const a = apics[0];
    w(0, R.timerDivide, 0x3); // divide by 16
    w(0, R.lvtTimer, 0x40);
    w(0, R.timerInitial, 1000);
    assert.equal(a.nextEventNs(), 1000n * 16n * 10n);
    clock.ns = 500n * 16n * 10n;
    assert.equal(r(0, R.timerCurrent), 500);
    a.advance(clock.ns);
    assert.equal(a.pendingVector(), -1);
    clock.ns = 160_000n; a.advance(clock.ns);
    assert.equal(take(a), 0x40);
    assert.equal(r(0, R.timerCurrent), 0);
    assert.equal(a.nextEventNs(), null);
  });

  test('periodic timer reloads from the initial count; a masked LVT still counts but does not interrupt; divide 1 (0xb)', () => {
    const { apics, w, r, clock } = machine();
    const a = apics[0];
    w(0, R.timerDivide, 0xb);
    w(0, R.lvtTimer, (1 << 17) | 0x41);
    w(0, R.timerInitial, 100);
    clock.ns = 1000n; a.advance(clock.ns);
    assert.equal(take(a), 0x41);
    w(0, R.eoi, 0);
    assert.equal(a.nextEventNs(), 2000n);
    clock.ns = 1250n;
    assert.equal(r(0, R.timerCurrent), 75);
    clock.ns = 5500n; a.advance(clock.ns);
    assert.equal(take(a), 0x41, 'several periods passed: one interrupt');
    assert.equal(a.nextEventNs(), 6000n);
    w(0, R.lvtTimer, (1 << 17) | (1 << 16) | 0x41);
    clock.ns = 6000n; a.advance(clock.ns);
    assert.equal(a.pendingVector(), -1);
    assert.equal(a.nextEventNs(), 7000n);
  });

  test('TSC-deadline mode: IA32_TSC_DEADLINE arms, fires when the TSC reaches it and clears; the initial count is ignored', () => {
    const { apics, w, r, clock } = machine();
    const msrs = new PcPlatformMsrs(apics);
    const a = apics[0];
    assert.equal(msrs.wrmsr(0, MSR_IA32_TSC_DEADLINE, 5000n), true);
    assert.equal(msrs.rdmsr(0, MSR_IA32_TSC_DEADLINE), 0n, 'ignored outside TSC-deadline mode');
    w(0, R.lvtTimer, (2 << 17) | 0xec);
    w(0, R.timerInitial, 100);
    assert.equal(r(0, R.timerInitial), 0);
    msrs.wrmsr(0, MSR_IA32_TSC_DEADLINE, 4000n); // the TSC runs at 2 GHz: 2000 ns
    assert.equal(a.nextEventNs(), 2000n);
    clock.ns = 1999n; a.advance(clock.ns);
    assert.equal(a.pendingVector(), -1);
    clock.ns = 2000n; a.advance(clock.ns);
    assert.equal(take(a), 0xec);
    assert.equal(msrs.rdmsr(0, MSR_IA32_TSC_DEADLINE), 0n);
  });

  test('the hand-off state is virtual wire: the PICs reach the BSP through LINT0 (ExtINT) while the APIC is software-disabled; masking LINT0 cuts them off', () => {
    const pics = new PicPair();
    for (const [p, v] of [[0x20, 0x11], [0x21, 0x30], [0x21, 4], [0x21, 1], [0x21, 0]] as const) pics.out(p, 1, v);
    const clock = new TestClock(), bus = new ApicBus();
    const a = new LocalApic(0, bus, clock, TIMER_HZ, true, pics);
    pics.setIrq(1, true); pics.setIrq(1, false);
    assert.equal(Number(a.read(R.lvtLint0, 4)), 0x700);
    assert.equal(a.pendingVector(), 0x31);
    a.acknowledge(0x31);
    assert.equal(pics.registers(0).isr, 2, 'the INTA went to the PIC');
    pics.out(0x20, 1, 0x20);
    a.write(R.svr, 4, 0x1ffn);
    a.write(R.lvtLint0, 4, 0x10700n);
    pics.setIrq(3, true); pics.setIrq(3, false);
    assert.equal(a.pendingVector(), -1);
    const msrs = new PcPlatformMsrs([a]);
    assert.equal(msrs.wrmsr(0, MSR_IA32_APIC_BASE, 0xfee00000n | (1n << 8n)), true, 'globally disabled');
    assert.equal(a.pendingVector(), 0x33, 'a disabled APIC passes INTR straight through');
  });

  test('IA32_APIC_BASE: reads base | EN | BSP; x2APIC, relocation and reserved bits are refused (#GP)', () => {
    const { apics } = machine();
    const msrs = new PcPlatformMsrs(apics);
    assert.equal(msrs.rdmsr(0, MSR_IA32_APIC_BASE), 0xfee00900n);
    assert.equal(msrs.rdmsr(1, MSR_IA32_APIC_BASE), 0xfee00800n);
    assert.equal(msrs.wrmsr(0, MSR_IA32_APIC_BASE, 0xfee00c00n), false);
    assert.equal(msrs.wrmsr(0, MSR_IA32_APIC_BASE, 0xfed00900n), false);
    assert.equal(msrs.wrmsr(0, MSR_IA32_APIC_BASE, 0xfee00901n), false);
    assert.equal(msrs.rdmsr(0, 0x10), undefined);
    assert.equal(msrs.wrmsr(0, 0x10, 0n), false);
  });

  test('one MMIO page, each CPU sees its own APIC', () => {
    const { bus } = machine();
    let cpu = 0;
    const mmio = new ApicMmio(bus, () => cpu);
    assert.equal(Number(mmio.read(R.id, 4)) >>> 24, 0);
    cpu = 1;
    assert.equal(Number(mmio.read(R.id, 4)) >>> 24, 1);
    mmio.write(R.tpr, 4, 0x30n);
    cpu = 0;
    assert.equal(Number(mmio.read(R.tpr, 4)), 0);
  });
});

describe('IO-APIC', () => {
  const sel = (io: IoApic, reg: number): void => io.write(0, 4, BigInt(reg));
  const rd = (io: IoApic, reg: number): number => { sel(io, reg); return Number(io.read(0x10, 4)); };
  const wr = (io: IoApic, reg: number, v: number): void => { sel(io, reg); io.write(0x10, 4, BigInt(v)); };

  test('IOREGSEL / IOWIN: ID, version (24 entries), entries masked at reset', () => {
    const { io } = machine();
    assert.equal(rd(io, 0) >>> 24, 2);
    assert.equal(rd(io, 1), IOAPIC_VERSION);
    assert.equal((rd(io, 1) >> 16) + 1, 24);
    assert.equal(rd(io, 0x10) & (1 << 16), 1 << 16);
  });

  test('an edge pin sends its vector to the destination APIC on the rising edge; masked edges are lost', () => {
    const { io, apics } = machine();
    wr(io, 0x10 + 2 * 4, 0x34);
    wr(io, 0x11 + 2 * 4, 1 << 24);
    io.setIrq(4, true);
    assert.equal(apics[1].pendingVector(), 0x34);
    assert.equal(apics[0].pendingVector(), -1);
    io.setIrq(4, true);
    apics[1].acknowledge(0x34);
    assert.equal(apics[1].pendingVector(), -1, 'no new edge');
    wr(io, 0x10 + 2 * 4, 0x10034);
    io.setIrq(4, false); io.setIrq(4, true);
    wr(io, 0x10 + 2 * 4, 0x34);
    assert.equal(apics[1].pendingVector(), -1);
  });

  test('a level pin: remote IRR until EOI, TMR set, resent after the EOI broadcast while still asserted', () => {
    const { io, apics, w } = machine();
    wr(io, 0x10 + 2 * 9, (1 << 15) | (1 << 13) | 0x49); // level, active low
    wr(io, 0x11 + 2 * 9, 0);
    io.setIrq(9, false); // active low: asserted
    assert.equal(take(apics[0]), 0x49);
    assert.equal(rd(io, 0x10 + 2 * 9) & RTE_REMOTE_IRR, RTE_REMOTE_IRR);
    assert.equal(Number(apics[0].read(R.tmr + 0x20, 4)) & (1 << 9), 1 << 9);
    w(0, R.eoi, 0);
    assert.equal(take(apics[0]), 0x49, 'still asserted: sent again');
    io.setIrq(9, true);
    w(0, R.eoi, 0);
    assert.equal(rd(io, 0x10 + 2 * 9) & RTE_REMOTE_IRR, 0);
    assert.equal(apics[0].pendingVector(), -1);
  });

  test('a level pin asserted while masked is delivered when unmasked; the EOI register at 0x40 also clears remote IRR', () => {
    const { io, apics } = machine();
    wr(io, 0x10 + 2 * 10, (1 << 16) | (1 << 15) | 0x4a);
    io.setIrq(10, true);
    assert.equal(apics[0].pendingVector(), -1);
    wr(io, 0x10 + 2 * 10, (1 << 15) | 0x4a);
    assert.equal(take(apics[0]), 0x4a);
    io.setIrq(10, false);
    io.write(0x40, 4, 0x4an);
    assert.equal(rd(io, 0x10 + 2 * 10) & RTE_REMOTE_IRR, 0);
  });
});
