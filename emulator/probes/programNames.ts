/**
 * DWARF names in probe handlers (issue 14): a handler compiled for a probe
 * at pc can name the probed function's parameters and locals in scope
 * there (`printk("%s\n", filename)`), as perf probe's fetch args do. The
 * compiler asks `programNamesAt(image, arch, pc)` for a name; the binding's
 * fetch() evaluates the name's location at that pc with the handler's
 * registers (pt_regs names through the port's DWARF numbering), the CFA of
 * the probed frame (call frame information) and memory. A name the
 * compiler left no location for at the pc is a compile-time error:
 * "'err' is optimized out at do_fork+0x0".
 */
import type { ArchInfo } from '../arch/types';
import { evalLocation } from '../elf/dwarf/location';
import type { ElfImage } from '../elf/types';
import type { HandlerEnv, ProgramName } from '../handlers';
import { namesAt, scalarOf } from '../debug/variables';
import { cfiFor } from '../unwind';

export function programNamesAt(image: ElfImage, arch: ArchInfo & { dwarfRegs?: readonly number[] }, pc: bigint): ((name: string) => ProgramName | undefined) | undefined {
  const scope = namesAt(image, pc);
  if (!scope) return undefined;
  const where = image.symbols.format(pc, false);
  const little = image.endian === 'little';
  const addressSize = arch.abi.pointerSize;
  const dwarf = arch.dwarfRegs;
  const regName = (d: number): string | undefined => {
    const idx = dwarf?.[d];
    return idx !== undefined && idx >= 0 ? arch.regs[idx]?.name : undefined;
  };
  const spD = dwarf ? dwarf.indexOf(arch.abi.spReg) : -1;
  return (name: string): ProgramName | undefined => {
    const n = scope.names.get(name);
    if (!n) return undefined;
    const what = `${n.kind === 'param' ? 'parameter' : 'local'} of ${scope.function}`;
    const st = scalarOf(scope.di, n.type, addressSize);
    if (typeof st === 'string') return { unavailable: `(${what}) ${st}` };
    if (n.constValue !== undefined) { const v = n.constValue; return { type: st, what, fetch: () => v }; }
    const expr = n.expr;
    if (!expr) return { unavailable: `(${what}) is optimized out at ${where}: the compiler kept no location for it there` };
    const size = st.kind === 'int' ? st.size : addressSize;
    return {
      type: st, what,
      fetch(env: HandlerEnv): bigint {
        const reg = (d: number): bigint | undefined => {
          const r = regName(d);
          return r === undefined ? undefined : BigInt.asUintN(addressSize * 8, env.getReg(r));
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
        const loc = evalLocation(expr, {
          addressSize, little, cfa, reg, read,
          addrx: i => scope.di.addrIndex(n.die.unit, i),
        });
        switch (loc.kind) {
          case 'register': { const v = reg(loc.reg); if (v === undefined) throw new Error(`register DWARF ${loc.reg} is not in pt_regs`); return v; }
          case 'memory': { const v = read(loc.addr, size); if (v === undefined) throw new Error('cannot read it'); return v; }
          case 'value': return loc.value;
          case 'implicit': { let v = 0n; for (let i = Math.min(size, loc.bytes.length) - 1; i >= 0; i--) v = (v << 8n) | BigInt(loc.bytes[i]); return v; }
          case 'optimizedOut': throw new Error(`optimized out at ${where}`);
          case 'error': throw new Error(loc.message);
          case 'pieces': throw new Error('its value is split in pieces (not supported in handlers)');
        }
      },
    };
  };
}
