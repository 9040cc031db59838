/**
 * Module parameters (Linux 6.1 kernel/params.c, include/linux/moduleparam.h):
 * a module's __param section holds its struct kernel_param entries (40
 * bytes: name, mod, ops, perm u16, level s8, flags u8, then the variable
 * or struct kparam_string {maxlen u32, string}); the ops pointer names the
 * type: it is the address of one of the kernel's param_ops_<type> objects,
 * which the loader resolves a module's references to (paramOpsTable). At
 * load, parse_args sets each "name=value" of insmod / --module in order
 * with Linux's parsers (kstrto*, kstrtobool, param_set_copystring) and
 * messages:
 *   unknown name        "MOD: unknown parameter 'NAME' ignored" (loaded)
 *   value that fails    "MOD: `VAL' invalid for parameter `NAME'" (-EINVAL, -ERANGE)
 *   string too long     "NAME: string doesn't fit in N chars." then
 *                       "MOD: `VAL' too large for parameter `NAME'" (-ENOSPC)
 * An error stops parse_args: the module is not loaded (load_module's
 * coming_cleanup). Parameter names match with '-' and '_' alike (parameq).
 *
 * Modules built against the headers before these (entries of 24 bytes:
 * name, arg, type int/long/bool/charp, size) are read as such: an object
 * that references no param_ops_* symbol.
 */
import { Errno } from '../abi';
import type { Memory } from '../../memory/memory';
import { mustVAddr } from '../../memory/address';

/** the types of Linux's param_ops_<type> objects the kernel provides, with their C sizes */
const TYPES = {
  byte: { size: 1, signed: false }, short: { size: 2, signed: true }, ushort: { size: 2, signed: false },
  int: { size: 4, signed: true }, uint: { size: 4, signed: false }, hexint: { size: 4, signed: false },
  long: { size: 8, signed: true }, ulong: { size: 8, signed: false }, ullong: { size: 8, signed: false },
  bool: { size: 1, signed: false }, invbool: { size: 1, signed: false }, charp: { size: 8, signed: false },
  string: { size: 0, signed: false },
} as const;
type ParamType = keyof typeof TYPES;
/** struct kernel_param_ops: flags, set, get, free */
const OPS_SIZE = 32;
/** KERNEL_PARAM_OPS_FL_NOARG: bool and invbool may be given without a value */
const FL_NOARG = 1;
/** param_set_charp's limit */
const CHARP_MAX = 1024;

/**
 * The kernel's param_ops_<type> objects: struct kernel_param_ops in kernel
 * memory (flags set as Linux's: NOARG for bool / invbool; the set / get
 * functions are the loader's own, so their pointers are NULL), made on
 * first use in memory `alloc` gives.
 */
export class ParamOpsTable {
  private base: bigint | undefined;
  private readonly names = Object.keys(TYPES) as ParamType[];
  constructor(private readonly mem: Memory, private readonly alloc: (size: number) => bigint) {}

  /** the address of param_ops_<type> for a symbol name; undefined for any other name */
  symbol(name: string): bigint | undefined {
    const m = /^param_ops_(\w+)$/.exec(name);
    const i = m ? this.names.indexOf(m[1] as ParamType) : -1;
    if (i < 0) return undefined;
    if (this.base === undefined) {
      this.base = this.alloc(OPS_SIZE * this.names.length);
      this.names.forEach((t, j) => {
        if (t === 'bool' || t === 'invbool') this.mem.write32(mustVAddr(this.base! + BigInt(j * OPS_SIZE)), FL_NOARG);
      });
    }
    return this.base + BigInt(i * OPS_SIZE);
  }

  /** the type whose ops object is at `addr` */
  typeAt(addr: bigint): ParamType | undefined {
    if (this.base === undefined || addr < this.base) return undefined;
    const off = addr - this.base;
    return off % BigInt(OPS_SIZE) === 0n ? this.names[Number(off / BigInt(OPS_SIZE))] : undefined;
  }
}

/** One "name=value" (value undefined: "name" alone) as parse_args sees it. */
export interface ModuleParam { name: string; value?: string }

/** one entry of the module's __param table */
interface ParamEntry { name: string; type: ParamType | 'old'; arg: bigint; oldType?: number; oldSize?: number }

/** What parse_args needs of the kernel: memory, a log line (pr_warn / pr_err), room for charp copies. */
export interface ParamsEnv {
  mem: Memory;
  printk(line: string): void;
  /** kernel memory for a charp parameter's copy of its value (Linux kmallocs it) */
  alloc(size: number): bigint;
}

/** The failure of parse_args: Linux's errno, the lines it printed (the last one says which parameter). */
export interface ParamsFailure { errno: number; lines: string[] }

const parameq = (a: string, b: string): boolean => a.replace(/-/g, '_') === b.replace(/-/g, '_');

/** The __param entries at `base` (`size` bytes), in Linux's layout or, with `oldLayout`, the earlier one. */
export function readParamTable(mem: Memory, ops: ParamOpsTable, base: bigint, size: number, oldLayout: boolean): ParamEntry[] {
  const r64 = (a: bigint): bigint => BigInt.asUintN(64, mem.read64(mustVAddr(a)));
  const out: ParamEntry[] = [];
  const stride = oldLayout ? 24 : 40;
  for (let off = 0; off + stride <= size; off += stride) {
    const e = base + BigInt(off);
    const name = mem.readCString(mustVAddr(r64(e)), 64);
    if (oldLayout) {
      out.push({ name, type: 'old', arg: r64(e + 8n), oldType: mem.read32(mustVAddr(e + 16n)), oldSize: mem.read32(mustVAddr(e + 20n)) });
      continue;
    }
    const type = ops.typeAt(r64(e + 16n));
    if (type) out.push({ name, type, arg: r64(e + 32n) });
  }
  return out;
}

/** kstrtoull / kstrtoll (base 0: 0x hex, 0 octal, else decimal; one trailing newline allowed) */
function kstrto(text: string, signed: boolean, bits: number): bigint | number {
  let s = text.endsWith('\n') ? text.slice(0, -1) : text;
  let neg = false;
  if (s.startsWith('+')) s = s.slice(1);
  else if (signed && s.startsWith('-')) { neg = true; s = s.slice(1); }
  let base = 10;
  if (s[0] === '0') {
    if ((s[1] === 'x' || s[1] === 'X') && /[0-9a-fA-F]/.test(s[2] ?? '')) { base = 16; s = s.slice(2); } else base = 8;
  }
  const digits = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!digits.test(s)) return -Errno.EINVAL;
  const v = BigInt(base === 16 ? `0x${s}` : base === 8 ? `0o${s}` : s);
  if (v >= 1n << 64n) return -Errno.ERANGE;
  if (!signed) return v < 1n << BigInt(bits) ? v : -Errno.ERANGE;
  const lim = 1n << BigInt(bits - 1);
  if (neg ? v > lim : v >= lim) return -Errno.ERANGE;
  return neg ? -v : v;
}

/** kstrtobool: y Y t T 1 / n N f F 0 / on, off */
function kstrtobool(s: string): boolean | undefined {
  const c = s[0];
  if (c !== undefined && 'yYtT1'.includes(c)) return true;
  if (c !== undefined && 'nNfF0'.includes(c)) return false;
  if (c === 'o' || c === 'O') {
    if (s[1] === 'n' || s[1] === 'N') return true;
    if (s[1] === 'f' || s[1] === 'F') return false;
  }
  return undefined;
}

/**
 * parse_args(mod, params) over the module's entries: each value written
 * into its variable; the first failure ends it (undefined: all set).
 */
export function parseArgs(mod: string, entries: readonly ParamEntry[], params: readonly ModuleParam[], env: ParamsEnv): ParamsFailure | undefined {
  const lines: string[] = [];
  const say = (l: string): void => { lines.push(l); env.printk(l); };
  for (const { name, value } of params) {
    const p = entries.find(e => parameq(e.name, name));
    if (!p) { say(`${mod}: unknown parameter '${name}' ignored`); continue; }
    const r = setParam(p, value, env, say);
    if (r === 0) continue;
    const val = value ?? '';
    say(r === -Errno.ENOSPC ? `${mod}: \`${val}' too large for parameter \`${name}'` : `${mod}: \`${val}' invalid for parameter \`${name}'`);
    return { errno: -r, lines };
  }
  return undefined;
}

/** one parameter's set(): 0 or -errno */
function setParam(p: ParamEntry, value: string | undefined, env: ParamsEnv, say: (l: string) => void): number {
  const { mem } = env;
  const at = mustVAddr(p.arg);
  if (p.type === 'old') return setOld(p, value, env);
  const noarg = p.type === 'bool' || p.type === 'invbool';
  if (value === undefined && !noarg) return -Errno.EINVAL;
  switch (p.type) {
    case 'bool': case 'invbool': {
      const b = kstrtobool(value ?? '1');
      if (b === undefined) return -Errno.EINVAL;
      mem.write8(at, (p.type === 'invbool' ? !b : b) ? 1 : 0);
      return 0;
    }
    case 'charp': {
      const v = value as string;
      if (v.length > CHARP_MAX) { say(`${p.name}: string parameter too long`); return -Errno.ENOSPC; }
      const bytes = new TextEncoder().encode(v + '\0');
      const copy = env.alloc(bytes.length);
      mem.writeBytes(mustVAddr(copy), bytes, 'loader');
      mem.write64(at, BigInt.asUintN(64, copy));
      return 0;
    }
    case 'string': {
      // p.arg is the struct kparam_string: maxlen u32, then char *string
      const maxlen = mem.read32(at) >>> 0;
      const dest = BigInt.asUintN(64, mem.read64(mustVAddr(p.arg + 8n)));
      const bytes = new TextEncoder().encode(value as string);
      if (bytes.length + 1 > maxlen) { say(`${p.name}: string doesn't fit in ${maxlen - 1} chars.`); return -Errno.ENOSPC; }
      const z = new Uint8Array(bytes.length + 1);
      z.set(bytes);
      mem.writeBytes(mustVAddr(dest), z, 'loader');
      return 0;
    }
    default: {
      const t = TYPES[p.type];
      const v = kstrto(value as string, t.signed, t.size * 8);
      if (typeof v === 'number') return v;
      writeInt(mem, p.arg, t.size, v);
      return 0;
    }
  }
}

function writeInt(mem: Memory, addr: bigint, size: number, v: bigint): void {
  const at = mustVAddr(addr);
  if (size === 8) mem.write64(at, BigInt.asUintN(64, v));
  else if (size === 4) mem.write32(at, Number(BigInt.asUintN(32, v)));
  else if (size === 2) mem.write16(at, Number(BigInt.asUintN(16, v)));
  else mem.write8(at, Number(BigInt.asUintN(8, v)));
}

/** the earlier headers' entries: type 0 int (size 4 / 8), 1 long, 2 bool, 3 charp */
function setOld(p: ParamEntry, value: string | undefined, env: ParamsEnv): number {
  const v = value ?? '';
  if (p.oldType === 3) {
    const bytes = new TextEncoder().encode(v + '\0');
    const copy = env.alloc(bytes.length);
    env.mem.writeBytes(mustVAddr(copy), bytes, 'loader');
    env.mem.write64(mustVAddr(p.arg), BigInt.asUintN(64, copy));
    return 0;
  }
  const size = p.oldSize ?? 4;
  if (p.oldType === 2) {
    const b = kstrtobool(value ?? '1');
    if (b === undefined) return -Errno.EINVAL;
    writeInt(env.mem, p.arg, size, b ? 1n : 0n);
    return 0;
  }
  const n = kstrto(v, true, size * 8);
  if (typeof n === 'number') return n;
  writeInt(env.mem, p.arg, size, n);
  return 0;
}
