/**
 * A front end that emits nothing itself: every instruction runs through the
 * interpreter's executor as a helper, chained in translated blocks. What an
 * architecture starts from before its front end emits IR (and what its own
 * front end falls back to instruction by instruction).
 */
import type { FrontEnd } from './ir';

export function helperFrontEnd<C, I>(slots: number, endsBlock: (insn: I) => boolean = () => false): FrontEnd<C, I> {
  return {
    slots,
    scratchBytes: 0,
    emit: () => false,
    endsBlock,
    syncIn: () => undefined,
    syncOut: () => undefined,
  };
}
