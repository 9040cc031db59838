/**
 * Where the kprobes engine changed kernel text, for the debugger: per probed
 * address, the probed instruction (or an optimized probe's whole detoured
 * region), what is written there now (the arch breakpoint, the jump to the
 * detour buffer, or nothing while disarmed), and which probes own it.
 * `disassemble` marks these instructions; `writeMemory` refuses to write
 * over them.
 */
import type { ArchOps } from '../arch/types';
import type { KprobesEngine } from '../kprobes';
import { kprobeDisabled } from '../kprobes';
import { hex64 } from '../memory/address';

const formatAddress = (a: bigint): string => '0x' + hex64(a);

export type PatchState = 'breakpoint' | 'optimized' | 'disarmed';

export interface ProbePatch {
  /** the probed address (where the breakpoint / jump starts) */
  addr: bigint;
  /** end (exclusive) of what the probe owns: the probed instruction, or the detoured region when optimized */
  end: bigint;
  /** bytes written at addr: the breakpoint's length (riscv: 2 for c.ebreak), or the jump's (= detoured region) */
  patchLength: number;
  /** the breakpoint written (or, disarmed, to be written) when it is not the arch's usual one (riscv c.ebreak) */
  breakpointName?: string;
  state: PatchState;
  /** "symbol+0xoff" (or the hex address) */
  where: string;
  /** debugfs column 2 of each probe at the address (aggregates have several) */
  kinds: ('k' | 'r' | 'j')[];
  /** every probe at the address is [DISABLED] */
  disabled: boolean;
  /** optimized: the detour buffer the jump goes to */
  detour?: bigint;
}

/** The patches of every registered probe, by address. */
export function probePatches(engine: KprobesEngine, arch: ArchOps): ProbePatch[] {
  const out: ProbePatch[] = [];
  const seen = new Set<bigint>();
  const bpLen = arch.breakpointInsn.length;
  for (const { addr } of engine.probes.listEntries()) {
    if (seen.has(addr)) continue;
    seen.add(addr);
    const members = engine.probes.probesAt(addr);
    const kinds = members.map(p => engine.probes.kindOf(p));
    const disabled = members.length > 0 && members.every(p => kprobeDisabled(p));
    const where = engine.describer.where(addr);
    if (engine.optimizer.isOptimized(addr)) {
      const st = engine.optimizer.status(addr);
      const size = st.size ?? bpLen;
      out.push({ addr, end: addr + BigInt(size), patchLength: size, state: 'optimized', where, kinds, disabled, detour: st.buffer });
      continue;
    }
    const state: PatchState = engine.probes.isArmed(addr) ? 'breakpoint' : 'disarmed';
    // the breakpoint covers the saved opcode: the arch's breakpoint, or its short form over a short instruction
    const written = engine.getKprobe(addr)?.opcode?.length ?? bpLen;
    const short = arch.shortBreakpoint && written === arch.shortBreakpoint.bytes.length && written !== bpLen ? arch.shortBreakpoint : undefined;
    out.push({
      addr, end: addr + BigInt(probedLength(engine, arch, addr)), patchLength: short ? written : bpLen, state, where, kinds, disabled,
      ...(short ? { breakpointName: short.mnemonic } : {}),
    });
  }
  return out;
}

/** Length of the original instruction at a probed address (the breakpoint's length when it does not decode). */
function probedLength(engine: KprobesEngine, arch: ArchOps, addr: bigint): number {
  const mem = engine.kernel.mem;
  // the longest read that stays in mapped memory (a probe near the end of text)
  for (let len = arch.maxInsnLength; len >= arch.minInsnLength; len--) {
    try {
      const d = arch.decodeBytes(engine.arming.readTextWithoutProbes(mem, addr, len), addr);
      if (d) return d.length;
    } catch { /* shorter */ }
  }
  return arch.breakpointInsn.length;
}

const KIND_NAME: Readonly<Record<'k' | 'r' | 'j', string>> = { k: 'kprobe', r: 'kretprobe', j: 'jprobe' };

/**
 * The notes for an instruction at [addr, addr+len): `kprobe: int3 at do_fork+0x0`,
 * `[OPTIMIZED] jmp 0x... (detour buffer of kprobe_target+0x0)`, ... Empty when
 * no probe touches it.
 */
export function patchNotes(patches: readonly ProbePatch[], addr: bigint, len: number, breakpointMnemonic: string): string[] {
  const end = addr + BigInt(len);
  const notes: string[] = [];
  for (const p of patches) {
    if (p.end <= addr || p.addr >= end) continue;
    const who = [...new Set(p.kinds.map(k => KIND_NAME[k]))].join('+');
    const inside = p.addr > addr ? ' (inside this instruction)' : '';
    switch (p.state) {
      case 'breakpoint':
        if (p.addr >= addr) notes.push(`${who}: ${p.breakpointName ?? breakpointMnemonic} at ${p.where}${inside}`);
        break;
      case 'optimized':
        if (p.addr >= addr) notes.push(`[OPTIMIZED] ${who}: jmp ${p.detour !== undefined ? formatAddress(p.detour) : '?'} (detour buffer) at ${p.where}${inside}`);
        else notes.push(`[OPTIMIZED] overwritten by the jump of the ${who} at ${p.where}`);
        break;
      case 'disarmed':
        if (p.addr >= addr) notes.push(`${who} at ${p.where}${inside} ${p.disabled ? '[DISABLED]' : 'disarmed'}: no ${p.breakpointName ?? breakpointMnemonic} written`);
        break;
    }
  }
  return notes;
}

/** The patches a byte range [start, start+count) overlaps. */
export function patchesIn(patches: readonly ProbePatch[], start: bigint, count: number): ProbePatch[] {
  const end = start + BigInt(count);
  return patches.filter(p => p.addr < end && p.end > start);
}
