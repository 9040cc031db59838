/**
 * The debugger on the aarch64 sample kernel: a function breakpoint stops
 * with arm64 registers (x0..x30, sp, pc, pstate) and a stack walked to the
 * kernel-thread entry; a source-line breakpoint in fork.c maps through the
 * aarch64 line table; a return breakpoint (kretprobe through x30) stops at
 * the return with x0 = the return value; a step over a line works; the
 * disassembly shows A64 instructions with the brk marked.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { repoPath } from '../util/paths';
import { FORK_C, Harness, markerLine } from './dapHarness';

const A64 = repoPath('examples', 'kernel', 'build', 'kernel-aarch64.elf');
const h = new Harness();

describe('kprobe debug adapter on the aarch64 kernel', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('function breakpoint: arm64 registers, frames down to ret_from_fork, the brk marked in the disassembly', async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork' }] })).body.breakpoints;
    }, { program: A64 });
    assert.equal(bps[0].verified, true, bps[0].message);
    const ev = await h.continueToStop();
    assert.equal(ev.body.reason, 'breakpoint');
    const threadId = ev.body.threadId!;
    const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
    assert.equal(frames[0].name, 'do_fork+0x0');
    assert.equal(frames.at(-1)?.name, 'ret_from_fork+0x0', frames.map(f => f.name).join(' < '));
    const scopes = (await h.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
    const regScope = scopes.find(s => /register/i.test(s.name));
    assert.ok(regScope, scopes.map(s => s.name).join(', '));
    const regs = (await h.dc.variablesRequest({ variablesReference: regScope.variablesReference })).body.variables;
    const names = regs.map(v => v.name);
    for (const n of ['x0', 'x30', 'sp', 'pc', 'pstate']) assert.ok(names.includes(n), names.join(' '));
    assert.equal(BigInt(frames[0].instructionPointerReference!), BigInt(bps[0].instructionReference!), 'frame 0 is at the probe');
    const dis = (await h.dc.customRequest('disassemble', { memoryReference: bps[0].instructionReference!, instructionCount: 2 }) as DebugProtocol.DisassembleResponse).body!.instructions;
    assert.match(dis[0].instruction, /  ; kprobe: brk at do_fork\+0x0$/);
    assert.doesNotMatch(dis[0].instruction.split('  ;')[0], /brk/, 'the original instruction is shown');
  });

  test('source line breakpoint and a return breakpoint (kretprobe through x30): x0 is the return value', async () => {
    let line: DebugProtocol.Breakpoint | undefined;
    let ret: DebugProtocol.Breakpoint | undefined;
    await h.launchWith(async () => {
      line = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] })).body.breakpoints[0];
      ret = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'r:alloc_pid' }] })).body.breakpoints[0];
    }, { program: A64 });
    assert.ok(line?.verified && ret?.verified, `${line?.message} ${ret?.message}`);
    const stops: DebugProtocol.StoppedEvent[] = [];
    for (let i = 0; i < 2; i++) stops.push(await h.continueToStop(stops.at(-1)?.body.threadId ?? 1));
    const ids = stops.map(s => s.body.hitBreakpointIds?.[0]);
    assert.ok(ids.includes(ret.id) && ids.includes(line.id), JSON.stringify(ids));
    const retStop = stops.find(s => s.body.hitBreakpointIds?.[0] === ret!.id)!;
    const top = (await h.dc.stackTraceRequest({ threadId: retStop.body.threadId! })).body.stackFrames[0];
    const x0 = await h.evaluate('regs->x0', top.id);
    const rv = await h.evaluate('regs_return_value(regs)', top.id);
    assert.equal(rv.result, x0.result);
  });
});
