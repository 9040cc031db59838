/**
 * Shared helpers of the probe-bridge tests: the sample kernel, a machine with
 * its ProbeManager, breakpoint-marker lines found by scanning the sources,
 * and running to power-off while collecting debugger stops.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import type { ElfImage } from '../../emulator/elf/types';
import type { StopRequest } from '../../emulator/kernel/types';
import { Machine, MachineExit } from '../../emulator/machine';
import { ProbeManager, ProbeManagerOptions } from '../../emulator/probes';
import { repoPath } from '../util/paths';
import { probesOf } from '../../emulator/probes/attach';

export const KERNEL_DIR = repoPath('examples', 'kernel');
export const SAMPLE_IMAGE = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
/** the fixed argument of the kernel's self-test calls (main.c rand1) */
export const RAND1 = 0x2545f491n;
/** kprobe_target runs once in the self-test and once per worker iteration (4 x 24) */
export const TARGET_CALLS = 1 + 4 * 24;

let cached: ElfImage | null = null;
export function sampleImage(): ElfImage {
  cached ??= loadElf(SAMPLE_IMAGE);
  return cached;
}

/** instruction starts of a function of the sample kernel, up to its padding */
export function starts(m: Machine, name: string): bigint[] {
  const s = m.kernel.image.symbols.lookup(name);
  assert.ok(s && s.size > 0n, name);
  const out: bigint[] = [];
  for (let p = s.value; p < s.value + s.size;) {
    const d = m.arch.decode(m.kernel.mem, p);
    if (!d || (d.length === 1 && d.bytes[0] === 0xcc)) break;
    out.push(p);
    p += BigInt(d.length);
  }
  return out;
}

export function sym(name: string): bigint {
  const s = sampleImage().symbols.lookup(name);
  assert.ok(s, `no symbol ${name} in the sample kernel`);
  return s.value;
}

/** { file, line } of the `#BP name` marker in examples/kernel/*.c */
export function marker(name: string): { file: string; line: number } {
  for (const f of readdirSync(KERNEL_DIR).filter(n => n.endsWith('.c')).sort()) {
    const lines = readFileSync(join(KERNEL_DIR, f), 'utf8').split('\n');
    const i = lines.findIndex(l => new RegExp(`#BP ${name}\\b`).test(l));
    if (i >= 0) return { file: f, line: i + 1 };
  }
  throw new Error(`no marker #BP ${name} in ${KERNEL_DIR}`);
}

export interface ProbeRig {
  machine: Machine;
  mgr: ProbeManager;
}

export function probeRig(opts: { cpus?: number } & ProbeManagerOptions = {}): ProbeRig {
  const { cpus, ...probes } = opts;
  const machine = new Machine(sampleImage(), { cpus: cpus ?? 2, maxInstructions: 50_000_000, probes });
  const mgr = probesOf(machine);
  return { machine, mgr };
}

export interface RunResult {
  exit: MachineExit;
  lines: string[];
  /** console records with their source */
  records: { text: string; source: string; cpu: number }[];
  stops: { cpu: number; request: StopRequest }[];
}

/** Run to the end; every debugger stop is recorded and `onStop` may act on it, then the run resumes. */
export function runAll(m: Machine, onStop?: (s: { cpu: number; request: StopRequest }, n: number) => void): RunResult {
  const stops: { cpu: number; request: StopRequest }[] = [];
  for (;;) {
    const r = m.runSlice(1_000_000);
    if (r.kind === 'stopped') {
      stops.push({ cpu: r.cpu, request: r.request });
      onStop?.(stops[stops.length - 1], stops.length);
      continue;
    }
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  const exit = m.exit;
  assert.ok(exit);
  const records = m.printkRecords.map(r => ({ text: r.text, source: r.source, cpu: r.cpu }));
  return { exit, lines: records.map(r => r.text), records, stops };
}

/** probe-file text -> registered probes; asserts there are no compile errors */
export function addFile(mgr: ProbeManager, text: string, name = 'test.kprobe'): ReturnType<ProbeManager['addProbeFile']> {
  const r = mgr.addProbeFile(text, name);
  assert.deepEqual(r.diagnostics.filter(d => d.severity === 'error'), [], 'compile errors');
  return r;
}
