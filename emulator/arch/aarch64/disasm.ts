/**
 * Disassembly in llvm-objdump's spelling (mnemonic and operands, preferred
 * aliases) and the DecodedInsn the debugger and kprobes use.
 */
import { DecodedInsn } from '../types';
import { fromVAddr } from '../../memory/address';
import { A64Insn } from './insn';

export function toDecoded(i: A64Insn): DecodedInsn {
  const row = i.row;
  if (row === null) throw new Error('aarch64: instruction without a table row');
  const [mnemonic, operands] = row.fmt(i);
  const w = i.word >>> 0;
  let flow: DecodedInsn['flow'] = row.flow ?? 'none';
  if (row.name === 'b/bl') flow = i.op ? 'call' : 'jump';
  if (row.name === 'b.cond' && i.cond >= 14) flow = 'jump';
  if (row.name === 'hint' && i.imm === 3) flow = 'halt';
  const d: DecodedInsn = {
    addr: fromVAddr(i.addr), length: 4,
    bytes: Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24),
    mnemonic, operands, flow, ipRelative: row.pcRel === true,
  };
  if (row.pcRel && flow !== 'none') d.target = fromVAddr(i.target);
  return d;
}
