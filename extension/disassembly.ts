import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DISASSEMBLY_SCHEME } from './constants';

const BEFORE = 8;
const COUNT = 40;

/** `kprobe-disasm:/<name>.dis?session=<id>&addr=<0x...>` */
export function disassemblyUri(sessionId: string, address: string, name: string): vscode.Uri {
  const safe = name.replace(/[^A-Za-z0-9_.+:-]/g, '_');
  return vscode.Uri.from({ scheme: DISASSEMBLY_SCHEME, path: `/${safe}.dis`,
    query: new URLSearchParams({ session: sessionId, addr: address }).toString() });
}

/**
 * Read-only disassembly around a probe, produced by the adapter's DAP
 * `disassemble` request (the same decoder tables the engine uses). The probed
 * instruction is marked with `=>`.
 */
export class DisassemblyProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly sessionById: (id: string) => vscode.DebugSession | undefined) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const q = new URLSearchParams(uri.query);
    const sessionId = q.get('session');
    const addr = q.get('addr') ?? '';
    const session = sessionId ? this.sessionById(sessionId) : undefined;
    if (!session) return `; the debug session that owned ${addr} has ended\n`;
    const args: DebugProtocol.DisassembleArguments = {
      memoryReference: addr, instructionOffset: -BEFORE, instructionCount: COUNT, resolveSymbols: true,
    };
    const body = await session.customRequest('disassemble', args) as DebugProtocol.DisassembleResponse['body'];
    const lines = (body?.instructions ?? []).map(i => {
      const mark = sameAddress(i.address, addr) ? '=>' : '  ';
      const sym = i.symbol ? ` <${i.symbol}>` : '';
      return `${mark} ${i.address}${sym}  ${(i.instructionBytes ?? '').padEnd(24)} ${i.instruction}`;
    });
    return `; disassembly around ${addr}\n${lines.join('\n')}\n`;
  }
}

function sameAddress(a: string, b: string): boolean {
  try { return BigInt(a) === BigInt(b); } catch { return false; }
}
