/**
 * The Kprobes, Modules and Uprobes views on the full-system PC through the
 * adapter: Debian's 6.1 kernel booted once (acpi=off, one CPU) with its
 * -dbg vmlinux; the `_probeState` rows are read from guest memory, sent
 * while the machine runs and at each stop. After `insmod
 * /root/kprobe_example.ko` (Linux's sample: a kprobe on kernel_clone) and
 * a kprobe_events definition, the view's rows equal what the guest itself
 * prints for `cat /sys/kernel/debug/kprobes/list` at the same moment (both
 * parsed, field by field, and the view's own debugfs line formatter on the
 * rows equal to the guest's lines).
 * Then gutter kprobes through the guest's own engine (launch.json `agent`:
 * kprobe-debug's agent module appended to the initrd, loaded with `insmod`):
 * a logpoint on do_sys_openat2's first line of fs/open.c prints the path
 * each open is given, read through the guest's pt_regs and the vmlinux's
 * DWARF; a breakpoint in Kretprobe mode prints the return values; both are
 * rows of the Kprobes view as the guest lists them; removed, they leave
 * the guest's list. An ordinary function breakpoint still stops there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { AGENT_CPIO, BOOT_MS, GuestConsole, OPEN_C, VMLINUX, openat2Lines, parseList, rowOf } from './linuxGuest';
import { unfetched } from '../util/fetched';
import { ProbeEvent, ProbeRequest, type ProbeStateBody } from '../../adapter/dapCustom';
import { kprobeListLine } from '../../extension/probeRows';

test('Debian\'s kernel in the debugger: the Kprobes and Modules views are the guest\'s own lists, equal to its debugfs kprobes/list; logpoints and kretprobes registered by the guest\'s engine through the agent', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  if (!existsSync(AGENT_CPIO)) return unfetched(t, 'no test/linux/agent/cache/agent.cpio.gz (test/linux/agent/build-agent.sh)');
  const { entryLine, laterLine } = openat2Lines();

  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  const g = new GuestConsole(dc, h);
  const outputMatches = (re: RegExp, from?: number): Promise<RegExpExecArray> => g.outputMatches(re, from);
  const states: ProbeStateBody[] = [];
  const stateWaiters: { pred: (s: ProbeStateBody) => boolean; resolve: (s: ProbeStateBody) => void }[] = [];
  dc.on(ProbeEvent.state, (e: DebugProtocol.Event) => {
    const s = e.body as ProbeStateBody;
    states.push(s);
    for (const w of stateWaiters.splice(0)) if (w.pred(s)) w.resolve(s); else stateWaiters.push(w);
  });
  const stateWhere = (pred: (s: ProbeStateBody) => boolean): Promise<ProbeStateBody> => new Promise(resolve => stateWaiters.push({ pred, resolve }));
  const run = (cmd: string): Promise<string> => g.run(cmd);

  await within(Promise.all([
    dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256, agent: AGENT_CPIO }),
  ]), 'launch', 60_000);
  await within(outputMatches(/\/ # /, 0), 'the shell prompt', BOOT_MS);
  await run('dmesg -n 1');

  // Linux's kprobe sample: its kprobe on kernel_clone shows in the rows sent while the machine runs
  // (while its init runs the module is 'coming': the rows say so; wait for it to be live)
  const withSample = stateWhere(s => s.kprobes.some(p => p.symbol === 'kernel_clone' && p.registeredBy === 'kprobe_example') && s.modules?.some(m => m.name === 'kprobe_example' && m.state === 'live') === true);
  await run('insmod /root/kprobe_example.ko');
  const running = await within(withSample, 'a _probeState while running with kprobe_example\'s probe', 120_000)
    .catch((e: Error) => { throw new Error(`${e.message}; the last of ${states.length}: ${JSON.stringify(states.at(-1))}`); });
  assert.deepEqual(running.modules?.map(m => [m.name, m.state]), [['kprobe_example', 'live']]);
  assert.equal(running.modules?.[0].probesIn, 0, 'its probe is in kernel text, not in the module');
  assert.equal(running.enabled, true);
  assert.equal(running.optimization, true);

  await run('echo "p:myopen do_sys_openat2 dfd=%di" > /sys/kernel/tracing/kprobe_events; echo 1 > /sys/kernel/tracing/events/kprobes/myopen/enable');
  await run('cat /proc/version > /dev/null');
  const listed = await run('cat /sys/kernel/debug/kprobes/list');
  const paused = dc.waitForEvent('stopped');
  const stateAtStop = stateWhere(() => true);
  await dc.pauseRequest({ threadId: 1 });
  await within(paused, 'the pause', 60_000);
  const atStop = await within(stateAtStop, 'the _probeState of the stop');
  const now = (await dc.customRequest(ProbeRequest.list)).body as ProbeStateBody;
  assert.deepEqual(now, atStop, 'the rows sent at the stop are the rows read now');

  const guestRows = parseList(listed);
  assert.ok(guestRows.length >= 2, listed);
  assert.deepEqual(now.kprobes.map(rowOf), guestRows, `the view's rows and the guest's list:\n${listed}`);
  assert.deepEqual(now.kprobes.map(p => kprobeListLine(p)), listed.split('\n').map(l => l.replace(/\r$/, '').trimEnd()).filter(l => /^[0-9a-f]{16}  /.test(l)), 'the view\'s debugfs lines');
  const clone = now.kprobes.find(p => p.symbol === 'kernel_clone')!;
  assert.equal(clone.registeredBy, 'kprobe_example');
  const myopen = now.kprobes.find(p => p.event === 'kprobes/myopen');
  assert.ok(myopen, JSON.stringify(now.kprobes));
  assert.equal(myopen.symbol, 'do_sys_openat2');
  assert.ok(myopen.nhit > 0, `the event's hits (cat opened /proc/version): ${myopen.nhit}`);
  const debugfs = (await dc.customRequest(ProbeRequest.debugfs)).body as { list: string; enabled: string };
  assert.deepEqual(parseList(debugfs.list), guestRows);
  assert.equal(debugfs.enabled, '1\n');

  // gutter kprobes through the guest's engine: set while paused, registered when the agent starts
  const changed: DebugProtocol.BreakpointEvent[] = [];
  dc.on('breakpoint', (e: DebugProtocol.BreakpointEvent) => changed.push(e));
  const gutter = (await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [
    { line: entryLine, logMessage: 'open {filename} by {$comm}' },
    { line: laterLine, mode: 'kretprobe', logMessage: 'do_sys_openat2 returned {$retval} to {$comm}' },
  ] })).body.breakpoints;
  assert.deepEqual(gutter.map(b => b.verified), [false, false]);
  assert.match(gutter[0].message ?? '', /^kprobe do_sys_openat2\+0x0: waiting for the guest's agent/);
  assert.match(gutter[1].message ?? '', /^kretprobe do_sys_openat2\+0x0: waiting for the guest's agent/);
  await dc.continueRequest({ threadId: 1 });
  await run('insmod /root/kprobe_agent.ko; sleep 0.1');
  for (const b of gutter) {
    const c = changed.filter(e => e.body.breakpoint.id === b.id).at(-1);
    assert.equal(c?.body.breakpoint.verified, true, `breakpoint ${b.id}: ${c?.body.breakpoint.message ?? 'no breakpoint event'}`);
  }
  const conFrom = g.con.length;
  await run('cat /proc/version > /dev/null');
  const logged = g.con.slice(conFrom);
  assert.match(logged, /^open 0x[0-9a-f]+ "\/proc\/version" by cat$/m, logged);
  assert.match(logged, /^do_sys_openat2 returned \d+ to cat$/m, logged);
  const listed2 = await run('cat /sys/kernel/debug/kprobes/list');
  const paused2 = dc.waitForEvent('stopped');
  await dc.pauseRequest({ threadId: 1 });
  await within(paused2, 'the second pause', 60_000);
  const now2 = (await dc.customRequest(ProbeRequest.list)).body as ProbeStateBody;
  assert.deepEqual(now2.kprobes.map(rowOf), parseList(listed2), `with the gutter probes:\n${listed2}`);
  const mine = now2.kprobes.filter(p => p.registeredBy === 'the debugger (kprobe_agent)');
  assert.deepEqual(mine.map(p => [p.id, p.kind, p.symbol]).sort(), [[gutter[0].id, 'kprobe', 'do_sys_openat2'], [gutter[1].id, 'kretprobe', 'do_sys_openat2']].sort());
  assert.ok(mine.every(p => p.nhit > 0), JSON.stringify(mine));
  assert.ok((mine.find(p => p.kind === 'kretprobe')?.maxactive ?? 0) > 0);

  // removed: unregistered by the guest; an ordinary function breakpoint (the debugger's own) still stops
  await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [] });
  await dc.continueRequest({ threadId: 1 });
  const listed3 = await run('sleep 0.1; cat /sys/kernel/debug/kprobes/list');
  assert.equal(parseList(listed3).length, guestRows.length, `the gutter probes left the guest's list:\n${listed3}`);
  await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_sys_openat2' }] });
  const stop = dc.waitForEvent('stopped');
  await h.evaluate('>cat /proc/version', undefined, 'repl');
  const s = await within(stop, 'the function breakpoint', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s.body.reason, 'function breakpoint', s.body.description);
});
