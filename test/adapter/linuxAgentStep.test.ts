/**
 * Steps from a stop at a hit of a kprobe the guest registered, over
 * Debian's kernel through the adapter, one boot (acpi=off, one CPU, the
 * -dbg vmlinux, kprobe-debug's agent loaded). At such a stop the CPU stands
 * in the agent's handler inside Linux's kprobe machinery; the stop shows the
 * probed context out of pt_regs, and the steps act on that context. The
 * oracle is the same step from an ordinary (the debugger's own, invisible)
 * function breakpoint at the same place in the same `cat /proc/version`:
 *  - step over from the kprobe's stop at do_sys_openat2's entry arrives
 *    where the ordinary step over arrives (function, line, address), with
 *    dfd and filename read from the real registers there;
 *  - step out from there arrives at the return address into the caller;
 *  - one instruction from the kprobe's stop runs the probed instruction
 *    (the ftrace site's nop): the pc is the next instruction of the
 *    Disassembly view;
 *  - step out directly from the kprobe's stop arrives at the caller's
 *    return address, as the ordinary step out does;
 *  - from a kretprobe's stop (the caller's context at the return address)
 *    the call stack is the one an ordinary stop there shows, and step over
 *    arrives where the ordinary step over from the return address arrives;
 *  - step in from a kprobe on do_sys_openat2's first real call (a function
 *    breakpoint `do_sys_openat2+0xNN` with a condition: Linux emulates the
 *    probed call) enters the callee where the ordinary step in from a
 *    breakpoint at the same call does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { AGENT_CPIO, BOOT_MS, GuestConsole, OPEN_C, VMLINUX, openat2Lines } from './linuxGuest';
import { unfetched } from '../util/fetched';

interface At { name: string; line: number; ip: bigint }

test('Debian\'s kernel: step over, step in, step out and one instruction from a stop at the guest\'s kprobe and kretprobe hits act on the probed context, arriving where the same steps from an ordinary breakpoint arrive', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  if (!existsSync(AGENT_CPIO)) return unfetched(t, 'no test/linux/agent/cache/agent.cpio.gz (test/linux/agent/build-agent.sh)');
  const { openat2, entryLine } = openat2Lines();

  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  const g = new GuestConsole(dc, h);
  const changed: DebugProtocol.BreakpointEvent[] = [];
  dc.on('breakpoint', (e: DebugProtocol.BreakpointEvent) => changed.push(e));
  const verified = (id: number): void => {
    const c = changed.filter(e => e.body.breakpoint.id === id).at(-1);
    assert.equal(c?.body.breakpoint.verified, true, `breakpoint ${id}: ${c?.body.breakpoint.message ?? 'no breakpoint event'}`);
  };
  const frames = async (): Promise<DebugProtocol.StackFrame[]> => (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  const at = async (): Promise<At> => {
    const f = (await frames())[0];
    return { name: f.name.replace(/\+0x[0-9a-f]+$/, ''), line: f.line, ip: BigInt(f.instructionPointerReference!) };
  };
  const step = async (req: () => Promise<unknown>, what: string): Promise<At> => {
    const s = await h.stepAndWait(req);
    assert.equal(s.body.reason, 'step', `${what}: ${s.body.description}`);
    return at();
  };
  const next = (): Promise<At> => step(() => dc.nextRequest({ threadId: 1 }), 'step over');
  const out = (): Promise<At> => step(() => dc.stepOutRequest({ threadId: 1 }), 'step out');
  /** types `cat /proc/version` and waits for the stop it runs into */
  const catStops = async (what: string): Promise<DebugProtocol.StoppedEvent> => {
    const stop = dc.waitForEvent('stopped');
    await h.evaluate('>cat /proc/version', undefined, 'repl');
    return await within(stop, what, BOOT_MS) as DebugProtocol.StoppedEvent;
  };
  /** no breakpoints: cat runs to its end */
  const catEnds = async (): Promise<void> => {
    await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [] });
    await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
    const done = g.outputMatches(/Linux version 6\.1\.[\s\S]*\/ # /);
    await dc.continueRequest({ threadId: 1 });
    await within(done, 'cat to its end', BOOT_MS);
  };
  const locals = async (): Promise<Map<string, string>> => {
    const f = (await frames())[0];
    const scope = (await dc.scopesRequest({ frameId: f.id })).body.scopes.find(x => x.name === 'Locals')!;
    return new Map((await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables.map(v => [v.name, v.value]));
  };

  await within(Promise.all([
    dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256, agent: AGENT_CPIO }),
  ]), 'launch', 60_000);
  await within(g.outputMatches(/\/ # /, 0), 'the shell prompt', BOOT_MS);
  await g.run('dmesg -n 1; insmod /root/kprobe_agent.ko');

  // the oracle: an ordinary function breakpoint at do_sys_openat2, step over, step out, step over
  await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_sys_openat2' }] });
  const plain = await catStops('the function breakpoint');
  assert.equal(plain.body.reason, 'function breakpoint', plain.body.description);
  const entry = await at();
  assert.deepEqual(entry, { name: 'do_sys_openat2', line: entryLine, ip: openat2.value });
  const callers = (await frames()).slice(1).map(f => f.name);
  const over1 = await next();
  assert.equal(over1.name, 'do_sys_openat2');
  assert.notEqual(over1.line, entryLine);
  const back = await out();
  assert.notEqual(back.name, 'do_sys_openat2');
  const backFrames = (await frames()).map(f => f.name);
  const over2 = await next();
  await catEnds();

  // a kprobe registered by the guest that stops: step over from its hit
  const stopping = [{ line: entryLine, condition: 'strcmp(current->comm, "cat") == 0' }];
  let bp = (await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: stopping })).body.breakpoints[0];
  await g.run('sleep 0.1');
  verified(bp.id!);
  let s = await catStops('the kprobe\'s stop');
  assert.deepEqual(s.body.hitBreakpointIds, [bp.id]);
  assert.deepEqual(await at(), entry, 'the probed context');
  assert.deepEqual((await frames()).slice(1).map(f => f.name), callers);
  assert.deepEqual(await next(), over1, 'step over from the kprobe\'s hit arrives where the ordinary step over does');
  const vars = await locals();
  assert.equal(vars.get('dfd'), '-100');
  assert.match(vars.get('filename') ?? '', /"\/proc\/version"/);
  assert.deepEqual(await out(), back, 'then step out to the return address into the caller');
  await catEnds();

  // one instruction from the kprobe's hit: the probed instruction runs
  bp = (await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: stopping })).body.breakpoints[0];
  await g.run('sleep 0.1');
  s = await catStops('the kprobe\'s stop for an instruction step');
  assert.deepEqual(s.body.hitBreakpointIds, [bp.id]);
  const dis = (await dc.customRequest('disassemble', { memoryReference: `0x${openat2.value.toString(16)}`, instructionCount: 2 })).body.instructions as DebugProtocol.DisassembledInstruction[];
  const one = await step(() => dc.nextRequest({ threadId: 1, granularity: 'instruction' }), 'one instruction');
  assert.deepEqual([one.name, one.ip], ['do_sys_openat2', BigInt(dis[1].address)], `past ${dis[0].instruction}`);
  await catEnds();

  // step out straight from the kprobe's hit
  bp = (await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: stopping })).body.breakpoints[0];
  await g.run('sleep 0.1');
  s = await catStops('the kprobe\'s stop for a step out');
  assert.deepEqual(s.body.hitBreakpointIds, [bp.id]);
  assert.deepEqual(await out(), back, 'step out from the kprobe\'s hit arrives at the return address into the caller');
  await catEnds();

  // a kretprobe that stops: the caller's context at the return address; step over from there
  const ret = (await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_sys_openat2', mode: 'kretprobe', condition: 'strcmp(current->comm, "cat") == 0' } as DebugProtocol.FunctionBreakpoint] })).body.breakpoints[0];
  await g.run('sleep 0.1');
  verified(ret.id!);
  s = await catStops('the kretprobe\'s stop');
  assert.deepEqual(s.body.hitBreakpointIds, [ret.id]);
  assert.deepEqual(await at(), back, 'the return address');
  assert.deepEqual((await frames()).map(f => f.name), backFrames, 'the call stack from the kretprobe\'s pt_regs is the one an ordinary stop there shows');
  assert.deepEqual(await next(), over2, 'step over from the kretprobe\'s hit arrives where the ordinary step over from the return address does');
  await catEnds();

  // step in at a call: from an ordinary breakpoint on it, then from a kprobe the guest registered there
  const rows = (await dc.customRequest('disassemble', { memoryReference: `0x${openat2.value.toString(16)}`, instructionCount: 40 })).body.instructions as DebugProtocol.DisassembledInstruction[];
  const call = rows.find((r, k) => k > 0 && /^call\b/.test(r.instruction));
  assert.ok(call, rows.map(r => r.instruction).join('\n'));
  const callAt = `do_sys_openat2+0x${(BigInt(call.address) - openat2.value).toString(16)}`;
  const stepIn = (): Promise<At> => step(() => dc.stepInRequest({ threadId: 1 }), 'step in');
  await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: callAt }] });
  const plainCall = await catStops('the function breakpoint on the call');
  assert.equal(plainCall.body.reason, 'function breakpoint', plainCall.body.description);
  const atCall = await at();
  assert.equal(atCall.ip, BigInt(call.address));
  const inPlain = await stepIn();
  assert.notEqual(inPlain.name, 'do_sys_openat2', `step in enters the callee of ${call.instruction}`);
  await catEnds();
  const probedCall = (await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: callAt, condition: 'strcmp(current->comm, "cat") == 0' }] })).body.breakpoints[0];
  await g.run('sleep 0.1');
  verified(probedCall.id!);
  s = await catStops('the kprobe\'s stop on the call');
  assert.deepEqual(s.body.hitBreakpointIds, [probedCall.id]);
  assert.deepEqual(await at(), atCall, 'the probed context at the call');
  assert.deepEqual(await stepIn(), inPlain, 'step in from the kprobe\'s hit on a call enters the callee as the ordinary step in does');
  await catEnds();
});
