/**
 * A dynamic event's hit: its fetch arguments evaluated on the CPU that hit
 * (through the probe handler environment the probes already give their
 * handlers: registers, guest memory with faults caught, `current`), the
 * trace line formatted, kept in the trace buffer (tracefs `trace`) and
 * written where handler output goes (the kernel log, source 'probe': the
 * CLI's stdout, the Debug Console).
 */
import type { KernelApi } from '../../kernel/types';
import { userMemoryOf } from '../../kernel/task';
import { Memory, PERM_R, PERM_U } from '../../memory/memory';
import { VAddr, mustVAddr } from '../../memory/address';
import type { EventAdd } from './types';
import { tracingOn } from './tracingOn';
import { recordTraceLine } from './traceBuffer';
import { FetchEnv, fetchArgText } from './fetchArgs';
import { FieldValue, argValue, eventFilter, filterMatch } from './filter';
import { KPROBE_FLAGS, UPROBE_FLAGS, kprobeLocation, kretprobeLocation, traceLine, uprobeLocation } from './format';

/** What the probe handler environment (probes/env.ts ProbeHandlerEnv) offers; structural, so no import of probes/. */
export interface HitEnv {
  getReg(name: string): bigint;
  readMem(addr: bigint, size: 1 | 2 | 4 | 8): bigint;
  readCString(addr: bigint, max: number): string;
  readonly current: { pid: number; comm: string };
  regsReturnValue(): bigint;
  smpProcessorId(): number;
  ktimeGet(): bigint;
  symbol(name: string): bigint | undefined;
}

export interface EventHit {
  kind: 'kprobe' | 'kretprobe' | 'uprobe' | 'uretprobe';
  /** the probed address (kprobe / uprobe: the instruction; return probes: the function) */
  addr: bigint;
  /** return probes: where the function returns to */
  retAddr?: bigint;
  /** uprobes: the probed instruction's offset in its file (for @+OFFSET) */
  fileOffset?: bigint;
  /** names of addresses outside the image (the kprobes engine's trampolines and slots: KprobesEngine.code.symbolize) */
  engineSymbol?: (addr: bigint) => string | undefined;
}

/** %pS: "sym+0xoff/0xsize [mod]", or the address as trace_seq_print_sym prints an unknown one */
export function symbolWithOffset(kernel: KernelApi, addr: bigint, engineSymbol?: (addr: bigint) => string | undefined): string {
  if (addr === 0n) return '0';
  if (kernel.image.symbols.resolve(addr)) return kernel.image.symbols.format(addr, true);
  return engineSymbol?.(addr) ?? `0x${addr.toString(16).padStart(8, '0')}`;
}

/** the function's name alone (kallsyms_lookup), or its address */
function symbolName(kernel: KernelApi, addr: bigint): string {
  return kernel.image.symbols.resolve(addr)?.sym.name ?? `0x${addr.toString(16).padStart(8, '0')}`;
}

/**
 * The user memory a hit's user accesses reach (copy_from_user_nofault goes
 * through current's page tables): the current task's own, or the process's
 * a kernel thread uses (kthread_use_mm); none for other kernel threads.
 */
function userMemory(kernel: KernelApi, cpu: number): Memory {
  const mm = userMemoryOf(kernel.current(cpu));
  if (!mm) throw new Error('no user address space');
  return mm;
}

/** readable user memory at [a, a+len): PERM_U and PERM_R, as the user-access check makes it */
function userReadable(mm: Memory, a: VAddr, len: number): boolean {
  for (let i = 0; i < len;) {
    const r = mm.regionAt(a + i);
    if (!r || r.device || (r.perms & PERM_U) === 0 || (r.perms & PERM_R) === 0) return false;
    i += Math.min(len - i, r.end - (a + i));
  }
  return true;
}

/** `size` bytes of the user memory the task on `cpu` reaches (copy_from_user_nofault); throws on a fault */
export function readUser(kernel: KernelApi, cpu: number, addr: bigint, size: 1 | 2 | 4 | 8): bigint {
  const mm = userMemory(kernel, cpu);
  const a = mustVAddr(addr);
  if (!userReadable(mm, a, size)) throw new Error(`user fault at 0x${addr.toString(16)}`);
  const b = mm.readBytes(a, size);
  let v = 0n;
  for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]);
  return v;
}

/** a NUL-terminated string of that user memory (strncpy_from_user_nofault); throws on a fault */
export function readUserString(kernel: KernelApi, cpu: number, addr: bigint, max: number): string {
  const mm = userMemory(kernel, cpu);
  const a = mustVAddr(addr);
  const bytes: number[] = [];
  for (let i = 0; i < max; i++) {
    if (!userReadable(mm, a + i, 1)) throw new Error(`user fault at 0x${(addr + BigInt(i)).toString(16)}`);
    const v = mm.read8(a + i);
    if (v === 0) break;
    bytes.push(v);
  }
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

/** A FetchEnv over a hit's handler environment. */
export function fetchEnvFor(kernel: KernelApi, env: HitEnv, hit: EventHit): FetchEnv {
  const arch = kernel.arch;
  const regName = (i: number): string => arch.regs[i].name;
  return {
    reg: name => env.getReg(name),
    sp: () => env.getReg(regName(arch.abi.spReg)),
    retval: () => env.regsReturnValue(),
    arg: n => {
      const regs = arch.abi.argRegs;
      if (n < regs.length) return env.getReg(regName(regs[n]));
      // regs_get_kernel_argument: x86_64 takes the rest from the stack (above the return address); arm64 / riscv return 0
      if (arch.abi.returnAddress.kind !== 'stack') return 0n;
      const sp = env.getReg(regName(arch.abi.spReg));
      return env.readMem(BigInt.asUintN(64, sp + BigInt((n - regs.length + 1) * 8)), 8);
    },
    comm: () => env.current.comm,
    read: (addr, size, user) => (user ? readUser(kernel, env.smpProcessorId(), addr, size) : env.readMem(addr, size)),
    readString: (addr, max, user) => (user ? readUserString(kernel, env.smpProcessorId(), addr, max) : env.readCString(addr, max)),
    symbol: name => env.symbol(name),
    fileOffset: hit.fileOffset !== undefined ? off => BigInt.asUintN(64, hit.addr - (hit.fileOffset as bigint) + off) : undefined,
    symbolize: addr => symbolWithOffset(kernel, addr, hit.engineSymbol),
  };
}

/** The trace line of a hit (without printing it); null when the event's filter (tracefs events/GRP/EVENT/filter) drops it. */
export function traceEventLine(kernel: KernelApi, def: EventAdd, env: HitEnv, hit: EventHit): string | null {
  const cur = env.current;
  const user = hit.kind === 'uprobe' || hit.kind === 'uretprobe';
  const idle = cur.pid === 0 && /^swapper/.test(cur.comm);
  const ctx = { comm: idle ? '<idle>' : cur.comm, pid: cur.pid, cpu: env.smpProcessorId(), ns: env.ktimeGet(), flags: user ? UPROBE_FLAGS : KPROBE_FLAGS };
  let location: string;
  switch (hit.kind) {
    case 'kprobe': location = kprobeLocation(symbolWithOffset(kernel, hit.addr)); break;
    case 'kretprobe': location = kretprobeLocation(symbolWithOffset(kernel, hit.retAddr ?? 0n, hit.engineSymbol), symbolName(kernel, hit.addr)); break;
    case 'uprobe': location = uprobeLocation(hit.addr); break;
    case 'uretprobe': location = uprobeLocation(hit.retAddr ?? 0n, hit.addr); break;
  }
  const fetch = fetchEnvFor(kernel, env, hit);
  const texts = def.args.map(a => fetchArgText(a, fetch));
  const filter = eventFilter(kernel, `${def.group}/${def.event}`);
  if (filter && !filterMatch(filter, hitFields(def, hit, ctx, texts))) return null;
  return traceLine(ctx, def.event, location, texts.map((t, i) => ` ${def.args[i].name}=${t}`).join(''));
}

/** The field values of a hit an event filter compares (filter.ts filterFields names them). */
function hitFields(def: EventAdd, hit: EventHit, ctx: { comm: string; pid: number; cpu: number; flags: string }, texts: readonly string[]): Map<string, FieldValue> {
  const num = (v: bigint | number, signed = false): FieldValue => ({ kind: 'num', v: BigInt(v), signed });
  const m = new Map<string, FieldValue>([
    ['common_pid', num(ctx.pid, true)], ['common_type', num(0)], ['common_flags', num(ctx.flags.startsWith('d') ? 1 : 0)],
    ['common_preempt_count', num(0)], ['COMM', { kind: 'str', v: ctx.comm }], ['comm', { kind: 'str', v: ctx.comm }],
    ['CPU', num(ctx.cpu)], ['cpu', num(ctx.cpu)],
  ]);
  if (def.type === 'r') { m.set('__probe_func', num(hit.addr)); m.set('__probe_ret_ip', num(hit.retAddr ?? 0n)); } else m.set('__probe_ip', num(hit.addr));
  def.args.forEach((a, i) => { const v = argValue(a, texts[i]); if (v) m.set(a.name, v); });
  return m;
}

/** Print a hit's trace line into the kernel log (source 'probe'); never throws into the probed CPU. */
export function emitTraceEvent(kernel: KernelApi, def: EventAdd, env: HitEnv, hit: EventHit): void {
  if (!tracingOn(kernel)) return;
  let line: string | null;
  try {
    line = traceEventLine(kernel, def, env, hit);
  } catch (e) {
    line = `${def.event}: trace line failed: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (line === null) return;
  recordTraceLine(kernel, env.smpProcessorId(), env.ktimeGet(), line);
  kernel.printk(env.smpProcessorId(), line, 'probe');
}
