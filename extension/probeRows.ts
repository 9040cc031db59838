/**
 * Row text of the Kprobes / Uprobes views, without `vscode` (tests use it
 * too). VS Code cuts a row at the side bar's width, the description first,
 * then the label: the label holds what must survive (kind letter,
 * symbol+offset, the debugfs flags, hits/missed), the description the rest
 * (the address as the kernel's %px, the module, maxactive), the tooltip the
 * whole debugfs `kprobes/list` line with its counters:
 *
 *   label        k do_fork+0x0 [DISABLED] 3/0
 *   description  hits/missed  ffffffff81001a90
 *   tooltip      ffffffff81001a90  k  do_fork+0x0    [DISABLED]  hits 3, missed 0
 *
 * (debugfs line: address as %px, k/r/j, symbol+offset, module or a blank,
 * then [GONE] [DISABLED] [OPTIMIZED] [FTRACE] as they apply.) Once the
 * session ended the view keeps its last rows: the description then starts
 * with ENDED_MARK.
 */
import { DebugRegisterInfo, KPROBE_KIND_LETTER, ModuleInfo, ProbeInfo, UprobeInfo } from '../adapter/dapCustom';

/** `0x` + 16 hex digits -> the kernel's %px (16 hex digits, no prefix). */
function px(address: string): string {
  return BigInt(address).toString(16).padStart(16, '0');
}

/** The debugfs flags of a probe, in the kernel's order ([SUSPENDED]: a kwatch waiting for its debug register). */
export function kprobeFlags(p: ProbeInfo): string {
  return (p.debugRegister?.suspended ? '[SUSPENDED]' : '')
    + (p.gone ? '[GONE]' : '')
    + (!p.enabled && !p.gone ? '[DISABLED]' : '')
    + (p.optimized ? '[OPTIMIZED]' : '')
    + (p.ftrace ? '[FTRACE]' : '');
}

/** The probe's debugfs `kprobes/list` line (trailing blanks trimmed); for an unregistered probe, its name. */
export function kprobeListLine(p: ProbeInfo): string {
  if (!p.registered) return p.name;
  const letter = KPROBE_KIND_LETTER[p.kind];
  const head = `${px(p.address)}  ${letter}  `;
  // a debug register's row (not in debugfs): the register and what it watches in place of the module column
  if (p.debugRegister) {
    const d = p.debugRegister;
    const where = p.symbol !== undefined ? `${p.symbol}+0x${(p.offset ?? 0).toString(16)}` : px(p.address);
    return `${head}${where}  ${d.name ?? '-'} ${d.type} len ${d.len} ${kprobeFlags(p)}`.trimEnd();
  }
  const body = p.symbol !== undefined
    ? `${p.symbol}+0x${(p.offset ?? 0).toString(16)}  ${p.module ?? ' '} `
    : `${px(p.address)} `;
  return (head + body + kprobeFlags(p)).trimEnd();
}

/** Shown first in the description of every row of an ended session's last state. */
export const ENDED_MARK = '(session ended)';

/** `hits/missed` as the label shows them: `3/0`. */
function hitsMissed(p: { nhit: number; nmissed: number }): string {
  return `${p.nhit}/${p.nmissed}`;
}

/**
 * Kprobes row label, the part kept when the row is cut: `k do_fork+0x1a
 * [DISABLED] 3/0` (kind letter, symbol+offset or the address, the debugfs
 * flags, hits/missed); an unregistered probe's name carries its failure.
 */
export function kprobeLabel(p: ProbeInfo): string {
  if (!p.registered) return p.event ? `${p.event}: ${p.name}` : p.name;
  const where = p.symbol !== undefined ? `${p.symbol}+0x${(p.offset ?? 0).toString(16)}` : px(p.address);
  const flags = kprobeFlags(p);
  // a kprobe_events probe: its event first, as its trace lines start (`myopen: (sys_open+0x0/...)`)
  return `${KPROBE_KIND_LETTER[p.kind]} ${p.event ? `${p.event}: ` : ''}${where}${flags ? ` ${flags}` : ''} ${hitsMissed(p)}`;
}

/**
 * Kprobes row description (cut first): `hits/missed  ffffffff81001a90`, then
 * the module and a kretprobe's maxactive; ENDED_MARK first once the session
 * ended.
 */
export function kprobeDescription(p: ProbeInfo, ended = false): string {
  const parts = ended ? [ENDED_MARK] : [];
  if (p.registered) {
    parts.push('hits/missed', px(p.address));
    if (p.module) parts.push(p.module);
    if (p.kind === 'kretprobe' && p.maxactive !== undefined) parts.push(`maxactive ${p.maxactive}`);
    if (p.inHandler) parts.push('debugger breakpoint in handler code');
    if (p.registeredBy) parts.push(`registered by ${p.registeredBy}`);
    if (p.warning) parts.push(kprobeWarningShort(p.warning));
  }
  return parts.join('  ');
}

/** The description's part for a probe with a warning: `missed 7, try maxactive=3`. */
export function kprobeWarningShort(w: NonNullable<ProbeInfo['warning']>): string {
  return `missed ${w.missed}${w.suggestedMaxactive !== undefined ? `, try maxactive=${w.suggestedMaxactive}` : ''}`;
}

/** Kprobes row tooltip: the full debugfs line with its counters, then what else is known. */
export function kprobeTooltip(p: ProbeInfo, ended = false): string {
  const lines = [kprobeRow(p), `${p.kind} ${p.name}`, `address ${p.address}`];
  if (p.event) lines.push(`trace event ${p.event} (traces each hit, never stops)`);
  if (p.inHandler) lines.push(`debugger breakpoint: ${p.inHandler}; it stops inside the handler (not a reentered kprobe)`);
  if (p.registeredBy) lines.push(`registered by module ${p.registeredBy} (register_kprobe from its code)`);
  if (p.module) lines.push(`module ${p.module}`);
  if (p.source) lines.push(`${p.source.path}:${p.source.line}`);
  if (p.warning) {
    lines.push(`warning: ${p.warning.text}`);
    if (p.warning.suggestedMaxactive !== undefined) lines.push(`suggested maxactive: ${p.warning.suggestedMaxactive}`);
  }
  if (ended) lines.push(`${ENDED_MARK}: the last state the kernel reported; the next launch clears it`);
  return lines.join('\n');
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

/**
 * Uprobes row description: symbol+off, how many processes it is inserted
 * in (they are the row's children), consumers, the counters; ENDED_MARK
 * first once the session ended.
 */
export function uprobeDescription(p: UprobeInfo, ended = false): string {
  const n = p.processes.length;
  const procs = !p.registered ? 'not registered' : n ? `${n} process${n === 1 ? '' : 'es'}` : 'not inserted';
  const sym = p.symbol ? `${p.symbol}  ` : '';
  const cons = p.consumers > 1 ? `  ${p.consumers} consumers` : '';
  return `${ended ? `${ENDED_MARK}  ` : ''}${sym}${procs}${cons}  hits ${p.nhit}, missed ${p.nmissed}`;
}

/** A process child of a Uprobes row: `comm[pid]` and where the breakpoint is in it. */
export function uprobeProcessLabel(x: UprobeInfo['processes'][number]): string {
  return `${x.comm}[${x.pid}]`;
}
export function uprobeProcessDescription(x: UprobeInfo['processes'][number]): string {
  return `${x.address}  ${x.page}  hits ${x.nhit}`;
}

/** The full Uprobes row. */
export function uprobeRow(p: UprobeInfo): string {
  return `${uprobeLabel(p)}  ${uprobeDescription(p)}`;
}

/** Modules row label: `name  0xbase` */
export function moduleLabel(m: ModuleInfo): string {
  return `${m.name}  ${m.base}`;
}

/** Modules row description: size, state, users, probes in it (lsmod's columns, plus probes). */
export function moduleDescription(m: ModuleInfo): string {
  const used = m.usedBy.length ? `  used by ${m.usedBy.join(',')}` : '';
  const init = m.init ? `  init ${m.init.size}` : '';
  return `${m.size} bytes${init}  ${m.state}${used}  ${m.probesIn} probe${m.probesIn === 1 ? '' : 's'} in it`;
}

/** Debug Registers row label: the register and its holder ("DR1  w jiffies+0x0  3/0") or "free". */
export function debugRegisterLabel(r: DebugRegisterInfo): string {
  const h = r.holder;
  if (!h) return `${r.name}  free`;
  return `${r.name}  ${h.type} ${h.where ?? h.addr}  ${h.hits}/${h.nmissed}`;
}

/** Debug Registers row description: owner, address, length, users waiting for the register. */
export function debugRegisterDescription(r: DebugRegisterInfo): string {
  const h = r.holder;
  const waiting = r.waiting.length ? `  (${r.waiting.length} waiting: ${r.waiting.map(w => `${w.owner} ${w.where ?? w.addr}`).join(', ')})` : '';
  return h ? `${h.owner}  ${h.addr.replace(/^0x/, '')} len ${h.len}${waiting}` : waiting.trim();
}
