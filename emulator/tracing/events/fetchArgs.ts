/**
 * The fetch-argument evaluator: a FetchArgDef's value at a probe hit, read
 * through a FetchEnv (registers of the CPU that hit, guest memory whose
 * faults are caught, the current task), printed as the kernel's trace file
 * prints it (trace_probe.c's print_type_*): u/s decimal, x 0x-hex,
 * symbol as %pS, string in double quotes (symstr: the value's %pS), a bitfield as its bits shifted
 * down, an array as {v0,v1,...}; a fault while fetching prints `(fault)`.
 * User-memory reads (+u...(), ustring, every uprobe dereference) go through
 * the user-access check Linux's copy_from_user_nofault makes: an address in
 * the kernel's half faults. Values are bigint from end to end.
 */
import type { FetchArgDef, FetchSource, FetchType } from './types';

/** What a hit offers to fetch arguments. Memory readers throw on a fault. */
export interface FetchEnv {
  /** register by pt_regs name */
  reg(name: string): bigint;
  /** the stack pointer (kernel_stack_pointer / user sp) */
  sp(): bigint;
  /** regs_return_value */
  retval(): bigint;
  /** regs_get_kernel_argument(regs, n) for n >= 0 */
  arg(n: number): bigint;
  comm(): string;
  /** `size` bytes little-endian at addr; `user`: user memory; throws on a fault */
  read(addr: bigint, size: 1 | 2 | 4 | 8, user: boolean): bigint;
  /** a NUL-terminated string of at most `max` bytes; throws on a fault */
  readString(addr: bigint, max: number, user: boolean): string;
  /** a kernel symbol's address (@SYM) */
  symbol(name: string): bigint | undefined;
  /** uprobes' @+OFFSET: where the process maps that offset of the probed file */
  fileOffset?(offset: bigint): bigint | undefined;
  /** %pS of an address: "sym+0xoff/0xsize", or 0x... */
  symbolize(addr: bigint): string;
  /** access_ok: whether user memory may be read at addr (default: the lower half of the address space) */
  userAddress?(addr: bigint): boolean;
  /** an event probe's $FIELD: the attached event's field value */
  field?(name: string): bigint | undefined;
}

/**
 * Where user space ends when the env does not say: the kernel owns the
 * upper half on x86_64, arm64 and riscv64 (its addresses have bit 63 set),
 * so a user-memory read of a kernel address fails as access_ok makes it.
 */
const KERNEL_HALF = 1n << 63n;

function userOk(env: FetchEnv, addr: bigint): boolean {
  return env.userAddress ? env.userAddress(addr) : addr < KERNEL_HALF;
}

/** Bytes of a fetched string at most (Linux: MAX_STRING_SIZE is PATH_MAX). */
export const MAX_STRING_SIZE = 4096;

class FetchFault extends Error {}

const LONG = 8;

/** The value (an address for memory sources) of a source before the final load. */
function value(s: FetchSource, env: FetchEnv): bigint {
  switch (s.k) {
    case 'reg': return env.reg(s.reg);
    case 'stackp': return env.sp();
    case 'stack': return load(env, BigInt.asUintN(64, env.sp() + BigInt(s.n * LONG)), LONG, false);
    case 'retval': return env.retval();
    case 'arg': return env.arg(s.n - 1);
    case 'imm': return s.value;
    case 'field': {
      const v = env.field?.(s.name);
      if (v === undefined) throw new FetchFault(`no field ${s.name}`);
      return v;
    }
    case 'mem': case 'sym': case 'foffs': case 'deref':
      return load(env, address(s, env), LONG, s.k === 'deref' && s.user);
    case 'comm': case 'immstr':
      throw new FetchFault('not a number');
  }
}

/** The address a memory source loads from. */
function address(s: FetchSource, env: FetchEnv): bigint {
  switch (s.k) {
    case 'mem': return s.addr;
    case 'sym': {
      const a = env.symbol(s.name);
      if (a === undefined) throw new FetchFault(`no symbol ${s.name}`);
      return BigInt.asUintN(64, a + s.offset);
    }
    case 'foffs': {
      const a = env.fileOffset?.(s.offset);
      if (a === undefined) throw new FetchFault('file offset not mapped');
      return a;
    }
    case 'deref': return BigInt.asUintN(64, value(s.inner, env) + s.offset);
    default: throw new FetchFault('not memory');
  }
}

function load(env: FetchEnv, addr: bigint, size: 1 | 2 | 4 | 8, user: boolean): bigint {
  if (user && !userOk(env, addr)) throw new FetchFault(`user read of a kernel address 0x${addr.toString(16)}`);
  try {
    return env.read(addr, size, user);
  } catch {
    throw new FetchFault(`fault at 0x${addr.toString(16)}`);
  }
}

/** The printed value of one argument at a hit ("0x2a", "-2", "\"/etc/motd\"", "do_fork+0x0/0x80", "(fault)"). */
export function fetchArgText(a: FetchArgDef, env: FetchEnv): string {
  try {
    return a.count !== undefined ? fetchArray(a.source, a.type, a.count, env) : fetchTyped(a.source, a.type, env);
  } catch (e) {
    if (e instanceof FetchFault) return '(fault)';
    // a register the CPU does not have, a bad address: what the kernel's fetch would report as a fault
    return '(fault)';
  }
}

/** a NUL-terminated string at addr, in double quotes */
function readString(env: FetchEnv, addr: bigint, user: boolean): string {
  if (user && !userOk(env, addr)) throw new FetchFault(`user string at a kernel address 0x${addr.toString(16)}`);
  try {
    return `"${env.readString(addr, MAX_STRING_SIZE - 1, user)}"`;
  } catch {
    throw new FetchFault('string fault');
  }
}

function fetchTyped(s: FetchSource, t: FetchType, env: FetchEnv): string {
  // symstr: the value (a memory source's loaded long) as its symbol
  if (t.symstr) return `"${env.symbolize(value(s, env))}"`;
  if (t.kind === 'string') {
    if (s.k === 'comm') return `"${env.comm()}"`;
    if (s.k === 'immstr') return `"${s.value}"`;
    const user = t.user === true || (s.k === 'deref' && s.user);
    return readString(env, s.k === 'imm' ? s.value : address(s, env), user);
  }
  // memory sources load the type's own size at the final address; the others are cast (low bytes)
  const raw = s.k === 'mem' || s.k === 'sym' || s.k === 'foffs' || s.k === 'deref'
    ? load(env, address(s, env), t.size, s.k === 'deref' && s.user)
    : BigInt.asUintN(t.size * 8, value(s, env));
  return formatValue(raw, t, env);
}

/**
 * TYPE[N] (FETCH_OP_LP_ARRAY): N values of the type one after another at
 * the argument's address; for strings, N pointers one after another there,
 * each to a string. Printed {v0,v1,...}.
 */
function fetchArray(s: FetchSource, t: FetchType, n: number, env: FetchEnv): string {
  const base = address(s, env);
  const user = s.k === 'deref' && s.user;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (t.kind === 'string') {
      const ptr = load(env, BigInt.asUintN(64, base + BigInt(i * LONG)), LONG, user);
      out.push(readString(env, ptr, t.user === true || user));
    } else {
      out.push(formatValue(load(env, BigInt.asUintN(64, base + BigInt(i * t.size)), t.size, user), t, env));
    }
  }
  return `{${out.join(',')}}`;
}

/** An integer of a fetch type as print_type_* prints it (a bitfield: its bits, shifted down, FETCH_OP_MOD_BF). */
export function formatValue(raw: bigint, t: FetchType, env?: Pick<FetchEnv, 'symbolize'>): string {
  const bits = t.size * 8;
  let u = BigInt.asUintN(bits, raw);
  if (t.bitfield) u = BigInt.asUintN(bits, u << BigInt(bits - t.bitfield.width - t.bitfield.offset)) >> BigInt(bits - t.bitfield.width);
  if (t.kind === 'symbol') return env ? env.symbolize(u) : `0x${u.toString(16)}`;
  if (t.hex) return `0x${u.toString(16)}`;
  return t.signed ? BigInt.asIntN(bits, u).toString() : u.toString();
}

/** " name=value" for every argument, in order (what follows the probe's location on a trace line). */
export function fetchArgsText(args: readonly FetchArgDef[], env: FetchEnv): string {
  let out = '';
  for (const a of args) out += ` ${a.name}=${fetchArgText(a, env)}`;
  return out;
}
