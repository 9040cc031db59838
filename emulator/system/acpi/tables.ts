/**
 * Minimal ACPI tables for the full-system PC, the firmware's description
 * Linux reads (Debian's cloud kernel has no MP-table parser, so ACPI's MADT
 * is how it finds the second CPU and the IO-APIC):
 *   RSDP (revision 2)  -> RSDT and XSDT
 *   FADT (revision 3, ACPI 2.0 layout, 244 bytes) -> FACS, DSDT; the
 *        PIIX4-style PM1a event / control blocks and the PM timer
 *        (devices/acpiPm.ts), SCI on IRQ 9, the reset register (0xcf9 <- 6),
 *        IAPC_BOOT_ARCH legacy devices but no 8042, the CMOS century at 0x32
 *   DSDT: only \_S5 (the soft-off sleep type the PM1 control block knows)
 *   MADT: a local APIC per CPU, the IO-APIC, IRQ0 -> GSI 2 and SCI (IRQ 9,
 *        level, active high) overrides, LINT1 as NMI on every CPU
 * Every table's checksum makes its bytes sum to 0 (mod 256); the RSDP has
 * its 20-byte and its extended checksum. Laid out in the reserved BIOS area
 * (the RSDP 16-byte aligned at 0xf0000, in the range Linux scans when
 * boot_params.acpi_rsdp_addr is 0).
 */
import { IOAPIC_DEFAULT_BASE } from '../devices/ioApic';
import { APIC_DEFAULT_BASE } from '../devices/localApic';
import { PM1A_CNT, PM1A_EVT, PM_TMR, SCI_IRQ, SLP_TYP_S5 } from '../devices/acpiPm';

export const RSDP_ADDR = 0xf0000;
/** the tables follow the RSDP */
const TABLES_START = 0xf0040;
export const OEM_ID = 'KPROBE';
export const OEM_TABLE_ID = 'KPDPC   ';

export interface AcpiConfig {
  /** APIC IDs of the CPUs (0..n-1) */
  readonly cpus: number;
  readonly ioApicId: number;
}

export interface AcpiBlob {
  /** physical address of `bytes` */
  readonly base: number;
  readonly bytes: Uint8Array;
  readonly rsdp: number;
  /** where each table went, by signature */
  readonly tables: ReadonlyMap<string, number>;
}

const ascii = (s: string): number[] => [...s].map(c => c.charCodeAt(0));

/** sum of bytes mod 256 */
export const byteSum = (b: Uint8Array): number => b.reduce((a, x) => (a + x) & 0xff, 0);

class Table {
  readonly b: number[] = [];
  u8(v: number): this { this.b.push(v & 0xff); return this; }
  u16(v: number): this { return this.u8(v).u8(v >> 8); }
  u32(v: number): this { return this.u16(v & 0xffff).u16(Math.floor(v / 0x10000)); }
  u64(v: number): this { return this.u32(v % 0x100000000).u32(Math.floor(v / 0x100000000)); }
  str(s: string): this { this.b.push(...ascii(s)); return this; }
  /** Generic Address Structure: system I/O space */
  gasIo(port: number, bits: number, accessSize: number): this {
    return port ? this.u8(1).u8(bits).u8(0).u8(accessSize).u64(port) : this.u8(0).u8(0).u8(0).u8(0).u64(0);
  }
}

/** a table with the standard 36-byte header; length and checksum filled in */
function sdt(signature: string, revision: number, body: (t: Table) => void): Uint8Array {
  const t = new Table();
  t.str(signature).u32(0).u8(revision).u8(0).str(OEM_ID).str(OEM_TABLE_ID).u32(1).str('KPDB').u32(1);
  body(t);
  const out = Uint8Array.from(t.b);
  new DataView(out.buffer).setUint32(4, out.length, true);
  out[9] = (256 - byteSum(out)) & 0xff;
  return out;
}

export function madt(cfg: AcpiConfig): Uint8Array {
  return sdt('APIC', 3, t => {
    t.u32(APIC_DEFAULT_BASE).u32(1); // PCAT_COMPAT: there are 8259s to disable
    for (let i = 0; i < cfg.cpus; i++) t.u8(0).u8(8).u8(i).u8(i).u32(1); // processor local APIC, enabled
    t.u8(1).u8(12).u8(cfg.ioApicId).u8(0).u32(IOAPIC_DEFAULT_BASE).u32(0);
    t.u8(2).u8(10).u8(0).u8(0).u32(2).u16(0); // ISA IRQ0 -> GSI 2, bus defaults
    t.u8(2).u8(10).u8(0).u8(SCI_IRQ).u32(SCI_IRQ).u16(0x000d); // SCI: active high, level
    t.u8(4).u8(6).u8(0xff).u16(0).u8(1); // LINT1 is NMI on all processors
  });
}

/** \_S5: Name (_S5_, Package (4) { 5, 5, 0, 0 }) in AML */
export const S5_AML = Uint8Array.of(0x08, ...ascii('_S5_'), 0x12, 0x08, 0x04, 0x0a, SLP_TYP_S5, 0x0a, SLP_TYP_S5, 0x00, 0x00);

export const dsdt = (): Uint8Array => sdt('DSDT', 2, t => { t.b.push(...S5_AML); });

export function facs(): Uint8Array {
  const t = new Table();
  t.str('FACS').u32(64).u32(0).u32(0).u32(0).u32(0).u64(0).u8(1).u8(0).u8(0).u8(0).u32(0);
  while (t.b.length < 64) t.u8(0);
  return Uint8Array.from(t.b);
}

/** FADT flags */
export const FADT_WBINVD = 1 << 0, FADT_C1_SUPPORTED = 1 << 2, FADT_POWER_BUTTON = 1 << 4, FADT_SLEEP_BUTTON = 1 << 5, FADT_RESET_REGISTER = 1 << 10;
export const BOOT_ARCH_LEGACY_DEVICES = 1 << 0, BOOT_ARCH_8042 = 1 << 1;

export function fadt(facsAddr: number, dsdtAddr: number): Uint8Array {
  return sdt('FACP', 3, t => {
    t.u32(facsAddr).u32(dsdtAddr);
    t.u8(0).u8(0).u16(SCI_IRQ).u32(0).u8(0).u8(0).u8(0).u8(0); // no SMI_CMD: always in ACPI mode
    t.u32(PM1A_EVT).u32(0).u32(PM1A_CNT).u32(0).u32(0).u32(PM_TMR).u32(0).u32(0);
    t.u8(4).u8(2).u8(0).u8(4).u8(0).u8(0).u8(0).u8(0);
    t.u16(0x0fff).u16(0x0fff); // no C2, no C3
    t.u16(0).u16(0).u8(0).u8(0);
    t.u8(0).u8(0).u8(0x32); // day / month alarm none, CMOS century register
    t.u16(BOOT_ARCH_LEGACY_DEVICES).u8(0);
    t.u32(FADT_WBINVD | FADT_C1_SUPPORTED | FADT_POWER_BUTTON | FADT_SLEEP_BUTTON | FADT_RESET_REGISTER);
    t.gasIo(0xcf9, 8, 1).u8(0x06).u16(0).u8(0);
    t.u64(facsAddr).u64(dsdtAddr);
    t.gasIo(PM1A_EVT, 32, 2).gasIo(0, 0, 0).gasIo(PM1A_CNT, 16, 2).gasIo(0, 0, 0).gasIo(0, 0, 0).gasIo(PM_TMR, 32, 3).gasIo(0, 0, 0).gasIo(0, 0, 0);
  });
}

function rsdp(rsdt: number, xsdt: number): Uint8Array {
  const t = new Table();
  t.str('RSD PTR ').u8(0).str(OEM_ID).u8(2).u32(rsdt).u32(36).u64(xsdt).u8(0).u8(0).u8(0).u8(0);
  const b = Uint8Array.from(t.b);
  b[8] = (256 - byteSum(b.subarray(0, 20))) & 0xff;
  b[32] = (256 - byteSum(b)) & 0xff;
  return b;
}

/** All tables, laid out from RSDP_ADDR; `bytes` goes to physical memory at `base`. */
export function buildAcpi(cfg: AcpiConfig): AcpiBlob {
  if (cfg.cpus < 1 || cfg.cpus > 255) throw new RangeError(`ACPI: ${cfg.cpus} CPUs: the xAPIC MADT takes 1..255`);
  const placed = new Map<string, number>();
  const parts: [number, Uint8Array][] = [];
  let at = TABLES_START;
  const place = (sig: string, b: Uint8Array, align = 16): number => {
    at = Math.ceil(at / align) * align;
    placed.set(sig, at);
    parts.push([at, b]);
    const where = at;
    at += b.length;
    return where;
  };
  const facsAt = place('FACS', facs(), 64);
  const dsdtAt = place('DSDT', dsdt());
  const fadtAt = place('FACP', fadt(facsAt, dsdtAt));
  const madtAt = place('APIC', madt(cfg));
  const pointers = [fadtAt, madtAt];
  const rsdtAt = place('RSDT', sdt('RSDT', 1, t => { for (const p of pointers) t.u32(p); }));
  const xsdtAt = place('XSDT', sdt('XSDT', 1, t => { for (const p of pointers) t.u64(p); }));
  parts.push([RSDP_ADDR, rsdp(rsdtAt, xsdtAt)]);
  const bytes = new Uint8Array(at - RSDP_ADDR);
  for (const [a, b] of parts) bytes.set(b, a - RSDP_ADDR);
  return { base: RSDP_ADDR, bytes, rsdp: RSDP_ADDR, tables: placed };
}
