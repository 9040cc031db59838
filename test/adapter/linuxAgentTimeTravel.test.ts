/**
 * Time travel over the guest agent's gutter kprobes on Debian's kernel, one
 * boot (acpi=off, one CPU, the -dbg vmlinux, kprobe-debug's agent loaded):
 * a conditional breakpoint on do_sys_openat2's entry (a kprobe that stops
 * the machine for `cat`) and a Kretprobe-mode handler snippet that WRITES
 * the guest's pt_regs (regs->ax = -ENOENT: cat's open fails). `cat` opens
 * two files: two stops, a kretprobe return in between.
 *  - go to hit (the timeline's `_probeGoToHit`) to the kretprobe's return:
 *    the machine is one instruction past the hit's exact place (the hit
 *    record's instruction count + 1), the stop shows the caller at the
 *    return address with rax = -2: the snippet's write was re-executed;
 *  - Reverse Continue from there lands on the previous stopping hit (the
 *    first open) with the same registers and arguments as when it was live;
 *  - continue forward comes to the second stop with the same registers
 *    and arguments (the re-execution did not diverge), nothing printed
 *    twice on the console or by the snippet, and the same hit log;
 *  - continue to the end: cat's own errors once each.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { AGENT_CPIO, BOOT_MS, GuestConsole, OPEN_C, VMLINUX, openat2Lines } from './linuxGuest';
import { unfetched } from '../util/fetched';
import { HitRequest, type HitInfo, type ProbeTimelineBody } from '../../adapter/dapCustom';

test('Debian\'s kernel with the agent: go to a hit whose snippet wrote pt_regs, reverse continue to the previous stopping hit as it was live, forward again to the same state with nothing printed twice', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  if (!existsSync(AGENT_CPIO)) return unfetched(t, 'no test/linux/agent/cache/agent.cpio.gz (test/linux/agent/build-agent.sh)');
  const { openat2, entryLine, laterLine } = openat2Lines();

  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  const g = new GuestConsole(dc, h);
  const changed: DebugProtocol.BreakpointEvent[] = [];
  dc.on('breakpoint', (e: DebugProtocol.BreakpointEvent) => changed.push(e));
  const scope = async (name: string): Promise<Map<string, string>> => {
    const f = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    const sc = (await dc.scopesRequest({ frameId: f.id })).body.scopes.find(x => x.name === name)!;
    return new Map((await dc.variablesRequest({ variablesReference: sc.variablesReference })).body.variables.map(v => [v.name, v.value]));
  };
  const general = (m: Map<string, string>): string[] => ['rax', 'rbx', 'rcx', 'rdx', 'rsi', 'rdi', 'rbp', 'rsp', 'r8', 'r12', 'r15', 'rip', 'rflags'].map(n => `${n}=${m.get(n)}`);
  const stopAfter = async (what: string, request: () => Promise<unknown>): Promise<DebugProtocol.StoppedEvent> => {
    const stop = dc.waitForEvent('stopped');
    await request();
    return await within(stop, what, BOOT_MS) as DebugProtocol.StoppedEvent;
  };
  const timeline = async (): Promise<HitInfo[]> => ((await dc.customRequest(HitRequest.timeline)).body as ProbeTimelineBody).hits;
  const count = (text: string, re: RegExp): number => text.split('\n').filter(l => re.test(l)).length;

  await within(Promise.all([
    dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256, agent: AGENT_CPIO }),
  ]), 'launch', 60_000);
  await within(g.outputMatches(/\/ # /, 0), 'the shell prompt', BOOT_MS);
  await g.run('dmesg -n 1; insmod /root/kprobe_agent.ko');
  const bps = (await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [
    { line: entryLine, condition: 'strcmp(current->comm, "cat") == 0' },
    { line: laterLine, mode: 'kretprobe', logMessage: '{ if (strcmp(current->comm, "cat") == 0) { printk("fd %ld becomes -ENOENT\\n", (long)regs->ax); regs->ax = -2; } }' },
  ] })).body.breakpoints;
  const [stopper, writer] = bps.map(b => b.id!);
  await g.run('sleep 0.1');
  for (const id of [stopper, writer]) assert.equal(changed.filter(e => e.body.breakpoint.id === id).at(-1)?.body.breakpoint.verified, true, `breakpoint ${id} registered by the guest`);

  // live: the first open stops, the kretprobe's snippet makes it fail, the second open stops
  const s1 = await stopAfter('the first open', () => h.evaluate('>cat /proc/version /proc/cmdline; echo rc=$?', undefined, 'repl'));
  assert.deepEqual(s1.body.hitBreakpointIds, [stopper], s1.body.description);
  const regs1 = await scope('Registers'), locals1 = await scope('Locals');
  assert.match(locals1.get('filename') ?? '', /"\/proc\/version"/);
  assert.equal(BigInt(regs1.get('rip')!), openat2.value);
  const s2 = await stopAfter('the second open', () => dc.continueRequest({ threadId: 1 }));
  assert.deepEqual(s2.body.hitBreakpointIds, [stopper], s2.body.description);
  const regs2 = await scope('Registers'), locals2 = await scope('Locals');
  assert.match(locals2.get('filename') ?? '', /"\/proc\/cmdline"/);
  const outLive = g.out, conLive = g.con;
  assert.equal(count(conLive, /^fd \d+ becomes -ENOENT$/), 1, conLive);
  const live = await timeline();
  const cat = live.filter(x => x.comm === 'cat');
  const ret = cat.find(x => x.probeId === writer && x.kind === 'kretprobe-return');
  assert.ok(ret, JSON.stringify(cat));
  assert.deepEqual(ret.output, [ret.output[0]]);
  assert.deepEqual(cat.filter(x => x.probeId === stopper).length, 2, JSON.stringify(cat));
  assert.ok(cat.every((x, i) => i === 0 || x.instructions > cat[i - 1].instructions), 'instruction counts increase in hit order');

  // go to the kretprobe's return: its exact place, the snippet's write to pt_regs done again
  const toHit = await stopAfter('go to hit', () => dc.customRequest(HitRequest.goToHit, { seq: ret.seq }));
  assert.equal(toHit.body.reason, 'goto');
  assert.match(toHit.body.description ?? '', new RegExp(`^Hit ${ret.seq} of do_sys_openat2\\+0x0 \\(kretprobe return`));
  const moves = (): string[] => g.con.split('\n').filter(l => l.includes('kprobe: time travel: now at'));
  assert.match(moves().at(-1) ?? '', new RegExp(`now at ${ret.instructions + 1} instructions `), 'one instruction past the hit record\'s exact count');
  const frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.notEqual(frames[0].name, 'do_sys_openat2', 'the caller, at the return address');
  assert.equal(BigInt((await scope('Registers')).get('rax')!), 0xfffffffffffffffen, 'rax = -ENOENT: the snippet wrote pt_regs again');

  // reverse continue: the previous stopping hit, as it was live
  const back = await stopAfter('reverse continue', () => dc.customRequest('reverseContinue', { threadId: 1 }));
  assert.equal(back.body.reason, 'breakpoint', back.body.description);
  assert.deepEqual(back.body.hitBreakpointIds, [stopper]);
  assert.deepEqual(general(await scope('Registers')), general(regs1));
  assert.deepEqual([...(await scope('Locals')).entries()], [...locals1.entries()]);

  // forward: the second stop again, the same machine state, nothing printed twice, the same hit log
  const again = await stopAfter('forward to the second open', () => dc.continueRequest({ threadId: 1 }));
  assert.deepEqual(again.body.hitBreakpointIds, [stopper]);
  assert.deepEqual(general(await scope('Registers')), general(regs2));
  assert.deepEqual([...(await scope('Locals')).entries()], [...locals2.entries()]);
  assert.equal(g.out, outLive, 'the guest console printed nothing twice');
  assert.equal(count(g.con, /^fd \d+ becomes -ENOENT$/), 1, 'the re-executed snippet printed nothing');
  assert.deepEqual(await timeline(), live, 'the hit log is as it was live');

  // on to the end of cat: both opens failed once each (the second through the live snippet)
  const done = g.outputMatches(/rc=\d+/, outLive.length);
  await dc.continueRequest({ threadId: 1 });
  await within(done, 'cat ends', BOOT_MS);
  assert.equal(count(g.out, /can't open '\/proc\/version'/), 1, g.out.slice(-400));
  assert.equal(count(g.out, /can't open '\/proc\/cmdline'/), 1, g.out.slice(-400));
  assert.equal(count(g.con, /^fd \d+ becomes -ENOENT$/), 2, g.con.slice(-800));
  for (const l of moves()) t.diagnostic(l);
});
