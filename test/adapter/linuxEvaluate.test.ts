/**
 * C expressions in the Debug Console / Watch on Debian's kernel through the
 * adapter, one boot (acpi=off, one CPU, the -dbg vmlinux): stopped at a
 * function breakpoint on do_sys_openat2 while the guest runs
 * `cat /proc/version`, the handler language's expressions read the guest
 * through the stopped CPU's page tables with the names of the frame
 * (do_sys_openat2's `filename`, a user pointer), `current` (the task on the
 * CPU, every member of its struct task_struct), the vmlinux's globals and
 * statics by name with their DWARF types (`jiffies`, `init_task`), this
 * CPU's per-CPU variables, casts to DWARF types, `&`, `sizeof` and
 * arithmetic; each is compared with the same value read another way (the
 * vmlinux's symbols and readMemory, the thread's name, the frame's
 * Locals). Unknown names and a member of a non-struct are errors saying
 * what and where. A bare function name still gives its address.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { BOOT_MS, GuestConsole, VMLINUX } from './linuxGuest';
import { unfetched } from '../util/fetched';
import { loadElf } from '../../emulator/elf';

/** the decimal of an integer's text `0x2a (42)` */
const dec = (text: string): bigint => {
  const m = /^0x[0-9a-f]+ \((-?\d+)\)$/.exec(text);
  assert.ok(m, `an integer's text: ${text}`);
  return BigInt(m[1]);
};

test('Debian\'s kernel: C expressions over the guest\'s page tables in the frame of do_sys_openat2 (frame names, current, globals, per-CPU, casts, sizeof, &), with clear errors', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  const syms = loadElf(VMLINUX).symbols;
  const sym = (n: string): bigint => { const s = syms.lookup(n); assert.ok(s, `${n} in the vmlinux`); return s.value; };

  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  const g = new GuestConsole(dc, h);
  await within(Promise.all([
    dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256 }),
  ]), 'launch', 60_000);
  await within(g.outputMatches(/\/ # /, 0), 'the shell prompt', BOOT_MS);

  await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_sys_openat2' }] });
  let stop = dc.waitForEvent('stopped');
  await h.evaluate('>cat /proc/version', undefined, 'repl');
  // the first open of cat's (the shell may open before it forks)
  let thread = '';
  for (let i = 0; i < 20; i++) {
    const s = await within(stop, 'an open', BOOT_MS) as DebugProtocol.StoppedEvent;
    assert.equal(s.body.reason, 'function breakpoint', s.body.description);
    thread = (await dc.threadsRequest()).body.threads[0].name;
    if (/: cat \[/.test(thread)) break;
    stop = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: 1 });
  }
  const th = /^CPU 0: cat \[(\d+)\]$/.exec(thread);
  assert.ok(th, `stopped in cat: ${thread}`);
  const pid = BigInt(th[1]);
  const frame = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
  assert.match(frame.name, /^do_sys_openat2/);
  const ev = (e: string): Promise<DebugProtocol.EvaluateResponse['body']> => h.evaluate(e, frame.id, 'repl');
  const evErr = (e: string): Promise<string> => h.evaluateError(e, frame.id);
  const readU64 = async (a: bigint): Promise<bigint> => {
    const r = await dc.customRequest('readMemory', { memoryReference: `0x${a.toString(16)}`, count: 8 });
    return Buffer.from(r.body.data as string, 'base64').readBigUInt64LE(0);
  };

  // a global: the guest's counter (jiffies is jiffies_64's low half on x86_64; 64-bit: the same 8 bytes)
  const j = await ev('jiffies');
  assert.equal(dec(j.result), await readU64(sym('jiffies_64')));
  assert.equal(dec((await ev('jiffies_64')).result), await readU64(sym('jiffies_64')));
  // current: the task on the CPU, its struct task_struct from the DWARF
  assert.equal((await ev('current->comm')).result, '"cat"');
  assert.equal(dec((await ev('current->pid')).result), pid);
  const cur = await ev('current');
  assert.equal(cur.type, 'struct task_struct *');
  assert.ok(cur.variablesReference > 0, 'current expands to its task_struct');
  const task = new Map((await dc.variablesRequest({ variablesReference: cur.variablesReference })).body.variables.map(v => [v.name, v.value]));
  assert.equal(task.get('pid'), String(pid));
  // a member chain through pointers: cat's parent is the shell that ran it
  assert.equal((await ev('current->real_parent->comm')).result, '"sh"');
  assert.equal(dec((await ev('current->real_parent->pid')).result), dec((await ev('current->parent->pid')).result));
  // a parameter: the user pointer cat passed, read through the page tables of cat's address space
  const fn = await ev('filename');
  assert.match(fn.result, /^0x[0-9a-f]+ "\/proc\/version"$/);
  const locals = (await dc.scopesRequest({ frameId: frame.id })).body.scopes.find(x => x.name === 'Locals')!;
  const lv = new Map((await dc.variablesRequest({ variablesReference: locals.variablesReference })).body.variables.map(v => [v.name, v.value]));
  assert.equal(fn.result.split(' ')[0], lv.get('filename')!.split(' ')[0], 'the same pointer as the Locals scope');
  assert.equal((await ev('*filename')).result, "47 '/'");
  assert.equal((await ev('filename[1]')).result, "112 'p'");
  // the inlined caller do_sys_open's own names (its registers recovered from the call frame information; its
  // `filename` was in a register the callee reused: optimized out there): its `how` is the struct do_sys_openat2's
  // `how` points to
  const frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  const open = frames.find(f => /^do_sys_open\b/.test(f.name) && f.name !== frame.name);
  assert.ok(open, `an inlined do_sys_open frame: ${frames.map(f => f.name).join(' <- ')}`);
  const inOpen = (e: string): Promise<DebugProtocol.EvaluateResponse['body']> => h.evaluate(e, open.id, 'watch');
  assert.match(await h.evaluateError('*filename', open.id), /'filename' .*optimized out|filename/);
  assert.equal((await inOpen('how.flags')).result, (await ev('how->flags')).result);
  assert.equal(BigInt((await inOpen('&how')).result.split(' ')[0]), BigInt((await ev('how')).result.split(' ')[0]));
  const howStruct = await inOpen('*&how');
  assert.equal(howStruct.type, 'struct open_how');
  assert.ok(howStruct.variablesReference > 0, 'a struct local expands');
  // a vmlinux global struct: init_task (pid 0, "swapper/0"), expandable; &var is its symbol's address
  assert.equal((await ev('init_task.pid')).result, '0x0 (0)');
  assert.equal((await ev('init_task.comm')).result, '"swapper/0"');
  const it = await ev('init_task');
  assert.ok(it.variablesReference > 0, 'a struct expands');
  const itm = new Map((await dc.variablesRequest({ variablesReference: it.variablesReference })).body.variables.map(v => [v.name, v.value]));
  assert.equal(itm.get('pid'), '0');
  assert.equal(BigInt((await ev('&init_task')).result.split(' ')[0]), sym('init_task'));
  // per-CPU variables: this CPU's copy
  assert.equal((await ev('cpu_number')).result, '0', 'a bare per-CPU variable as the Per-CPU scope shows it');
  assert.equal(dec((await ev('cpu_number + 5')).result), 5n);
  assert.equal(dec((await ev('current_task == current')).result), 1n);
  assert.equal(dec((await ev('current_task->pid')).result), pid);
  // arithmetic, casts to DWARF types, sizeof
  assert.equal(dec((await ev('current->pid * 3 + 1')).result), pid * 3n + 1n);
  assert.equal(dec((await ev('((struct task_struct *)&init_task)->pid + 7')).result), 7n);
  assert.ok(dec((await ev('sizeof(struct task_struct)')).result) > 1000n);
  assert.equal(dec((await ev('sizeof(init_task) == sizeof(struct task_struct)')).result), 1n);
  assert.equal((await ev('(unsigned char)0x1ff')).result, "255 '\\377'", 'a char as gdb prints it');
  assert.equal((await ev('(u16)0x1ffff')).result, '0xffff (65535)', 'a DWARF typedef as a cast');
  // a bare function name: its address, as before
  assert.equal(BigInt((await ev('vfs_open')).result), sym('vfs_open'));
  // bad input: what is not known, where
  assert.match(await evErr('no_such_name_xyz'), /'no_such_name_xyz' is not declared/);
  assert.match(await evErr('no_such_name_xyz'), /do_sys_openat2/);
  assert.match(await evErr('jiffies.foo'), /'\.foo' needs a struct or union, not 'unsigned long'/);
  assert.match(await evErr('init_task.no_such_member'), /struct task_struct has no member 'no_such_member'/);
  assert.match(await evErr('*(int *)0'), /NULL pointer dereference: read of 4 byte\(s\) at 0x0/);
  // the guard hole below the direct map: no page table maps it
  assert.match(await evErr('*(long *)0xffff800000000000'), /0xffff800000000000 is not mapped in CPU 0's page tables/);
});
