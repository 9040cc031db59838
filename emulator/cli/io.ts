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

/** Writes to the process's stdout/stderr. */
export const processIo: CliIo = {
  out: (text) => { process.stdout.write(text); },
  err: (text) => { process.stderr.write(text); },
};

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
