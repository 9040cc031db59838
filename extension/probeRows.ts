/**
 * Row text of the Kprobes / Uprobes views, without `vscode` (tests use it
 * too). A Kprobes row reads like its debugfs `kprobes/list` line followed by
 * the counters:
 *
 *   ffffffff81001a90  k  do_fork+0x0    [DISABLED]  hits 3, missed 0
 *   ffffffff81001b20  r  sys_open+0x0    [OPTIMIZED]  hits 1, missed 0, maxactive 20
 *
 * (address as the kernel's %px, k/r/j, symbol+offset, module or a blank,
 * then [GONE] [DISABLED] [OPTIMIZED] [FTRACE] as they apply.)
 */
import { KPROBE_KIND_LETTER, ProbeInfo, UprobeInfo } from '../adapter/dapCustom';

/** `0x` + 16 hex digits -> the kernel's %px (16 hex digits, no prefix). */
function px(address: string): string {
  return BigInt(address).toString(16).padStart(16, '0');
}

/** The debugfs flags of a probe, in the kernel's order. */
export function kprobeFlags(p: ProbeInfo): string {
  return (p.gone ? '[GONE]' : '')
    + (!p.enabled && !p.gone ? '[DISABLED]' : '')
    + (p.optimized ? '[OPTIMIZED]' : '')
    + (p.ftrace ? '[FTRACE]' : '');
}

/** The probe's debugfs `kprobes/list` line (trailing blanks trimmed); for an unregistered probe, its name. */
export function kprobeListLine(p: ProbeInfo): string {
  if (!p.registered) return p.name;
  const letter = KPROBE_KIND_LETTER[p.kind];
  const head = `${px(p.address)}  ${letter}  `;
  const body = p.symbol !== undefined
    ? `${p.symbol}+0x${(p.offset ?? 0).toString(16)}  ${p.module ?? ' '} `
    : `${px(p.address)} `;
  return (head + body + kprobeFlags(p)).trimEnd();
}

/** `hits N, missed M[, maxactive K]` */
export function kprobeCounters(p: ProbeInfo): string {
  return `hits ${p.nhit}, missed ${p.nmissed}${p.kind === 'kretprobe' && p.maxactive !== undefined ? `, maxactive ${p.maxactive}` : ''}`;
}

/** The full Kprobes row: list line, two blanks, counters. */
export function kprobeRow(p: ProbeInfo): string {
  return `${kprobeListLine(p)}  ${kprobeCounters(p)}`;
}

/** Uprobes row label: `inode 1234  /bin/app:0x4245c0` (`r ` before the path for a uretprobe). */
export function uprobeLabel(p: UprobeInfo): string {
  return `inode ${p.inode}  ${p.kind === 'uretprobe' ? 'r ' : ''}${p.path}:0x${p.offset.toString(16)}`;
}

/** Uprobes row description: the processes it is inserted in, then the counters. */
export function uprobeDescription(p: UprobeInfo): string {
  const procs = p.processes.length ? `inserted in ${p.processes.map(x => `${x.comm}[${x.pid}]`).join(', ')}` : 'not inserted';
  return `${procs}  hits ${p.nhit}, missed ${p.nmissed}`;
}

/** The full Uprobes row. */
export function uprobeRow(p: UprobeInfo): string {
  return `${uprobeLabel(p)}  ${uprobeDescription(p)}`;
}
