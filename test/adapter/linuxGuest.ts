/**
 * What the adapter tests over Debian's kernel share: the fetched files
 * they need, do_sys_openat2's lines from the golden line table, the
 * guest's console (stdout: the serial console; the rest: the debugger's
 * own lines) with a way to type a shell command and read what it printed,
 * and debugfs kprobes/list lines against the Kprobes view's rows.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { loadElf } from '../../emulator/elf';
import { type Harness, within } from './dapHarness';
import { repoPath } from '../util/paths';
import type { ProbeInfo } from '../../adapter/dapCustom';

export const VMLINUX = repoPath('test', 'linux', 'dbg', 'cache', 'vmlinux');
export const AGENT_CPIO = repoPath('test', 'linux', 'agent', 'cache', 'agent.cpio.gz');
/** LLVM's view of do_sys_openat2's line table (test/linux/dbg/make-golden.sh): `row ADDR LINE COL stmt|- FILE` */
export const GOLDEN = repoPath('test', 'linux', 'dbg', 'golden', 'do_sys_openat2.txt');
export const OPEN_C = join(repoPath('test', 'modules', 'linux', 'cache', 'linux-source-6.1'), 'fs', 'open.c');
export const BOOT_MS = 900_000;

/** do_sys_openat2's address, its entry line and its first later statement line in fs/open.c (from the golden line table) */
export function openat2Lines(): { openat2: { value: bigint }; entryLine: number; laterLine: number } {
  const openat2 = loadElf(VMLINUX).symbols.lookup('do_sys_openat2');
  assert.ok(openat2);
  const golden = readFileSync(GOLDEN, 'utf8').split('\n').filter(l => l.startsWith('row ')).map(l => l.split(' '));
  const entryLine = Number(golden.find(r => BigInt(r[1]) === openat2.value)![2]);
  const laterLine = Number(golden.find(r => r[4] === 'stmt' && Number(r[2]) !== entryLine)![2]);
  return { openat2, entryLine, laterLine };
}

/** The guest's console through the adapter's output events. */
export class GuestConsole {
  /** the serial console (stdout) */
  out = '';
  /** everything else: the debugger's own lines (logpoints, snippets) */
  con = '';
  private n = 0;
  private readonly waiters: { re: RegExp; from: number; resolve: (m: RegExpExecArray) => void }[] = [];
  constructor(dc: DebugClient, private readonly h: Harness) {
    dc.on('output', (e: DebugProtocol.OutputEvent) => {
      if (e.body.category !== 'stdout') { this.con += e.body.output; return; }
      this.out += e.body.output;
      for (const w of this.waiters.splice(0)) { const m = w.re.exec(this.out.slice(w.from)); if (m) w.resolve(m); else this.waiters.push(w); }
    });
  }

  /** resolves when the console from `from` on matches */
  outputMatches(re: RegExp, from = this.out.length): Promise<RegExpExecArray> {
    return new Promise(resolve => {
      const m = re.exec(this.out.slice(from));
      if (m) resolve(m); else this.waiters.push({ re, from, resolve });
    });
  }

  /** types a command; resolves with what it printed between two markers the echo of the line itself cannot match */
  async run(cmd: string): Promise<string> {
    const k = ++this.n;
    const m = this.outputMatches(new RegExp(`BEGIN-${k + 1}\\r?\\n([\\s\\S]*?)END-${k + 1}\\r?\\n`));
    await this.h.evaluate(`>echo BEGIN-$((${k}+1)); ${cmd}; echo END-$((${k}+1))`, undefined, 'repl');
    return (await within(m, cmd, BOOT_MS))[1];
  }
}

/** a debugfs kprobes/list line: address, type, symbol+offset (or an address), module, flags */
export interface ListRow { addr: bigint; type: string; where: string; module: string; flags: string[] }
export function parseList(text: string): ListRow[] {
  return text.split('\n').map(l => l.replace(/\r$/, '')).filter(l => /^[0-9a-f]{16}  [krj]  /.test(l)).map(l => {
    const m = /^([0-9a-f]{16})  ([krj])  (\S+)\s+(?:([\w-]+)\s+)?((?:\[\w+\])*)\s*$/.exec(l);
    assert.ok(m, `a kprobes/list line: ${JSON.stringify(l)}`);
    return { addr: BigInt(`0x${m[1]}`), type: m[2], where: m[3], module: m[4] ?? '', flags: m[5].match(/\[\w+\]/g) ?? [] };
  });
}
/** a Kprobes view row as the list line it stands for */
export function rowOf(p: ProbeInfo): ListRow {
  const flags = [p.gone ? '[GONE]' : '', !p.enabled && !p.gone ? '[DISABLED]' : '', p.optimized ? '[OPTIMIZED]' : '', p.ftrace ? '[FTRACE]' : ''].filter(Boolean);
  return { addr: BigInt(p.address), type: p.kind === 'kretprobe' ? 'r' : 'k', where: p.symbol !== undefined ? `${p.symbol}+0x${(p.offset ?? 0).toString(16)}` : `0x${BigInt(p.address).toString(16)}`, module: p.module ?? '', flags };
}
