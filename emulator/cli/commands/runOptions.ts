/**
 * Options of `kprobe-run run` / `exec`, as a registry so that other modules
 * can add theirs without touching run.ts:
 *
 *   import { registerRunOption } from './runOptions';
 *   registerRunOption({ name: '--probes', arg: 'FILE', help: '...',
 *     apply: (value, ctx) => { ctx.setup.push(machine => ...); } });
 *
 * (then add `import './yourOptions';` to commands/index.ts before './run').
 * Options accept `--name VALUE` and `--name=VALUE`; a flag (no `arg`) takes none.
 */
import { MACHINE_LIMITS, MachineLimitName } from '../../machineOptions';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Machine, MachineOptions } from '../../machine';
import { formatHistograms } from '../../trace/report';
import { CliError, CliIo } from '../io';

export interface RunContext {
  /** passed to the Machine constructor */
  machine: MachineOptions;
  /** --stats */
  stats: boolean;
  /** run after the machine is built and before it runs (register probes, set sysctls...) */
  setup: ((m: Machine, io: CliIo) => void | Promise<void>)[];
  /** run after the machine ended (print summaries) */
  teardown: ((m: Machine, io: CliIo) => void | Promise<void>)[];
  /** --at: actions once the machine has run `at` instructions in all */
  timed: { at: number; text: string; apply(m: Machine, io: CliIo): void }[];
}

export interface RunOption {
  /** '--cpus' */
  name: string;
  /** value placeholder ('N', 'FILE'); absent for a flag */
  arg?: string;
  help: string;
  /** may be given more than once (each use adds to the others) */
  repeatable?: boolean;
  /** which commands accept it (default both) */
  commands?: readonly ('run' | 'exec')[];
  apply(value: string, ctx: RunContext): void;
}

const options = new Map<string, RunOption>();

export function registerRunOption(o: RunOption): void {
  if (!o.name.startsWith('--')) throw new Error(`run option ${o.name} must start with --`);
  if (options.has(o.name)) throw new Error(`run option ${o.name} registered twice`);
  options.set(o.name, o);
}

/** The command's options in registration order (lookup: no sorting, whose first localeCompare costs a cold run ~7 ms of ICU set-up). */
function commandOptions(command: 'run' | 'exec'): RunOption[] {
  return [...options.values()].filter(o => !o.commands || o.commands.includes(command));
}

/** The command's options sorted by name, as usage, help and errors list them. */
export function runOptions(command: 'run' | 'exec'): RunOption[] {
  return commandOptions(command).sort((a, b) => a.name.localeCompare(b.name));
}

export function newRunContext(): RunContext {
  return { machine: {}, stats: false, setup: [], teardown: [], timed: [] };
}

/** A non-negative integer option value (decimal or 0x hex). */
export function parseCount(name: string, v: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^(0x[0-9a-f]+|[0-9]+)$/i.test(v)) throw new CliError(`${name}: expected a number, got '${v}'`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new CliError(`${name}: ${v} is out of range (${min}..${max})`);
  return n;
}

/**
 * Split argv into options (applied to ctx) and positional arguments. With
 * `stopAtPositional`, everything from the first positional on is positional
 * (exec: the program's own arguments). `--` ends the options.
 */
export function parseRunArgs(command: 'run' | 'exec', args: string[], ctx: RunContext, stopAtPositional: boolean): string[] {
  const known = new Map(commandOptions(command).map(o => [o.name, o]));
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') { positional.push(...args.slice(i + 1)); break; }
    if (!a.startsWith('--') || a === '-') {
      if (stopAtPositional) { positional.push(...args.slice(i)); break; }
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    const o = known.get(name);
    if (!o) {
      const list = runOptions(command).map(x => x.name).join(', ');
      throw new CliError(`${command}: unknown option '${name}' (options: ${list})`);
    }
    let value = '';
    if (o.arg) {
      if (eq > 0) value = a.slice(eq + 1);
      else if (i + 1 < args.length) value = args[++i];
      else throw new CliError(`${command}: option ${name} needs a value (${name} ${o.arg})`);
    } else if (eq > 0) {
      throw new CliError(`${command}: option ${name} takes no value`);
    }
    o.apply(value, ctx);
  }
  return positional;
}

/** "[--cpus N] [--stats] ..." (one line, for usage) */
export function optionsSynopsis(command: 'run' | 'exec'): string {
  return runOptions(command).map(o => `[${o.arg ? `${o.name} ${o.arg}` : o.name}]`).join(' ');
}

/** Wrap words to lines of at most `width` characters, each prefixed by `indent`. */
function wrap(text: string, indent: string, width = 79): string[] {
  const lines: string[] = [];
  let line = '';
  for (const w of text.split(/\s+/).filter(Boolean)) {
    if (line && indent.length + line.length + 1 + w.length > width) { lines.push(indent + line); line = w; }
    else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(indent + line);
  return lines;
}

/** `--help` text: every option of the command with its value, what it does and whether it repeats. */
export function optionsHelp(command: 'run' | 'exec'): string {
  const out = ['options (--name VALUE or --name=VALUE; -- ends the options):'];
  for (const o of runOptions(command)) {
    out.push(`  ${o.arg ? `${o.name} ${o.arg}` : o.name}`);
    out.push(...wrap(`${o.help}${o.repeatable ? ' (repeatable)' : ''}`, '      '));
  }
  return out.join('\n') + '\n';
}

/**
 * The sample kernel image: examples/kernel/build/kernel-x86_64.elf found by
 * searching upward from this file's directory (repo checkout or dist/cli.js)
 * and from the current directory.
 */
export function defaultImage(): string | undefined {
  const rel = join('examples', 'kernel', 'build', 'kernel-x86_64.elf');
  for (const start of [__dirname, process.cwd()]) {
    let d = resolve(start);
    for (;;) {
      const p = join(d, rel);
      if (existsSync(p)) return p;
      const up = dirname(d);
      if (up === d) break;
      d = up;
    }
  }
  return undefined;
}

/** A machine option's value from the command line, in the range emulator/machineOptions.ts states. */
function parseLimited(flag: string, v: string, name: MachineLimitName): number {
  const l = MACHINE_LIMITS[name];
  return parseCount(flag, v, l.min, l.max);
}

/** "number of emulated CPUs (1..64, default 2)" */
function limitHelp(name: MachineLimitName): string {
  const l = MACHINE_LIMITS[name];
  return `${l.help} (${l.min}..${l.max}, default ${l.default})`;
}

registerRunOption({
  name: '--cpus', arg: 'N', help: limitHelp('cpus'), commands: ['run'],
  apply: (v, ctx) => { ctx.machine.cpus = parseLimited('--cpus', v, 'cpus'); },
});
registerRunOption({
  name: '--max-instructions', arg: 'N', help: 'stop after N instructions in all (0 = no limit); the run then exits with code 124, like timeout(1)',
  apply: (v, ctx) => { ctx.machine.maxInstructions = parseLimited('--max-instructions', v, 'maxInstructions'); },
});
registerRunOption({
  name: '--quantum', arg: 'N',
  help: `instructions each CPU runs per turn when the CPUs are interleaved round-robin (${MACHINE_LIMITS.quantum.min}..${MACHINE_LIMITS.quantum.max}, default ${MACHINE_LIMITS.quantum.default}); `
    + 'the interleaving, and so the output, is the same on every run with the same value',
  apply: (v, ctx) => { ctx.machine.quantum = parseLimited('--quantum', v, 'quantum'); },
});
registerRunOption({
  name: '--rootfs', arg: 'DIR',
  help: 'the emulated filesystem starts as a copy of the host directory DIR (files read when first used; programs\' writes stay in the emulator, the host is never written)',
  apply: (v, ctx) => { ctx.machine.rootfs = v; },
});
registerRunOption({
  name: '--initramfs', arg: 'FILE', repeatable: true,
  help: 'unpack a Linux initramfs (cpio newc, optionally gzip-compressed) into the emulated filesystem, after --rootfs',
  apply: (v, ctx) => { ctx.machine.initramfs = [...(ctx.machine.initramfs ?? []), v]; },
});
registerRunOption({
  name: '--exec', arg: 'CMD', repeatable: true, commands: ['run'],
  help: 'a user program the kernel starts when it calls user_init (kp_user_init in kprobe_image.h), as "/bin/prog args" from the machine\'s filesystem (--rootfs / --initramfs); its output goes to the console',
  apply: (v, ctx) => { ctx.machine.exec = [...(ctx.machine.exec ?? []), v]; },
});
registerRunOption({
  name: '--random-seed', arg: 'N',
  help: 'seed of the user programs\' randomness (getrandom, AT_RANDOM); every run with the same seed gets the same bytes (default 0)',
  apply: (v, ctx) => { ctx.machine.randomSeed = BigInt(parseCount('--random-seed', v)); },
});
registerRunOption({
  name: '--cmdline', arg: 'TEXT',
  help: 'the kernel command line, as a boot loader passes it (e.g. "no_hash_pointers": printk\'s %p prints raw addresses instead of hashes)',
  apply: (v, ctx) => { ctx.machine.cmdline = v; },
});
registerRunOption({
  name: '--no-translate',
  help: 'run every instruction in the interpreter (no block translation to WebAssembly): slower, for comparison; the output and instruction counts are the same',
  apply: (_v, ctx) => { ctx.machine.translate = 'off'; },
});
registerRunOption({
  name: '--translate', arg: 'MODE',
  help: 'the block translator: on (default), off (= --no-translate) or lockstep (every translated block is checked against the interpreter; slow, for testing the translator)',
  apply: (v, ctx) => {
    if (v !== 'on' && v !== 'off' && v !== 'lockstep') throw new CliError(`--translate: expected on, off or lockstep, got '${v}'`);
    ctx.machine.translate = v;
  },
});
registerRunOption({
  name: '--hist', commands: ['run'],
  help: 'at the end, print each kretprobe\'s entry -> return latency (virtual ns) as a log2 histogram, in bpftrace\'s hist() layout',
  apply: (_v, ctx) => { ctx.teardown.push((m, io) => io.out(formatHistograms(m.hitLog) || '# no kretprobe returned: no latency histogram\n')); },
});
registerRunOption({
  name: '--hit-log-size', arg: 'N', commands: ['run'],
  help: limitHelp('hitLogSize'),
  apply: (v, ctx) => { ctx.machine.hitLogSize = parseLimited('--hit-log-size', v, 'hitLogSize'); },
});
registerRunOption({
  name: '--stats', help: 'at the end, print "instructions: N" (executed in all) and "seconds: S" (wall-clock time of the run) to stderr',
  apply: (_v, ctx) => { ctx.stats = true; },
});
