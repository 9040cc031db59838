/**
 * Linux's per-CPU variables (DEFINE_PER_CPU) as one CPU of the machine sees
 * them: on x86_64 a per-CPU variable's vmlinux symbol (and its DWARF
 * DW_OP_addr) is its offset in the `.data..percpu` section, and each CPU's
 * copy is at that offset from the CPU's per-CPU base (GS base in the
 * kernel; LinuxTarget.perCpuBase). gdb on QEMU reads the offset as an
 * address ("Cannot access memory at address 0x1fb80" for current_task);
 * here the variables' values are read at base + offset through the CPU's
 * page tables, typed by the vmlinux's DWARF, and a per-CPU struct or array
 * expands from its CPU's copy.
 */
import type { ElfImage } from '../elf/types';
import { globalVariable, type FrameVariable, type MemReader } from './variables';
import type { LinuxTarget } from './linuxTarget';

interface PerCpuSection { size: bigint; names: string[] }

const sections = new WeakMap<ElfImage, PerCpuSection | null>();

function perCpuSection(image: ElfImage): PerCpuSection | null {
  if (sections.has(image)) return sections.get(image)!;
  const idx = image.sections.findIndex(s => s.name === '.data..percpu');
  const sec = idx >= 0 ? image.sections[idx] : undefined;
  // x86_64 links the per-CPU section at 0 (its symbols are offsets); other layouts are not per-CPU offsets
  const r = sec && sec.addr === 0n
    ? { size: BigInt(sec.size), names: [...new Set(image.symbols.all().filter(s => s.shndx === idx && s.type === 'object').map(s => s.name))].sort() }
    : null;
  sections.set(image, r);
  return r;
}

/** the names of the vmlinux's per-CPU variables, sorted ([] when it has none) */
export function perCpuNames(image: ElfImage): string[] { return perCpuSection(image)?.names ?? []; }

/**
 * Per-CPU variables of CPU `cpu` (all of them, or those named), with their
 * values as the Variables view shows them; why not when the CPU's per-CPU
 * area is not set up (early boot) or the vmlinux has none.
 */
export function perCpuVariables(t: LinuxTarget, cpu: number, only?: readonly string[]): FrameVariable[] | string {
  const vm = t.vmlinux;
  if (!vm) return 'per-CPU variables need the kernel\'s DWARF: set "vmlinux" in launch.json';
  const sec = perCpuSection(vm);
  if (!sec) return `${vm.path} has no x86_64 per-CPU section (.data..percpu at 0)`;
  const base = t.perCpuBase(cpu);
  if (base === 0n) return `CPU ${cpu}'s per-CPU area is not set up yet (its GS base is 0)`;
  const pages = t.pages(cpu);
  // an address inside the section is an offset: CPU `cpu`'s copy; any other is an ordinary kernel address
  const rebase = (a: bigint): bigint => (a >= 0n && a < sec.size ? BigInt.asUintN(64, base + a) : a);
  const read: MemReader = (a, n) => { const b = pages.read(rebase(a), n); return b.length === n ? b : undefined; };
  const out: FrameVariable[] = [];
  for (const name of only ?? sec.names) {
    if (only && !sec.names.includes(name)) continue;
    let v: FrameVariable | undefined;
    try { v = globalVariable(vm, name, read); } catch (e) { v = { name, type: '?', value: `<error: ${(e as Error).message}>`, kind: 'local' }; }
    if (!v) continue;
    if (v.expand) v = { ...v, expand: { ...v.expand, addr: rebase(v.expand.addr) } };
    out.push(v);
  }
  return out;
}
