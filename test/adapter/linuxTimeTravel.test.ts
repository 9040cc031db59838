/**
 * Reverse execution on Debian's kernel (the full-system PC recorded by
 * emulator/timetravel/pcTimeTravel.ts): one boot (acpi=off, one CPU) to a
 * function breakpoint on do_sys_openat2, a continue to its second hit,
 * then reverse continue back to the first hit (the same registers, the
 * same arguments in Locals), a step back of one instruction (the
 * instruction before the function's entry: the caller's call), and a
 * continue that comes again to the second hit. The console shown is not
 * printed twice. The two stops are the hit timeline's records (kind
 * 'breakpoint', exact instruction counts, recorded once though met again),
 * and going to the first from the timeline is that stop again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { unfetched } from '../util/fetched';
import { loadElf } from '../../emulator/elf';
import { VMLINUX, BOOT_MS } from './linuxGuest';
import { HitRequest, type HitInfo, type ProbeTimelineBody } from '../../adapter/dapCustom';

test('Debian\'s kernel: reverse continue to the previous hit of a function breakpoint with the same registers and arguments, step back one instruction, forward again', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  const openat2 = loadElf(VMLINUX).symbols.lookup('do_sys_openat2');
  assert.ok(openat2, 'do_sys_openat2 in the vmlinux');

  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  let out = '', con = '';
  dc.on('output', (e: DebugProtocol.OutputEvent) => { if (e.body.category === 'stdout') out += e.body.output; else con += e.body.output; });
  const registers = async (): Promise<Map<string, string>> => {
    const f = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    const scope = (await dc.scopesRequest({ frameId: f.id })).body.scopes.find(x => x.name === 'Registers')!;
    return new Map((await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables.map(v => [v.name, v.value]));
  };
  const locals = async (): Promise<Map<string, string>> => {
    const f = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    const scope = (await dc.scopesRequest({ frameId: f.id })).body.scopes.find(x => x.name === 'Locals')!;
    return new Map((await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables.map(v => [v.name, v.value]));
  };
  const general = (m: Map<string, string>): string[] => ['rax', 'rbx', 'rcx', 'rdx', 'rsi', 'rdi', 'rbp', 'rsp', 'r8', 'r12', 'r15', 'rip', 'rflags', 'cr3', 'gs_base'].map(n => `${n}=${m.get(n)}`);

  const first = dc.waitForEvent('stopped');
  await within(Promise.all([
    dc.waitForEvent('initialized').then(() => dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_sys_openat2' }] })).then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256 }),
  ]), 'launch', 60_000);
  const s1 = await within(first, 'the first open', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s1.body.reason, 'function breakpoint', s1.body.description);
  const regs1 = await registers(), locals1 = await locals();
  assert.equal(BigInt(regs1.get('rip')!), openat2.value);

  // the second hit: another open
  const second = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  const s2 = await within(second, 'the second open', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s2.body.reason, 'function breakpoint');
  const regs2 = await registers(), locals2 = await locals();
  assert.notDeepEqual(general(regs2), general(regs1), 'another call');
  const outAt2 = out;

  // reverse continue: back at the first hit, as it was
  const back = dc.waitForEvent('stopped');
  await dc.customRequest('reverseContinue', { threadId: 1 });
  const s3 = await within(back, 'reverse continue', 300_000) as DebugProtocol.StoppedEvent;
  assert.equal(s3.body.reason, 'function breakpoint', s3.body.description);
  assert.deepEqual(general(await registers()), general(regs1));
  assert.deepEqual([...(await locals()).entries()], [...locals1.entries()], 'the same arguments (dfd, filename, how) in Locals');

  // one instruction back: the caller's call into do_sys_openat2
  const stepped = dc.waitForEvent('stopped');
  await dc.stepBackRequest({ threadId: 1, granularity: 'instruction' });
  const s4 = await within(stepped, 'step back', 300_000) as DebugProtocol.StoppedEvent;
  assert.equal(s4.body.reason, 'step');
  const regs4 = await registers();
  assert.notEqual(BigInt(regs4.get('rip')!), openat2.value);
  assert.equal(BigInt(regs4.get('rsp')!), BigInt(regs1.get('rsp')!) + 8n, 'before the call pushed its return address');

  // forward again: the first hit, then the second, with the same registers; nothing printed twice
  const again1 = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  await within(again1, 'forward to the first hit', 300_000);
  assert.deepEqual(general(await registers()), general(regs1));
  const again2 = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  await within(again2, 'forward to the second hit', 300_000);
  assert.deepEqual(general(await registers()), general(regs2));
  assert.deepEqual([...(await locals()).entries()], [...locals2.entries()]);
  assert.equal(out, outAt2, 'the re-executed run printed nothing the console already showed');

  // the hit timeline: the two stops, once each (met again after going back, not recorded again)
  const hits = ((await dc.customRequest(HitRequest.timeline)).body as ProbeTimelineBody).hits as HitInfo[];
  assert.deepEqual(hits.map(x => [x.seq, x.kind, x.cpu, BigInt(x.addr)]), [[1, 'breakpoint', 0, openat2.value], [2, 'breakpoint', 0, openat2.value]]);
  assert.ok(hits[0].instructions < hits[1].instructions, 'in the order they happened');
  assert.match(hits[0].probe, /^do_sys_openat2/);
  // go to the first from the timeline: the first stop again, as it was
  const gone = dc.waitForEvent('stopped');
  await dc.customRequest(HitRequest.goToHit, { seq: hits[0].seq });
  const s5 = await within(gone, 'go to hit 1', 300_000) as DebugProtocol.StoppedEvent;
  assert.equal(s5.body.reason, 'goto');
  assert.match(s5.body.description ?? '', /^Hit 1: Breakpoint at do_sys_openat2/);
  assert.deepEqual(general(await registers()), general(regs1));
  assert.deepEqual([...(await locals()).entries()], [...locals1.entries()]);
  // and forward from there to the second, still two records
  const again3 = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  await within(again3, 'forward to the second hit from the first', 300_000);
  assert.deepEqual(general(await registers()), general(regs2));
  assert.equal((((await dc.customRequest(HitRequest.timeline)).body as ProbeTimelineBody).hits as HitInfo[]).length, 2);
  // each move says where the machine is and what it cost (the figures the bench reports)
  const lines = con.split('\n').filter(l => l.includes('kprobe: time travel: now at'));
  assert.equal(lines.length, 3, con);
  for (const l of lines) t.diagnostic(l);
});
