/**
 * DWARF variables (the debugger's first Variables response): per sample
 * kernel, the time from loading the image to the first frame variables at a
 * probe stop (load + boot to the first do_fork hit + frameVariables there:
 * what the debugger does from launch to its first Variables response, without
 * the DAP transport), the cost of that first frameVariables alone (the reader
 * parses only the unit holding the pc), a later one (cached unit), and the
 * heap the reader holds after the first call and after reading every unit's
 * DIE tree (worst case). Heap figures are after a forced GC when node runs
 * with --expose-gc (bench.mjs passes it; run alone without it they are
 * approximate).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';
import { cpuFrameState, frameVariables, memReader } from '../../emulator/debug/variables';
import { debugInfoOf } from '../../emulator/elf/dwarf/info';
import { PORTS } from '../../emulator/ports';
import { repoRoot } from './lib/root';


const gc = (globalThis as { gc?: () => void }).gc;
const heap = (): number => { for (let i = 0; i < 4; i++) gc?.(); return process.memoryUsage().heapUsed; };
const mb = (b: number): string => `${(b / 1048576).toFixed(2)} MB`;

const root = repoRoot('dwarf');
const only = process.argv.find(a => a.startsWith('--arch='))?.slice(7);
if (!only) {
  // each arch in its own process: the heap figures of one are not disturbed by the garbage of another
  console.log(`heap figures ${gc ? 'after GC' : 'approximate (run node with --expose-gc for exact ones)'}`);
  console.log('arch       launch->vars   first vars   next vars   reader heap (first)   reader heap (all units)   units');
  for (const port of PORTS.filter(p => p.hasCpu)) {
    spawnSync(process.execPath, [...process.execArgv, process.argv[1], `--arch=${port.name}`], { stdio: 'inherit' });
  }
}
for (const port of PORTS.filter(p => p.hasCpu && p.name === only)) {
  const path = join(root, 'examples', 'kernel', 'build', `kernel-${port.name}.elf`);
  if (!existsSync(path)) continue;
  // the reader's heap on a fresh copy of the image: the unit of the stop, then every unit
  const fresh = loadElf(path);
  const h0 = heap();
  const di = debugInfoOf(fresh);
  const u0 = di.unitFor(fresh.symbols.lookup('do_fork')?.value ?? 0n);
  if (u0) di.root(u0);
  const h1 = heap();
  const units = di.units();
  for (const u of units) di.root(u);
  const h2 = heap();
  const t0 = performance.now();
  const image = loadElf(path);
  const m = new Machine(image, { cpus: 1, maxInstructions: 50_000_000 });
  let first = -1, next = -1, t1 = 0;
  let hits = 0;
  m.kprobes.registerKprobe({
    symbol_name: 'do_fork',
    pre_handler: (p, regs) => {
      hits++;
      if (hits === 1) {
        const a = performance.now();
        const v = frameVariables(image, cpuFrameState(image, m.arch, regs.cpu, p.addr as bigint), memReader(regs.cpu));
        const b = performance.now();
        if (!v.ok) throw new Error(v.reason);
        first = b - a;
        t1 = b - t0;
      } else if (hits === 2) {
        const a = performance.now();
        frameVariables(image, cpuFrameState(image, m.arch, regs.cpu, p.addr as bigint), memReader(regs.cpu));
        next = performance.now() - a;
      }
      return 0;
    },
  });
  m.run();
  console.log(`${port.name.padEnd(10)} ${`${t1.toFixed(1)} ms`.padStart(12)} ${`${first.toFixed(2)} ms`.padStart(12)} ${`${next.toFixed(3)} ms`.padStart(11)} ${mb(h1 - h0).padStart(21)} ${mb(h2 - h0).padStart(25)} ${String(units.length).padStart(7)}`);
}
