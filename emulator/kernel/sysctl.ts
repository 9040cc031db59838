/**
 * The kernel's sysctl table (Linux kernel/sysctl.c, `sysctl -w NAME=VALUE`
 * and /proc/sys/...): subsystems register their entries when they start
 * (the kprobes engine registers debug.kprobes_optimization, as
 * kernel/kprobes.c does in its debug table), and every front end — the CLI's
 * --sysctl, the adapter's launch option and views, the tests — writes
 * through this one table.
 */

/** -EINVAL */
const EINVAL = -22;

export interface SysctlEntry {
  /** dotted name, as `sysctl` spells it: debug.kprobes_optimization */
  readonly name: string;
  /** the /proc/sys file: /proc/sys/debug/kprobes-optimization */
  readonly procPath: string;
  /** accepted values, for messages and help: '0|1' */
  readonly values: string;
  /** the file's contents ("1\n") */
  read(): string;
  /** Parse a written value: the value to apply, or why it is rejected. */
  parse(text: string): { ok: true; apply(): void } | { ok: false; reason: string };
}

export type SysctlWrite = { errno: 0 } | { errno: number; reason: string };

export class SysctlTable {
  private readonly entries = new Map<string, SysctlEntry>();

  /** Register an entry (one per name). */
  register(entry: SysctlEntry): void {
    if (this.entries.has(entry.name)) throw new Error(`sysctl ${entry.name} is already registered`);
    this.entries.set(entry.name, entry);
  }

  /** Names of every registered entry, sorted. */
  names(): string[] { return [...this.entries.keys()].sort(); }

  /** The entry of a dotted name or of its /proc/sys path. */
  entry(name: string): SysctlEntry | undefined {
    const n = name.trim();
    return this.entries.get(n) ?? [...this.entries.values()].find(e => e.procPath === n);
  }

  /** sysctl NAME: the value ("1\n"), undefined for an unknown name. */
  read(name: string): string | undefined { return this.entry(name)?.read(); }

  /** sysctl -w NAME=VALUE: errno 0, or -EINVAL with the reason (unknown name, bad value). */
  write(name: string, value: string): SysctlWrite {
    const e = this.entry(name);
    if (!e) {
      const known = this.names();
      return { errno: EINVAL, reason: `unknown sysctl '${name}' (known: ${known.length ? known.join(', ') : 'none'})` };
    }
    const p = e.parse(value);
    if (!p.ok) return { errno: EINVAL, reason: `${e.name}: ${p.reason}` };
    p.apply();
    return { errno: 0 };
  }
}
