/**
 * DWARF names in probe handlers (the program's variables by name, not by
 * register): a handler compiled for a probe at pc can name the probed
 * function's parameters and locals in scope there, and the program's globals
 * and statics (`printk("%s\n", filename)`, `file->name`, `last_pid`), as perf
 * probe's fetch args do, with their C types (structs, unions, arrays and
 * enums from emulator/elf/dwarf/ctype.ts). The compiler asks
 * `programNamesAt(image, arch, pc)` for a name; the binding's place()
 * evaluates the name's location at that pc with the handler's registers
 * (pt_regs names through the port's DWARF numbering), the CFA of the probed
 * frame (call frame information) and memory. A name the compiler left no
 * location for at the pc is a compile-time error: "'err' is optimized out at
 * do_fork+0x0".
 *
 * The debugger uses the same bindings for evaluate / setVariable in any
 * frame, with an env whose registers are that frame's (unwound) ones.
 */
import type { ArchInfo } from '../arch/types';
import { evalLocation } from '../elf/dwarf/location';
import type { ElfImage } from '../elf/types';
import type { HandlerEnv, ProgramName, ProgramPlace } from '../handlers';
import type { CType } from '../handlers/ctypes';
import { ScopeAt, globalDie, namesAt, refOf } from '../elf/dwarf/scopes';
import { dwarfCType, typeNamed } from '../elf/dwarf/ctype';
import { debugInfoOf } from '../elf/dwarf/info';
import { DW_AT, Die } from '../elf/dwarf/dies';
import { cfiFor } from '../unwind/unwinder';
import { resolveTarget } from './targets';
import type { ProbeTarget } from '../handlers';

type Arch = ArchInfo & { dwarfRegs?: readonly number[] };

/** The pt_regs name of a DWARF register number on an arch, undefined when pt_regs has none. */
export function dwarfRegName(arch: Arch, d: number): string | undefined {
  const idx = arch.dwarfRegs?.[d];
  return idx !== undefined && idx >= 0 ? arch.regs[idx]?.name : undefined;
}

/**
 * Program names at a probe target's (first) site, with that pc; undefined
 * when the target does not resolve or no debug info covers it.
 */
export function programNamesAtTarget(image: ElfImage, arch: Arch, target: ProbeTarget): { pc: bigint; lookup: (name: string) => ProgramName | undefined } | undefined {
  try {
    const r = resolveTarget(image, target);
    const pc = r.ok ? r.sites[0]?.resolved : undefined;
    const lookup = pc !== undefined ? programNamesAt(image, arch, pc, scopeForTarget(target)) : undefined;
    return pc !== undefined && lookup ? { pc, lookup } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The scope a probe on a target sees at an inlined call's first instruction:
 * a source line or an address there is in the inlined function (gdb stops a
 * line breakpoint there in it); a symbol(+offset) is in the function named.
 */
export function scopeForTarget(target: ProbeTarget): ScopeAt {
  return { skipInlineEntry: target.kind === 'symbol' };
}

/** Program names at pc (undefined when no debug info covers it: then globals only through programGlobals); `at`: which inline frame. */
export function programNamesAt(image: ElfImage, arch: Arch, pc: bigint, at: ScopeAt = {}): ((name: string) => ProgramName | undefined) | undefined {
  const scope = namesAt(image, pc, at);
  if (!scope) return undefined;
  const where = image.symbols.format(pc, false);
  const little = image.endian === 'little';
  const addressSize = arch.abi.pointerSize;
  const dwarf = arch.dwarfRegs;
  const regName = (d: number): string | undefined => dwarfRegName(arch, d);
  const spD = dwarf ? dwarf.indexOf(arch.abi.spReg) : -1;
  const globals = programGlobals(image, pc);
  return (name: string): ProgramName | undefined => {
    const n = scope.names.get(name);
    if (!n) return globals(name);
    const what = `${n.kind === 'param' ? 'parameter' : 'local'} of ${scope.function}`;
    const type = dwarfCType(image, n.type);
    if (type.kind === 'void') return { unavailable: `(${what}) has no type`, scoped: true };
    if (n.constValue !== undefined) { const value = n.constValue; return { type, what, scoped: true, place: () => ({ kind: 'value', value }) }; }
    const expr = n.expr;
    if (!expr) return { unavailable: `(${what}) is optimized out at ${where}: the compiler kept no location for it there`, scoped: true };
    return {
      type, what, scoped: true,
      place(env: HandlerEnv): ProgramPlace {
        const reg = (d: number): bigint | undefined => {
          const r = regName(d);
          if (r === undefined) return undefined;
          try { return BigInt.asUintN(addressSize * 8, env.getReg(r)); } catch { return undefined; }
        };
        const read = (a: bigint, sz: number): bigint | undefined => {
          let v = 0n;
          for (let i = sz - 1; i >= 0; i--) v = (v << 8n) | env.readMem(a + BigInt(i), 1);
          return little ? v : undefined;
        };
        let cfa: bigint | undefined;
        const cfi = cfiFor(image);
        if (cfi && spD >= 0) {
          const regs = new Map<number, bigint>();
          dwarf?.forEach((_idx, d) => { const v = reg(d); if (v !== undefined) regs.set(d, v); });
          const s = cfi.step(pc, regs, a => read(a, addressSize), spD);
          if (s.kind === 'ok') cfa = s.cfa;
        }
        const base = {
          addressSize, little, cfa, reg, read,
          addrx: (i: bigint) => scope.di.addrIndex(n.die.unit, i),
          baseType: (o: bigint) => scope.di.baseType(n.die.unit, o),
        };
        // DW_OP_fbreg: the function's DW_AT_frame_base (gcc: DW_OP_call_frame_cfa, clang: a register)
        const frameBase = (): bigint | undefined => {
          if (!scope.frameBase) return undefined;
          const l = evalLocation(scope.frameBase, base);
          return l.kind === 'register' ? reg(l.reg) : l.kind === 'memory' ? l.addr : l.kind === 'value' ? l.value : undefined;
        };
        const loc = evalLocation(expr, { ...base, frameBase });
        switch (loc.kind) {
          case 'register': { const r = regName(loc.reg); if (r === undefined) throw new Error(`register DWARF ${loc.reg} is not in pt_regs`); return { kind: 'register', reg: r }; }
          case 'memory': return { kind: 'memory', addr: loc.addr };
          case 'value': return { kind: 'value', value: loc.value };
          case 'implicit': { let v = 0n; for (let i = Math.min(8, loc.bytes.length) - 1; i >= 0; i--) v = (v << 8n) | BigInt(loc.bytes[i]); return { kind: 'value', value: v }; }
          case 'optimizedOut': throw new Error(`optimized out at ${where}`);
          case 'error': throw new Error(loc.message);
          case 'pieces': throw new Error('its value is split in pieces (not supported here)');
        }
      },
    };
  };
}

/** Globals and statics of the program by name (the unit holding pc first): in memory at their DW_OP_addr, or constants. */
export function programGlobals(image: ElfImage, pc?: bigint): (name: string) => ProgramName | undefined {
  const little = image.endian === 'little';
  return (name: string): ProgramName | undefined => {
    let g;
    try { g = globalDie(image, name, pc); } catch { return undefined; }
    if (!g) return enumeratorNamed(image, name);
    const { di, unit, die } = g;
    const what = die.attrs.has(DW_AT.external) ? 'global' : 'static';
    const type: CType = dwarfCType(image, refOf(di, die, DW_AT.type));
    if (type.kind === 'void') return { unavailable: `(${what}) has no type` };
    const cv = di.attr(die, DW_AT.const_value);
    if (cv && (cv.kind === 'uint' || cv.kind === 'sint')) { const value = cv.value; return { type, what, place: () => ({ kind: 'value', value }) }; }
    let expr: Uint8Array | undefined;
    try { expr = di.locationAt(die, DW_AT.location, pc ?? 0n); } catch { expr = undefined; }
    if (!expr) return { unavailable: `(${what}) is optimized out: the compiler kept no location for it` };
    const loc = evalLocation(expr, { addressSize: unit.addressSize, little, reg: () => undefined, read: () => undefined, addrx: i => di.addrIndex(unit, i) });
    if (loc.kind !== 'memory') return { unavailable: `(${what}) has no address the debugger can use` };
    const addr = loc.addr;
    return { type, what, place: () => ({ kind: 'memory', addr }) };
  };
}

/** An enumerator of the program's enums (`GREEN`): a constant of its enum type. */
function enumeratorNamed(image: ElfImage, name: string): ProgramName | undefined {
  let hit: { die: Die; value: bigint } | undefined;
  try {
    const di = debugInfoOf(image);
    for (const u of di.units()) {
      if (u.error || hit) continue;
      for (const t of di.root(u)?.children ?? []) {
        if (t.tag !== 0x04 || hit) continue; // DW_TAG_enumeration_type
        const e = t.children.find(c => c.tag === 0x28 && di.name(c) === name); // DW_TAG_enumerator
        const v = e ? di.attr(e, DW_AT.const_value) : undefined;
        if (v && (v.kind === 'uint' || v.kind === 'sint')) hit = { die: t, value: v.value };
      }
    }
  } catch { return undefined; }
  if (!hit) return undefined;
  const { die, value } = hit;
  return { type: dwarfCType(image, die), what: 'enumerator', place: () => ({ kind: 'value', value }) };
}

/** The program's types by name, for casts and sizeof (`(struct file *)p`). */
export function programTypes(image: ElfImage): (kind: 'struct' | 'union' | 'enum' | 'typedef', name: string) => CType | undefined {
  return (kind, name) => {
    try { return typeNamed(image, kind, name); } catch { return undefined; }
  };
}
