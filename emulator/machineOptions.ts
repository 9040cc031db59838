/**
 * The machine's options, their ranges and defaults, stated once: the
 * Machine validates with them, and the CLI, the adapter and the extension's
 * configuration provider ask them (the launch schema in package.json is
 * checked against them by test/structure/options.test.ts).
 */
export interface Limit {
  readonly min: number;
  readonly max: number;
  readonly default: number;
  /** what the option is, for help texts */
  readonly help: string;
}

export const MACHINE_LIMITS = {
  cpus: { min: 1, max: 64, default: 2, help: 'number of emulated CPUs' },
  maxInstructions: { min: 0, max: Number.MAX_SAFE_INTEGER, default: 0, help: 'stop after this many instructions in total (0 = no limit)' },
  quantum: { min: 1, max: 1_000_000_000, default: 10_000, help: 'instruction slots per CPU per scheduling round' },
  hitLogSize: { min: 1, max: 16_777_216, default: 65_536, help: 'probe hits the hit log keeps (the oldest are dropped beyond it, as a trace ring buffer)' },
} as const satisfies Record<string, Limit>;

export type MachineLimitName = keyof typeof MACHINE_LIMITS;

/** Why a value is not acceptable for an option (`"cpus" must be an integer from 1 to 64, got 0`), or undefined when it is. */
export function machineOptionError(name: MachineLimitName, value: unknown): string | undefined {
  const l: Limit = MACHINE_LIMITS[name];
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= l.min && value <= l.max) return undefined;
  const range = l.max === Number.MAX_SAFE_INTEGER ? `a non-negative integer` : `an integer from ${l.min} to ${l.max}`;
  return `"${name}" must be ${range}, got ${JSON.stringify(value)}`;
}

/** The value of an option: its default when undefined; a RangeError naming it when out of range. */
export function machineOption(name: MachineLimitName, value: number | undefined): number {
  const v = value ?? MACHINE_LIMITS[name].default;
  const err = machineOptionError(name, v);
  if (err) throw new RangeError(err);
  return v;
}

/** COMMAND_LINE_SIZE of each arch's asm/setup.h (with its NUL): the longest kernel command line Linux keeps */
export const COMMAND_LINE_SIZE: Readonly<Record<string, number>> = { x86_64: 2048, aarch64: 2048, riscv64: 1024 };

/** A machine option the user gave that the machine cannot take (the message says which and why). */
export class MachineOptionError extends Error {
  constructor(message: string) { super(message); this.name = 'MachineOptionError'; }
}

/**
 * Why a kernel command line is not acceptable for an arch (not a string,
 * a NUL or line break in it, longer than the arch's COMMAND_LINE_SIZE
 * allows), or undefined when it is.
 */
export function kernelCmdlineError(arch: string, value: unknown): string | undefined {
  if (typeof value !== 'string') return `"cmdline" must be a string, got ${JSON.stringify(value)}`;
  const bad = /[\0\n\r]/.exec(value);
  if (bad) return `"cmdline" must be one line: ${JSON.stringify(bad[0])} at column ${bad.index + 1}`;
  const max = (COMMAND_LINE_SIZE[arch] ?? 2048) - 1;
  const len = new TextEncoder().encode(value).length;
  if (len > max) return `"cmdline" is ${len} bytes; ${arch}'s COMMAND_LINE_SIZE allows ${max}`;
  return undefined;
}
