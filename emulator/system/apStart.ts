/**
 * An application processor's start without 16/32-bit emulation. Linux 6.1
 * sends INIT + SIPI with vector = trampoline_start >> 12 (the real-mode
 * trampoline, arch/x86/realmode/rm/trampoline_64.S), which would go 16 ->
 * 32 -> 64-bit and jump to trampoline_header->start (secondary_startup_64)
 * with CR3 = trampoline_pgd, CR4 = trampoline_header->cr4, EFER =
 * trampoline_header->efer | LMA, CR0 = PG | WP | PE. Here the AP starts
 * right there, reading those fields from the real-mode blob:
 *
 * - the blob begins with struct real_mode_header (u32 text_start, ro_end,
 *   trampoline_start, trampoline_header, [sev_es_trampoline_start when
 *   CONFIG_AMD_MEM_ENCRYPT], trampoline_start64, trampoline_pgd, ...), page
 *   aligned below trampoline_start: found as the page whose word at +8 is
 *   the SIPI's start address;
 * - trampoline_pgd is the first page-aligned one of the two candidate words
 *   (+20 / +24, with or without the SEV field) whose PML4 entry 511 (the
 *   kernel's mapping) is present;
 * - struct trampoline_header: u64 start, u64 efer, u32 cr4.
 * The stack: the top of physical page 0 (secondary_startup_64 calls
 * verify_cpu before it loads its own stack; the real-mode stack's address
 * is not in any header, and the trampoline's text page is read-only once
 * Linux protects it). Linux reserves page 0 and never uses it; the BIOS
 * data area at 0x400-0x4ff is far below the two words pushed.
 */
import type { Memory } from '../memory/memory';
import type { LongModeStart } from './types';

const PAGE = 0x1000;
const CR0_PE = 1, CR0_ET = 0x10, CR0_WP = 0x10000, CR0_PG = 0x80000000;
const EFER_LMA = 0x400n;
const SEARCH_PAGES = 16;

/** the AP's long-mode state, or why it cannot start */
export function apStartState(mem: Memory, vector: number): LongModeStart | string {
  const startIp = vector * PAGE;
  let hdr = -1;
  for (let k = 0; k <= SEARCH_PAGES && startIp - k * PAGE >= 0; k++) {
    const b = startIp - k * PAGE;
    if (mem.read32(b + 8) >>> 0 === startIp && (mem.read32(b) >>> 0) <= startIp) { hdr = b; break; }
  }
  if (hdr < 0) return `no real_mode_header found below 0x${startIp.toString(16)}`;
  const th = mem.read32(hdr + 12) >>> 0;
  let pgd = -1;
  for (const off of [24, 20]) {
    const c = mem.read32(hdr + off) >>> 0;
    if (c !== 0 && c % PAGE === 0 && (mem.read64(c + 511 * 8) & 1n) !== 0n) { pgd = c; break; }
  }
  if (pgd < 0) return `real_mode_header at 0x${hdr.toString(16)}: no trampoline_pgd`;
  const rip = mem.read64(th);
  if (rip >> 47n !== 0x1ffffn) return `trampoline_header at 0x${th.toString(16)}: start 0x${rip.toString(16)} is not a kernel address`;
  return {
    rip,
    cr3: BigInt(pgd),
    cr0: (CR0_PE | CR0_ET | CR0_WP | CR0_PG) >>> 0,
    cr4: mem.read32(th + 16) >>> 0,
    efer: mem.read64(th + 8) | EFER_LMA,
    gdtBase: 0n,
    gdtLimit: 0,
    regs: new Map([[4, BigInt(PAGE)]]),
  };
}
