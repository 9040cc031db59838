/**
 * The debugger's own changes on a stopped Linux machine (DAP setVariable):
 *   - a register of a CPU (the Registers scope): general registers, rip and
 *     rflags, through the CPU's debug side (system/types.ts setRegister);
 *   - a parameter or local of a shown frame (linuxFrames.ts): its location
 *     from the DWARF at the frame's pc (the vmlinux's, or a launch module's) (a register of the
 *     innermost frame, or memory written through the CPU's page tables);
 *   - a member or element of a struct / array / pointed-to struct shown in
 *     the Variables view (memory, through the page tables).
 * The value is a C integer literal (decimal, 0x hex, 0 octal, a leading
 * minus) or a character literal, stored in the type's size little-endian;
 * a register location keeps the register's bytes above the type's size. A
 * value that does not fit, an aggregate, a bitfield, an optimized-out or
 * constant variable, or an unmapped address is refused with what and why.
 * Answers the new value as the Variables view shows it.
 */
import { debugInfoOf, type DebugInfo } from '../elf/dwarf/info';
import { DW_AT, TAG, type Die } from '../elf/dwarf/dies';
import { evalLocation, type Location } from '../elf/dwarf/location';
import { namesAt } from '../elf/dwarf/scopes';
import { sizeOf, strip } from '../elf/dwarf/typeDies';
import type { Expandable } from './variables';
import type { LinuxTarget } from './linuxTarget';

/** the System V x86_64 DWARF register numbers 0-16 by the names the Registers scope uses */
const DWARF_REG = ['rax', 'rdx', 'rcx', 'rbx', 'rsi', 'rdi', 'rbp', 'rsp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'rip'];
const DWARF_TO_HW = [0, 2, 1, 3, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15];

export type LinuxSetTarget =
  | { cpu: number; register: true }
  | { cpu: number; frame: number }
  | { cpu: number; member: Expandable };

/** assign `value` to `name` there; the new value as shown, or throws an Error saying why not */
export function setLinuxValue(t: LinuxTarget, at: LinuxSetTarget, name: string, value: string): string {
  const h = t.run.cpus[at.cpu];
  if (!h) throw new Error(`no CPU ${at.cpu}`);
  if ('register' in at) {
    const v = parseInteger(value, 64);
    const why = h.debug.setRegister(name, v);
    if (why) throw new Error(why);
    return t.registers(at.cpu).find(r => r.name === name)?.value ?? value;
  }
  if ('member' in at) {
    const { addr, type } = memberPlace(at.member, name);
    writeScalar(t, at.cpu, { kind: 'memory', addr }, type, debugInfoOf(at.member.image), value);
    return t.children(at.cpu, at.member).find(v => v.name === name)?.value ?? value;
  }
  const { loc, type, di } = variablePlace(t, at.cpu, at.frame, name);
  if (loc.kind === 'register' && t.shownFrames(at.cpu)[at.frame].physical !== 0) throw new Error(`'${name}' is in ${DWARF_REG[loc.reg] ?? `DWARF register ${loc.reg}`} in a caller's frame, whose registers are not known: change it in the innermost frame`);
  writeScalar(t, at.cpu, loc, type, di, value);
  const now = t.shownFrameVariables(at.cpu, at.frame);
  return (now.ok ? [...now.params, ...now.locals].find(v => v.name === name)?.value : undefined) ?? value;
}

/** where a parameter or local of shown frame `frame` is (the vmlinux's or a module's DWARF at its pc), with its type; throws why not */
export function variablePlace(t: LinuxTarget, cpu: number, frame: number, name: string): { loc: Location; type: Die | undefined; di: DebugInfo } {
  const h = t.run.cpus[cpu];
  if (!h) throw new Error(`no CPU ${cpu}`);
  const vm = t.vmlinux;
  if (!vm) throw new Error('variables need the kernel\'s DWARF: set "vmlinux" in launch.json');
  const shown = t.shownFrames(cpu)[frame];
  if (!shown) throw new Error(`no frame ${frame} on CPU ${cpu}`);
  const phys = t.frames(cpu)[shown.physical];
  // module code: the module's DWARF, relocated to where the guest loaded it (linuxModuleDebug.ts)
  const scope = namesAt(t.debugImage(shown.lookupPc) ?? vm, shown.lookupPc, { inlineDepth: shown.inlineDepth, skipInlineEntry: shown.skipInlineEntry });
  const n = scope?.names.get(name);
  if (!scope || !n) throw new Error(`'${name}' is not a parameter or local of ${shown.name}`);
  if (n.constValue !== undefined) throw new Error(`'${name}' is a constant the compiler folded: it has no place to write`);
  if (!n.expr) throw new Error(`'${name}' is optimized out at this point: it has no place to write`);
  const di = scope.di, u = di.unitFor(shown.lookupPc)!;
  const regs = new Map<number, bigint>();
  if (shown.physical === 0) DWARF_TO_HW.forEach((hw, d) => regs.set(d, h.reg(hw)));
  else { regs.set(7, phys.sp); if (phys.bp !== undefined) regs.set(6, phys.bp); }
  regs.set(16, shown.lookupPc);
  const pages = t.pages(cpu);
  const read = (a: bigint, size: number): bigint | undefined => {
    const b = pages.read(a, size);
    return b.length === size ? b.reduceRight((acc, x) => (acc << 8n) | BigInt(x), 0n) : undefined;
  };
  const ctx = {
    addressSize: 8, little: true, cfa: phys.cfa, reg: (r: number) => regs.get(r), read,
    addrx: (i: bigint) => di.addrIndex(u, i), baseType: (o: bigint) => di.baseType(u, o),
    frameBase: (): bigint | undefined => {
      if (!scope.frameBase) return undefined;
      const l = evalLocation(scope.frameBase, { ...ctx, frameBase: undefined });
      return l.kind === 'register' ? regs.get(l.reg) : l.kind === 'memory' ? l.addr : l.kind === 'value' ? l.value : undefined;
    },
  };
  return { loc: evalLocation(n.expr, ctx), type: n.type, di };
}

/** a member's (or an array element's) address and type in an expanded aggregate */
export function memberPlace(x: Expandable, name: string): { addr: bigint; type: Die | undefined } {
  const di = debugInfoOf(x.image);
  const t = x.type;
  if (t.tag === TAG.array_type) {
    const m = /^\[(\d+)\]$/.exec(name);
    if (!m) throw new Error(`'${name}' is not an element of this array`);
    const et = di.ref(t, DW_AT.type);
    if (t.children.filter(c => c.tag === TAG.subrange_type).length > 1) throw new Error(`'${name}' is an array itself: change its elements`);
    const size = sizeOf(di, et, 8);
    if (size === undefined) throw new Error(`the size of '${name}' is not known`);
    return { addr: x.addr + BigInt(Number(m[1]) * size), type: et };
  }
  const mem = t.children.find(c => c.tag === 0x0d && (di.name(c) ?? '<anonymous>') === name);
  if (!mem) throw new Error(`no member '${name}'`);
  if (di.uint(mem, DW_AT.bit_size) !== undefined) throw new Error(`'${name}' is a bitfield: the debugger does not change bitfields`);
  return { addr: x.addr + (di.uint(mem, DW_AT.data_member_location) ?? 0n), type: di.ref(mem, DW_AT.type) };
}

/** store an integer of the type's size at a register or memory location */
function writeScalar(t: LinuxTarget, cpu: number, loc: Location, type: Die | undefined, di: DebugInfo, value: string): void {
  const st = strip(di, type);
  const ok = st && (st.tag === TAG.base_type || st.tag === TAG.pointer_type || st.tag === TAG.enumeration_type);
  if (!ok) throw new Error('only integers, characters, enums and pointers can be changed (not a struct, union or array as a whole: change its members)');
  const size = sizeOf(di, st, 8);
  if (size === undefined || size < 1 || size > 8) throw new Error(`a value of ${size ?? 'unknown'} bytes cannot be changed`);
  const enc = st.tag === TAG.base_type ? Number(di.uint(st, DW_AT.encoding) ?? 0n) : 0;
  if (enc === 0x04) throw new Error('floating-point variables cannot be changed');
  const v = parseInteger(value, size * 8);
  if (loc.kind === 'register') {
    const name = DWARF_REG[loc.reg];
    const h = t.run.cpus[cpu]!;
    if (name === undefined || loc.reg >= 16) throw new Error(`DWARF register ${loc.reg} cannot be changed`);
    const old = h.reg(DWARF_TO_HW[loc.reg]);
    const mask = size === 8 ? (1n << 64n) - 1n : (1n << BigInt(size * 8)) - 1n;
    const why = h.debug.setRegister(name, (old & ~mask) | (v & mask));
    if (why) throw new Error(why);
    return;
  }
  if (loc.kind !== 'memory') throw new Error(loc.kind === 'error' ? `its location cannot be computed: ${loc.message}` : `it has no place to write here (its value is ${loc.kind === 'optimizedOut' ? 'optimized out' : 'computed, not stored'})`);
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = Number((v >> BigInt(8 * i)) & 0xffn);
  if (!t.writeMemory(cpu, loc.addr, bytes)) throw new Error(`0x${loc.addr.toString(16)}: not all ${size} bytes are mapped RAM in the guest's page tables`);
}

/** a C integer or character literal as `bits` bits (two's complement); throws when it is not one or does not fit */
export function parseInteger(text: string, bits: number): bigint {
  const s = text.trim();
  let v: bigint;
  const ch = /^'(\\?.)'$/.exec(s);
  if (ch) v = BigInt((ch[1] === '\\0' ? '\0' : ch[1] === '\\n' ? '\n' : ch[1].slice(-1)).charCodeAt(0));
  else {
    const m = /^(-)?(0x[0-9a-f]+|0[0-7]*|[1-9][0-9]*)[ul]*$/i.exec(s);
    if (!m) throw new Error(`'${text}' is not an integer (decimal, 0x hex, 0 octal or a 'c' character)`);
    const digits = m[2];
    const mag = /^0x/i.test(digits) ? BigInt(digits) : digits.length > 1 && digits.startsWith('0') ? BigInt(`0o${digits.slice(1)}`) : BigInt(digits);
    v = m[1] ? -mag : mag;
  }
  const lo = -(1n << BigInt(bits - 1)); // a negative value is stored in two's complement, also in an unsigned type (as C assigns it)
  const hi = (1n << BigInt(bits)) - 1n;
  if (v < lo || v > hi) throw new Error(`${text} does not fit in ${bits / 8} byte${bits > 8 ? 's' : ''}`);
  return BigInt.asUintN(bits, v);
}
