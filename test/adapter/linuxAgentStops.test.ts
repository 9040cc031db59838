/**
 * Probe-aware debugging over Debian's kernel through the adapter, one boot
 * (acpi=off, one CPU, the -dbg vmlinux, kprobe-debug's agent loaded):
 *  - handler snippets `{ ...; }` as gutter log messages run in the handler
 *    language against the guest's pt_regs: the entry snippet reads the
 *    probed function's parameters by their DWARF names and `current`; the
 *    kretprobe snippet writes regs->ax, and the guest's own `cat` sees the
 *    changed return value (ENOENT);
 *  - a condition and a Kretprobe-mode breakpoint without a message stop the
 *    machine at the probe: the top frame is do_sys_openat2 at its first line
 *    with its arguments from pt_regs, or (kretprobe) the caller at the return
 *    address with the return value in rax;
 *  - the agent's hits are in the hit timeline (kprobe hits, kretprobe entries
 *    and returns, with the lines they printed) and the kretprobe's entry to
 *    return times in its latency histogram (going to a hit:
 *    linuxAgentTimeTravel.test.ts);
 *  - the Kprobes view's actions are carried out by the guest (optimization
 *    off and on, the global switch, disable/enable and unregister of
 *    kprobe_example's probe, unregister of kretprobe_example's kretprobe),
 *    and after each, and after insmod of Linux's kprobe_example.ko and
 *    kretprobe_example.ko, kprobe_events definitions and the rmmod of
 *    kprobe_example (which holds its probe), the view's rows equal the guest's own
 *    `cat /sys/kernel/debug/kprobes/list` at the same moment.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { AGENT_CPIO, BOOT_MS, GuestConsole, OPEN_C, VMLINUX, openat2Lines, parseList, rowOf } from './linuxGuest';
import { unfetched } from '../util/fetched';
import { HitRequest, ProbeEvent, ProbeRequest, type ProbeHistogramsBody, type ProbeStateBody, type ProbeTimelineBody } from '../../adapter/dapCustom';

test('Debian\'s kernel: handler snippets against the guest\'s pt_regs, stops at the guest\'s kprobe hits with the probed frame, and the Kprobes view\'s actions carried out by the guest, its rows equal to debugfs', async (t) => {
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
  const outputMatches = (re: RegExp, from?: number): Promise<RegExpExecArray> => g.outputMatches(re, from);
  const changed: DebugProtocol.BreakpointEvent[] = [];
  dc.on('breakpoint', (e: DebugProtocol.BreakpointEvent) => changed.push(e));
  const states: ProbeStateBody[] = [];
  dc.on(ProbeEvent.state, (e: DebugProtocol.Event) => states.push(e.body as ProbeStateBody));
  const run = (cmd: string): Promise<string> => g.run(cmd);
  /** the rows at a pause right after the guest listed its kprobes: equal; then on it runs */
  const sameAsDebugfs = async (what: string): Promise<ProbeStateBody> => {
    const listed = await run('cat /sys/kernel/debug/kprobes/list');
    const paused = dc.waitForEvent('stopped');
    await dc.pauseRequest({ threadId: 1 });
    await within(paused, `the pause ${what}`, 60_000);
    const now = (await dc.customRequest(ProbeRequest.list)).body as ProbeStateBody;
    assert.deepEqual(now.kprobes.map(rowOf), parseList(listed), `${what}: the view's rows and the guest's list:\n${listed}`);
    await dc.continueRequest({ threadId: 1 });
    return now;
  };
  const verified = (ids: number[]): void => {
    for (const id of ids) {
      const c = changed.filter(e => e.body.breakpoint.id === id).at(-1);
      assert.equal(c?.body.breakpoint.verified, true, `breakpoint ${id}: ${c?.body.breakpoint.message ?? 'no breakpoint event'}`);
    }
  };

  await within(Promise.all([
    dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256, agent: AGENT_CPIO }),
  ]), 'launch', 60_000);
  await within(outputMatches(/\/ # /, 0), 'the shell prompt', BOOT_MS);
  await run('dmesg -n 1; insmod /root/kprobe_agent.ko');

  // 1. handler snippets: the entry one reads parameters by name and current; the kretprobe one writes regs->ax
  const set = (await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [
    { line: entryLine, logMessage: '{ if (strcmp(current->comm, "cat") == 0) printk("open %s dfd %d by %s\\n", filename, dfd, current->comm); }' },
    { line: laterLine, mode: 'kretprobe', logMessage: '{ if (strcmp(current->comm, "cat") == 0) { printk("fd %ld becomes -ENOENT\\n", (long)regs->ax); regs->ax = -2; } }' },
  ] })).body.breakpoints;
  const snippets = [set[0]], retSnippet = [set[1]];
  await run('sleep 0.1');
  verified([snippets[0].id!, retSnippet[0].id!]);
  let from = g.con.length;
  const catOut = await run('cat /proc/version; echo rc=$?');
  assert.match(catOut, /cat: can't open '\/proc\/version': No such file or directory/, catOut);
  assert.match(catOut, /^rc=1\r?$/m, catOut);
  assert.match(g.con.slice(from), /^open \/proc\/version dfd -100 by cat$/m, g.con.slice(from));
  assert.match(g.con.slice(from), /^fd \d+ becomes -ENOENT$/m, g.con.slice(from));
  // 4. the agent's hits in the hit timeline (with their output) and the kretprobe's latency histogram
  const tl = (await dc.customRequest(HitRequest.timeline)).body as ProbeTimelineBody;
  const catEntry = tl.hits.find(x => x.probeId === snippets[0].id && x.comm === 'cat');
  assert.ok(catEntry, JSON.stringify(tl.hits.slice(-6)));
  assert.equal(catEntry.kind, 'kprobe');
  assert.equal(catEntry.probe, 'do_sys_openat2+0x0');
  assert.equal(BigInt(catEntry.addr), openat2.value);
  assert.deepEqual(catEntry.output, ['open /proc/version dfd -100 by cat']);
  const catRet = tl.hits.find(x => x.probeId === retSnippet[0].id && x.comm === 'cat' && x.kind === 'kretprobe-return');
  assert.ok(catRet && catRet.latencyNs !== undefined && catRet.latencyNs > 0, JSON.stringify(catRet));
  assert.match(catRet.output[0] ?? '', /^fd \d+ becomes -ENOENT$/);
  assert.ok(tl.hits.some(x => x.probeId === retSnippet[0].id && x.kind === 'kretprobe-entry' && x.seq < catRet.seq));
  assert.deepEqual(tl.hits.map(x => x.seq), tl.hits.map((_, i) => tl.hits[0].seq + i), 'numbered in hit order');
  const hist = ((await dc.customRequest(HitRequest.histograms)).body as ProbeHistogramsBody).histograms.find(x => x.probeId === retSnippet[0].id);
  assert.ok(hist && hist.buckets.reduce((k, b) => k + b.count, 0) >= 1, JSON.stringify(hist));
  // a snippet that does not compile is refused with the handler language's error
  const bad = (await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [{ line: laterLine, mode: 'kretprobe', logMessage: '{ nosuch = 1; }' }] })).body.breakpoints;
  assert.equal(bad[0].verified, false);
  assert.match(bad[0].message ?? '', /^log message: 1:3: .*nosuch/);
  await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [] });
  from = g.con.length;
  assert.match(await run('sleep 0.1; cat /proc/version'), /^Linux version 6\.1\./m, 'the snippets are gone: cat reads again');
  assert.doesNotMatch(g.con.slice(from), /^open \/proc\/version/m);

  // 2. a condition stops at the probe with do_sys_openat2's frame and arguments from the guest's pt_regs
  const cond = (await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [{ line: entryLine, condition: 'strcmp(current->comm, "cat") == 0' }] })).body.breakpoints;
  await run('sleep 0.1');
  verified([cond[0].id!]);
  let stop = dc.waitForEvent('stopped');
  await h.evaluate('>cat /proc/version', undefined, 'repl');
  let s = await within(stop, 'the conditional kprobe\'s stop', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s.body.reason, 'breakpoint', s.body.description);
  assert.deepEqual(s.body.hitBreakpointIds, [cond[0].id]);
  assert.match(s.body.description ?? '', /^breakpoint at do_sys_openat2 \(kprobe registered by the guest's kprobes\)$/);
  let frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.equal(frames[0].name, 'do_sys_openat2');
  assert.equal(frames[0].line, entryLine);
  assert.equal(BigInt(frames[0].instructionPointerReference!), openat2.value);
  assert.ok(frames.length >= 3 && frames.some(f => /entry_SYSCALL_64|do_syscall_64/.test(f.name)), JSON.stringify(frames.map(f => f.name)));
  const scopes = (await dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
  const locals = (await dc.variablesRequest({ variablesReference: scopes.find(x => x.name === 'Locals')!.variablesReference })).body.variables;
  assert.equal(locals.find(v => v.name === 'dfd')?.value, '-100');
  assert.match(locals.find(v => v.name === 'filename')?.value ?? '', /"\/proc\/version"/);
  const regsRows = (await dc.variablesRequest({ variablesReference: scopes.find(x => x.name === 'Registers')!.variablesReference })).body.variables;
  assert.equal(BigInt(regsRows.find(r => r.name === 'rip')!.value), openat2.value);
  assert.equal(BigInt.asIntN(32, BigInt(regsRows.find(r => r.name === 'rdi')!.value)), -100n, 'edi (the int dfd) from the guest\'s pt_regs');
  await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [] });
  let goesOn = outputMatches(/Linux version 6\.1\./);
  await dc.continueRequest({ threadId: 1 });
  await within(goesOn, 'cat goes on after the stop', BOOT_MS);

  // a Kretprobe-mode breakpoint without a message stops at the return: the caller's frame, the value in rax
  const ret = (await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_sys_openat2', mode: 'kretprobe', condition: 'strcmp(current->comm, "cat") == 0' } as DebugProtocol.FunctionBreakpoint] })).body.breakpoints;
  await run('sleep 0.1');
  verified([ret[0].id!]);
  stop = dc.waitForEvent('stopped');
  await h.evaluate('>cat /proc/version', undefined, 'repl');
  s = await within(stop, 'the kretprobe\'s stop', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.deepEqual(s.body.hitBreakpointIds, [ret[0].id]);
  const m = /^return from do_sys_openat2 = (0x[0-9a-f]+) to (\S+) \(kretprobe registered by the guest's kprobes\)$/.exec(s.body.description ?? '');
  assert.ok(m, s.body.description);
  frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  const retAddr = BigInt(frames[0].instructionPointerReference!);
  assert.equal(frames[0].name, m[2]);
  // the instruction before the return address is the call of do_sys_openat2
  const call = Buffer.from((await dc.customRequest('readMemory', { memoryReference: `0x${(retAddr - 5n).toString(16)}`, count: 5 })).body.data as string, 'base64');
  assert.equal(call[0], 0xe8);
  assert.equal(retAddr + BigInt(call.readInt32LE(1)), openat2.value);
  const regs2 = (await dc.variablesRequest({ variablesReference: (await dc.scopesRequest({ frameId: frames[0].id })).body.scopes.find(x => x.name === 'Registers')!.variablesReference })).body.variables;
  assert.equal(BigInt(regs2.find(r => r.name === 'rax')!.value), BigInt(m[1]));
  assert.ok(BigInt(m[1]) >= 3n && BigInt(m[1]) < 64n, `an fd: ${m[1]}`);
  await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
  goesOn = outputMatches(/Linux version 6\.1\./);
  await dc.continueRequest({ threadId: 1 });
  await within(goesOn, 'cat goes on after the kretprobe stop', BOOT_MS);

  // 3. the Kprobes view over the guest, and its actions carried out by the guest
  await run('insmod /root/kprobe_example.ko; insmod /root/kretprobe_example.ko');
  await sameAsDebugfs('after insmod kprobe_example.ko and kretprobe_example.ko');
  await run('cd /sys/kernel/tracing; echo "p:myopen do_sys_openat2 dfd=%di" > kprobe_events; echo "p:myopt do_sys_openat2+0x11" >> kprobe_events; echo 1 > events/kprobes/myopen/enable; echo 1 > events/kprobes/myopt/enable; cd /');
  const defined = await sameAsDebugfs('after the kprobe_events definitions');
  assert.ok(defined.kprobes.some(p => p.event === 'kprobes/myopt' && p.optimized), JSON.stringify(defined.kprobes));

  const off = (await dc.customRequest(ProbeRequest.setOptimization, { enabled: false })).body as ProbeStateBody;
  assert.equal(off.optimization, false);
  assert.equal((await run('cat /proc/sys/debug/kprobes-optimization')).trim(), '0');
  const unopt = await sameAsDebugfs('with optimization turned off by the view');
  assert.ok(!unopt.kprobes.some(p => p.optimized));
  const on = (await dc.customRequest(ProbeRequest.setOptimization, { enabled: true })).body as ProbeStateBody;
  assert.equal(on.optimization, true);
  await run('sleep 0.1');
  const reopt = await sameAsDebugfs('with optimization back on');
  assert.ok(reopt.kprobes.some(p => p.event === 'kprobes/myopt' && p.optimized));

  const disarmed = (await dc.customRequest(ProbeRequest.setGlobalEnabled, { enabled: false })).body as ProbeStateBody;
  assert.equal(disarmed.enabled, false);
  assert.equal((await run('cat /sys/kernel/debug/kprobes/enabled')).trim(), '0');
  await sameAsDebugfs('with kprobes disarmed by the view');
  assert.equal(((await dc.customRequest(ProbeRequest.setGlobalEnabled, { enabled: true })).body as ProbeStateBody).enabled, true);
  assert.equal((await run('cat /sys/kernel/debug/kprobes/enabled')).trim(), '1');

  const clone = reopt.kprobes.find(p => p.symbol === 'kernel_clone' && p.registeredBy === 'kprobe_example')!;
  assert.ok(clone, JSON.stringify(reopt.kprobes));
  await dc.customRequest(ProbeRequest.setEnabled, { id: clone.id, enabled: false });
  const dis = await sameAsDebugfs('with kprobe_example\'s probe disabled by the view');
  assert.equal(dis.kprobes.find(p => p.registeredBy === 'kprobe_example')?.enabled, false);
  const ev = dis.kprobes.find(p => p.event === 'kprobes/myopen')!;
  await assert.rejects(dc.customRequest(ProbeRequest.unregister, { id: ev.id }), /kprobes\/myopen is a kprobe_events probe: the tracing files own it/);
  // kretprobe_example's kretprobe unregistered by the view (unregister_kretprobe on its struct kretprobe)
  const kret = dis.kprobes.find(p => p.kind === 'kretprobe' && p.registeredBy === 'kretprobe_example')!;
  assert.ok(kret, JSON.stringify(dis.kprobes));
  await dc.customRequest(ProbeRequest.unregister, { id: kret.id });
  const unreg = await sameAsDebugfs('with kretprobe_example\'s kretprobe unregistered by the view');
  assert.ok(!unreg.kprobes.some(p => p.registeredBy === 'kretprobe_example'));
  await dc.customRequest(ProbeRequest.setEnabled, { id: unreg.kprobes.find(p => p.registeredBy === 'kprobe_example')!.id, enabled: true });
  const en = await sameAsDebugfs('with kprobe_example\'s probe enabled again');
  assert.equal(en.kprobes.find(p => p.registeredBy === 'kprobe_example')?.enabled, true);

  // the rmmod of a module holding a probe
  await run('rmmod kprobe_example');
  const after = await sameAsDebugfs('after rmmod of kprobe_example, which held the probe on kernel_clone');
  assert.ok(!after.kprobes.some(p => p.registeredBy === 'kprobe_example'));
  assert.ok(!after.modules?.some(x => x.name === 'kprobe_example'));
});
