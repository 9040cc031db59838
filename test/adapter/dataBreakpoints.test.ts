/**
 * DebugClient tests of the debug registers through DAP (hardware watchpoints
 * and breakpoints in VS Code): dataBreakpointInfo for a variable, an
 * expression and an address; setDataBreakpoints with an access type and a
 * condition; the stop naming the register and the old and new value; a
 * hardware-mode function breakpoint that stops without patching memory; the
 * Debug Registers rows in `_probeState`; bad input with one clear message and
 * nothing allocated.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { assertFrameAt, frameOffsetIn } from './frameAt';
import { ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';

const h = new Harness();

describe('adapter: data breakpoints and hardware breakpoints', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('initialize advertises data breakpoints and the hardware mode', async () => {
    const caps = (await h.dc.initializeRequest()).body ?? {};
    assert.equal(caps.supportsDataBreakpoints, true);
    assert.ok(caps.breakpointModes?.some(m => m.mode === 'hardware'));
  });

  test('Break on Value Change of boot_counter: stops after the write with DR0, old and new value; the register shows in _probeState', async () => {
    let info: DebugProtocol.DataBreakpointInfoResponse['body'] | undefined;
    let set: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      info = (await h.dc.dataBreakpointInfoRequest({ name: 'boot_counter' })).body;
      assert.ok(info.dataId, info.description);
      set = (await h.dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: info.dataId, accessType: 'write', hitCondition: '2' }] })).body.breakpoints;
    });
    assert.deepEqual(info?.accessTypes, ['write', 'readWrite'], 'x86 cannot watch reads only');
    assert.match(info?.dataId ?? '', /^0x[0-9a-f]{16}\/8$/);
    assert.equal(set[0].verified, true, JSON.stringify(set[0]));
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'data breakpoint');
    assert.deepEqual(stop.body.hitBreakpointIds, [set[0].id]);
    assert.match(stop.body.description ?? '', /watchpoint DR0 hit: write to boot_counter \(0x[0-9a-f]+\): 1 -> 2/);
    const top = await h.topFrame(stop.body.threadId as number);
    assert.equal(top.name, 'read_boot_counter');
    assert.ok(frameOffsetIn(top, 'read_boot_counter') > 0n, 'the instruction after the store');
    const st = (await h.dc.customRequest(ProbeRequest.list)).body as ProbeStateBody;
    const dr0 = st.debugRegisters?.find(r => r.cpu === 0 && r.name === 'DR0');
    assert.equal(dr0?.holder?.owner, 'debugger');
    assert.equal(dr0?.holder?.where, 'boot_counter+0x0');
    assert.ok((dr0?.holder?.hits ?? 0) >= 2);
    assert.equal(st.debugRegisters?.filter(r => r.holder).length, st.debugRegisters!.length / 4, 'one register per CPU');
    // the raw registers: DR0 holds boot_counter's address, DR7 enables it (G0, write, 8 bytes)
    const raw = (n: string): string | undefined => st.debugRegisterValues?.find(v => v.cpu === 0 && v.name === n)?.value;
    assert.equal(raw('DR0'), dr0?.holder?.addr);
    assert.equal(BigInt(raw('DR7') ?? '0') & 0xf0003n, 0x90002n); // R/W 01, LEN 10
    // the Kprobes view's row: its own kind, the register it holds
    const row = st.kprobes.find(k => k.kind === 'watch');
    assert.ok(row?.registered);
    assert.match(row!.name, /^boot_counter \(DR0, w len 8\)$/);
    assert.deepEqual(row!.debugRegister, { name: 'DR0', addr: dr0!.holder!.addr, len: 8, type: 'w', suspended: false });
    // clearing releases the register
    await h.dc.setDataBreakpointsRequest({ breakpoints: [] });
    const after = (await h.dc.customRequest(ProbeRequest.list)).body as ProbeStateBody;
    assert.equal(after.debugRegisters?.filter(r => r.holder).length, 0);
  });

  test('expressions and addresses: *(u64 *)ADDR and asAddress+bytes watch the same bytes; no address, too long and misaligned give one message each', async () => {
    await h.launchWith(async () => undefined);
    const bc = (await h.dc.dataBreakpointInfoRequest({ name: '&boot_counter' })).body;
    const addr = /^(0x[0-9a-f]+)\//.exec(bc.dataId ?? '')?.[1];
    assert.ok(addr, bc.description);
    const viaCast = (await h.dc.dataBreakpointInfoRequest({ name: `*(u64 *)${addr}` })).body;
    assert.equal(viaCast.dataId, `${addr}/8`);
    const viaAddr = (await h.dc.dataBreakpointInfoRequest({ name: addr!, asAddress: true, bytes: 4 })).body;
    assert.equal(viaAddr.dataId, `${addr}/4`);
    const none = (await h.dc.dataBreakpointInfoRequest({ name: '1 + 2' })).body;
    assert.equal(none.dataId, null);
    assert.match(none.description, /'1 \+ 2' has no address/);
    const odd = (await h.dc.dataBreakpointInfoRequest({ name: `0x${(BigInt(addr!) + 1n).toString(16)}`, asAddress: true, bytes: 8 })).body;
    assert.equal(odd.dataId, null);
    assert.match(odd.description, /cannot watch it/);
    const bad = (await h.dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: 'boot_counter' }] })).body.breakpoints;
    assert.equal(bad[0].verified, false);
    assert.match(bad[0].message ?? '', /bad dataId/);
    const st = (await h.dc.customRequest(ProbeRequest.list)).body as ProbeStateBody;
    assert.equal(st.debugRegisters?.filter(r => r.holder).length, 0, 'nothing allocated');
  });

  test('a variable of the Variables view: an argument kept in a register is refused with the reason; a watch expression on a global works', async () => {
    await h.launchWith(async () => {
      await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'copy_process' }] });
    });
    const stop = await h.continueToStop();
    const top = await h.topFrame(stop.body.threadId as number);
    const scopes = (await h.dc.scopesRequest({ frameId: top.id })).body.scopes;
    const args = scopes.find(x => x.name === 'Arguments');
    assert.ok(args, scopes.map(x => x.name).join());
    const vars = (await h.dc.variablesRequest({ variablesReference: args.variablesReference })).body.variables;
    assert.ok(vars.length > 0);
    const local = (await h.dc.dataBreakpointInfoRequest({ variablesReference: args.variablesReference, name: vars[0].name })).body;
    assert.equal(local.dataId, null);
    assert.match(local.description, /has no address here: it is in register \w+: the debug registers watch memory addresses/);
    const global = (await h.dc.dataBreakpointInfoRequest({ name: 'boot_counter', frameId: top.id })).body;
    assert.match(global.dataId ?? '', /\/8$/);
  });

  test('a hardware-mode function breakpoint stops at do_fork with nothing patched in memory', async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork', mode: 'hardware' } as DebugProtocol.FunctionBreakpoint] })).body.breakpoints;
    });
    assert.equal(bps[0].verified, true, JSON.stringify(bps[0]));
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint');
    assert.match(stop.body.description ?? '', /hardware breakpoint \(DR0\) at do_fork/);
    const top = await h.topFrame(stop.body.threadId as number);
    assertFrameAt(top, 'do_fork', 0n);
    // the bytes really in memory at do_fork: the original instruction, no int3
    const mem = (await h.dc.customRequest(ProbeRequest.readMemory, { memoryReference: top.instructionPointerReference, count: 1, patched: true })).body as DebugProtocol.ReadMemoryResponse['body'];
    assert.notEqual(Buffer.from(mem?.data ?? '', 'base64')[0], 0xcc);
    // the disassembly marks it
    const dis = (await h.dc.disassembleRequest({ memoryReference: top.instructionPointerReference!, instructionCount: 1 })).body?.instructions ?? [];
    assert.match(dis[0]?.instruction ?? '', /; hardware breakpoint \(DR0, debugger\)/);
    const exited = h.dc.waitForEvent('exited');
    await h.dc.setFunctionBreakpointsRequest({ breakpoints: [] });
    await h.dc.continueRequest({ threadId: stop.body.threadId as number });
    await within(exited, 'the end of the machine');
  });
});
