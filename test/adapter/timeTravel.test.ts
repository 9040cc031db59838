/**
 * Reverse execution over DAP (emulator/debug/timeTravel.ts behind the debug facade): stepBack and
 * reverseContinue against the sample kernel, compared with the stops the
 * same session made going forward.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { FORK_C, Harness, markerLine, within } from './dapHarness';
import { ProbeRequest, type ProbeStateBody } from '../../adapter/dapCustom';

describe('reverse execution (DAP stepBack / reverseContinue)', () => {
  const h = new Harness();
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  /** what the user sees of CPU `thread` at a stop: the top frame and every register */
  async function seen(thread: number): Promise<string> {
    const dc = h.dc;
    const top = (await dc.stackTraceRequest({ threadId: thread })).body.stackFrames[0];
    const scopes = (await dc.scopesRequest({ frameId: top.id })).body.scopes;
    const regs = scopes.find(s => /regist/i.test(s.name));
    assert.ok(regs, `a registers scope (${scopes.map(s => s.name).join(', ')})`);
    const vars = (await dc.variablesRequest({ variablesReference: regs.variablesReference })).body.variables;
    return `${top.name} ${top.line} ${top.instructionPointerReference} ${vars.map(v => `${v.name}=${v.value}`).join(' ')}`;
  }

  function kernelLines(out: string[]): string[] {
    return out.filter(l => /^\[\s*\d+\.\d+\] /.test(l));
  }

  test('reverse continue goes back to each earlier breakpoint stop; continue replays to the same stops, printing nothing twice', async () => {
    const dc = h.dc;
    const out: string[] = [];
    dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
    await h.launchWith(async () => {
      const bp = (await dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] })).body.breakpoints[0];
      assert.ok(bp.verified, bp.message);
    });
    const forward: { thread: number; seen: string; printed: number }[] = [];
    for (let i = 0; i < 4; i++) {
      const ev = await h.continueToStop();
      assert.equal(ev.body.reason, 'breakpoint');
      forward.push({ thread: ev.body.threadId!, seen: await seen(ev.body.threadId!), printed: kernelLines(out).length });
    }
    const printedAtEnd = kernelLines(out).length;
    // back: stop 3, 2, 1 (the breakpoint's previous hits)
    for (let i = 2; i >= 0; i--) {
      const stop = dc.waitForEvent('stopped');
      await within(dc.reverseContinueRequest({ threadId: forward[i + 1].thread }), 'reverse continue');
      const ev = await within(stop, 'the stop after reverse continue') as DebugProtocol.StoppedEvent;
      assert.equal(ev.body.reason, 'breakpoint');
      assert.equal(ev.body.threadId, forward[i].thread);
      assert.equal(await seen(forward[i].thread), forward[i].seen, `back at stop ${i + 1}`);
    }
    assert.ok(out.some(l => /time travel: now at \d+ instructions/.test(l)), 'the Debug Console marks the position');
    assert.equal(kernelLines(out).length, printedAtEnd, 'going back removes and repeats nothing');
    // forward again along the recording: the same stops
    for (let i = 1; i < 4; i++) {
      const ev = await h.continueToStop();
      assert.equal(ev.body.threadId, forward[i].thread);
      assert.equal(await seen(forward[i].thread), forward[i].seen, `forward again at stop ${i + 1}`);
    }
    assert.equal(kernelLines(out).length, printedAtEnd, 'the replay printed nothing twice');
    // past the end of the recording the kernel runs live and prints on
    await h.continueToStop();
    assert.ok(kernelLines(out).length >= printedAtEnd);
  });

  /** the Kprobes view's hit and miss counts of the row at `name` */
  async function counts(name: RegExp): Promise<string> {
    const st = (await h.dc.customRequest(ProbeRequest.list)).body as ProbeStateBody;
    const row = st.kprobes.find(k => name.test(k.name));
    assert.ok(row, `a Kprobes row ${name} (${st.kprobes.map(k => k.name).join(', ')})`);
    return `${row.nhit}/${row.nmissed}`;
  }

  test('a breakpoint added at a replayed stop: no oops, the counts stay as of that point, the Debug Console says what was discarded, and the run goes on as a fresh run making the change there', async () => {
    const line = markerLine(FORK_C, 'do_fork_body');
    const setup = async (): Promise<void> => {
      await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line }] });
    };
    // the fresh run: to hit 3, add r:sys_open there, continue
    let out: string[] = [];
    h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
    await h.launchWith(setup);
    let ev = await h.continueToStop();
    for (let i = 0; i < 2; i++) ev = await h.continueToStop();
    const freshCounts = await counts(/^do_fork/);
    await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'r:sys_open' }] });
    ev = await h.continueToStop(ev.body.threadId!);
    const fresh = { reason: ev.body.reason, seen: await seen(ev.body.threadId!), counts: await counts(/^do_fork/) };
    assert.deepEqual(out.filter(l => /int3: |Oops/.test(l)), []);
    await h.dc.stop();
    // the issue's sequence: hits 1-4, back to hit 1, forward (replaying) to hit 3, the same change there
    await h.startClient();
    out = [];
    h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
    await h.launchWith(setup);
    ev = await h.continueToStop();
    for (let i = 0; i < 3; i++) ev = await h.continueToStop();
    for (let i = 0; i < 3; i++) {
      const stop = h.dc.waitForEvent('stopped');
      await within(h.dc.reverseContinueRequest({ threadId: ev.body.threadId! }), 'reverse continue');
      ev = await within(stop, 'the stop after reverse continue') as DebugProtocol.StoppedEvent;
    }
    for (let i = 0; i < 2; i++) ev = await h.continueToStop();
    assert.equal(await counts(/^do_fork/), freshCounts, 'the counts at the replayed stop are those of that point');
    await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'r:sys_open' }] });
    assert.equal(await counts(/^do_fork/), freshCounts, 'the change keeps the counts of that point');
    const said = out.map(l => /time travel: a breakpoint change \(setFunctionBreakpoints\) at \d+ instructions \(after hit 3\) discarded the recorded future: (\d+) instructions and 1 hit \(hit 4\)/.exec(l)).find(m => m);
    assert.ok(said && Number(said[1]) > 0, `the Debug Console says what was discarded:\n${out.filter(l => /time travel/.test(l)).join('')}`);
    ev = await h.continueToStop(ev.body.threadId!);
    assert.deepEqual(out.filter(l => /int3: |Oops/.test(l)), [], 'no oops after the change in the past');
    assert.deepEqual({ reason: ev.body.reason, seen: await seen(ev.body.threadId!), counts: await counts(/^do_fork/) }, fresh,
      'the same next stop as the fresh run that made the change at hit 3');
  });

  test('step back by instruction and by line undoes the steps', async () => {
    const dc = h.dc;
    await h.launchWith(async () => {
      await dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] });
    });
    const ev = await h.continueToStop();
    const thread = ev.body.threadId!;
    const at0 = await seen(thread);
    await h.stepAndWait(() => dc.stepInRequest({ threadId: thread, granularity: 'instruction' }));
    const at1 = await seen(thread);
    assert.notEqual(at1, at0);
    const back = await h.stepAndWait(() => dc.stepBackRequest({ threadId: thread, granularity: 'instruction' }));
    assert.equal(back.body.reason, 'step');
    assert.equal(await seen(thread), at0, 'one instruction back is where the step started');
    // lines: two steps over, one line back = after the first
    await h.stepAndWait(() => dc.nextRequest({ threadId: thread }));
    const line1 = (await h.topFrame(thread)).line;
    await h.stepAndWait(() => dc.nextRequest({ threadId: thread }));
    const line2 = (await h.topFrame(thread)).line;
    assert.notEqual(line2, line1);
    await h.stepAndWait(() => dc.stepBackRequest({ threadId: thread }));
    assert.equal((await h.topFrame(thread)).line, line1, 'one line back');
  });

  test('"stopAtExit": the session stays at the power-off; reverse continue goes back to the last hit; continue replays to the end, then ends', async () => {
    const dc = h.dc;
    const out: string[] = [];
    dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
    await h.launchWith(async () => {
      // a logpoint: hits recorded, never a stop
      await dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body'), logMessage: 'fork flags={arg0}' }] });
    }, { stopAtExit: true });
    const end = await h.continueToStop();
    assert.equal(end.body.reason, 'pause');
    assert.match(end.body.description ?? '', /Powered off \(exit code 0\)/);
    const logged = out.filter(l => /\] fork flags=/.test(l)).length;
    assert.ok(logged > 0);
    const back = dc.waitForEvent('stopped');
    await within(dc.reverseContinueRequest({ threadId: end.body.threadId! }), 'reverse continue');
    const ev = await within(back, 'the last hit') as DebugProtocol.StoppedEvent;
    assert.equal(ev.body.reason, 'breakpoint');
    assert.match(ev.body.description ?? '', /Reverse continue: hit \d+ of do_fork/);
    const top = await h.topFrame(ev.body.threadId!);
    assert.equal(top.line, markerLine(FORK_C, 'do_fork_body'));
    // forward: the recording's end again (a stop), then continue ends the session
    const again = await h.continueToStop();
    assert.match(again.body.description ?? '', /Powered off/);
    assert.equal(out.filter(l => /\] fork flags=/.test(l)).length, logged, 'the replay printed no log line twice');
    const exited = dc.waitForEvent('exited');
    await dc.continueRequest({ threadId: 1 });
    assert.equal((await within(exited, 'the end of the session')).body.exitCode, 0);
  });

  test('the adapter offers stepping back', async () => {
    const caps = (await h.dc.initializeRequest()).body;
    assert.equal(caps?.supportsStepBack, true);
  });

  test('with "record": false there is no going back, said clearly', async () => {
    const dc = h.dc;
    await h.launchWith(async () => {
      await dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] });
    }, { record: false });
    const ev = await h.continueToStop();
    await assert.rejects(dc.reverseContinueRequest({ threadId: ev.body.threadId! }), /time travel is off in this session/);
  });
});
