/**
 * The frames a debugger shows below a C probe handler it stopped in: the
 * engine's handler-call return stub (kprobe_handler_return, where the
 * handler returns to the kprobe's trap handling), then the context the
 * handler was called from (the probed function at the probed address, the
 * code that faulted) and its callers, each at its address and line.
 */
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { frameOffsetIn } from '../adapter/frameAt';

/** one expected frame: the engine's stub, a module function (by name and line) or a kernel function (by name, offset and/or line) */
export type ExpectedFrame =
  | { stub: true }
  | { module: string; line?: number }
  | { fn: string; offset?: bigint; inside?: true; line?: number };

/** frames[from], frames[from + 1], ... are `expected` (the example kernel `kernel` resolves kernel functions) */
export function assertFramesBelow(frames: readonly DebugProtocol.StackFrame[], from: number, expected: readonly ExpectedFrame[], kernel: string): void {
  const shown = JSON.stringify(frames.map(f => [f.name, f.line, f.instructionPointerReference]));
  expected.forEach((x, k) => {
    const f = frames[from + k];
    assert.ok(f, `frame ${from + k} of ${shown}`);
    if ('stub' in x) {
      assert.match(f.name, /^kprobe_handler_return\b/, shown);
      return;
    }
    if ('module' in x) assert.match(f.name, new RegExp(`^${x.module}\\b`), shown);
    else {
      assert.equal(f.name, x.fn, shown);
      const off = frameOffsetIn(f, x.fn, kernel);
      if (x.offset !== undefined) assert.equal(off, x.offset, `${x.fn}+0x${off.toString(16)} in ${shown}`);
      if (x.inside) assert.ok(off > 0n, `${x.fn}+0x${off.toString(16)}: past its entry in ${shown}`);
    }
    if (x.line !== undefined) assert.equal(f.line, x.line, `${'fn' in x ? x.fn : x.module}'s line in ${shown}`);
  });
}
