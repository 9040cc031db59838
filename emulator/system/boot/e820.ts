/**
 * The PC's physical memory map as the BIOS E820 call would report it, which
 * a 64-bit boot loader hands the kernel in boot_params: conventional memory
 * below the EBDA, the legacy BIOS area reserved (the platform's ACPI tables
 * live there), RAM from 1 MiB up to the PCI hole at 3 GiB, the rest above
 * 4 GiB.
 */
export const E820_RAM = 1;
export const E820_RESERVED = 2;

export interface E820Entry {
  readonly addr: number;
  readonly size: number;
  /** E820_RAM, E820_RESERVED, ... */
  readonly type: number;
}

/** the top of conventional memory: the EBDA's 1 KiB below 640 KiB is reserved */
export const EBDA = 0x9fc00;
/** the reserved BIOS area where a PC keeps its firmware tables (the ACPI RSDP scan range) */
export const BIOS_AREA = 0xe0000;
export const HIGH_MEMORY = 0x100000;
/** RAM above this (the 32-bit PCI / APIC hole) continues at 4 GiB */
export const PCI_HOLE = 0xc0000000;
export const FOUR_GIB = 0x100000000;

/** The E820 map of a PC with `ramBytes` of RAM (at least 2 MiB). */
export function pcE820(ramBytes: number): E820Entry[] {
  const low = Math.min(ramBytes, PCI_HOLE);
  const map: E820Entry[] = [
    { addr: 0, size: EBDA, type: E820_RAM },
    { addr: EBDA, size: 0xa0000 - EBDA, type: E820_RESERVED },
    { addr: BIOS_AREA, size: HIGH_MEMORY - BIOS_AREA, type: E820_RESERVED },
    { addr: HIGH_MEMORY, size: low - HIGH_MEMORY, type: E820_RAM },
  ];
  if (ramBytes > PCI_HOLE) map.push({ addr: FOUR_GIB, size: ramBytes - PCI_HOLE, type: E820_RAM });
  return map;
}

/** The physical ranges that are RAM in the map (the machine maps exactly these as memory). */
export const ramRanges = (map: readonly E820Entry[]): E820Entry[] => map.filter(e => e.type === E820_RAM);
