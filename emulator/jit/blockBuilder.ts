/**
 * Block formation: which decoded instructions make one translated block
 * and what each contributes to its IR (the front end's code, or a call of
 * the instruction as a helper).
 */
import type { BuiltBlock, CodeSpace } from './codeCache';
import { PAGE } from './codeCache';
import type { AnyCpu } from './cpuState';
import { FrontEnd, IrBuilder } from './ir';
import type { RunnableInsn } from '../cpu/interp';
import type { VAddr } from '../memory/address';

/** instructions per block at most */
export const MAX_BLOCK_INSNS = 64;

/**
 * The IR of the block starting at `start` in page `key` of code space sp:
 * the front end emits each instruction, or the instruction runs as a helper;
 * the block ends at a jump, after MAX_BLOCK_INSNS instructions, or at the
 * page's end (it falls through to the next pc). null when no instruction
 * can be decoded at its start.
 */
export function buildBlock<C, I extends RunnableInsn<C>>(fe: FrontEnd<C, I>, cpu: AnyCpu, sp: CodeSpace, start: RunnableInsn<unknown>, key: number): BuiltBlock | null {
  const b = new IrBuilder<I>(start.addr);
  const helpers: (RunnableInsn<unknown> | null)[] = [];
  const thens: VAddr[] = [];
  const pages = new Set<number>();
  let pc = start.addr;
  let insn: RunnableInsn<unknown> | null = start;
  for (let count = 0; ; count++) {
    if (insn === null) {
      try { insn = sp.cache.get(pc); } catch { insn = null; }
      if (insn === null) { if (count === 0) return null; b.jmp(pc); break; }
    }
    const i = insn as unknown as I;
    if (fe.interpretOnly !== undefined && fe.interpretOnly(i, cpu as unknown as C)) {
      if (count === 0) return null;
      b.jmp(pc);
      break;
    }
    b.begin(i, pc, insn.next);
    helpers.push(null);
    thens.push(NaN);
    if (!fe.emit(b, i, cpu as unknown as C)) {
      helpers[helpers.length - 1] = insn;
      b.helper();
      if (!b.isEnded && fe.endsBlock(i)) b.fall();
    } else {
      // the front end emitted a helper of its own making (IrBuilder.helper(run))
      const run = b.helperRuns.get(b.insns.length - 1);
      if (run !== undefined) helpers[helpers.length - 1] = run as unknown as RunnableInsn<unknown>;
      thens[thens.length - 1] = b.helperThens.get(b.insns.length - 1) ?? NaN;
    }
    const last = insn.addr + insn.len - 1;
    pages.add(Math.floor(last / PAGE));
    if (b.isEnded) break;
    pc = insn.next;
    if (count + 1 >= MAX_BLOCK_INSNS || Math.floor(pc / PAGE) !== key) { b.fall(); break; }
    insn = null;
  }
  const last = b.insns[b.insns.length - 1];
  return { start: start.addr, ops: b.ops, temps: b.temps, count: b.insns.length, helpers, thens, next: last.next, pages: [...pages] };
}
