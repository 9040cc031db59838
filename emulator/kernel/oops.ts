/**
 * The text of an oops report, shaped like Linux's (die() / show_regs() /
 * show_opcodes()): headline, CPU/PID/Comm line, pc as symbol+off/size, the
 * code bytes around the pc with the faulting unit marked, every register.
 * A fault in a probe handler (which runs as host code, so the pc is the
 * probe's) adds detail lines after the headline naming the handler's
 * file:line:col, where Linux's RIP line would name handler_pre+0x../.. [module].
 */
import { ArchOps, Cpu, Trap } from '../arch/types';
import { hex64 } from '../memory/address';
import { mustVAddr } from '../memory/address';
import { SymbolTable } from '../elf/types';
import type { OopsStyle } from '../arch/types';
import { Task } from './types';

export interface OopsInput {
  arch: ArchOps;
  style: OopsStyle;
  cpu: Cpu;
  trap: Trap | null;
  /** headline override (internal errors, reports from the kprobes engine); '' = derived from the trap */
  message: string;
  task: Task | undefined;
  symbols: SymbolTable;
  /** 1 for the first oops of the run ([#1]) */
  serial: number;
  /** lines after the headline: where the fault really happened when the pc cannot say (a probe handler's file:line:col) */
  detail?: readonly string[];
}

const NULL_LIMIT = 4096n;

/** x86 page-fault error code bits (P, W, U, I), as Linux prints them in "Oops: 0002". */
function pfErrorCode(t: Extract<Trap, { kind: 'pageFault' }>): number {
  return (t.present ? 1 : 0) | (t.access === 'write' ? 2 : 0) | (t.user ? 4 : 0) | (t.access === 'exec' ? 16 : 0);
}

function headline(trap: Trap | null, message: string, serial: number): string[] {
  const tail = (code: number): string => `${code.toString(16).padStart(4, '0')} [#${serial}] SMP`;
  if (message) return [`${message}: ${tail(0)}`];
  if (!trap) return [`Oops: ${tail(0)}`];
  switch (trap.kind) {
    case 'pageFault': {
      const code = pfErrorCode(trap);
      const what = BigInt.asUintN(64, trap.addr) < NULL_LIMIT
        ? `BUG: kernel NULL pointer dereference, address: ${hex64(trap.addr)}`
        : `BUG: unable to handle page fault for address: ${hex64(trap.addr)}`;
      const access = trap.access === 'exec' ? 'instruction fetch' : `${trap.access} access`;
      return [
        what,
        `#PF: ${trap.user ? 'user' : 'supervisor'} ${access} in ${trap.user ? 'user' : 'kernel'} mode`,
        `#PF: error_code(0x${code.toString(16).padStart(4, '0')}) - ${trap.present ? 'permissions violation' : 'not-present page'}`,
        `Oops: ${tail(code)}`,
      ];
    }
    case 'undefined': return [`invalid opcode: ${tail(0)}`];
    case 'breakpoint': return [`int3: ${tail(0)}`];
    case 'divide': return [`divide error: ${tail(0)}`];
    case 'generalProtection': return [`general protection fault, ${trap.reason}: ${tail(0)}`];
    case 'singleStep': return [`debug trap: ${tail(0)}`];
    case 'hwBreakpoint': return [`debug trap (hardware ${trap.access === 'exec' ? 'breakpoint' : 'watchpoint'} at ${hex64(trap.addr)}): ${tail(0)}`];
    case 'hypercall': return [`invalid opcode (hypercall from user mode): ${tail(0)}`];
    case 'syscall': return [`invalid opcode (syscall in kernel mode): ${tail(0)}`];
    case 'halt': return [`hlt: ${tail(0)}`];
  }
}

function hexUnit(bytes: Uint8Array, off: number, unit: number): string {
  let v = '';
  for (let i = unit - 1; i >= 0; i--) v += bytes[off + i].toString(16).padStart(2, '0');
  return v;
}

/** "Code: 48 89 e5 <8b> 07 ..." (x86) or "Code: d503233f (f9400000)" (word units). */
export function codeLine(cpu: Cpu, style: OopsStyle): string {
  const pc = cpu.getPc();
  const unit = style.codeUnit;
  let pcV: number;
  try { pcV = mustVAddr(pc); } catch { return `Code: Unable to access opcode bytes at ${style.pcLabel} 0x${BigInt.asUintN(64, pc).toString(16)}.`; }
  const mem = cpu.mem;
  if (!mem.isMapped(pcV, unit)) return `Code: Unable to access opcode bytes at ${style.pcLabel} 0x${BigInt.asUintN(64, pc).toString(16)}.`;
  let start = pcV - style.codeBefore;
  while (start < pcV && !mem.isMapped(start, pcV - start)) start += unit;
  let end = pcV + style.codeAfter;
  while (end > pcV + unit && !mem.isMapped(pcV, end - pcV)) end -= unit;
  const bytes = mem.readBytes(start, end - start);
  const parts: string[] = [];
  for (let off = 0; off + unit <= bytes.length; off += unit) {
    const h = hexUnit(bytes, off, unit);
    parts.push(start + off === pcV ? `${style.codeMark[0]}${h}${style.codeMark[1]}` : h);
  }
  return `Code: ${parts.join(' ')}`;
}

export function registerLines(arch: ArchOps, cpu: Cpu, style: OopsStyle): string[] {
  const items: string[] = [];
  arch.regs.forEach((r, i) => {
    if (i === arch.abi.pcReg) return; // printed on the pc line
    items.push(`${style.regLabel(r.name)}: ${hex64(cpu.getReg(i))}`);
  });
  const lines: string[] = [];
  for (let i = 0; i < items.length; i += style.regsPerLine) lines.push(items.slice(i, i + style.regsPerLine).join(' '));
  return lines;
}

/** The report, one string per line. */
export function formatOops(o: OopsInput): string[] {
  const lines = headline(o.trap, o.message, o.serial);
  if (o.detail) lines.push(...o.detail);
  const t = o.task;
  lines.push(`CPU: ${o.cpu.id} PID: ${t ? t.pid : 0} Comm: ${t ? t.comm : `swapper/${o.cpu.id}`} Not tainted`);
  lines.push(`${o.style.pcLabel}: ${o.symbols.format(o.cpu.getPc(), true)}`);
  lines.push(codeLine(o.cpu, o.style));
  lines.push(...registerLines(o.arch, o.cpu, o.style));
  lines.push(`---[ end trace ${o.serial.toString(16).padStart(16, '0')} ]---`);
  return lines;
}
