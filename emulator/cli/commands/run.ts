/**
 * `kprobe-run [run] [IMAGE] [--cpus N] [--max-instructions N] [--stats] ...`:
 * boot a kernel image, print its kernel log as it is produced, exit with its
 * power-off code. One rule for the log: what the kernel and probe handlers
 * print (PrintkRecord sources 'kernel' and 'probe') goes to stdout; what the
 * emulator says about the run (source 'emulator': oops reports, probe
 * handler fault reports, runaway-probe and engine messages) goes to stderr
 * with the CLI's other errors — as the adapter sends them in the 'stderr'
 * output category.
 *
 * Other endings: nothing left to run -> a line on stderr, exit 1; the
 * instruction limit -> a line on stderr, exit 124 (like timeout(1)).
 */
import { loadElf } from '../../elf';
import { Machine, MachineExit } from '../../machine';
import { CliError, CliIo, registerCommand } from '../io';
import { probeFilesImage } from './probeOptions';
import { RunContext, defaultImage, newRunContext, optionsHelp, optionsSynopsis, parseRunArgs } from './runOptions';
import { formatWarnings } from '../../trace/report';
import { attachProbes } from '../../probes/attach';

export const LIMIT_EXIT_CODE = 124;

/** Exit code and stderr line for how a machine ended. */
export function reportExit(what: string, exit: MachineExit, io: CliIo): number {
  switch (exit.reason) {
    case 'poweroff': return exit.code;
    case 'halted':
      io.err(`kprobe-run: ${what}: machine halted: ${exit.detail}\n`);
      return exit.code;
    case 'limit':
      io.err(`kprobe-run: ${what}: ${exit.detail}\n`);
      return LIMIT_EXIT_CODE;
  }
}

export function printStats(m: Machine, seconds: number, io: CliIo): void {
  io.err(`instructions: ${m.totalInstructions}\nseconds: ${seconds.toFixed(3)}\n`);
}

/** Run a machine to its end with the context's setup/teardown hooks; returns the exit. */
export async function runMachine(m: Machine, ctx: RunContext, io: CliIo): Promise<{ exit: MachineExit; seconds: number }> {
  for (const s of ctx.setup) await s(m, io);
  // process.hrtime: the same monotonic clock as performance.now(), without loading perf_hooks (~2 ms of a cold start)
  const t0 = process.hrtime.bigint();
  const exit = ctx.timed.length ? runWithActions(m, ctx, io) : m.run();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  for (const s of ctx.teardown) await s(m, io);
  return { exit, seconds };
}

/** Machine.run() with the --at actions done when the instruction count reaches theirs (in order; ties in option order). */
function runWithActions(m: Machine, ctx: RunContext, io: CliIo): MachineExit {
  const acts = ctx.timed.map((a, i) => ({ a, i })).sort((x, y) => x.a.at - y.a.at || x.i - y.i).map(x => x.a);
  for (;;) {
    while (acts.length && m.totalInstructions >= acts[0].at && !m.exit) acts.shift()?.apply(m, io);
    const next = acts.length ? acts[0].at - m.totalInstructions : 1_000_000;
    const r = m.runSlice(Math.max(1, Math.min(next, 1_000_000)));
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  for (const a of acts) io.err(`kprobe-run: --at ${a.text}: not done, the machine stopped after ${m.totalInstructions} instructions\n`);
  return m.exit as MachineExit;
}

registerCommand('run', {
  summary: 'boot a kernel image and print its kernel log (default image: the one the --probes files name, else the x86_64 sample kernel)',
  get usage() { return `[IMAGE] ${optionsSynopsis('run')}`; },
  get help() {
    return 'IMAGE: a kernel ELF image. Without it, the image named by the `image "..."` header of the --probes files\n'
      + '(relative to the file), else examples/kernel/build/kernel-x86_64.elf.\n'
      + 'The kernel log goes to stdout as it is produced (the emulator\'s own reports - oops, probe handler faults -\n'
      + 'go to stderr); the exit code is the kernel\'s power-off code\n'
      + `(1 when nothing is left to run, ${LIMIT_EXIT_CODE} at the --max-instructions limit).\n\n${optionsHelp('run')}`;
  },
  async run(args: string[], io: CliIo): Promise<number> {
    const ctx = newRunContext();
    const pos = parseRunArgs('run', args, ctx, false);
    if (pos.length > 1) throw new CliError(`run: expected at most one IMAGE, got ${pos.length} (${pos.join(' ')})`);
    const path = pos[0] ?? probeFilesImage(ctx) ?? defaultImage();
    if (!path) throw new CliError('run: no IMAGE given, no probe file names one, and the sample kernel examples/kernel/build/kernel-x86_64.elf was not found');
    const image = loadElf(path);
    const m = new Machine(image, ctx.machine);
    attachProbes(m); // the probe layer over the engines, before anything runs (guest-written kprobe_events find it)
    m.onPrintk(r => (r.source === 'emulator' ? io.err : io.out)(r.text + '\n'));
    const { exit, seconds } = await runMachine(m, ctx, io);
    // missed probe hits (kretprobe maxactive too small, reentry): each probe's latest warning, on stderr at the end
    const warnings = formatWarnings(m.hitLog);
    if (warnings) io.err(warnings);
    const code = reportExit(path, exit, io);
    if (ctx.stats) printStats(m, seconds, io);
    return code;
  },
});
