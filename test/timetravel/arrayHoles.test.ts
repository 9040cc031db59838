/**
 * A restore puts an array back as it was, holes included: an element never
 * set (a hole) is skipped by filter and forEach where an undefined is not.
 * The arm64 CPU's debug match unit keeps its slots in such an array
 * (breakpoint slots 0-5, watchpoint slots from 16, set as the registers are
 * programmed): going back to before a hardware breakpoint had ever been
 * set must not leave an `undefined` slot that the next watchpoint step-over
 * trips on (the CPU oopsed and re-execution did not stop at the watchpoint).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { capture, restore } from '../../emulator/timetravel/snapshot';
import { bootForDebug } from '../../emulator/debug/launch';
import { SessionTimeTravel } from '../../emulator/debug/timeTravel';
import { repoPath } from '../util/paths';
import { probesOf } from '../../emulator/probes/attach';
import { timeTravelOf } from '../../emulator/timetravel/recorder';

test('restore keeps an array hole a hole, and an undefined an undefined', () => {
  const holey: (string | null | undefined)[] = [];
  holey[2] = 'x'; // holes at 0 and 1
  const explicit: (string | null | undefined)[] = [undefined, 'y'];
  const root = { holey, explicit };
  const s = capture(root);
  holey[0] = null; holey[1] = undefined;
  explicit.length = 0; explicit[1] = 'y'; // index 0 now a hole
  restore(s);
  assert.deepEqual([0 in holey, 1 in holey, 2 in holey], [false, false, true]);
  assert.deepEqual(holey.filter(x => x !== null), ['x']);
  assert.deepEqual([0 in explicit, 1 in explicit], [true, true]);
});

const change = { command: 'setBreakpoints' } as DebugProtocol.Request;

test('aarch64: back to before a hardware breakpoint existed, a data breakpoint still stops where it did', () => {
  const m = bootForDebug({ program: repoPath('examples', 'kernel', 'build', 'kernel-aarch64.elf'), cpus: 2, record: true });
  const travel = new SessionTimeTravel(m);
  const messages: string[] = [];
  timeTravelOf(m)!.onMessage(t => messages.push(t));
  const addr = m.image.symbols.lookup('nr_forks')?.value;
  assert.ok(addr !== undefined, 'symbol nr_forks');
  const oopses = (): number => m.printkRecords.filter(r => r.text.includes('Internal error') || r.text.includes('kprobe-debug:')).length;
  travel.beforeChange(change, () => undefined);
  probesOf(m).addDataBreakpoint({ addr, len: 8, access: 'write' });
  // the watchpoint's first two stops: the run up to them is recorded with only watchpoint slots ever set
  let r = m.runSlice(5_000_000);
  for (let stops = 0; stops < 2;) {
    if (r.kind === 'stopped') {
      assert.equal(r.request.reason, 'data breakpoint');
      if (++stops === 2) break;
    } else assert.equal(r.kind, 'running', 'the machine runs on to the second write of nr_forks');
    r = m.runSlice(5_000_000);
  }
  const at = { g: m.totalInstructions, hits: m.kernel.hitSeq };
  // an execute slot set and cleared at this stop
  travel.beforeChange(change, () => undefined);
  const hw = probesOf(m).addBreakpoint({ target: { kind: 'symbol', name: 'do_fork', offset: 0n }, mode: 'hardware' });
  travel.beforeChange(change, () => undefined);
  assert.ok(probesOf(m).remove(hw.id));
  const before = oopses();
  const back = travel.reverseContinue();
  assert.ok(m.totalInstructions < at.g && m.kernel.hitSeq === at.hits - 1, `back at the first stop (${back.description})`);
  r = m.runSlice(5_000_000);
  for (let i = 0; i < 50 && r.kind === 'running' && m.totalInstructions < at.g; i++) r = m.runSlice(5_000_000);
  assert.deepEqual(messages, [], 'the re-execution follows the recording');
  assert.equal(oopses(), before, 'no oops');
  assert.ok(r.kind === 'stopped' && r.request.reason === 'data breakpoint', 'the data breakpoint stops again');
  assert.deepEqual({ g: m.totalInstructions, hits: m.kernel.hitSeq }, at, 'where it stopped when recorded');
});
