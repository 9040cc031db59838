/**
 * The ACPI tables as Linux's ACPICA reads them: the RSDP found by the
 * legacy scan (16-byte aligned "RSD PTR " in 0xe0000-0xfffff) with valid
 * 20-byte and extended checksums, RSDT / XSDT pointing to the same tables,
 * every table's header length and checksum, the FADT's 32-bit and 64-bit
 * (X_) addresses agreeing, the MADT's entries walked as
 * acpi_table_parse_madt does, the DSDT's \_S5 package, the FACS alignment;
 * and the ACPI PM timer / PM1 control block they describe.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildAcpi, byteSum, RSDP_ADDR, S5_AML, FADT_RESET_REGISTER, BOOT_ARCH_8042 } from '../../../emulator/system/acpi/tables';
import { AcpiPm, PM1A_CNT, PM1A_EVT, PM_TMR, PM_TIMER_HZ, SCI_IRQ, SLP_TYP_S5 } from '../../../emulator/system/devices/acpiPm';
import { IOAPIC_DEFAULT_BASE } from '../../../emulator/system/devices/ioApic';
import { TestClock } from '../devices/fakeClock';

const blob = buildAcpi({ cpus: 2, ioApicId: 2 });
const at = (phys: number, len: number): Uint8Array => blob.bytes.subarray(phys - blob.base, phys - blob.base + len);
const dv = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
const sig = (b: Uint8Array, off = 0, n = 4): string => String.fromCharCode(...b.subarray(off, off + n));
/** a table by physical address, checked: header length, checksum */
function table(phys: number, signature: string): Uint8Array {
  const len = dv(at(phys, 8)).getUint32(4, true);
  const t = at(phys, len);
  assert.equal(sig(t), signature);
  assert.ok(len >= 36);
  assert.equal(byteSum(t), 0, `${signature} checksum`);
  return t;
}

describe('ACPI tables', () => {
  test('the RSDP: found by the legacy scan, both checksums, revision 2 with RSDT and XSDT', () => {
    let found = -1;
    for (let a = 0xe0000; a < 0x100000; a += 16) {
      if (a < blob.base || a + 36 > blob.base + blob.bytes.length) continue;
      if (sig(at(a, 8), 0, 8) === 'RSD PTR ' && byteSum(at(a, 20)) === 0) { found = a; break; }
    }
    assert.equal(found, RSDP_ADDR);
    const r = at(found, 36);
    assert.equal(r[15], 2);
    assert.equal(dv(r).getUint32(20, true), 36);
    assert.equal(byteSum(r), 0, 'extended checksum');
    const rsdt = table(dv(r).getUint32(16, true), 'RSDT');
    const xsdt = table(Number(dv(r).getBigUint64(24, true)), 'XSDT');
    const r32 = Array.from({ length: (rsdt.length - 36) / 4 }, (_, i) => dv(rsdt).getUint32(36 + 4 * i, true));
    const x64 = Array.from({ length: (xsdt.length - 36) / 8 }, (_, i) => Number(dv(xsdt).getBigUint64(36 + 8 * i, true)));
    assert.deepEqual(r32, x64);
    assert.deepEqual(x64.map(p => sig(at(p, 4))), ['FACP', 'APIC']);
  });

  test('the FADT: DSDT and FACS (64-byte aligned) agree in 32 and 64 bits; PM blocks, SCI, reset register, no 8042, century', () => {
    const f = dv(table(blob.tables.get('FACP')!, 'FACP'));
    assert.equal(f.byteLength, 244);
    const facs = f.getUint32(36, true), dsdt = f.getUint32(40, true);
    assert.equal(Number(f.getBigUint64(132, true)), facs);
    assert.equal(Number(f.getBigUint64(140, true)), dsdt);
    assert.equal(facs % 64, 0);
    const fa = at(facs, 64);
    assert.equal(sig(fa), 'FACS');
    assert.equal(dv(fa).getUint32(4, true), 64);
    table(dsdt, 'DSDT');
    assert.equal(f.getUint16(46, true), SCI_IRQ);
    assert.deepEqual([f.getUint32(56, true), f.getUint32(64, true), f.getUint32(76, true)], [PM1A_EVT, PM1A_CNT, PM_TMR]);
    assert.deepEqual([f.getUint8(88), f.getUint8(89), f.getUint8(91)], [4, 2, 4]);
    const gas = (off: number): [number, number, number] => [f.getUint8(off), f.getUint8(off + 1), Number(f.getBigUint64(off + 4, true))];
    assert.deepEqual(gas(148), [1, 32, PM1A_EVT]);
    assert.deepEqual(gas(172), [1, 16, PM1A_CNT]);
    assert.deepEqual(gas(208), [1, 32, PM_TMR]);
    assert.ok(f.getUint32(112, true) & FADT_RESET_REGISTER);
    assert.deepEqual(gas(116), [1, 8, 0xcf9]);
    assert.equal(f.getUint8(128), 0x06);
    assert.equal(f.getUint16(109, true) & BOOT_ARCH_8042, 0, 'no 8042: Linux does not probe the i8042');
    assert.equal(f.getUint8(108), 0x32);
  });

  test('the MADT: a local APIC per CPU, the IO-APIC, IRQ0 -> GSI 2 and the SCI override, LINT1 NMI', () => {
    const m = table(blob.tables.get('APIC')!, 'APIC');
    const d = dv(m);
    assert.equal(d.getUint32(36, true), 0xfee00000);
    assert.equal(d.getUint32(40, true) & 1, 1, 'PCAT_COMPAT');
    const entries: string[] = [];
    for (let o = 44; o < m.length;) {
      const type = m[o], len = m[o + 1];
      assert.ok(len >= 2 && o + len <= m.length, 'each subtable inside the table');
      if (type === 0) entries.push(`lapic uid ${m[o + 2]} id ${m[o + 3]} flags ${d.getUint32(o + 4, true)}`);
      if (type === 1) entries.push(`ioapic id ${m[o + 2]} at ${d.getUint32(o + 4, true).toString(16)} gsi ${d.getUint32(o + 8, true)}`);
      if (type === 2) entries.push(`iso irq ${m[o + 3]} gsi ${d.getUint32(o + 4, true)} flags ${d.getUint16(o + 8, true)}`);
      if (type === 4) entries.push(`nmi uid ${m[o + 2].toString(16)} lint ${m[o + 5]}`);
      o += len;
    }
    assert.deepEqual(entries, [
      'lapic uid 0 id 0 flags 1', 'lapic uid 1 id 1 flags 1',
      `ioapic id 2 at ${IOAPIC_DEFAULT_BASE.toString(16)} gsi 0`,
      'iso irq 0 gsi 2 flags 0', 'iso irq 9 gsi 9 flags 13',
      'nmi uid ff lint 1',
    ]);
  });

  test('the DSDT holds \\_S5 = Package { 5, 5, 0, 0 } (the PM1 control block\'s soft-off type)', () => {
    const f = dv(table(blob.tables.get('FACP')!, 'FACP'));
    const d = table(f.getUint32(40, true), 'DSDT');
    assert.deepEqual([...d.subarray(36)], [...S5_AML]);
    const pkg = d.subarray(36 + 5);
    assert.equal(pkg[0], 0x12, 'PackageOp');
    assert.equal(pkg[1], pkg.length - 1, 'PkgLength covers the package');
    assert.equal(pkg[2], 4);
    assert.deepEqual([pkg[4], pkg[6]], [SLP_TYP_S5, SLP_TYP_S5]);
  });

  test('the tables fit the reserved BIOS area; too many CPUs is refused', () => {
    assert.ok(blob.base >= 0xe0000 && blob.base + blob.bytes.length <= 0x100000);
    assert.ok(buildAcpi({ cpus: 64, ioApicId: 64 }).bytes.length < 0x10000);
    assert.throws(() => buildAcpi({ cpus: 256, ioApicId: 0 }), /256 CPUs/);
  });
});

describe('ACPI PM hardware', () => {
  test('the PM timer counts at 3.579545 MHz in 24 bits; PM1 control keeps SCI_EN; SLP_EN with SLP_TYP enters the sleep state', () => {
    const clock = new TestClock(), sleeps: number[] = [];
    const pm = new AcpiPm(clock, t => sleeps.push(t));
    clock.ns = 1_000_000_000n;
    assert.equal(pm.in(PM_TMR, 4), Number(PM_TIMER_HZ));
    clock.ns = 5_000_000_000n;
    assert.equal(pm.in(PM_TMR, 4), Number((PM_TIMER_HZ * 5n) & 0xffffffn), 'wraps at 24 bits');
    assert.equal(pm.in(PM1A_CNT, 2) & 1, 1);
    pm.out(PM1A_CNT, 2, SLP_TYP_S5 << 10);
    assert.deepEqual(sleeps, []);
    pm.out(PM1A_CNT, 2, (SLP_TYP_S5 << 10) | (1 << 13));
    assert.deepEqual(sleeps, [SLP_TYP_S5]);
    pm.out(PM1A_EVT + 2, 2, 0x0120);
    assert.equal(pm.in(PM1A_EVT + 2, 2), 0x0120);
  });
});
