/**
 * One mode of the overhead section's host-time figures, in a process of its
 * own, for scripts/bench/overheadParts.mjs (which bundles this file once per
 * measurement variant of the hit path and runs the bundles interleaved):
 * `--mode=M --machines=N` runs bench.elf (bench_target() called 400,000
 * times) on N fresh one-CPU machines with mode M's probes (M = none: no
 * probe) and prints one line: the process CPU time (user + system, ns) of
 * each machine's run after the first two (V8 warm-up), the calls the image
 * made and the probe hits counted (a variant that skips the handlers
 * counts fewer). Every run must power off with bench.elf's results unchanged.
 */
import { Machine } from '../../../emulator/machine';
import { benchImage, BENCH_TARGET, checkBenchOutput } from '../../../test/fixtures/kernel/bench/hostTime';
import { type Mode, registerMode } from './overheadModes';

/** the line's marker (overheadParts.mjs finds it) */
export const PARTS_ROW = 'overhead-parts:';

function main(): void {
  const arg = (name: string, dflt: string): string => process.argv.find(a => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
  const mode = arg('mode', 'none') as Mode;
  const machines = Number(arg('machines', '12'));
  if (!Number.isInteger(machines) || machines < 3) throw new Error(`--machines=${machines}: at least 3 (the first two are not counted)`);
  const image = benchImage();
  const cpuNs: number[] = [];
  let calls = 0, hits = 0;
  for (let n = 0; n < machines; n++) {
    const m = new Machine(image, { cpus: 1 });
    const probes = mode === 'none' ? null : registerMode(m, image, mode, BENCH_TARGET);
    const c0 = process.cpuUsage();
    const exit = m.run();
    const c = process.cpuUsage(c0);
    if (exit.reason !== 'poweroff') throw new Error(`bench.elf (${mode}) ended with ${exit.reason}: ${exit.detail}`);
    calls = checkBenchOutput(m, `bench.elf (${mode})`);
    hits = probes === null ? 0 : probes.hits();
    if (n >= 2) cpuNs.push((c.user + c.system) * 1000);
  }
  console.log(PARTS_ROW + JSON.stringify({ mode, calls, hits, cpuNs }));
}

main();
