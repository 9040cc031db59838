/**
 * Module code at source level on Debian's kernel through the adapter, one
 * boot (acpi=off, one CPU, the -dbg vmlinux): launch.json `modules` names
 * Linux's samples/kprobes/kprobe_example.ko as Kbuild built it
 * (test/linux/kbuild/build-samples.sh: the same file the initramfs holds as
 * /root/kprobe_example.ko). A source breakpoint in kprobe_example.c on
 * handler_pre's x86 pr_info line, set before the module is loaded, has no
 * code; after the guest's insmod it is placed at the module's code where
 * the guest loaded it (a breakpoint event; the module's DWARF relocated to
 * its sections' addresses from the guest's module list) and stops when
 * the module's kprobe on kernel_clone fires; the top frame is handler_pre
 * at that line of kprobe_example.c, the next is Linux's kprobe machinery
 * (the walk goes through the module's ORC), and its parameters read
 * through the module's DWARF equal what handler_pre itself then prints
 * (regs->ip and regs->flags; p->symbol_name). A missing .ko is a launch
 * error.
 *
 * The same boot covers the module's init and its data: a breakpoint on
 * kprobe_init's register_kprobe line, also set before insmod, stops the
 * first time that code runs (the debugger places module breakpoints when
 * the guest's do_init_module is reached, before mod->init); there the
 * module's static `kp` evaluates by name (its DWARF address relocated to
 * the module's data, read through the page tables): kp.addr is NULL before
 * register_kprobe and kernel_clone's address after a step over it; the
 * local `ret` is changed by setVariable in the module's frame; in
 * handler_pre, p->symbol_name is pointed by setVariable at the tail of
 * its string, and handler_pre then prints that tail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { BOOT_MS, GuestConsole, VMLINUX } from './linuxGuest';
import { unfetched } from '../util/fetched';
import { loadElf } from '../../emulator/elf';
import { repoPath } from '../util/paths';

const KO = repoPath('test', 'linux', 'kbuild', 'cache', 'modules', 'kprobe_example.ko');
const SAMPLE_C = join(repoPath('test', 'modules', 'linux', 'cache', 'linux-source-6.1'), 'samples', 'kprobes', 'kprobe_example.c');

/** handler_pre's x86 pr_info line (the first pr_info after its head) */
function handlerPreLine(): number {
  const lines = readFileSync(SAMPLE_C, 'utf8').split('\n');
  const head = lines.findIndex(l => l.includes('handler_pre(struct kprobe *p, struct pt_regs *regs)'));
  assert.ok(head >= 0, `handler_pre in ${SAMPLE_C}`);
  const x86 = lines.findIndex((l, i) => i > head && l.includes('#ifdef CONFIG_X86'));
  assert.ok(lines[x86 + 1].includes('pr_info("<%s> p->addr = 0x%p, ip = %lx, flags = 0x%lx\\n"'), lines[x86 + 1]);
  return x86 + 2;
}

/** kprobe_init's `ret = register_kprobe(&kp);` line */
function registerLine(): number {
  const lines = readFileSync(SAMPLE_C, 'utf8').split('\n');
  const head = lines.findIndex(l => l.includes('static int __init kprobe_init(void)'));
  const reg = lines.findIndex((l, i) => i > head && l.includes('ret = register_kprobe(&kp);'));
  assert.ok(head >= 0 && reg > head, `kprobe_init in ${SAMPLE_C}`);
  return reg + 1;
}

test('launch "modules": a missing .ko is a launch error naming it', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  await assert.rejects(dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, modules: ['/nonexistent/m.ko'] }), /launch: "modules" \/nonexistent\/m\.ko: no such file/);
});

test('launch "insmod": a bad value, no "modules", and a file that is not a kernel module are launch errors saying so', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  const base = { kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX };
  await assert.rejects(dc.launch({ ...base, modules: [KO], insmod: 'yes' }), /launch: "insmod" must be true or false/);
  await assert.rejects(dc.launch({ ...base, insmod: true }), /launch: "insmod" inserts the launch's "modules": name the \.ko files there/);
  await assert.rejects(dc.launch({ ...base, modules: [kernel.path], insmod: true }), new RegExp(`launch: "modules" ${kernel.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not a 64-bit little-endian ELF file`));
});

test('Debian\'s kernel with "insmod": the debugger inserts kprobe_example.ko at boot, and a breakpoint in its init set at launch stops there', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  if (!existsSync(KO)) return unfetched(t, 'no test/linux/kbuild/cache/modules/kprobe_example.ko (test/linux/kbuild/build-samples.sh)');
  if (!existsSync(SAMPLE_C)) return unfetched(t, 'no samples/kprobes in test/modules/linux/cache/linux-source-6.1 (test/modules/linux/fetch-test-kprobes.sh 6.1)');
  const initLine = registerLine();
  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  const g = new GuestConsole(dc, h);
  const stop = dc.waitForEvent('stopped');
  await within(Promise.all([
    dc.waitForEvent('initialized').then(async () => {
      const set = (await dc.setBreakpointsRequest({ source: { path: SAMPLE_C }, breakpoints: [{ line: initLine }] })).body.breakpoints;
      assert.equal(set[0].verified, false, 'no code before the module is loaded');
      await dc.configurationDoneRequest();
    }),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256, modules: [KO], insmod: true }),
  ]), 'launch', 60_000);
  const s = await within(stop, 'the stop in kprobe_init during boot', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s.body.reason, 'breakpoint', s.body.description);
  const frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.match(frames[0].name, /^kprobe_init(\+0x[0-9a-f]+)?$/);
  assert.deepEqual([frames[0].source?.path, frames[0].line], [SAMPLE_C, initLine]);
  assert.ok(frames.some(f => /^do_init_module/.test(f.name)), frames.map(f => f.name).join(' <- '));
  assert.doesNotMatch(g.out, /\/ # /, 'before the initramfs\'s init gave a shell');
  await dc.setBreakpointsRequest({ source: { path: SAMPLE_C }, breakpoints: [] });
  await dc.continueRequest({ threadId: 1 });
  await within(g.outputMatches(/\/ # /, 0), 'the shell prompt', BOOT_MS);
  assert.match(await g.run('grep kprobe_example /proc/modules'), /^kprobe_example \d+ 0 - Live/m);
});

test('Debian\'s kernel: a source breakpoint in kprobe_example.c stops in the module\'s handler_pre, its frame and parameters read through the module\'s DWARF where the guest loaded it', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  if (!existsSync(KO)) return unfetched(t, 'no test/linux/kbuild/cache/modules/kprobe_example.ko (test/linux/kbuild/build-samples.sh)');
  if (!existsSync(SAMPLE_C)) return unfetched(t, 'no samples/kprobes in test/modules/linux/cache/linux-source-6.1 (test/modules/linux/fetch-test-kprobes.sh 6.1)');
  const line = handlerPreLine();

  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  const g = new GuestConsole(dc, h);
  await within(Promise.all([
    dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256, modules: [KO] }),
  ]), 'launch', 60_000);
  await within(g.outputMatches(/\/ # /, 0), 'the shell prompt', BOOT_MS);

  // not loaded yet: the lines have no code; once the guest laid the module out, the breakpoints are placed in its code
  const initLine = registerLine();
  const set = (await dc.setBreakpointsRequest({ source: { path: SAMPLE_C }, breakpoints: [{ line: initLine }, { line }] })).body.breakpoints;
  for (const b of set) {
    assert.equal(b.verified, false);
    assert.match(b.message ?? '', /no code for .*kprobe_example\.c/);
  }
  const placed = new Promise<DebugProtocol.Breakpoint>(resolve => dc.on('breakpoint', (e: DebugProtocol.BreakpointEvent) => {
    if (e.body.breakpoint.id === set[1].id && e.body.breakpoint.verified) resolve(e.body.breakpoint);
  }));
  // the module's init stops at once: its breakpoint was placed before mod->init ran
  const initStop = dc.waitForEvent('stopped');
  // (no fork after the insmod: the next kernel_clone stops in handler_pre)
  const inserted = g.run('insmod /root/kprobe_example.ko');
  const si = await within(initStop, 'the stop in kprobe_init', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(si.body.reason, 'breakpoint', si.body.description);
  const bp = await within(placed, 'the breakpoint placed in the loaded module', 60_000);
  assert.equal(bp.line, line);
  assert.equal(bp.source?.path, SAMPLE_C);
  let frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.match(frames[0].name, /^kprobe_init(\+0x[0-9a-f]+)?$/);
  assert.deepEqual([frames[0].source?.path, frames[0].line], [SAMPLE_C, initLine]);
  assert.ok(frames.some(f => /^do_init_module/.test(f.name)), frames.map(f => f.name).join(' <- '));

  // the module's static kp by name, read where the guest put the module's data
  const kpMember = async (name: string): Promise<string> => {
    const v = await h.evaluate('kp', frames[0].id, 'watch');
    assert.ok(v.variablesReference > 0, JSON.stringify(v));
    const kids = (await dc.variablesRequest({ variablesReference: v.variablesReference })).body.variables;
    const k = kids.find(x => x.name === name);
    assert.ok(k, `kp.${name} in ${JSON.stringify(kids.map(x => x.name))}`);
    return k.value;
  };
  assert.match(await kpMember('symbol_name'), /"kernel_clone"/);
  assert.equal(BigInt((await kpMember('addr')).split(' ')[0]), 0n, 'kp.addr before register_kprobe');
  const sn = await h.stepAndWait(() => dc.nextRequest({ threadId: 1 }));
  assert.equal(sn.body.reason, 'step', sn.body.description);
  frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.match(frames[0].name, /^kprobe_init\+0x/);
  assert.ok(frames[0].line > initLine, `past register_kprobe: line ${frames[0].line}`);
  const cloneAt = loadElf(VMLINUX).symbols.lookup('kernel_clone')!.value;
  assert.equal(BigInt((await kpMember('addr')).split(' ')[0]), cloneAt, 'kp.addr after register_kprobe: kernel_clone');
  // setVariable of a local in the module's frame
  const initScope = (await dc.scopesRequest({ frameId: frames[0].id })).body.scopes.find(x => x.name === 'Locals')!;
  const initLocals = async (): Promise<DebugProtocol.Variable[]> => (await dc.variablesRequest({ variablesReference: initScope.variablesReference })).body.variables;
  assert.equal((await initLocals()).find(v => v.name === 'ret')?.value, '0', JSON.stringify(await initLocals()));
  assert.equal((await dc.setVariableRequest({ variablesReference: initScope.variablesReference, name: 'ret', value: '5' })).body.value, '5');
  assert.equal((await initLocals()).find(v => v.name === 'ret')?.value, '5');
  await dc.setBreakpointsRequest({ source: { path: SAMPLE_C }, breakpoints: [{ line }] });
  await dc.continueRequest({ threadId: 1 });
  await inserted;

  // the shell's fork for dmesg runs kernel_clone: the module's kprobe fires, handler_pre stops (its line is the first it prints)
  const stop = dc.waitForEvent('stopped');
  const printed = g.run('dmesg -c');
  const s = await within(stop, 'the stop in handler_pre', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s.body.reason, 'breakpoint', s.body.description);
  frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.match(frames[0].name, /^handler_pre(\+0x[0-9a-f]+)?$/);
  assert.equal(frames[0].source?.path, SAMPLE_C, 'kprobe_example.c in the fetched source tree');
  assert.equal(frames[0].line, line);
  assert.ok(frames.length >= 2, JSON.stringify(frames.map(f => f.name)));
  assert.match(frames[1].name, /^(kprobe_ftrace_handler|aggr_pre_handler|kprobe_int3_handler|opt_pre_handler)\+0x/, `the caller is Linux's kprobe machinery: ${frames.map(f => f.name).join(' <- ')}`);

  const scope = (await dc.scopesRequest({ frameId: frames[0].id })).body.scopes.find(x => x.name === 'Locals')!;
  const params = (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
  const member = async (of: string, name: string, value?: string): Promise<string> => {
    const v = params.find(x => x.name === of);
    assert.ok(v && v.variablesReference > 0, JSON.stringify(params));
    const kids = (await dc.variablesRequest({ variablesReference: v.variablesReference })).body.variables;
    const k = kids.find(x => x.name === name);
    assert.ok(k, `${of}->${name} in ${JSON.stringify(kids.map(x => x.name))}`);
    if (value !== undefined) return (await dc.setVariableRequest({ variablesReference: v.variablesReference, name, value })).body.value;
    return k.value;
  };
  const symbolName = await member('p', 'symbol_name');
  assert.match(symbolName, /"kernel_clone"/);
  const ip = BigInt(await member('regs', 'ip')), flags = BigInt(await member('regs', 'flags'));
  // p->symbol_name changed by setVariable in the module's frame: "kernel_" skipped, handler_pre prints "clone"
  const tail = `0x${(BigInt(symbolName.split(' ')[0]) + 7n).toString(16)}`;
  assert.match(await member('p', 'symbol_name', tail), /"clone"/);

  await dc.setBreakpointsRequest({ source: { path: SAMPLE_C }, breakpoints: [] });
  await dc.continueRequest({ threadId: 1 });
  const out = await printed;
  const m = /handler_pre: <clone> p->addr = 0x\S+, ip = ([0-9a-f]+), flags = 0x([0-9a-f]+)/.exec(out);
  assert.ok(m, out);
  assert.deepEqual([ip, flags], [BigInt(`0x${m[1]}`), BigInt(`0x${m[2]}`)], 'regs->ip and regs->flags as handler_pre printed them');
});
