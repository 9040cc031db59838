/**
 * Debian's 6.1 kernel booted WITHOUT `nokaslr` (the decompressor moves
 * the kernel's virtual base by a random multiple of 2 MiB): the debugger
 * finds the slide when the kernel loads its IDT and from then on sees the
 * vmlinux at the running kernel's addresses (emulator/debug/linuxSlide.ts).
 * One boot (acpi=off, one CPU, the agent module in the initrd):
 *   - a function breakpoint set at launch, before the slide is known
 *     (kernel_init), is moved by it and stops there;
 *   - at the first open of `cat /proc/version`, a function breakpoint on
 *     do_sys_openat2 stops with its arguments read through the relocated
 *     DWARF (dfd = AT_FDCWD, filename the path), its source line, a
 *     symbolized backtrace down to the system call's entry (ORC tables at
 *     their run-time place), the Disassembly view's labels;
 *   - a kernel global reads right (linux_banner's bytes at its moved
 *     address; jiffies_64's data breakpoint at its moved address), a
 *     per-CPU variable (not moved: a zero-based offset) reads this CPU's copy;
 *   - the Kprobes view equals the guest's debugfs kprobes/list after
 *     kprobe_example.ko and a kprobe_events definition (the guest readers
 *     walk kprobe_table at its moved address);
 *   - a gutter logpoint through the guest's agent prints the path.
 * Addresses come from the vmlinux's symbols plus the slide the session
 * reports (read from the IDT register when the kernel loaded it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { AGENT_CPIO, BOOT_MS, GuestConsole, OPEN_C, VMLINUX, openat2Lines, parseList, rowOf } from './linuxGuest';
import { unfetched } from '../util/fetched';
import { ProbeRequest, type ProbeStateBody } from '../../adapter/dapCustom';
import { loadElf } from '../../emulator/elf';

const fnName = (f: DebugProtocol.StackFrame): string => f.name.replace(/\+0x[0-9a-f]+$/, '');

test('Debian\'s kernel booted without nokaslr: breakpoints, frames, variables, globals, the Kprobes view and the agent work at the slid addresses', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  if (!existsSync(AGENT_CPIO)) return unfetched(t, 'no test/linux/agent/cache/agent.cpio.gz (test/linux/agent/build-agent.sh)');
  const vm = loadElf(VMLINUX);
  const sym = (n: string): bigint => { const s = vm.symbols.lookup(n); assert.ok(s, n); return s.value; };
  const { entryLine } = openat2Lines();

  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  const g = new GuestConsole(dc, h);
  const notice = new Promise<{ slide: bigint; text: string }>(resolve => {
    dc.on('output', (e: DebugProtocol.OutputEvent) => {
      const m = /relocated by KASLR, (0x[0-9a-f]+) above/.exec(e.body.output);
      if (m) resolve({ slide: BigInt(m[1]), text: e.body.output });
    });
  });
  const first = dc.waitForEvent('stopped');
  await within(Promise.all([
    dc.waitForEvent('initialized')
      .then(() => dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'kernel_init' }] }))
      .then(r => assert.equal(BigInt(r.body.breakpoints[0].instructionReference!), sym('kernel_init'), 'before the boot: the vmlinux\'s link address'))
      .then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 panic=-1 acpi=off', cpus: 1, memory: 256, agent: AGENT_CPIO }),
  ]), 'launch', 60_000);

  // the breakpoint set before the slide was known stops at the moved kernel_init
  const s1 = await within(first, 'kernel_init', BOOT_MS) as DebugProtocol.StoppedEvent;
  const { slide, text } = await within(notice, 'the KASLR notice', 1000);
  assert.notEqual(slide, 0n, 'KASLR moved the kernel');
  assert.equal(slide % 0x200000n, 0n);
  assert.doesNotMatch(text, /may have been passed/, 'kernel_init runs after the slide is known');
  assert.equal(s1.body.reason, 'function breakpoint', s1.body.description);
  const f1 = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.equal(f1[0].name, 'kernel_init');
  assert.equal(BigInt(f1[0].instructionPointerReference!), sym('kernel_init') + slide);
  assert.ok(f1.some(f => fnName(f) === 'ret_from_fork'), `a symbolized backtrace: ${f1.map(f => f.name).join(' <- ')}`);

  // to the shell; the guest's own probes
  await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
  await dc.continueRequest({ threadId: 1 });
  await within(g.outputMatches(/\/ # /, 0), 'the shell prompt', BOOT_MS);
  await g.run('dmesg -n 1');
  await g.run('insmod /root/kprobe_example.ko; insmod /root/kprobe_agent.ko');
  await g.run('echo "p:myopen do_sys_openat2 dfd=%di" > /sys/kernel/tracing/kprobe_events; echo 1 > /sys/kernel/tracing/events/kprobes/myopen/enable');

  // a gutter logpoint registered by the guest's kprobes through the agent
  const registered = new Promise<void>(resolve => dc.on('breakpoint', (e: DebugProtocol.BreakpointEvent) => { if (e.body.breakpoint.verified) resolve(); }));
  const lp = (await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [{ line: entryLine, logMessage: 'open {filename} by {$comm}' }] })).body.breakpoints;
  assert.equal(lp.length, 1);
  if (!lp[0].verified) await within(registered, 'the agent\'s registration of the logpoint', 120_000);
  const conFrom = g.con.length;
  await g.run('sleep 0.1; cat /proc/version > /dev/null');
  assert.match(g.con.slice(conFrom), /^open 0x[0-9a-f]+ "\/proc\/version" by cat$/m, g.con.slice(conFrom));

  // the Kprobes view against the guest's debugfs list at the same moment
  const listed = await g.run('cat /sys/kernel/debug/kprobes/list');
  const paused = dc.waitForEvent('stopped');
  await dc.pauseRequest({ threadId: 1 });
  await within(paused, 'the pause', 60_000);
  const rows = (await dc.customRequest(ProbeRequest.list)).body as ProbeStateBody;
  const guestRows = parseList(listed);
  assert.ok(guestRows.some(r => r.where === 'kernel_clone+0x0') && guestRows.some(r => r.where === 'do_sys_openat2+0x0'), listed);
  assert.deepEqual(rows.kprobes.map(rowOf), guestRows, `the view's rows and the guest's list:\n${listed}`);
  assert.equal(guestRows.find(r => r.where === 'kernel_clone+0x0')!.addr, sym('kernel_clone') + slide, 'the guest lists the moved address');
  await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [] });

  // a function breakpoint on do_sys_openat2: arguments, line, backtrace, disassembly
  await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_sys_openat2' }] });
  await dc.continueRequest({ threadId: 1 });
  const stop = dc.waitForEvent('stopped');
  await h.evaluate('>cat /proc/version', undefined, 'repl');
  const s2 = await within(stop, 'do_sys_openat2', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s2.body.reason, 'function breakpoint', s2.body.description);
  const open = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  const names = open.map(fnName);
  assert.equal(names[0], 'do_sys_openat2');
  assert.equal(BigInt(open[0].instructionPointerReference!), sym('do_sys_openat2') + slide);
  assert.equal(open[0].line, entryLine);
  assert.ok(open[0].source?.path?.endsWith('fs/open.c'), open[0].source?.path);
  for (const n of ['do_sys_open', '__x64_sys_openat', 'do_syscall_64', 'entry_SYSCALL_64']) assert.ok(names.includes(n), `${n} in ${names.join(' <- ')}`);
  const vars = async (ref: number): Promise<Map<string, DebugProtocol.Variable>> =>
    new Map((await dc.variablesRequest({ variablesReference: ref })).body.variables.map(v => [v.name, v]));
  const scopes = (await dc.scopesRequest({ frameId: open[0].id })).body.scopes;
  const locals = await vars(scopes.find(x => x.name === 'Locals')!.variablesReference);
  assert.equal(locals.get('dfd')?.value, '-100');
  assert.match(locals.get('filename')?.value ?? '', /"\/proc\/version"/);
  const dis = (await dc.customRequest('disassemble', { memoryReference: open[0].instructionPointerReference, instructionCount: 4 })).body.instructions as DebugProtocol.DisassembledInstruction[];
  assert.equal(BigInt(dis[0].address), sym('do_sys_openat2') + slide);
  assert.match(dis[0].symbol ?? '', /do_sys_openat2/, JSON.stringify(dis[0]));

  // globals at their moved addresses, a per-CPU variable at this CPU's copy
  const readBytes = async (a: bigint, n: number): Promise<Buffer> =>
    Buffer.from((await dc.customRequest('readMemory', { memoryReference: `0x${a.toString(16)}`, count: n })).body.data as string, 'base64');
  // a global array evaluates to its contents (C's value), its address through &
  const banner = await h.evaluate('&linux_banner', open[0].id, 'watch');
  const bannerAt = BigInt(banner.result.split(' ')[0]);
  assert.equal(bannerAt, sym('linux_banner') + slide);
  assert.match((await readBytes(bannerAt, 14)).toString('latin1'), /^Linux version /);
  assert.match((await h.evaluate('linux_banner', open[0].id, 'watch')).result, /Linux version /);
  const info = (await dc.customRequest('dataBreakpointInfo', { name: 'jiffies_64', frameId: open[0].id })).body as DebugProtocol.DataBreakpointInfoResponse['body'];
  assert.equal(info.dataId, `0x${(sym('jiffies_64') + slide).toString(16)}/8`, info.description);
  const perCpu = await vars(scopes.find(x => x.name === 'Per-CPU')!.variablesReference);
  assert.equal(perCpu.get('cpu_number')?.value, '0');
  const task = await vars(perCpu.get('current_task')!.variablesReference);
  assert.match(task.get('comm')?.value ?? '', /^"cat/);
});
