/**
 * The CLI's plumbing shared by every command: where output goes (CliIo),
 * what a command is (CliCommand), the command registry, and CliError for
 * user mistakes.
 *
 * Adding a command: write commands/<name>.ts calling
 * `registerCommand('<name>', { summary, usage, run })` at module level, and
 * add one line `import './<name>';` to commands/index.ts.
 */

/** Output sinks. Text is written as given: callers end lines with '\n'. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Writes to the process's stdout/stderr. When the reader of either has gone
 * away (`kprobe-run run | head`: the write failed with EPIPE), the process
 * ends there, quietly, with the status a tool killed by SIGPIPE shows
 * (EPIPE_EXIT), instead of running the machine on with nowhere to write.
 */
export const processIo: CliIo = {
  out: (text) => { processWrite(process.stdout, text); },
  err: (text) => { processWrite(process.stderr, text); },
};

/** exit status when the output's reader went away: 128 + SIGPIPE, what the shell shows for `yes | head`'s yes */
export const EPIPE_EXIT = 141;

/** Write text or raw bytes to the process's stdout or stderr (processIo; `exec`'s program output), ending the process on EPIPE. */
export function processWrite(s: NodeJS.WriteStream, data: string | Uint8Array): void {
  s.write(data);
  // a pipe write fails synchronously on Linux (the stream is errored at once); where pipes are asynchronous, onOutputError does it
  if (isEpipe(s.errored)) process.exit(EPIPE_EXIT);
}

function isEpipe(e: unknown): boolean {
  return e instanceof Error && (e as NodeJS.ErrnoException).code === 'EPIPE';
}

/** The 'error' listener of the process's stdout/stderr (main.ts): EPIPE ends the process as above; anything else is thrown, as without a listener. */
export function onOutputError(e: Error): void {
  if (isEpipe(e)) process.exit(EPIPE_EXIT);
  throw e;
}

/** An io that keeps what is written (for tests and embedding). */
export interface CapturedIo {
  io: CliIo;
  stdout(): string;
  stderr(): string;
}

export function captureIo(): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { out: (t) => { out.push(t); }, err: (t) => { err.push(t); } },
    stdout: () => out.join(''),
    stderr: () => err.join(''),
  };
}

export interface CliCommand {
  /** one line for the command list in --help */
  summary: string;
  /** argument synopsis after the command name, e.g. 'IMAGE NAME|ADDR' */
  usage: string;
  /** more lines for `COMMAND --help` (arguments, every option), when the usage line is not enough */
  readonly help?: string;
  /** runs the command; resolves to the exit code. Throw CliError/ImageError for bad input. */
  run(args: string[], io: CliIo): Promise<number>;
}

export type CommandRegistry = Map<string, CliCommand>;

/** The commands known to `kprobe-run` (filled by the imports in commands/index.ts). */
export const registry: CommandRegistry = new Map();

export function registerCommand(name: string, command: CliCommand): void {
  if (registry.has(name)) throw new Error(`kprobe-run command '${name}' registered twice`);
  registry.set(name, command);
}

/** A user mistake (bad arguments, nothing found): printed as one line, exit code 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}
