/**
 * Where a frame-pointer frame record lives, per architecture (the adapter's
 * unwind table; core code looks it up by ArchOps.name and never switches on
 * the architecture).
 *
 *   x86_64:  push rbp; mov rbp,rsp      -> [fp] = caller fp, [fp+8] = return address
 *   aarch64: stp x29,x30,[sp,#-N]!; mov x29,sp -> [fp] = caller fp, [fp+8] = lr
 *   riscv64: s0 = sp at entry           -> [fp-16] = caller fp, [fp-8] = ra
 */
export interface FrameLayout {
  /** offset from fp of the saved caller frame pointer */
  savedFp: number;
  /** offset from fp of the saved return address */
  returnAddress: number;
  /** return addresses point after the call: subtract this to land inside the call instruction for line lookup */
  callSiteAdjust: number;
}

export const FRAME_LAYOUTS: Readonly<Record<string, FrameLayout>> = {
  x86_64: { savedFp: 0, returnAddress: 8, callSiteAdjust: 1 },
  aarch64: { savedFp: 0, returnAddress: 8, callSiteAdjust: 4 },
  riscv64: { savedFp: -16, returnAddress: -8, callSiteAdjust: 2 },
};

export function frameLayout(arch: string): FrameLayout | undefined {
  return FRAME_LAYOUTS[arch];
}
