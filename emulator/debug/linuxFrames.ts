/**
 * The call stack of a stopped CPU of the Linux machine as gdb's backtrace
 * shows it: each physical frame Linux's ORC tables give (linuxOrc.ts)
 * preceded by the calls the compiler inlined at its pc (the vmlinux's
 * DW_TAG_inlined_subroutine DIEs, emulator/elf/dwarf/scopes.ts
 * inlineFrames). An inlined frame is named by its function and placed at
 * the line of the inlined call it made (DW_AT_call_file / call_line); the
 * innermost frame of a physical frame is at its pc's line. The physical
 * function keeps its symbol+offset name, as the stack showed it before.
 *
 * gdb's inline-entry rule: at the first instruction of an inlined call the
 * call has not begun, so the caller is shown, except for the top frame of
 * a stop at a source line or instruction breakpoint placed there.
 */
import { inlineFrames } from '../elf/dwarf/scopes';
import type { ElfImage } from '../elf/types';
import type { LinuxFrame } from './linuxOrc';

export interface LinuxShownFrame {
  /** the index of the physical (ORC) frame it belongs to */
  physical: number;
  /** 0 = the innermost inlined call at the frame's pc ... the physical function last */
  inlineDepth: number;
  /** the physical frame's pc (a return address for outer frames) */
  pc: bigint;
  /** the address its scope and line are looked up at (a return address less one) */
  lookupPc: bigint;
  name: string;
  inlined: boolean;
  /** its DWARF source position (before the source map) */
  line?: { file: string; line: number; column: number };
  /** the inline-entry rule used for this frame's scope */
  skipInlineEntry: boolean;
  /** the physical frame was entered by an interrupt or exception */
  signal?: boolean;
}

export interface LinuxFrameSource {
  readonly vmlinux: ElfImage | undefined;
  where(addr: bigint): string;
  sourceLine(addr: bigint): { file: string; line: number; column: number } | undefined;
  /** the DWARF of an address's code (a module's, or the vmlinux's) */
  debugImage(addr: bigint): ElfImage | undefined;
}

/**
 * The shown frames over the physical ones. `showInlineEntry`: the stop was
 * a source line or instruction breakpoint (its top frame shows an inlined
 * function at its first instruction).
 */
export function shownFrames(t: LinuxFrameSource, physical: readonly LinuxFrame[], showInlineEntry: boolean): LinuxShownFrame[] {
  const out: LinuxShownFrame[] = [];
  physical.forEach((f, k) => {
    const lookupPc = k === 0 || f.signal ? f.pc : f.pc - 1n;
    const skipInlineEntry = !(k === 0 && showInlineEntry);
    const image = t.debugImage(lookupPc);
    const fns = image ? inlineFrames(image, lookupPc, skipInlineEntry) : [];
    const own = t.sourceLine(lookupPc);
    const base = { physical: k, pc: f.pc, lookupPc, skipInlineEntry, signal: f.signal };
    if (fns.length <= 1) {
      out.push({ ...base, inlineDepth: 0, name: t.where(f.pc), inlined: false, line: own });
      return;
    }
    fns.forEach((fn, d) => {
      const line = d === 0 ? own : fn.call ? { file: fn.call.file ?? own?.file ?? '', line: fn.call.line, column: fn.call.column } : undefined;
      const last = d === fns.length - 1;
      out.push({ ...base, inlineDepth: d, name: last ? t.where(f.pc) : fn.function, inlined: !last, line });
    });
  });
  return out;
}
