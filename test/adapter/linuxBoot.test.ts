/**
 * Debian's own 6.1 kernel (test/linux/fetch-kernel.sh) on the full-system
 * PC through the adapter, with its -dbg vmlinux (test/linux/dbg/
 * fetch-vmlinux-dbg.sh) for symbols, DWARF and ORC: one boot (acpi=off, one
 * CPU) and, in it, the console in the Debug Console as it is printed; a
 * function breakpoint on do_sys_openat2 that stops when busybox opens a
 * file, without a byte of guest code changed, and a source breakpoint on a
 * line of fs/open.c in it (the line and its addresses from LLVM's golden); the thread named with the
 * task on the CPU (current->comm, pid); the control registers; the
 * arguments in the registers (AT_FDCWD, a path read through the guest's
 * page tables); Linux's call stack through its ORC tables down to the
 * system call entry; an instruction step; typing at the shell; pause; and
 * a panic (sysrq-trigger's crash) that stops the session with its text,
 * still inspectable. Addresses come from the vmlinux's symbols.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { repoPath } from '../util/paths';
import { unfetched } from '../util/fetched';
import { loadElf } from '../../emulator/elf';

const VMLINUX = repoPath('test', 'linux', 'dbg', 'cache', 'vmlinux');
/** LLVM's view of do_sys_openat2's line table (test/linux/dbg/make-golden.sh): `row ADDR LINE COL stmt|- FILE` */
const GOLDEN = repoPath('test', 'linux', 'dbg', 'golden', 'do_sys_openat2.txt');
/** gdb on qemu at the same first call (test/adapter/linuxGolden/make-golden.sh) */
const GDB_GOLDEN = repoPath('test', 'adapter', 'linuxGolden', 'do_sys_openat2-gdb.txt');
const OPEN_C = join(repoPath('test', 'modules', 'linux', 'cache', 'linux-source-6.1'), 'fs', 'open.c');
const BOOT_MS = 900_000;
const hex = (v: bigint): string => `0x${v.toString(16).padStart(16, '0')}`;

test('Debian\'s kernel in the debugger: console, a function breakpoint the guest cannot see, threads, registers, arguments, ORC stack, step, input, pause, panic', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  const vmlinux = loadElf(VMLINUX);
  const openat2 = vmlinux.symbols.lookup('do_sys_openat2');
  assert.ok(openat2, 'do_sys_openat2 in the vmlinux');
  const text = vmlinux.sections.find(s => s.name === '.text')!;
  const fileBytes = (addr: bigint, n: number): number[] => [...text.data.subarray(Number(addr - text.addr), Number(addr - text.addr) + n)];

  // a statement line inside do_sys_openat2 (its fifth, past the prologue) and the addresses LLVM gives it
  const rows = readFileSync(GOLDEN, 'utf8').split('\n').filter(l => l.startsWith('row ') && l.split(' ')[4] === 'stmt').map(l => l.split(' '));
  const stmtLines = [...new Set(rows.map(r => Number(r[2])))];
  const line = stmtLines[4];
  const lineAddrs = rows.filter(r => Number(r[2]) === line).map(r => BigInt(r[1]));

  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  let out = '', con = '';
  const waiters: { re: RegExp; from: number; resolve: () => void }[] = [];
  dc.on('output', (e: DebugProtocol.OutputEvent) => {
    if (e.body.category === 'stdout') out += e.body.output; else con += e.body.output;
    for (const w of waiters.splice(0)) if (w.re.test(out.slice(w.from))) w.resolve(); else waiters.push(w);
  });
  const outputMatches = (re: RegExp, from = out.length): Promise<void> => new Promise(resolve => {
    if (re.test(out.slice(from))) resolve(); else waiters.push({ re, from, resolve });
  });
  const registers = async (threadId = 1): Promise<Map<string, string>> => {
    const f = (await dc.stackTraceRequest({ threadId })).body.stackFrames[0];
    const scope = (await dc.scopesRequest({ frameId: f.id })).body.scopes.find(x => x.name === 'Registers')!;
    return new Map((await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables.map(v => [v.name, v.value]));
  };
  const memory = async (addr: bigint, count: number): Promise<Uint8Array> => {
    const r = await dc.customRequest('readMemory', { memoryReference: hex(addr), count });
    return new Uint8Array(Buffer.from(r.body.data as string, 'base64'));
  };

  // the breakpoint is set in the configuration phase; the boot runs to the first open
  const first = dc.waitForEvent('stopped');
  let bp: DebugProtocol.Breakpoint[] = [], srcBp: DebugProtocol.Breakpoint[] = [];
  await within(Promise.all([
    dc.waitForEvent('initialized').then(async () => {
      bp = (await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_sys_openat2' }] })).body.breakpoints;
      srcBp = (await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [{ line }] })).body.breakpoints;
    }).then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256 }),
  ]), 'launch', 60_000);
  assert.equal(bp[0]?.verified, true, bp[0]?.message);
  assert.equal(BigInt(bp[0].instructionReference!), openat2.value);
  assert.equal(srcBp[0]?.verified, true, srcBp[0]?.message);
  assert.equal(srcBp[0].line, line);
  const s1 = await within(first, 'the first open', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s1.body.reason, 'function breakpoint', s1.body.description);
  assert.match(out, /Linux version 6\.1\.\S+-cloud-amd64/, 'the console reached the Debug Console');
  assert.match(out, /Run \/init as init process/);

  // stopped at the function's first instruction; the guest's code is Linux's (ftrace's nop at the entry), no int3
  const regs = await registers();
  assert.equal(BigInt(regs.get('rip')!), openat2.value);
  const code = await memory(openat2.value, 32);
  assert.notEqual(code[0], 0xcc, 'no breakpoint byte in the guest');
  assert.deepEqual([...code.subarray(5)], fileBytes(openat2.value + 5n, 27), 'the function as the vmlinux has it past the fentry call site');
  assert.equal(BigInt(regs.get('cr0')!) & 0x80000001n, 0x80000001n);
  assert.equal(BigInt(regs.get('efer')!) & 0x400n, 0x400n);
  assert.ok(BigInt(regs.get('cr3')!) > 0n);
  // arguments (x86_64 calling convention): dfd = AT_FDCWD, filename a user pointer to a path
  assert.equal(BigInt.asIntN(32, BigInt(regs.get('rdi')!)), -100n, 'int dfd in edi');
  const path = await memory(BigInt(regs.get('rsi')!), 64);
  const name = new TextDecoder().decode(path.subarray(0, path.indexOf(0)));
  assert.match(name, /^[\x20-\x7e]+$/, `a path: ${JSON.stringify(name)}`);

  // the same arguments from the vmlinux's DWARF in the Locals scope, and by name (hover / watch)
  const f0 = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
  const scopes = (await dc.scopesRequest({ frameId: f0.id })).body.scopes;
  assert.deepEqual(scopes.map(s => s.name), ['Locals', 'Registers', 'Per-CPU']);
  const locals = new Map((await dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body.variables.map(v => [v.name, v]));
  assert.equal(locals.get('dfd')?.value, '-100');
  assert.equal(locals.get('dfd')?.type, 'int');
  assert.equal(locals.get('filename')?.value, `${hex(BigInt(regs.get('rsi')!)).replace(/^0x0+/, '0x')} ${JSON.stringify(name)}`);
  assert.equal(locals.get('how')?.type, 'struct open_how *');
  assert.equal(BigInt(locals.get('how')!.value), BigInt(regs.get('rdx')!));
  const how = (await dc.variablesRequest({ variablesReference: locals.get('how')!.variablesReference })).body.variables.map(v => v.name);
  assert.deepEqual(how, ['flags', 'mode', 'resolve']);
  assert.equal((await h.evaluate('dfd', f0.id, 'hover')).result, '-100');
  // what gdb on qemu shows at the same call: the arguments (user pointers aside: the user stack is randomized), *how, the caller's return address
  const gdb = readFileSync(GDB_GOLDEN, 'utf8').split('\n');
  const gdbValue = (re: RegExp): string => { const m = gdb.map(l => re.exec(l)).find(Boolean); assert.ok(m, `${re} in ${GDB_GOLDEN}`); return m[1]; };
  assert.equal(locals.get('dfd')!.value, gdbValue(/^dfd = (.*)$/));
  assert.equal(name, gdbValue(/^path (.*)$/));
  const howMembers = new Map((await dc.variablesRequest({ variablesReference: locals.get('how')!.variablesReference })).body.variables.map(v => [v.name, BigInt(v.value)]));
  const gdbHow = gdb.filter(l => /^\$\d+ = /.test(l)).map(l => BigInt(l.replace(/^\$\d+ = /, '')));
  assert.deepEqual([howMembers.get('flags'), howMembers.get('mode'), howMembers.get('resolve')], gdbHow, 'how->flags, mode, resolve as gdb prints them');
  const callers = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.equal(BigInt(callers[1].instructionPointerReference!), BigInt(gdbValue(/^#1 +(0x[0-9a-f]+) in /)), 'the return address into the caller, as gdb unwinds it');

  // the thread: the task on the CPU
  const threads = (await dc.threadsRequest()).body.threads;
  assert.equal(threads.length, 1);
  assert.match(threads[0].name, /^CPU 0: [\w./-]+ \[\d+\]$/);
  assert.doesNotMatch(threads[0].name, /swapper/);

  // Linux's call stack through ORC: the system call's path from its entry
  const frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames.map(f => f.name);
  assert.equal(frames[0], 'do_sys_openat2');
  assert.ok(frames.some(f => /^__x64_sys_open(at)?\+0x/.test(f)), frames.join(' <- '));
  assert.ok(frames.some(f => /^do_syscall_64\+0x/.test(f)), frames.join(' <- '));
  assert.ok(frames.some(f => /^entry_SYSCALL_64\w*\+0x/.test(f)), frames.join(' <- '));

  // the Disassembly view's rows around the pc: through the page tables, labelled by the vmlinux's symbols
  const dis = (await dc.customRequest('disassemble', { memoryReference: hex(openat2.value), instructionOffset: -4, instructionCount: 12 })).body.instructions as DebugProtocol.DisassembledInstruction[];
  assert.equal(dis.length, 12);
  assert.equal(BigInt(dis[4].address), openat2.value);
  assert.equal(dis[4].symbol, 'do_sys_openat2');
  assert.match(dis[4].instruction, /^nop/, 'ftrace turned the fentry call into a nop');
  assert.equal(BigInt(dis[5].address), openat2.value + 5n);

  // an instruction step
  const s2 = dc.waitForEvent('stopped');
  await dc.nextRequest({ threadId: 1, granularity: 'instruction' });
  assert.equal((await within(s2, 'the step') as DebugProtocol.StoppedEvent).body.reason, 'step');
  assert.notEqual(BigInt((await registers()).get('rip')!), openat2.value);

  // the source breakpoint in the same call: at one of the line's addresses, the frame at fs/open.c:line
  const s4 = await h.continueToStop();
  assert.equal(s4.body.reason, 'breakpoint', s4.body.description);
  const rip4 = BigInt((await registers()).get('rip')!);
  assert.ok(lineAddrs.includes(rip4), `rip ${rip4.toString(16)} is one of fs/open.c:${line}'s addresses ${lineAddrs.map(a => a.toString(16)).join(' ')}`);
  const top4 = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.match(top4[0].source?.path ?? '', /fs\/open\.c$/);
  assert.equal(top4[0].line, line);
  // the caller: its calls inlined into __x64_sys_openat first (gdb's inline frames), then that physical frame
  const caller4 = top4.slice(1).find(f => /\+0x[0-9a-f]+$/.test(f.name))!;
  assert.match(caller4.name, /^__x64_sys_open(at)?\+0x/);
  // a line step (over): another line of fs/open.c, still in do_sys_openat2; then out to the caller
  const s5 = await h.stepAndWait(() => dc.nextRequest({ threadId: 1 }));
  assert.equal(s5.body.reason, 'step', s5.body.description);
  const top5 = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.equal(top5[0].name.replace(/\+0x[0-9a-f]+$/, ''), 'do_sys_openat2');
  assert.match(top5[0].source?.path ?? '', /fs\/open\.c$/);
  assert.notEqual(top5[0].line, line);
  const s6 = await h.stepAndWait(() => dc.stepOutRequest({ threadId: 1 }));
  assert.equal(s6.body.reason, 'step', s6.body.description);
  const top6 = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.equal(top6[0].instructionPointerReference, caller4.instructionPointerReference, 'at the return address into the caller');

  // no breakpoint: on to the prompt; typed input runs at the shell
  await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
  await dc.setBreakpointsRequest({ source: { path: OPEN_C }, breakpoints: [] });
  const prompt = outputMatches(/\/ # /, 0);
  await dc.continueRequest({ threadId: 1 });
  await within(prompt, 'the shell prompt', BOOT_MS);
  const echoed = outputMatches(/hi-from-the-debugger\r?\n/);
  await h.evaluate('>echo hi-from-the-debugger', undefined, 'repl');
  await within(echoed, 'the echo', BOOT_MS);

  // pause while it runs
  const paused = dc.waitForEvent('stopped');
  await dc.pauseRequest({ threadId: 1 });
  assert.equal((await within(paused, 'the pause', 60_000) as DebugProtocol.StoppedEvent).body.reason, 'pause');

  // a panic: the session stops with its text and stays inspectable
  await h.evaluate('>echo c > /proc/sysrq-trigger', undefined, 'repl');
  const panic = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  const s3 = await within(panic, 'the panic', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s3.body.reason, 'exception');
  assert.match(s3.body.description ?? '', /Kernel panic - not syncing: sysrq triggered crash/);
  assert.match(con, /kprobe: The guest panicked: Kernel panic - not syncing: sysrq triggered crash/);
  const after = await registers();
  assert.ok(BigInt(after.get('rip')!) >= 0xffffffff80000000n, 'stopped in the kernel');
  const stack = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames.map(f => f.name);
  assert.ok(stack.length > 1, stack.join(' <- '));
});
