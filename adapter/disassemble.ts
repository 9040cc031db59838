/**
 * DAP `disassemble` over the debug facade's disassembly rows
 * (emulator/debug/disassembly.ts: original instructions, probe patches as
 * notes): the request's arguments checked, each row as a
 * DisassembledInstruction (`; note` after the text, bytes in hex, a
 * location where the source line changes).
 *
 * The reply holds exactly `instructionCount` entries, and the instruction at
 * memoryReference + offset is at index -instructionOffset (VS Code places
 * the program counter by index). Rows without an instruction are `(bad)`
 * with presentationHint 'invalid'; an address outside the 64-bit space is
 * `-1` (VS Code skips those entries).
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { formatAddress, MAX_DISASSEMBLY_ROWS, parseAddress } from '../emulator/debug/index';
import type { DisassemblyRow } from '../emulator/debug/index';

/** The rows of the debug target: `count` from `insnOffset` instructions around `base` (DebugTarget.disassemble). */
export type DisassemblySource = (base: bigint, insnOffset: number, count: number) => DisassemblyRow[];

const ADDRESS_LIMIT = 1n << 64n;

function checkedInteger(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new Error(`${what} ${JSON.stringify(v)} is not an integer in ${min}..${max}`);
  }
  return v;
}

function entry(row: DisassemblyRow): DebugProtocol.DisassembledInstruction {
  if (row.address === null) return { address: '-1', instruction: '(bad)', presentationHint: 'invalid' };
  const insn: DebugProtocol.DisassembledInstruction = { address: formatAddress(row.address), instruction: row.text };
  if (row.valid && row.bytes) {
    insn.instructionBytes = [...row.bytes].map(b => b.toString(16).padStart(2, '0')).join(' ');
    if (row.notes.length) insn.instruction += `  ; ${row.notes.join('; ')}`;
  } else {
    insn.presentationHint = 'invalid';
  }
  if (row.symbol) insn.symbol = row.symbol;
  return insn;
}

/** `sourcePath` maps a DWARF file name to the path shown to the client. */
export function disassemble(rows: DisassemblySource, args: DebugProtocol.DisassembleArguments, sourcePath: (file: string) => string = f => f): DebugProtocol.DisassembledInstruction[] {
  const byteOffset = checkedInteger(args.offset ?? 0, 'offset', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const base = parseAddress(args.memoryReference) + BigInt(byteOffset);
  if (base < 0n || base >= ADDRESS_LIMIT) throw new Error(`memoryReference ${args.memoryReference} + offset ${byteOffset} is outside the 64-bit address space`);
  const count = checkedInteger(args.instructionCount, 'instructionCount', 0, MAX_DISASSEMBLY_ROWS);
  const insnOffset = checkedInteger(args.instructionOffset ?? 0, 'instructionOffset', -MAX_DISASSEMBLY_ROWS, MAX_DISASSEMBLY_ROWS);
  const out: DebugProtocol.DisassembledInstruction[] = [];
  let lastLine: string | undefined;
  for (const row of rows(base, insnOffset, count)) {
    const insn = entry(row);
    const line = row.source;
    if (line) {
      const key = `${line.file}:${line.line}`;
      if (key !== lastLine) {
        const path = sourcePath(line.file);
        insn.location = { name: path.split('/').pop(), path };
        insn.line = line.line;
        insn.column = line.column;
        lastLine = key;
      }
    }
    out.push(insn);
  }
  return out;
}
