/**
 * The descriptor queries (SDM vol. 2 "LAR", "LSL", "VERR/VERW", 64-bit
 * mode): LAR and LSL load a selector's access rights or its limit and set
 * ZF when the selector is valid for them at the current CPL; VERR and VERW
 * set ZF when its segment is readable / writable from there. An invalid
 * selector (null, beyond the GDT or LDT limit, a descriptor type the
 * instruction does not take, too privileged) only clears ZF: no fault,
 * the destination unchanged. Only ZF changes. They read the descriptor
 * tables as supervisor accesses (a #PF there is the instruction's).
 * Linux's vDSO getcpu runs LSL of the per-CPU GDT entry (__CPUNODE_SEG) when
 * CPUID offers no RDPID. Without the system half they raise #UD, as they
 * did when the decoder did not know them.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { FAULT_UD } from '../../../cpu/faults';
import { ZF } from '../flags';
import type { SystemState } from '../sysmode/state';
import { descriptorAddr, parseDescriptor, sysRead32, type Descriptor } from '../sysmode/segments';

/** system descriptor types valid in IA-32e mode: LAR takes the LDT, 64-bit TSSs (available, busy) and call gate; LSL the same but the gate */
const LAR_SYSTEM = new Set([2, 9, 0xb, 0xc]);
const LSL_SYSTEM = new Set([2, 9, 0xb]);

/** the descriptor a query may look at: non-null and within its table; null otherwise (ZF = 0) */
function queried(s: SystemState, sel: number): Descriptor | null {
  if ((sel & 0xfffc) === 0) return null;
  let a: number;
  try { a = descriptorAddr(s, sel); } catch { return null; } // beyond the table's limit: not a fault here
  return parseDescriptor(sysRead32(s, a), sysRead32(s, a + 4));
}

/** DPL >= CPL and DPL >= RPL, which conforming code segments need not meet */
function visible(s: SystemState, sel: number, d: Descriptor): boolean {
  if (d.user && (d.type & 0xc) === 0xc) return true;
  return d.dpl >= s.cpl && d.dpl >= (sel & 3);
}

function setZf(cpu: X86Cpu, on: boolean): void {
  cpu.setEager((cpu.arithFlags() & ~ZF) | (on ? ZF : 0));
}

function sysOf(cpu: X86Cpu): SystemState {
  const s = cpu.sys;
  if (s === null) throw FAULT_UD;
  return s;
}

/** lar / lsl r, r/m16 (0f 02 / 0f 03: sub 0 / 1) */
export function larLsl(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  const sel = cpu.readE(i, 2) & 0xffff, lsl = i.cc === 1;
  const d = queried(s, sel);
  const ok = d !== null && (d.user || (lsl ? LSL_SYSTEM : LAR_SYSTEM).has(d.type)) && visible(s, sel, d);
  if (ok) {
    // LAR: the second doubleword's type, S, DPL, P (bits 15:8), limit 19:16 and AVL, L, D/B, G (23:16); 16-bit: 15:8 only.
    // The SDM leaves bits 19:16 undefined; Intel processors return the limit's top bits there (test/system/cpu/golden/segmentQuery-host.txt).
    // LSL: the byte-granular limit
    const v = lsl ? d.limit : i.size === 2 ? d.hi & 0xff00 : d.hi & 0x00ffff00;
    if (i.size === 2) cpu.setR(2, i.reg, v, 0);
    else cpu.setR(i.size, i.reg, v | 0, 0); // 32 and 64 bits: zero-extended
  }
  setZf(cpu, ok);
}

/** verr / verw r/m16 (0f 00 /4, /5: sub 0 / 1) */
export function verrVerw(cpu: X86Cpu, i: Insn): void {
  const s = sysOf(cpu);
  const sel = cpu.readE(i, 2) & 0xffff, write = i.cc === 1;
  const d = queried(s, sel);
  let ok = false;
  if (d !== null && d.user) {
    const code = (d.type & 8) !== 0;
    // VERR: data, or readable code; VERW: writable data only
    const allowed = write ? !code && (d.type & 2) !== 0 : !code || (d.type & 2) !== 0;
    ok = allowed && visible(s, sel, d);
  }
  setZf(cpu, ok);
}
