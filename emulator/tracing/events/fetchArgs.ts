/**
 * The fetch-argument evaluator: a FetchArgDef's value at a probe hit, read
 * through a FetchEnv (registers of the CPU that hit, guest memory whose
 * faults are caught, the current task), printed as the kernel's trace file
 * prints it (trace_probe.c's print_type_*): u/s decimal, x 0x-hex,
 * symbol as %pS, string in double quotes; a fault while fetching prints
 * `(fault)`. Values are bigint from end to end.
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
  try {
    return env.read(addr, size, user);
  } catch {
    throw new FetchFault(`fault at 0x${addr.toString(16)}`);
  }
}

/** The printed value of one argument at a hit ("0x2a", "-2", "\"/etc/motd\"", "do_fork+0x0/0x80", "(fault)"). */
export function fetchArgText(a: FetchArgDef, env: FetchEnv): string {
  try {
    return fetchTyped(a.source, a.type, env);
  } catch (e) {
    if (e instanceof FetchFault) return '(fault)';
    // a register the CPU does not have, a bad address: what the kernel's fetch would report as a fault
    return '(fault)';
  }
}

function fetchTyped(s: FetchSource, t: FetchType, env: FetchEnv): string {
  if (t.kind === 'string') {
    if (s.k === 'comm') return `"${env.comm()}"`;
    if (s.k === 'immstr') return `"${s.value}"`;
    const user = t.user === true || (s.k === 'deref' && s.user);
    const addr = s.k === 'imm' ? s.value : address(s, env);
    try {
      return `"${env.readString(addr, MAX_STRING_SIZE - 1, user)}"`;
    } catch {
      throw new FetchFault('string fault');
    }
  }
  // memory sources load the type's own size at the final address; the others are cast (low bytes)
  const raw = s.k === 'mem' || s.k === 'sym' || s.k === 'foffs' || s.k === 'deref'
    ? load(env, address(s, env), t.size, s.k === 'deref' && s.user)
    : BigInt.asUintN(t.size * 8, value(s, env));
  return formatValue(raw, t, env);
}

/** An integer of a fetch type as print_type_* prints it. */
export function formatValue(raw: bigint, t: FetchType, env?: Pick<FetchEnv, 'symbolize'>): string {
  const bits = t.size * 8;
  const u = BigInt.asUintN(bits, raw);
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
