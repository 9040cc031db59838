/**
 * Test harness: the real sample kernel on the real Machine with a kprobes
 * engine attached before boot. Helpers run the machine to power-off and
 * collect the printk transcript.
 */
import assert from 'node:assert/strict';
import type { DecodedInsn } from '../../emulator/arch/types';
import { loadElf } from '../../emulator/elf/elfFile';
import type { ElfImage } from '../../emulator/elf/types';
import { Machine } from '../../emulator/machine';
import { Kprobe, KprobesEngine, KprobesEngineOptions, PtRegs } from '../../emulator/kprobes';
import { kprobesArches } from '../../emulator/arch/registry';
import { portByName } from '../../emulator/ports';
import type { ArchInfo } from '../../emulator/arch/types';
import { mustVAddr } from '../../emulator/memory/address';
import type { TranslateMode } from '../../emulator/jit';
import { repoPath } from '../util/paths';

const cached = new Map<string, ElfImage>();
/** The sample kernel built for an architecture (x86_64 by default). */
export function sampleImage(arch = 'x86_64'): ElfImage {
  let img = cached.get(arch);
  if (!img) { img = loadElf(repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`)); cached.set(arch, img); }
  return img;
}

/**
 * The architectures the kprobes tests run on: every port of emulator/ports.ts
 * with a CPU and kprobes hooks (a new port joins the parametrized tests by
 * getting both).
 */
export const KPROBE_ARCHES: readonly string[] = kprobesArches();

/** The info part of a port (registers, ABI, breakpoint facts), by architecture name. */
export function portInfo(arch: string): ArchInfo {
  const p = portByName(arch);
  assert.ok(p, `no port ${arch}`);
  return p;
}

/** The register names a port's pt_regs uses for the integer arguments (x86_64 di si ..., arm64 x0 x1 ..., riscv a0 a1 ...). */
export function argRegNames(arch: string): string[] {
  const p = portInfo(arch);
  return p.abi.argRegs.map(i => p.regs[i].name);
}

/**
 * The return address of the function whose entry the registers are at: on
 * the stack (x86_64) or in the link register (arm64 x30, riscv ra), as the
 * port's ABI says.
 */
export function returnAddressOnEntry(regs: PtRegs): bigint {
  const ra = regs.arch.abi.returnAddress;
  return ra.kind === 'stack' ? regs.cpu.mem.read64(mustVAddr(regs.sp + BigInt(ra.offset))) : regs.cpu.getReg(ra.reg);
}

export interface Rig {
  machine: Machine;
  engine: KprobesEngine;
  image: ElfImage;
  sym(name: string): bigint;
  /** run to the end; returns the printk lines */
  run(): string[];
}

export function rig(opts: { cpus?: number; maxInstructions?: number; quantum?: number; engine?: KprobesEngineOptions; arch?: string; translate?: TranslateMode } = {}): Rig {
  const image = sampleImage(opts.arch);
  const machine = new Machine(image, { cpus: opts.cpus ?? 2, maxInstructions: opts.maxInstructions ?? 50_000_000, quantum: opts.quantum, kprobes: opts.engine, translate: opts.translate });
  const engine = machine.kprobes;
  return {
    machine, engine, image,
    sym(name: string): bigint {
      const s = image.symbols.lookup(name);
      if (!s) throw new Error(`no symbol ${name} in the sample kernel`);
      return s.value;
    },
    run(): string[] {
      machine.run();
      return machine.printkRecords.map(r => r.text);
    },
  };
}

/** lines printed by the kernel's self-test pass */
export function selftestLines(lines: string[]): string[] {
  return lines.filter(l => l.startsWith('selftest:'));
}

/** the instructions of a function, decoded from the image */
export function insns(r: Rig, name: string): DecodedInsn[] {
  const s = r.image.symbols.lookup(name);
  assert.ok(s, name);
  const out: DecodedInsn[] = [];
  for (let a = s.value; a < s.value + s.size;) {
    const d = r.machine.arch.decode(r.machine.kernel.mem, a);
    assert.ok(d, `decodes at ${name}`);
    out.push(d);
    a += BigInt(d.length);
  }
  return out;
}

/** the bytes at addr as they really are in memory (n: 5, a jump's length, unless told) */
export function bytesAt(r: Rig, addr: bigint, n = 5): number[] {
  return [...r.machine.kernel.mem.readBytes(mustVAddr(addr), n)];
}

export function hexBytes(b: Uint8Array): string {
  return Array.from(b, x => x.toString(16).padStart(2, '0')).join('');
}

/** the x86_64 pt_regs fields, in frame order */
const X86_REGS = ['r15', 'r14', 'r13', 'r12', 'bp', 'bx', 'r11', 'r10', 'r9', 'r8', 'ax', 'cx', 'dx', 'si', 'di', 'sp', 'flags', 'ip'];

/** every x86_64 pt_regs field as name=hex, for comparing register states */
export function snapshot(regs: PtRegs): string {
  return X86_REGS.map(n => `${n}=${regs.get(n).toString(16)}`).join(' ');
}

/**
 * A kprobe on fib whose pre_handler asks the debugger to stop at its
 * `n`th hit (`optimize`: after the optimizer ran, so that the probe may be
 * jump-optimized): where and when the machine stopped (CPU, virtual time,
 * registers, hits, instructions), then the hits and instructions of the
 * rest of the run to power-off.
 */
export function stopAtFibHit(r: Rig, n: number, optimize = false): string {
  const k = r.machine.kernel;
  let hits = 0;
  const kp: Kprobe = {
    symbol_name: 'fib',
    pre_handler: (_p, regs) => {
      if (++hits === n) k.requestStop(regs.cpu.id, { reason: 'breakpoint', description: `fib hit ${n}` });
      return 0;
    },
  };
  assert.equal(r.engine.registerKprobe(kp), 0);
  if (optimize) r.engine.waitForOptimizer();
  for (;;) {
    const s = r.machine.runSlice(1_000_000);
    if (s.kind === 'stopped') {
      const cpu = r.machine.cpus[s.cpu];
      const regs = r.machine.arch.regs.map((_, i) => cpu.getReg(i).toString(16)).join(' ');
      const at = `cpu=${s.cpu} t=${k.timeNs()} regs=${regs} hits=${hits} insns=${r.machine.totalInstructions}`;
      // run on to the end: the rest of the run is unaffected
      const exit = r.machine.run();
      assert.equal(exit.reason, 'poweroff');
      return `${at} then hits=${hits} total=${exit.instructions}`;
    }
    assert.notEqual(s.kind, 'exited', 'the stop request was honoured');
    assert.notEqual(s.kind, 'limit');
  }
}
