/**
 * What a stop of the Linux machine shows that needs more than one read:
 * the Registers scope at a gutter probe's hit (the probed context out of
 * the guest's struct pt_regs), a frame's parameters and locals (the
 * vmlinux's DWARF over the guest's page tables), and the Disassembly view's
 * rows (the executable pages near an address copied into a private space).
 */
import { toVAddr } from '../memory/address';
import { Memory, PERM_R, PERM_X } from '../memory/memory';
import type { ScopeAt } from '../elf/dwarf/scopes';
import { disassemblyRows, type DisassemblyRow } from './disassembly';
import { frameVariables, type FrameState, type FrameVariables } from './variables';
import { hex64 } from '../memory/address';
import type { LinuxTarget, LinuxRegister } from './linuxTarget';

/** pt_regs members as the Registers scope names them */
export const PT_REGS_ROWS: Record<string, string> = {
  rax: 'ax', rbx: 'bx', rcx: 'cx', rdx: 'dx', rsi: 'si', rdi: 'di', rbp: 'bp', rsp: 'sp',
  r8: 'r8', r9: 'r9', r10: 'r10', r11: 'r11', r12: 'r12', r13: 'r13', r14: 'r14', r15: 'r15', rflags: 'flags',
};

/** the System V x86_64 DWARF register numbers 0-15 as hardware register numbers (rax rdx rcx rbx rsi rdi rbp rsp r8-r15) */
const DWARF_TO_HW = [0, 2, 1, 3, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15];
const DWARF_RSP = 7, DWARF_RBP = 6, DWARF_RIP = 16;
/** the same as struct pt_regs members */
const DWARF_PT_REGS = ['ax', 'dx', 'cx', 'bx', 'si', 'di', 'bp', 'sp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15'];

/** the CPU's registers; at a gutter probe's hit on that CPU, the probed context's (the guest's pt_regs) */
export function linuxRegisters(t: LinuxTarget, cpu: number): LinuxRegister[] {
  const rows = [...t.cpuDebug(cpu).registers()];
  const ctx = t.probeContext(cpu);
  if (!ctx) return rows;
  return rows.map(r => {
    const m = r.name === 'rip' ? undefined : PT_REGS_ROWS[r.name];
    const v = r.name === 'rip' ? ctx.pc : m !== undefined ? ctx.regs.get(m) : undefined;
    return v === undefined ? r : { name: r.name, value: `0x${hex64(v)}` };
  });
}

/**
 * The parameters and locals of frame `k` of a stopped CPU (the vmlinux's
 * DWARF, values through the guest's page tables): the top frame with
 * every register, outer frames with their stack pointer, rbp and the CFA
 * ORC gives (their other registers are unknown: shown optimized out).
 */
export function linuxFrameVariables(t: LinuxTarget, cpu: number, k: number, at: ScopeAt = {}): FrameVariables {
  if (!t.vmlinux) return { ok: false, reason: 'no vmlinux: set "vmlinux" in launch.json for the variables' };
  const f = t.frames(cpu)[k];
  if (!f) return { ok: false, reason: `no frame ${k}` };
  const regs = new Map<number, bigint>();
  const ctx = t.probeContext(cpu);
  if (k === 0 && ctx) DWARF_PT_REGS.forEach((m, d) => { const v = ctx.regs.get(m); if (v !== undefined) regs.set(d, v); });
  else if (k === 0) DWARF_TO_HW.forEach((hw, d) => regs.set(d, t.reg(cpu, hw)));
  else {
    regs.set(DWARF_RSP, f.sp);
    if (f.bp !== undefined) regs.set(DWARF_RBP, f.bp);
  }
  const pc = k === 0 || f.signal ? f.pc : f.pc - 1n;
  regs.set(DWARF_RIP, pc);
  const state: FrameState = { pc, level: k, regs, cfa: f.cfa, ...at };
  try {
    // module code: the module's DWARF (linuxModuleDebug.ts)
    return frameVariables(t.debugImage(pc) ?? t.vmlinux, state, t.memReader(cpu));
  } catch (e) {
    return { ok: false, reason: `the DWARF of ${t.where(f.pc)} cannot be read: ${(e as Error).message}` };
  }
}

/**
 * Disassembly rows around `base` through CPU `cpu`'s page tables: the
 * executable pages near it copied into a private address space (the
 * decoder reads only that copy), labelled by the vmlinux's symbols.
 */
export function linuxDisassemble(t: LinuxTarget, cpu: number, base: bigint, insnOffset: number, count: number): DisassemblyRow[] {
  if (!t.vmlinux) throw new Error('the Disassembly view needs the kernel\'s symbols: set "vmlinux" in launch.json');
  const pages = t.pages(cpu);
  const mem = new Memory('guest code');
  const span = BigInt(Math.min(256, 16 + Math.ceil((Math.abs(insnOffset) + count) * 15 / 4096)));
  const first = (BigInt.asUintN(64, base) & ~0xfffn) - span * 4096n;
  for (let k = 0n; k <= 2n * span; k++) {
    const va = first + k * 4096n;
    const v = toVAddr(va);
    const tr = v === null ? undefined : pages.translate(va);
    if (v === null || !tr || !tr.executable) continue;
    const bytes = pages.read(va, 4096);
    if (bytes.length < 4096) continue;
    mem.map(v, 4096, PERM_R | PERM_X, 'guest page', undefined, bytes);
  }
  return disassemblyRows({ arch: t.arch, mem, image: t.vmlinux }, base, insnOffset, count);
}
