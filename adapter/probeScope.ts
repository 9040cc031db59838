/**
 * The Probe scope shown while a CPU is stopped at a breakpoint probe: the
 * struct kprobe fields a handler sees as `p->...` (addr, symbol_name,
 * offset, flags with the debugfs flags text, nmissed) plus the emulator's hit
 * count; for a kretprobe stop also the instance (`ri->ret_addr`, `ri->task`,
 * `ri->data`), `maxactive` and the return value. Each variable carries the
 * handler-language evaluateName, so "Add to Watch" evaluates it again.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { formatAddress, RI_DATA_GONE, taskAddress } from '../emulator/debug/index';
import type { ProbeEntry, ProbeStop, Task } from '../emulator/debug/index';

export const PROBE_SCOPE_NAME = 'Probe';

export interface ProbeScopeInput {
  stop: ProbeStop;
  /** the breakpoint's ProbeManager entry (for debugfs flags and the totals) */
  entry?: ProbeEntry;
  /** symbolizer: "do_fork+0x4" */
  where: (addr: bigint) => string | undefined;
  /** task current on the stopped CPU */
  task?: Task;
  /** maxactive of the kretprobe, as registered (the engine fills in the default) */
  maxactive?: number;
}

function v(name: string, value: string, evaluateName?: string, type?: string, memoryReference?: string): DebugProtocol.Variable {
  const out: DebugProtocol.Variable = { name, value, variablesReference: 0, presentationHint: { kind: 'property', attributes: ['readOnly'] } };
  if (evaluateName) out.evaluateName = evaluateName;
  if (type) out.type = type;
  if (memoryReference) out.memoryReference = memoryReference;
  return out;
}

function num(n: bigint | number): string {
  const b = BigInt(n);
  return `0x${BigInt.asUintN(64, b).toString(16)} (${b.toString()})`;
}

function addrText(a: bigint, where: (addr: bigint) => string | undefined): string {
  const w = where(a);
  return w ? `${formatAddress(a)} <${w}>` : formatAddress(a);
}

/** The debugfs flag text of the stopped probe's site ("" when none). */
export function siteFlags(stop: ProbeStop, entry?: ProbeEntry): string {
  const site = entry?.sites.find(s => s.engineId !== undefined && s.engineId === stop.kp.id) ?? entry?.sites.find(s => s.registered);
  return site?.flags ?? '';
}

export function probeScopeVariables(inp: ProbeScopeInput): DebugProtocol.Variable[] {
  const { stop, entry, where } = inp;
  const kp = stop.kp;
  const addr = kp.addr ?? stop.addr;
  const flags = kp.flags ?? 0;
  const dbgfs = siteFlags(stop, entry);
  const out: DebugProtocol.Variable[] = [
    v('kind', stop.mode),
    v('p->addr', addrText(addr, where), 'p->addr', 'void *', formatAddress(addr)),
    v('p->symbol_name', JSON.stringify(kp.symbol_name ?? ''), 'p->symbol_name', 'char *'),
    v('p->offset', num(kp.offset ?? 0n), 'p->offset', 'unsigned int'),
    v('p->flags', `${num(flags)}${dbgfs ? ' ' + dbgfs : ''}`, 'p->flags', 'unsigned int'),
    v('p->nmissed', num(kp.nmissed ?? 0), 'p->nmissed', 'unsigned long'),
    v('hits', String(kp.hits ?? 0)),
  ];
  if (entry && entry.nmissed !== (kp.nmissed ?? 0)) out.push(v('nmissed (total)', String(entry.nmissed)));
  if (stop.mode === 'kretprobe') {
    out.push(
      v('ri->ret_addr', addrText(stop.reportPc, where), 'ri->ret_addr', 'void *', formatAddress(stop.reportPc)),
      v('ri->task', `${formatAddress(taskAddress(inp.task))}${inp.task ? ` (${inp.task.comm} [${inp.task.pid}])` : ''}`, 'ri->task', 'void *'),
      v('ri->data', `<not available: ${RI_DATA_GONE.replace(/^ri->data is not available /, '')}>`, undefined, 'char *'),
    );
    if (inp.maxactive !== undefined) out.push(v('maxactive', String(inp.maxactive)));
    if (stop.returnValue !== undefined) out.push(v('return value', num(BigInt.asIntN(64, stop.returnValue)), 'regs_return_value(regs)', 'unsigned long'));
  }
  return out;
}
