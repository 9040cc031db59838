/**
 * An emulated-cycle cost model for x86_64 (the kprobes overhead table):
 * every retired instruction costs the cycles of its class (from the
 * DecodedInsn), every trap costs what an exception round trip costs on
 * hardware, and the kernel's kprobes code paths that the emulator runs in
 * TypeScript (kprobe_int3_handler, optimized_callback, ...) are charged a
 * fixed cost each, standing in for the C code Linux runs there.
 *
 * It is a model, not a simulator: no caches, no pipeline, one number per
 * instruction class. Sources for the numbers:
 *   - instruction classes: Agner Fog, "Instruction tables" (latency /
 *     reciprocal throughput on Intel Core 2 .. Skylake): simple ALU/mov
 *     ~1, loads/stores ~1 issued + a few for L1 latency, imul 3, div
 *     20-90, push/pop 1, call/ret ~2, POPF ~20 (serialising flag write),
 *     PUSHF ~3, locked read-modify-write ~20, CPUID ~100+.
 *   - traps: an exception through the IDT and back with IRETQ costs
 *     several hundred cycles on modern x86 (Intel SDM vol. 3A ch. 6 for the
 *     mechanism; ithare.com "Infographics: Operation Costs in CPU Clock
 *     Cycles" puts a kernel entry/exit at ~1000 cycles in total); the
 *     kprobes documentation's own x86-64 table (Xeon E5410, 2.33 GHz)
 *     implies ~860 cycles for the breakpoint path it saves when a probe is
 *     optimized (b - o = 0.37 us) and ~1300 cycles for the single-step trap
 *     path (k - b = 0.56 us), handler code included. We take 600 cycles
 *     for int3 + IRETQ and 700 for #DB (DR6 read, IST stack) + IRETQ, and
 *     charge the handler paths separately below.
 *   - kernel paths: sized by the number of C statements Linux runs there
 *     (hash lookup, per-CPU control block, preempt count, handler call);
 *     tens to a few hundred cycles.
 * No CPU change is needed: a CycleCounter wraps Cpu.run from outside and
 * steps the CPU one instruction at a time while counting (slow; benches
 * only). The normal run loop is untouched; the CPUs' inline breakpoint
 * shortcut is switched off while counting.
 */
import type { ArchOps, Cpu, DecodedInsn, RunResult, Trap } from '../types';
import { toVAddr } from '../../memory/address';
import type { Memory } from '../../memory/memory';
import { X86Cpu } from './cpu';

export type CycleClass =
  | 'alu' | 'mov' | 'load' | 'store' | 'rmw' | 'lea' | 'push' | 'pop' | 'mul' | 'div' | 'jump' | 'condJump'
  | 'call' | 'ret' | 'indirect' | 'string' | 'pushf' | 'popf' | 'locked' | 'serializing' | 'nop' | 'trapInsn';

/** cycles per instruction class */
export const INSN_CYCLES: Readonly<Record<CycleClass, number>> = {
  alu: 1, mov: 1, load: 3, store: 2, rmw: 4, lea: 1, push: 1, pop: 1, mul: 3, div: 26, jump: 1, condJump: 1,
  call: 2, ret: 2, indirect: 3, string: 4, pushf: 3, popf: 20, locked: 20, serializing: 100, nop: 1,
  // int3/vmcall/syscall/ud2: the exception or call they raise is charged by the trap costs
  trapInsn: 0,
};

/** cycles of an exception round trip (entry through the IDT + IRETQ), by trap kind */
export const TRAP_CYCLES: Readonly<Record<Trap['kind'], number>> = {
  breakpoint: 600,
  singleStep: 700,
  // #DB from a debug register, like the single-step #DB
  hwBreakpoint: 700,
  undefined: 700,
  divide: 700,
  pageFault: 900,
  generalProtection: 800,
  // a hypercall is a VM exit + entry (kernel <-> emulated kernel service); same in every run of a comparison
  hypercall: 1200,
  syscall: 150,
  halt: 0,
};

/** fixed costs of the kernel's kprobes C paths the engine runs in TypeScript */
export const KPROBE_PATH_CYCLES = {
  /** do_int3 -> kprobe_int3_handler: get_kprobe hash lookup, control block, pre_handler call, setup_singlestep */
  int3Handler: 250,
  /** do_debug -> kprobe_debug_handler: resume_execution fix-ups, post_handler dispatch, control block */
  debugHandler: 200,
  /** `call optimized_callback` + the callback: preempt_disable, control block, pre_handler call, return */
  optimizedCallback: 60,
  /** kretprobe trampoline_handler: instance list walk, return handler call, recycling */
  trampolineHandler: 150,
  /** pre_handler_kretprobe: take a free instance, arch_prepare_kretprobe (return address swap) */
  kretprobeEntry: 120,
  /** setjmp_pre_handler + jprobe_return's breakpoint + longjmp_break_handler (stack copy of 64 bytes both ways) */
  jprobe: 250,
  /** ftrace_regs_caller's call of kprobe_ftrace_handler: recursion lock, get_kprobe, control block, pre_handler call */
  ftraceHandler: 80,
} as const;

const SERIALIZING = new Set(['cpuid', 'wrmsr', 'rdmsr', 'invd', 'wbinvd', 'lgdt', 'lidt', 'iretq', 'iret']);
const MUL = new Set(['imul', 'mul', 'mulx']);
const DIV = new Set(['div', 'idiv']);
const NOPS = new Set(['nop', 'pause', 'endbr64', 'endbr32', 'lfence', 'sfence', 'prefetchnta', 'prefetcht0', 'prefetcht1', 'prefetcht2', 'prefetchw']);

/** the cost class of a decoded instruction */
export function cycleClass(d: DecodedInsn): CycleClass {
  const m = d.mnemonic;
  switch (d.flow) {
    case 'trap': case 'halt': return 'trapInsn';
    case 'call': return 'call';
    case 'ret': return 'ret';
    case 'jump': return 'jump';
    case 'condJump': return 'condJump';
    case 'indirectJump': case 'indirectCall': return 'indirect';
    default: break;
  }
  if (SERIALIZING.has(m) || m === 'mfence') return m === 'mfence' ? 'locked' : 'serializing';
  if (NOPS.has(m)) return 'nop';
  if (m.startsWith('pushf')) return 'pushf';
  if (m.startsWith('popf')) return 'popf';
  if (m === 'push') return 'push';
  if (m === 'pop') return 'pop';
  if (MUL.has(m)) return 'mul';
  if (DIV.has(m)) return 'div';
  if (m === 'lea') return 'lea';
  if (/^(rep |repne )?(movs|stos|lods|cmps|scas)/.test(m)) return 'string';
  const mem = d.operands.includes('[');
  if (mem && (d.bytes.includes(0xf0) || m === 'xchg' || m === 'cmpxchg' || m === 'xadd')) return 'locked';
  if (!mem) return m.startsWith('mov') || m.startsWith('cmov') ? 'mov' : 'alu';
  // memory operand: destination first in Intel syntax
  const dst = d.operands.split(',')[0] ?? '';
  if (!dst.includes('[')) return 'load';
  if (m.startsWith('mov') || m.startsWith('set')) return 'store';
  if (m === 'cmp' || m === 'test' || m === 'bt') return 'load';
  return 'rmw';
}

export function insnCycles(d: DecodedInsn): number {
  return INSN_CYCLES[cycleClass(d)];
}

/**
 * Cycles of a straight-line code block (the sum of its instructions'
 * classes), e.g. a detour template the kprobes engine runs natively
 * instead of as instructions. Throws when the bytes do not decode.
 */
export function codeCycles(arch: ArchOps, code: Uint8Array, at = 0xffffffff80000000n): number {
  let total = 0;
  for (let off = 0; off < code.length;) {
    const d = arch.decodeBytes(code.subarray(off), at + BigInt(off));
    if (!d) throw new Error(`codeCycles: no instruction decodes at +0x${off.toString(16)}`);
    total += insnCycles(d);
    off += d.length;
  }
  return total;
}

/** What a breakpoint trap stands for (engine knowledge, supplied by the caller). */
export type BreakpointKind = 'kprobe' | 'optprobeCallback' | 'kretprobeTrampoline' | 'kretprobeBoostCallback' | 'ftraceCallback' | 'other';

/** Cycles charged for a trap, with the kprobes path it enters. */
export function trapCycles(trap: Trap, bp: BreakpointKind): number {
  const P = KPROBE_PATH_CYCLES;
  if (trap.kind === 'breakpoint') {
    switch (bp) {
      case 'kprobe': return TRAP_CYCLES.breakpoint + P.int3Handler;
      // the detour buffer's / booster trampoline's callback stands for a near call: no exception
      case 'optprobeCallback': return INSN_CYCLES.call + INSN_CYCLES.ret + P.optimizedCallback;
      case 'kretprobeBoostCallback': return INSN_CYCLES.call + INSN_CYCLES.ret + P.trampolineHandler;
      case 'ftraceCallback': return INSN_CYCLES.call + INSN_CYCLES.ret + P.ftraceHandler;
      case 'kretprobeTrampoline': return TRAP_CYCLES.breakpoint + P.int3Handler + P.trampolineHandler;
      default: return TRAP_CYCLES.breakpoint;
    }
  }
  if (trap.kind === 'singleStep') return TRAP_CYCLES.singleStep + P.debugHandler;
  return TRAP_CYCLES[trap.kind];
}

/** Cycle totals of a counted run. */
export interface CycleTotals {
  cycles: number;
  instructions: number;
  traps: number;
  byClass: Record<CycleClass, number>;
}

/**
 * Counts emulated cycles of CPUs by wrapping their run(): each call runs
 * the CPU one instruction at a time, classifies the instruction at pc
 * (decode cached per address, dropped on every code write) and charges
 * trap costs through `breakpointKind` for breakpoint traps.
 */
export class CycleCounter implements CycleTotals {
  cycles = 0;
  instructions = 0;
  traps = 0;
  byClass = Object.fromEntries(Object.keys(INSN_CYCLES).map(k => [k, 0])) as Record<CycleClass, number>;
  private readonly caches = new Map<Memory, Map<number, CycleClass>>();

  constructor(private readonly arch: ArchOps, private readonly breakpointKind: (addr: bigint) => BreakpointKind) {}

  /**
   * Wrap the CPUs' run(). Their inline breakpoint and single-step paths
   * (X86Cpu.inlineBreakpoint / inlineSingleStep, host shortcuts) are
   * switched off: every breakpoint and single-step is then seen as the
   * trap it stands for and charged as such (breakpointKind).
   */
  attach(cpus: readonly Cpu[]): void {
    for (const cpu of cpus) {
      if (cpu instanceof X86Cpu) { cpu.inlineBreakpoint = null; cpu.inlineSingleStep = null; }
      const orig = cpu.run.bind(cpu);
      (cpu as { run: (budget: number) => RunResult }).run = (budget: number) => this.step(cpu, orig, budget);
    }
  }

  private classOf(cpu: Cpu): CycleClass | null {
    const mem = cpu.mem;
    let c = this.caches.get(mem);
    if (!c) {
      const cache = new Map<number, CycleClass>();
      c = cache;
      this.caches.set(mem, cache);
      mem.codeWriteListeners.push((addr, len) => { for (let i = 0; i < len + 15; i++) cache.delete(addr - 15 + i); });
    }
    const pc = cpu.getPc();
    const v = toVAddr(pc);
    if (v === null) return null;
    let k = c.get(v);
    if (k === undefined) {
      const d = this.arch.decode(mem, pc);
      if (!d) return null;
      k = cycleClass(d);
      c.set(v, k);
    }
    return k;
  }

  private step(cpu: Cpu, orig: (budget: number) => RunResult, budget: number): RunResult {
    let executed = 0;
    while (executed < budget) {
      const k = this.classOf(cpu);
      const r = orig(1);
      executed += r.executed;
      if (r.executed > 0 && k) {
        this.cycles += INSN_CYCLES[k];
        this.byClass[k]++;
        this.instructions++;
      }
      if (r.trap) {
        this.traps++;
        const bp = r.trap.kind === 'breakpoint' ? this.breakpointKind(r.trap.pc - BigInt(this.arch.breakpointPcOffset)) : 'other';
        this.cycles += trapCycles(r.trap, bp);
        return { executed, trap: r.trap };
      }
      if (r.executed === 0) break;
    }
    return { executed, trap: null };
  }
}
