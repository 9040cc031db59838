import { repoPath } from '../util/paths';
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';
import { FORK_C, Harness, KERNEL, kernelImage, lineOf, markerLine, within } from './dapHarness';
import { KPROBE_ARCHES } from '../kprobes/harness';
import { assertFrameAt, frameOffsetIn } from './frameAt';

const h = new Harness();

/** Stopped at the do_fork_body breakpoint (CPU = thread of the stop). */
async function stopAtDoForkBody(program = KERNEL): Promise<{ threadId: number; bp: DebugProtocol.Breakpoint }> {
  let bp: DebugProtocol.Breakpoint | undefined;
  await h.launchWith(async () => {
    bp = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] })).body.breakpoints[0];
  }, { program });
  const ev = await h.continueToStop();
  assert.equal(ev.body.reason, 'breakpoint');
  // the breakpoint is not needed any more: steps must not stop in it again
  await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [] });
  return { threadId: ev.body.threadId!, bp: bp! };
}

describe('kprobe debug adapter: stepping and restart', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  // the same steps on every architecture with kprobes: line tables, frames and step-over/step-out return addresses per port
  for (const arch of KPROBE_ARCHES) describe(`stepping on the ${arch} kernel`, () => {
    const program = kernelImage(arch);
    test('next steps over copy_process to the next line of do_fork', async () => {
      const { threadId } = await stopAtDoForkBody(program);
      const body = markerLine(FORK_C, 'do_fork_body');
      const ev = await h.stepAndWait(() => h.dc.nextRequest({ threadId }));
      assert.equal(ev.body.reason, 'step');
      assert.equal(ev.body.threadId, threadId);
      const top = await h.topFrame(threadId);
      assert.equal(top.name, 'do_fork');
      assert.ok(frameOffsetIn(top, 'do_fork', program) > 0n);
      assert.equal(top.source?.path, FORK_C);
      assert.equal(top.line, lineOf(FORK_C, 'if (err)'), `next from line ${body}`);
      assert.match(ev.body.description ?? '', /^Stepped to fork\.c:\d+$/);
    });

    test('stepIn enters copy_process; stepOut returns to do_fork on the calling line; next then leaves the line', async () => {
      const { threadId } = await stopAtDoForkBody(program);
      const body = markerLine(FORK_C, 'do_fork_body');
      await h.stepAndWait(() => h.dc.stepInRequest({ threadId }));
      let frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
      assert.equal(frames[0].name, 'copy_process');
      frameOffsetIn(frames[0], 'copy_process', program); // the pc is in copy_process by the ELF's symbols
      assert.equal(frames[0].source?.path, FORK_C);
      const copyStart = lineOf(FORK_C, 'int copy_process(');
      assert.ok(frames[0].line >= copyStart && frames[0].line < body, `in copy_process: line ${frames[0].line}`);
      assert.equal(frames[1].name, 'do_fork');
      assert.ok(frameOffsetIn(frames[1], 'do_fork', program) > 0n);
      const returnTo = frames[1].instructionPointerReference!;
      const out = await h.stepAndWait(() => h.dc.stepOutRequest({ threadId }));
      assert.equal(out.body.reason, 'step');
      assert.match(out.body.description ?? '', /^Stepped out to do_fork\+0x[0-9a-f]+$/);
      frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
      assert.equal(frames[0].name, 'do_fork');
      assert.equal(BigInt(frames[0].instructionPointerReference!), BigInt(returnTo), 'at the return address the caller frame showed');
      // the return address belongs to the calling line or (the result kept in a register) the next one
      const ifErr = lineOf(FORK_C, 'if (err)');
      assert.ok(frames[0].line === body || frames[0].line === ifErr, `line after stepOut: ${frames[0].line}`);
      await h.stepAndWait(() => h.dc.nextRequest({ threadId }));
      const after = await h.topFrame(threadId);
      assert.equal(after.name, 'do_fork');
      assert.ok(frameOffsetIn(after, 'do_fork', program) > 0n);
      assert.ok(after.line > frames[0].line, `next leaves line ${frames[0].line}: now ${after.line}`);
    });

    test('instruction granularity steps exactly one instruction', async () => {
      const { threadId } = await stopAtDoForkBody(program);
      const before = BigInt((await h.topFrame(threadId)).instructionPointerReference!);
      const dis = await h.dc.customRequest('disassemble', { memoryReference: '0x' + before.toString(16), instructionCount: 2 }) as DebugProtocol.DisassembleResponse;
      const ev = await h.stepAndWait(() => h.dc.stepInRequest({ threadId, granularity: 'instruction' }));
      assert.equal(ev.body.description, 'Stepped one instruction');
      const after = BigInt((await h.topFrame(threadId)).instructionPointerReference!);
      const insn = dis.body!.instructions[0].instruction;
      // the probed instruction is executed from its slot: pc continues after it, or at a call's target
      if (/^(call|bl|blr|jalr)\b/.test(insn)) assertFrameAt(await h.topFrame(threadId), 'copy_process', 0n, program);
      else assert.equal(after, BigInt(dis.body!.instructions[1].address), `after ${insn}`);
    });
  });

  test('stepping onto another breakpoint stops there with reason breakpoint', async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] })).body.breakpoints;
      await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'copy_process' }] });
    });
    const first = await h.continueToStop();
    assert.deepEqual(first.body.hitBreakpointIds, [bps[0].id]);
    const ev = await h.stepAndWait(() => h.dc.nextRequest({ threadId: first.body.threadId! }));
    assert.equal(ev.body.reason, 'breakpoint');
    assert.match(ev.body.description ?? '', /^breakpoint at copy_process\+0x0$/);
  });

  test('restart boots a new machine with the same arguments and breakpoints (same ids), stopping at the entry again', async () => {
    let bp: DebugProtocol.Breakpoint | undefined;
    await h.launchWith(async () => {
      // a function breakpoint removed again leaves a gap in the ids the restart must keep
      await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'alloc_pid' }] });
      await h.dc.setFunctionBreakpointsRequest({ breakpoints: [] });
      bp = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] })).body.breakpoints[0];
    });
    assert.ok(bp?.verified);
    const hit = await h.continueToStop();
    assert.deepEqual(hit.body.hitBreakpointIds, [bp.id]);
    const changed = h.dc.waitForEvent('breakpoint');
    const entry = h.dc.waitForEvent('stopped');
    await h.dc.customRequest('restart', { arguments: { type: 'kprobe', request: 'launch', program: KERNEL, cpus: 2, stopOnEntry: true } });
    const ch = (await within(changed, 'the breakpoint changed event')) as DebugProtocol.BreakpointEvent;
    assert.equal(ch.body.reason, 'changed');
    assert.equal(ch.body.breakpoint.id, bp.id);
    assert.equal(ch.body.breakpoint.verified, true);
    assert.equal(ch.body.breakpoint.line, bp.line);
    const st = (await within(entry, 'the entry stop after restart')) as DebugProtocol.StoppedEvent;
    assert.equal(st.body.reason, 'entry');
    assertFrameAt(await h.topFrame(1), 'start_kernel', 0n);
    const state = (await h.dc.customRequest(ProbeRequest.list) as DebugProtocol.Response).body as ProbeStateBody;
    assert.deepEqual(state.kprobes.map(p => [p.id, p.nhit]), [[bp.id, 0]], 'the new machine has the breakpoint with no hits');
    const again = await h.continueToStop();
    assert.equal(again.body.reason, 'breakpoint');
    assert.deepEqual(again.body.hitBreakpointIds, [bp.id]);
  });

  test('restart with a probe file that registers first: the breakpoint keeps its DAP id (the adapter owns the ids)', async () => {
    let bp: DebugProtocol.Breakpoint | undefined;
    await h.launchWith(async () => {
      bp = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork' }] })).body.breakpoints[0];
    });
    assert.ok(bp?.verified, bp?.message);
    const changed = h.dc.waitForEvent('breakpoint');
    const entry = h.dc.waitForEvent('stopped');
    // the file's probe takes the new manager's first probe id
    const probes = [repoPath('examples', 'probes', 'kprobe_example.kprobe')];
    await h.dc.customRequest('restart', { arguments: { type: 'kprobe', request: 'launch', program: KERNEL, cpus: 2, stopOnEntry: true, probes } });
    const ch = (await within(changed, 'the breakpoint changed event')) as DebugProtocol.BreakpointEvent;
    assert.equal(ch.body.breakpoint.id, bp.id);
    await within(entry, 'the entry stop after restart');
    const state = (await h.dc.customRequest(ProbeRequest.list) as DebugProtocol.Response).body as ProbeStateBody;
    const ids = state.kprobes.map(p => p.id);
    assert.ok(ids.includes(bp.id!), `the views list the breakpoint under its DAP id: ${ids.join(', ')}`);
    assert.equal(new Set(ids).size, ids.length, 'one id space for breakpoints and file probes');
    const hit = await h.continueToStop();
    assert.deepEqual(hit.body.hitBreakpointIds, [bp.id]);
  });
});
