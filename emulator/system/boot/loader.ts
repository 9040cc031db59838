/**
 * A 64-bit boot loader for Linux bzImages on the full-system PC: it checks
 * the image, the initrd, the command line and the memory size (one
 * BootError line each), places the protected-mode kernel at its preferred
 * address, the initrd as high as initrd_addr_max allows, boot_params and
 * the command line in low memory, builds the identity map and the GDT, and
 * returns all of it as data: the bytes to write into physical RAM and the
 * 64-bit entry state (entry64.ts). `applyBootPlan` writes the bytes.
 *
 * Low memory the loader uses (below the EBDA, all in E820 RAM the kernel is
 * free to reuse once it has copied boot_params and left these tables):
 *   0x1000 GDT, 0x7000 boot_params (the stack grows down from it),
 *   0x9000..0xefff identity map, 0x20000 command line.
 */
import type { Memory } from '../../memory/memory';
import { BootError, parseSetupHeader, protocolName, type SetupHeader } from './setupHeader';
import { buildBootParams } from './bootParams';
import { E820_RAM, pcE820, type E820Entry, HIGH_MEMORY, PCI_HOLE } from './e820';
import { buildGdt, buildIdentityMap, entry64, IDENTITY_MAP_BYTES, type Entry64State } from './entry64';
import { initrdFormat } from './initrd';

export const GDT_ADDR = 0x1000;
export const BOOT_PARAMS_ADDR = 0x7000;
export const PAGE_TABLES_ADDR = 0x9000;
export const CMDLINE_ADDR = 0x20000;
const MIB = 1024 * 1024;

export interface BootFile {
  /** the name the user gave (for the error line) */
  readonly name: string;
  readonly data: Uint8Array;
}

export interface LinuxBootRequest {
  readonly kernel: BootFile;
  readonly initrd?: BootFile;
  readonly cmdline: string;
  /** RAM in bytes */
  readonly memoryBytes: number;
  /** the ACPI RSDP's physical address, when the platform provides tables */
  readonly acpiRsdp?: number;
}

export interface BootWrite {
  readonly addr: number;
  readonly bytes: Uint8Array;
  readonly what: string;
}

export interface LinuxBootPlan {
  readonly header: SetupHeader;
  /** "2.15" */
  readonly protocol: string;
  readonly loadAddress: number;
  /** load address + init_size: the end of the memory the kernel decompresses and runs in */
  readonly kernelEnd: number;
  readonly bootParams: number;
  readonly cmdline: number;
  readonly initrd?: { readonly addr: number; readonly size: number; readonly format: string };
  readonly e820: readonly E820Entry[];
  /** what goes into physical RAM before the first instruction, lowest address first */
  readonly writes: readonly BootWrite[];
  readonly entry: Entry64State;
}

const hex = (v: number): string => `0x${v.toString(16)}`;
const mib = (v: number): string => `${Math.ceil(v / MIB)} MiB`;
const alignUp = (v: number, a: number): number => Math.ceil(v / a) * a;

export function planLinuxBoot(req: LinuxBootRequest): LinuxBootPlan {
  const kname = req.kernel.name;
  const header = parseSetupHeader(kname, req.kernel.data);
  const cmdBytes = new TextEncoder().encode(req.cmdline);
  if (cmdBytes.length > header.cmdlineSize) {
    throw new BootError(kname, `the command line is ${cmdBytes.length} bytes; this kernel takes at most ${header.cmdlineSize} (cmdline_size)`);
  }
  const format = req.initrd ? initrdFormat(req.initrd.name, req.initrd.data) : undefined;
  const align = Math.max(header.kernelAlignment, 0x200000);
  const pref = Number(header.prefAddress);
  const loadAddress = header.relocatable || pref === 0 ? alignUp(Math.max(pref, HIGH_MEMORY), align) : pref;
  const kernelEnd = loadAddress + header.initSize;
  const e820 = pcE820(req.memoryBytes);
  const lowRamEnd = Math.min(req.memoryBytes, PCI_HOLE);
  const initrdSize = req.initrd?.data.length ?? 0;
  const need = alignUp(kernelEnd, 0x1000) + alignUp(initrdSize, 0x1000);
  if (req.memoryBytes < 2 * MIB || need > lowRamEnd) {
    const what = req.initrd
      ? `the kernel needs [${hex(loadAddress)}, +init_size ${hex(header.initSize)}) and the initrd ${initrdSize} bytes above it`
      : `the kernel needs [${hex(loadAddress)}, +init_size ${hex(header.initSize)})`;
    throw new BootError(kname, `--memory ${mib(req.memoryBytes)} is too small: ${what}: at least ${mib(need)}`);
  }
  let initrd: LinuxBootPlan['initrd'];
  if (req.initrd && format) {
    const top = Math.min(lowRamEnd, header.initrdAddrMax + 1, IDENTITY_MAP_BYTES);
    const addr = Math.floor((top - initrdSize) / 0x1000) * 0x1000;
    if (addr < alignUp(kernelEnd, 0x1000)) {
      throw new BootError(kname, `--memory ${mib(req.memoryBytes)} leaves no room for the ${initrdSize}-byte initrd below initrd_addr_max ${hex(header.initrdAddrMax)} above the kernel (ends at ${hex(kernelEnd)})`);
    }
    initrd = { addr, size: initrdSize, format };
  }
  const cmdline = new Uint8Array(cmdBytes.length + 1);
  cmdline.set(cmdBytes);
  const bootParams = buildBootParams({ header, cmdlineAddr: CMDLINE_ADDR, initrd, e820, acpiRsdp: req.acpiRsdp });
  const kernelImage = req.kernel.data.subarray(header.kernelOffset);
  const writes: BootWrite[] = [
    { addr: GDT_ADDR, bytes: buildGdt(), what: 'GDT' },
    { addr: BOOT_PARAMS_ADDR, bytes: bootParams, what: 'boot_params' },
    { addr: PAGE_TABLES_ADDR, bytes: buildIdentityMap(PAGE_TABLES_ADDR), what: 'identity map' },
    { addr: CMDLINE_ADDR, bytes: cmdline, what: 'command line' },
    { addr: loadAddress, bytes: kernelImage, what: `kernel (protected-mode part of ${kname})` },
  ];
  if (initrd && req.initrd) writes.push({ addr: initrd.addr, bytes: req.initrd.data, what: `initrd ${req.initrd.name}` });
  const entry = entry64({ loadAddress, bootParams: BOOT_PARAMS_ADDR, pageTables: PAGE_TABLES_ADDR, gdt: GDT_ADDR, stackTop: BOOT_PARAMS_ADDR });
  return { header, protocol: protocolName(header), loadAddress, kernelEnd, bootParams: BOOT_PARAMS_ADDR, cmdline: CMDLINE_ADDR, initrd, e820, writes, entry };
}

/** Write a plan's bytes into physical memory (which must map the plan's E820 RAM). */
export function applyBootPlan(mem: Memory, plan: LinuxBootPlan): void {
  for (const w of plan.writes) mem.writeBytes(w.addr, w.bytes, 'loader');
}

/** Is [addr, addr+len) inside the plan's E820 RAM? */
export function inRam(plan: LinuxBootPlan, addr: number, len: number): boolean {
  return plan.e820.some(e => e.type === E820_RAM && addr >= e.addr && addr + len <= e.addr + e.size);
}
