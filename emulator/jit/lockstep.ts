/**
 * Lockstep (`--translate lockstep`, KPROBE_TRANSLATE=lockstep; tests and
 * CI): every entry into translated code is checked against the
 * interpreter. The translated code runs logging every byte it stores (a
 * lockstep build of each module calls logStore before each fast-path
 * store; helpers log through the memory's watcher); memory and the CPU are
 * put back; the interpreter runs the same count; registers, pc, count and
 * every stored byte are compared, and a difference is an internal error
 * naming the block. Entries in which host code ran (an inline
 * breakpoint's handlers) are not replayed (they would run twice).
 */
import type { DecodeCache } from '../cpu/decodeCache';
import type { InterpCpu, RunnableInsn } from '../cpu/interp';
import type { Memory } from '../memory/memory';
import type { VAddr } from '../memory/address';
import type { Translator } from './translator';

/** bytes about to be stored: where (a region's or the arena's bytes, an offset) and what they held */
export type StoreLog = { bytes: Uint8Array; off: number; old: Uint8Array }[];

/** a CPU store's bytes before it happens, into `log` (helpers and the interpreter's replay); nothing without a log */
export function logCpuStore(log: StoreLog | null, mem0: Memory, a0: VAddr, len: number): void {
  if (log === null) return;
  // a paged space's bytes are its physical memory's, where the address leads now (unmapped: the store faults, nothing to log)
  const mem = mem0.directMemory, paged = mem !== mem0;
  const a = paged ? mem0.peekDirect(a0) : a0;
  if (a !== a) return;
  const whole = (a0 & 4095) + len <= 4096 || !paged ? mem.regionAt(a, len) : undefined;
  if (whole !== undefined && !whole.device) {
    const o = a - whole.base;
    log.push({ bytes: whole.bytes, off: o, old: whole.bytes.slice(o, o + len) });
    return;
  }
  for (let i = 0; i < len; i++) {
    const b = paged ? mem0.peekDirect(a0 + i) : a0 + i;
    if (b !== b) continue;
    const r = mem.regionAt(b);
    if (r === undefined || r.device) continue;
    const o = b - r.base;
    log.push({ bytes: r.bytes, off: o, old: r.bytes.slice(o, o + 1) });
  }
}

/**
 * Lockstep (tests, CI): run the translated code, note its registers,
 * count, pc and every byte it stored; put memory and the CPU back; run
 * the same number of instructions in the interpreter and compare. A
 * difference is an internal error naming the block and what differs.
 */
export function enterLockstep<C, I extends RunnableInsn<C>>(t: Translator<C, I>, cpu0: InterpCpu<C, I>, cache: DecodeCache<I>, insn: I, budget: number): number {
  const cpu = cpu0 as unknown as InterpCpu<C, I> & { saveContext(): object; restoreContext(c: object): void };
  const mem = cpu.mem;
  const ctx0 = cpu.saveContext(), instret0 = cpu.instret, pc0 = cpu.pc;
  const outerLog = t.storeLog;
  t.storeLog = [];
  t.clearImpure(cpu);
  const n = t.enterTranslated(cpu0, cache, insn, budget);
  const jitLog = t.storeLog;
  t.storeLog = outerLog;
  if (n < 0) { cpu.restoreContext(ctx0); return n; }
  // host code ran inside (handlers of an inline breakpoint): a replay would run it again; the translated run stands
  if (t.impureEntry(cpu) || outerLog !== null) { t.stats.lockstepSkipped++; return n; }
  const err = t.lastError, lastHelper = t.lastHelper;
  const ctxJ = cpu.saveContext(), pcJ = cpu.pc, instretJ = cpu.instret;
  // what the translated code left in memory, then memory as it was
  const after = jitLog.map(e => e.bytes.slice(e.off, e.off + e.old.length));
  for (let i = jitLog.length - 1; i >= 0; i--) jitLog[i].bytes.set(jitLog[i].old, jitLog[i].off);
  // the interpreter, from the same state, for the same count
  cpu.restoreContext(ctx0);
  cpu.instret = instret0;
  cpu.pc = pc0;
  const replayLog: StoreLog = [];
  t.storeLog = replayLog;
  const watcher = { access: (a: VAddr, len: number, write: boolean) => { if (write) logCpuStore(t.storeLog, mem, a, len); }, bulk: () => undefined };
  mem.watcher = watcher;
  let replayErr: unknown = null;
  try {
    try {
      cpu.interpretExactly(n);
    } catch (e) {
      // the translated code retired an instruction the interpreter faults on
      throw new Error(`translator lockstep mismatch in ${t.arch} block at 0x${BigInt.asUintN(64, BigInt(insn.addr)).toString(16)}: `
        + `the interpreter faults at 0x${BigInt.asUintN(64, BigInt(cpu.pc)).toString(16)} (after ${cpu.instret - instret0} of ${n} instructions) where the translated code went on: ${String(e)}`);
    }
    if (err !== null && lastHelper !== null) {
      const i = cache.get(cpu.pc) as unknown as RunnableInsn<unknown>;
      cpu.pc = i.next;
      try { i.exec(cpu, i); } catch (e) { replayErr = e; cpu.pc = i.addr; }
    }
  } finally {
    mem.watcher = null;
    t.storeLog = null;
  }
  const where = `${t.arch} block at 0x${BigInt.asUintN(64, BigInt(insn.addr)).toString(16)} (${n} instructions from 0x${BigInt.asUintN(64, BigInt(pc0)).toString(16)})`;
  const ctxI = cpu.saveContext();
  const diffs: string[] = [];
  if (cpu.pc !== pcJ) diffs.push(`pc: translated 0x${BigInt.asUintN(64, BigInt(pcJ)).toString(16)}, interpreter 0x${BigInt.asUintN(64, BigInt(cpu.pc)).toString(16)}`);
  if (cpu.instret !== instretJ) diffs.push(`count: translated ${instretJ - instret0}, interpreter ${cpu.instret - instret0}`);
  const regDiff = differ(ctxJ, ctxI, 'context');
  if (regDiff !== null) diffs.push(`${regDiff}\n  translated ${JSON.stringify(ctxJ, bigintJson)}\n  interpreter ${JSON.stringify(ctxI, bigintJson)}`);
  if ((err === null) !== (replayErr === null)) diffs.push(`fault: translated ${String(err)}, interpreter ${String(replayErr)}`);
  // every byte either side stored must hold what the translated code left there
  jitLog.forEach((e, i) => {
    const now = e.bytes.subarray(e.off, e.off + e.old.length);
    if (!now.every((b, j) => b === after[i][j])) diffs.push(`memory at arena/region offset 0x${e.off.toString(16)}: translated ${[...after[i]]}, interpreter ${[...now]}`);
  });
  // bytes only the interpreter stored: put memory in the translated code's final state and compare there
  const interpFinal = replayLog.map(e => e.bytes.slice(e.off, e.off + e.old.length));
  for (let i = replayLog.length - 1; i >= 0; i--) replayLog[i].bytes.set(replayLog[i].old, replayLog[i].off);
  jitLog.forEach((e, i) => e.bytes.set(after[i], e.off));
  replayLog.forEach((e, i) => {
    const now = e.bytes.subarray(e.off, e.off + e.old.length);
    if (!now.every((b, j) => b === interpFinal[i][j])) diffs.push(`memory at region offset 0x${e.off.toString(16)}: translated ${[...now]}, interpreter ${[...interpFinal[i]]}`);
  });
  if (diffs.length > 0) throw new Error(`translator lockstep mismatch in ${where}:\n  ${diffs.slice(0, 8).join('\n  ')}`);
  t.stats.lockstepChecked++;
  return n;
}

/** JSON of a CPU context: bigints and typed arrays as text (lockstep comparisons) */
function bigintJson(_k: string, v: unknown): unknown {
  if (typeof v === 'bigint') return `${v}n`;
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number | bigint>, x => typeof x === 'bigint' ? `${x}n` : x);
  return v;
}

/** The first difference between two CPU contexts (plain data: numbers, bigints, booleans, strings, arrays, typed arrays, objects), or null. */
function differ(a: unknown, b: unknown, path: string): string | null {
  if (a === b) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Number.isNaN(a) && Number.isNaN(b) ? null : `${path}: translated ${String(a)}, interpreter ${String(b)}`;
  }
  if (ArrayBuffer.isView(a) || Array.isArray(a)) {
    const x = a as unknown as ArrayLike<unknown>, y = b as unknown as ArrayLike<unknown>;
    if (x.length !== y.length) return `${path}: length ${x.length} vs ${y.length}`;
    for (let i = 0; i < x.length; i++) {
      if (x[i] !== y[i]) { const d = differ(x[i], y[i], `${path}[${i}]`); if (d !== null) return d; }
    }
    return null;
  }
  const ka = Object.keys(a as object);
  for (const k of ka) {
    const d = differ((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
    if (d !== null) return d;
  }
  return ka.length === Object.keys(b as object).length ? null : `${path}: different fields`;
}
