/**
 * Breakpoint changes while the machine is stopped with a CPU inside a
 * probe's instruction slot: a boosted hit runs the copied instruction and
 * the jmp back appended after it without a trap, so a debugger stop can
 * leave a CPU there with no probe current. Setting a file's breakpoints
 * again removes and registers its probes; the slot the CPU is in must not
 * be handed to the new probe (its copy would overwrite the jmp back).
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { FORK_C, Harness, lineOf, markerLine } from './dapHarness';

describe('breakpoint changes at a stop inside a probe slot', () => {
  const h = new Harness();
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('a file\'s breakpoints set again at a boosted stop: the run goes on without an oops and stops at the next hit', async () => {
    const dc = h.dc;
    const out: string[] = [];
    dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
    const line = markerLine(FORK_C, 'do_fork_body');
    await h.launchWith(async () => {
      await dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line }] });
    });
    // the first hit single-steps the slot and appends the jmp back; the later ones are boosted
    let ev = await h.continueToStop();
    for (let i = 0; i < 2; i++) ev = await h.continueToStop();
    const second = (await dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line }, { line: lineOf(FORK_C, 'atomic_add_return(1, &nr_forks)') }] })).body.breakpoints;
    assert.ok(second.every(b => b.verified), JSON.stringify(second));
    ev = await h.continueToStop(ev.body.threadId!);
    assert.equal(ev.body.reason, 'breakpoint');
    const oops = out.filter(l => /int3: |Oops|BUG/.test(l));
    assert.deepEqual(oops, [], 'no oops after the change');
  });
});
