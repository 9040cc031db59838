/**
 * Data breakpoints on the Linux machine (DAP dataBreakpointInfo /
 * setDataBreakpoints: the Variables and Watch views' "Break on Value
 * Change", "Break on Value Read", "Break on Value Access"): the watched
 * bytes are a slot of each CPU's hardware debug unit above the guest's
 * DR0-DR3 (system/types.ts setWatchpoints), so nothing is written into the
 * guest and the guest's own debug registers are left alone. An access that
 * matches stops the machine after the instruction that made it (an x86 data
 * breakpoint is a trap), reported as a 'data breakpoint' stop.
 *
 * What can be watched (a dataId is `ADDRESS/LENGTH`, a virtual address the
 * guest's page tables map; at most 8 bytes, the first 8 of something
 * bigger):
 *   - a parameter or local of a frame that lives in memory (its DWARF
 *     location at the frame's pc), a member or element shown under one;
 *   - a vmlinux global by name (its symbol's address and size), as the
 *     Watch view names it;
 *   - an address with a byte count (asAddress).
 * A variable held in a register has no address to watch: refused with why.
 */
import { debugInfoOf } from '../elf/dwarf/info';
import { sizeOf } from '../elf/dwarf/typeDies';
import { memberPlace, variablePlace } from './linuxSetVariable';
import type { Expandable } from './variables';
import type { LinuxTarget } from './linuxTarget';

/** the widest watch (x86's debug registers watch 1, 2, 4 or 8 bytes) */
const MAX_LEN = 8;

export interface LinuxWatch { addr: bigint; len: number; read: boolean; write: boolean; label: string }

export type LinuxDataPlace = { cpu: number; frame: number } | { cpu: number; member: Expandable } | { cpu: number; global: true };

export interface LinuxDataInfo { dataId: string | null; description: string; accessTypes?: ('read' | 'write' | 'readWrite')[]; canPersist?: boolean }

const hex = (v: bigint): string => `0x${BigInt.asUintN(64, v).toString(16)}`;

/** what a data breakpoint on `name` there would watch (dataId null: why not, in description) */
export function linuxDataInfo(t: LinuxTarget, at: LinuxDataPlace, name: string, asAddress?: { bytes: number }): LinuxDataInfo {
  const watchable = (addr: bigint, size: number | undefined, what: string): LinuxDataInfo => {
    const len = Math.min(MAX_LEN, Math.max(1, size ?? 1));
    const part = size !== undefined && size > MAX_LEN ? ` (its first ${MAX_LEN} of ${size} bytes)` : '';
    return { dataId: `${hex(addr)}/${len}`, description: `${what}${part} at ${hex(addr)}`, accessTypes: ['write', 'read', 'readWrite'], canPersist: true };
  };
  const no = (why: string): LinuxDataInfo => ({ dataId: null, description: why });
  try {
    if (asAddress) {
      const a = BigInt(name.trim());
      return watchable(a, asAddress.bytes, `${asAddress.bytes} bytes`);
    }
    if ('member' in at) {
      const { addr, type } = memberPlace(at.member, name);
      return watchable(addr, sizeOf(debugInfoOf(at.member.image), type, 8), name);
    }
    if ('frame' in at) {
      try {
        const p = variablePlace(t, at.cpu, at.frame, name);
        if (p.loc.kind === 'memory') return watchable(p.loc.addr, sizeOf(p.di, p.type, 8), name);
        return no(`'${name}' is ${p.loc.kind === 'register' ? 'held in a register' : p.loc.kind === 'optimizedOut' ? 'optimized out' : 'not stored in memory'} here: it has no address to watch`);
      } catch (e) {
        // not a variable of the frame: a global below
        if (!/is not a parameter or local/.test((e as Error).message)) return no((e as Error).message);
      }
    }
    const sym = t.vmlinux?.symbols.lookup(name.trim());
    if (!sym) return no(`no variable '${name}' here and no global of that name in the vmlinux`);
    return watchable(sym.value, Number(sym.size) || undefined, name.trim());
  } catch (e) {
    return no((e as Error).message);
  }
}

/** a dataId back to its bytes, or why not */
export function parseDataId(id: string): { addr: bigint; len: number } | string {
  const m = /^(0x[0-9a-f]+)\/(\d+)$/i.exec(id);
  if (!m) return `'${id}' is not a data breakpoint of this machine (ADDRESS/LENGTH)`;
  const len = Number(m[2]);
  if (len < 1 || len > MAX_LEN) return `${len} bytes: a data breakpoint watches 1 to ${MAX_LEN}`;
  return { addr: BigInt(m[1]), len };
}
