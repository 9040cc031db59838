/**
 * `kprobe-run`: the command-line face of the emulator (bundled into
 * dist/cli.js). `kprobe-run IMAGE ...` means `kprobe-run run IMAGE ...`.
 * Every failure is one line on stderr, `kprobe-run: <what>`, exit code 1.
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { nearestNames } from '../elf/nearNames';
import { ImageError } from '../elf/types';
import { RootfsError } from '../kernel/fs/populate';
import { MachineOptionError } from '../machineOptions';
import { CliCommand, CliError, CliIo, CommandRegistry, onOutputError, processIo } from './io';
import { commands } from './commands';

const PROG = 'kprobe-run';
const DEFAULT_COMMAND = 'run';

export function usage(reg: CommandRegistry = commands): string {
  const names = [...reg.keys()].sort();
  const lines = [
    `usage: ${PROG} [COMMAND] [ARGS...]`,
    reg.has(DEFAULT_COMMAND) ? `       ${PROG} IMAGE [ARGS...]     (same as: ${PROG} ${DEFAULT_COMMAND} IMAGE ...)` : '',
    '',
    'commands:',
    ...names.map((n) => {
      const c = reg.get(n)!;
      return `  ${n} ${c.usage}\n      ${c.summary}`;
    }),
    '',
    `${PROG} COMMAND --help shows one command's usage.`,
  ];
  return lines.filter((l, i) => l !== '' || i !== 1).join('\n') + '\n';
}

/** `kprobe-run NAME --help`: usage line, summary, then the command's details. */
export function commandHelp(name: string, c: CliCommand): string {
  return `usage: ${PROG} ${name} ${c.usage}\n${c.summary}\n${c.help ? `\n${c.help.replace(/\n*$/, '\n')}` : ''}`;
}

/**
 * A first argument that names no command and no file, and reads as a word
 * (no '/', no '.'): a mistyped command, e.g. `kprobe-run rnu`, rather than an
 * IMAGE for the default command.
 */
function looksLikeCommand(arg: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_-]*$/.test(arg) && !existsSync(arg);
}

function unknownCommand(name: string, reg: CommandRegistry, noFile: boolean): CliError {
  const names = [...reg.keys()].sort();
  const near = nearestNames(name, names).map(n => `'${n}'`);
  return new CliError(`unknown command '${name}'${noFile ? ' (and no file of that name)' : ''}`
    + `${near.length ? `, did you mean ${near.join(' or ')}?` : ''} (commands: ${names.join(', ')}; see ${PROG} --help)`);
}

/** One line describing an error for the user; unexpected errors are marked internal. */
export function errorLine(e: unknown): string {
  if (e instanceof ImageError || e instanceof CliError || e instanceof RootfsError || e instanceof MachineOptionError) return oneLine(e.message);
  // an unexpected error's message may carry a stack or a dump: its first line only
  const first = (s: string): string => s.trim().split('\n')[0].trim();
  if (e instanceof Error) return `internal error: ${first(e.message) || e.name}`;
  return `internal error: ${first(String(e))}`;
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim();
}

/** Run the CLI with arguments (without node and script); resolves to the exit code. Never throws. */
export async function runCli(argv: string[], io: CliIo = processIo, reg: CommandRegistry = commands): Promise<number> {
  try {
    const first = argv[0];
    if (first === '--help' || first === '-h' || first === 'help') {
      const c = argv[1] !== undefined ? reg.get(argv[1]) : undefined;
      if (argv[1] !== undefined && !c) throw unknownCommand(argv[1], reg, false);
      io.out(c ? commandHelp(argv[1]!, c) : usage(reg));
      return 0;
    }
    let name: string;
    let args: string[];
    if (first !== undefined && reg.has(first)) {
      name = first;
      args = argv.slice(1);
    } else if (reg.has(DEFAULT_COMMAND) && !(first !== undefined && looksLikeCommand(first))) {
      name = DEFAULT_COMMAND;
      args = argv;
    } else if (first === undefined) {
      io.err(usage(reg));
      return 1;
    } else {
      throw unknownCommand(first, reg, reg.has(DEFAULT_COMMAND));
    }
    const cmd = reg.get(name)!;
    if (args.includes('--help') || args.includes('-h')) {
      io.out(commandHelp(name, cmd));
      return 0;
    }
    return await cmd.run(args, io);
  } catch (e) {
    io.err(`${PROG}: ${errorLine(e)}\n`);
    return 1;
  }
}

function isMainModule(): boolean {
  // esbuild bundles tests together with this file, so `require.main === module`
  // alone is not enough: also require the entry script to be the CLI itself.
  if (typeof require === 'undefined' || require.main !== module) return false;
  const entry = basename(process.argv[1] ?? '');
  return entry === 'cli.js' || entry === 'main.js' || entry === PROG;
}

if (isMainModule()) {
  process.stdout.on('error', onOutputError);
  process.stderr.on('error', onOutputError);
  void runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
    // Done: exit now instead of when the event loop drains, which waits for V8's background work (optimizing
    // compiles, wasm tier-up) for code that will not run again (~15 ms of a sample-kernel run). Only when
    // nothing written is still queued (pipes are asynchronous on some platforms): otherwise the drain finishes it.
    if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit(code);
  });
}
