/**
 * Source-level debugging of Debian's 6.1 kernel on the full-system PC
 * through the adapter, against gdb-multiarch on qemu-system-x86_64 with the
 * same kernel, initramfs and command line (test/linux/dbg/
 * make-gdb-golden.sh, golden/gdb-bt.txt). One boot (acpi=off, one CPU):
 *   - the first timer tick (a breakpoint on update_process_times, in the
 *     PIT's interrupt): the backtrace equals gdb's frame for frame (names,
 *     the inlined calls, return addresses, lines) up to common_interrupt,
 *     where gdb stops at the IRQ stack; ours goes on through the ORC REGS
 *     frame of the interrupt entry into the interrupted context and down to
 *     the boot CPU's first function;
 *   - the first do_sys_openat2: the inlined calls gdb shows (do_sys_open,
 *     __do_sys_openat, __se_sys_openat inside __x64_sys_openat;
 *     do_syscall_x64 inside do_syscall_64) are frames with gdb's lines, and
 *     an inlined frame's Locals are its own parameters and locals;
 *   - setVariable there: a parameter in a register (dfd in edi: the
 *     register's upper half kept), a register (rax), a member of the struct
 *     a parameter points to (how->mode on the caller's stack, written
 *     through the guest's page tables and seen in the inlined caller's own
 *     `how`), each put back; refusals for a control register, a struct as a
 *     whole and an optimized-out variable;
 *   - the Per-CPU scope: this CPU's current_task (its comm and pid the
 *     thread's) and cpu_number, also as a watch expression;
 *   - a data breakpoint (Break on Value Change) on the kernel global
 *     jiffies_64: the guest's timer tick writes it, the machine stops in
 *     the writer with the value changed; a variable in a register is
 *     refused with why.
 * A second boot without `nokaslr`: the KASLR slide read from the IDT
 * register, said once in the Debug Console (what the slide moves:
 * linuxKaslr.test.ts).
 * Addresses come from the vmlinux's symbols and the golden, none are written here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { repoPath } from '../util/paths';
import { unfetched } from '../util/fetched';
import { loadElf } from '../../emulator/elf';

const VMLINUX = repoPath('test', 'linux', 'dbg', 'cache', 'vmlinux');
const GDB_BT = repoPath('test', 'linux', 'dbg', 'golden', 'gdb-bt.txt');
/** LLVM's view of do_sys_openat2 (test/linux/dbg/make-golden.sh): `member NAME TYPE OFFSET` of struct open_how */
const LLVM_GOLDEN = repoPath('test', 'linux', 'dbg', 'golden', 'do_sys_openat2.txt');
const BOOT_MS = 900_000;

/** one frame of gdb's `bt`: `#N  [0xADDR in ]NAME (ARGS) at FILE:LINE` */
interface GdbFrame { name: string; pc?: bigint; file?: string; line?: number }

function gdbBacktraces(): Map<string, { frames: GdbFrame[]; stopped?: string }> {
  const out = new Map<string, { frames: GdbFrame[]; stopped?: string }>();
  let cur: { frames: GdbFrame[]; stopped?: string } | undefined;
  for (const l of readFileSync(GDB_BT, 'utf8').split('\n')) {
    const head = /^== (\S+)/.exec(l);
    if (head) { cur = { frames: [] }; out.set(head[1], cur); continue; }
    if (!cur) continue;
    if (l.startsWith('Backtrace stopped')) { cur.stopped = l; continue; }
    const m = /^#\d+\s+(?:(0x[0-9a-f]+) in )?(\S+) \(.*\)(?: at (\S+):(\d+))?$/.exec(l);
    if (m) cur.frames.push({ name: m[2], pc: m[1] ? BigInt(m[1]) : undefined, file: m[3], line: m[4] ? Number(m[4]) : undefined });
  }
  return out;
}

/** a shown frame's function: the physical frames are named symbol+offset */
const fnName = (f: DebugProtocol.StackFrame): string => f.name.replace(/\+0x[0-9a-f]+$/, '');

/** our frames against gdb's, one for one: name, the return address where gdb prints one, file and line */
function sameAsGdb(ours: DebugProtocol.StackFrame[], gdb: GdbFrame[], what: string): void {
  const shown = (fs: { name: string }[]): string => fs.map(f => f.name).join(' <- ');
  assert.ok(ours.length >= gdb.length, `${what}: ours ${shown(ours)}; gdb ${shown(gdb)}`);
  gdb.forEach((g, i) => {
    const o = ours[i];
    assert.equal(fnName(o), g.name, `${what} frame ${i}: ours ${shown(ours)}; gdb ${shown(gdb)}`);
    if (g.pc !== undefined) assert.equal(BigInt(o.instructionPointerReference!), g.pc, `${what} frame ${i} (${g.name}) pc`);
    if (g.line !== undefined && !g.file!.startsWith('/')) {
      assert.equal(o.line, g.line, `${what} frame ${i} (${g.name}) line`);
      assert.ok(o.source?.path?.endsWith(g.file!), `${what} frame ${i} (${g.name}): ${o.source?.path} is ${g.file}`);
    }
  });
}

test('Debian\'s kernel at source level: a backtrace through the timer interrupt and inlined frames, as gdb on qemu shows them', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  const gdb = gdbBacktraces();

  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  const first = dc.waitForEvent('stopped');
  await within(Promise.all([
    dc.waitForEvent('initialized').then(() => dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'update_process_times' }] })).then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256 }),
  ]), 'launch', 60_000);
  let consoleText = '';
  dc.on('output', (e: DebugProtocol.OutputEvent) => { if (e.body.category === 'console') consoleText += e.body.output; });
  const s1 = await within(first, 'the first timer tick', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s1.body.reason, 'function breakpoint', s1.body.description);

  // the timer interrupt: gdb's frames up to common_interrupt (where it stops at the IRQ stack)
  const tick = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  const gTick = gdb.get('update_process_times')!;
  assert.ok(gTick && gTick.frames.at(-1)?.name === 'common_interrupt', `the golden's tick ends at common_interrupt: ${GDB_BT}`);
  sameAsGdb(tick, gTick.frames, 'the timer tick');
  // then the interrupt's entry (ORC: a REGS frame), the interrupted code, and on down to the boot CPU's first function
  const names = tick.map(fnName);
  const entry = gTick.frames.length;
  assert.equal(names[entry], 'asm_common_interrupt', names.join(' <- '));
  const interrupted = tick[entry + 1];
  assert.ok(interrupted, `a frame past the interrupt's entry: ${names.join(' <- ')}`);
  assert.ok(BigInt(interrupted.instructionPointerReference!) >= 0xffffffff80000000n, 'the interrupted code is the kernel\'s');
  assert.ok(interrupted.source?.path && interrupted.line > 0, `the interrupted frame has a source line: ${interrupted.name}`);
  assert.ok(names.slice(entry + 1).includes('start_kernel'), names.join(' <- '));
  assert.match(names.at(-1)!, /^secondary_startup_64/, names.join(' <- '));
  // the interrupted frame's Locals are read (its own variables or why not), not an error
  const iScopes = (await dc.scopesRequest({ frameId: interrupted.id })).body.scopes;
  const iVars = (await dc.variablesRequest({ variablesReference: iScopes[0].variablesReference })).body.variables;
  assert.ok(iVars.length > 0);

  assert.doesNotMatch(consoleText, /KASLR/, 'booted with nokaslr: the vmlinux\'s addresses are the kernel\'s');

  // the first open: gdb's whole backtrace to the system call's entry, inlined calls as frames
  await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_sys_openat2' }] });
  const opened = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  const s2 = await within(opened, 'the first open', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s2.body.reason, 'function breakpoint', s2.body.description);
  const open = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  const gOpen = gdb.get('do_sys_openat2')!.frames;
  const upTo = gOpen.findIndex(f => f.name === 'entry_SYSCALL_64');
  assert.ok(upTo > 0, `entry_SYSCALL_64 in the golden's do_sys_openat2 backtrace: ${GDB_BT}`);
  sameAsGdb(open, gOpen.slice(0, upTo + 1), 'do_sys_openat2');
  assert.ok(open.slice(1, 4).every(f => f.instructionPointerReference === open[1].instructionPointerReference), 'the inlined calls share their physical frame\'s pc');
  // an inlined frame's Locals: its own parameters (gdb: do_sys_open (mode, flags, filename, dfd))
  const scopes = (await dc.scopesRequest({ frameId: open[1].id })).body.scopes;
  const inl = new Map((await dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body.variables.map(v => [v.name, v]));
  for (const p of ['dfd', 'filename', 'flags', 'mode']) assert.ok(inl.has(p), `do_sys_open's ${p} in ${[...inl.keys()].join(', ')}`);
  // do_sys_open's own `how` is the struct it builds (do_sys_openat2's is a pointer to it)
  assert.equal(inl.get('how')?.type, 'struct open_how');

  // setVariable / setRegister: the debugger's own changes, through the CPU and the guest's page tables
  const vars = async (ref: number): Promise<Map<string, DebugProtocol.Variable>> =>
    new Map((await dc.variablesRequest({ variablesReference: ref })).body.variables.map(v => [v.name, v]));
  const set = async (ref: number, name: string, value: string): Promise<string> =>
    (await dc.setVariableRequest({ variablesReference: ref, name, value })).body.value;
  const s0 = (await dc.scopesRequest({ frameId: open[0].id })).body.scopes;
  const localsRef = s0.find(x => x.name === 'Locals')!.variablesReference, regsRef = s0.find(x => x.name === 'Registers')!.variablesReference;
  const regs0 = await vars(regsRef);
  const rdi0 = BigInt(regs0.get('rdi')!.value), rax0 = BigInt(regs0.get('rax')!.value);
  assert.equal((await vars(localsRef)).get('dfd')?.value, '-100');
  assert.equal(await set(localsRef, 'dfd', '7'), '7');
  assert.equal(BigInt((await vars(regsRef)).get('rdi')!.value), (rdi0 & ~0xffffffffn) | 7n, 'dfd lives in edi here: the low half changed, the upper kept');
  assert.equal(await set(localsRef, 'dfd', '-100'), '-100');
  assert.equal(BigInt((await vars(regsRef)).get('rdi')!.value), rdi0);
  assert.equal(BigInt(await set(regsRef, 'rax', '0x1234abcd')), 0x1234abcdn);
  assert.equal(BigInt((await vars(regsRef)).get('rax')!.value), 0x1234abcdn);
  await set(regsRef, 'rax', `0x${rax0.toString(16)}`);
  await assert.rejects(set(regsRef, 'cr0', '0'), /cr0 cannot be changed/);
  // how->mode: memory on the caller's stack, at struct open_how's `mode` offset as LLVM reads the DWARF
  const modeOff = BigInt(readFileSync(LLVM_GOLDEN, 'utf8').split('\n').find(l => /^member mode /.test(l))!.split(' ')[3]);
  const howVar = (await vars(localsRef)).get('how')!;
  const howAddr = BigInt(howVar.value);
  const readU64 = async (a: bigint): Promise<bigint> => {
    const r = await dc.customRequest('readMemory', { memoryReference: `0x${a.toString(16)}`, count: 8 });
    return Buffer.from(r.body.data as string, 'base64').readBigUInt64LE(0);
  };
  const mode0 = await readU64(howAddr + modeOff);
  assert.equal(BigInt((await vars(howVar.variablesReference)).get('mode')!.value), mode0);
  assert.equal(await set(howVar.variablesReference, 'mode', '0x1a4'), '420');
  assert.equal(await readU64(howAddr + modeOff), 0x1a4n, 'written through the page tables');
  // the inlined caller do_sys_open's own `how` is that struct
  const c1 = (await dc.scopesRequest({ frameId: open[1].id })).body.scopes;
  const callerLocals = await vars(c1[0].variablesReference);
  const callerHow = callerLocals.get('how')!;
  assert.equal(callerHow.type, 'struct open_how');
  assert.equal((await vars(callerHow.variablesReference)).get('mode')?.value, '420', 'the caller\'s struct shows the change');
  assert.equal(await set(howVar.variablesReference, 'mode', String(mode0)), String(mode0));
  await assert.rejects(set(c1[0].variablesReference, 'how', '0'), /only integers, characters, enums and pointers/);
  const gone = [...callerLocals.values()].find(v => v.value === '<optimized out>');
  assert.ok(gone, `an optimized-out variable in do_sys_open: ${[...callerLocals.values()].map(v => `${v.name}=${v.value}`).join(', ')}`);
  await assert.rejects(set(c1[0].variablesReference, gone.name, '1'), /optimized out/);

  // per-CPU variables: this CPU's copies (gdb reads current_task's offset as an address and fails)
  const pcs = s0.find(x => x.name === 'Per-CPU');
  assert.ok(pcs?.expensive, 'a Per-CPU scope, fetched on demand');
  const perCpu = await vars(pcs.variablesReference);
  assert.equal(perCpu.get('cpu_number')?.value, '0');
  const cur = perCpu.get('current_task');
  assert.equal(cur?.type, 'struct task_struct *');
  const thread = /^CPU 0: (.+) \[(\d+)\]$/.exec((await dc.threadsRequest()).body.threads[0].name);
  assert.ok(thread, 'the thread names its task');
  const task = await vars(cur.variablesReference);
  assert.ok(task.get('comm')?.value.startsWith(`"${thread[1]}`), `current_task->comm ${task.get('comm')?.value} is the thread's ${thread[1]}`);
  assert.equal(task.get('pid')?.value, thread[2]);
  assert.equal((await h.evaluate('current_task', open[0].id, 'watch')).result, cur.value, 'a watch of current_task reads this CPU\'s copy');

  // a data breakpoint on a kernel global the guest writes (jiffies_64, at each timer tick)
  const jiffies = loadElf(VMLINUX).symbols.lookup('jiffies_64')!;
  const info = (await dc.customRequest('dataBreakpointInfo', { name: 'jiffies_64', frameId: open[0].id })).body as DebugProtocol.DataBreakpointInfoResponse['body'];
  assert.equal(info.dataId, `0x${jiffies.value.toString(16)}/8`, info.description);
  const inReg = (await dc.customRequest('dataBreakpointInfo', { name: 'dfd', variablesReference: localsRef })).body as DebugProtocol.DataBreakpointInfoResponse['body'];
  assert.equal(inReg.dataId, null);
  assert.match(inReg.description, /held in a register/);
  const before = await readU64(jiffies.value);
  const dbp = (await dc.customRequest('setDataBreakpoints', { breakpoints: [{ dataId: info.dataId, accessType: 'write' }] })).body.breakpoints as DebugProtocol.Breakpoint[];
  assert.equal(dbp[0].verified, true, dbp[0].message);
  const watched = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  const s3 = await within(watched, 'the write of jiffies_64', BOOT_MS) as DebugProtocol.StoppedEvent;
  assert.equal(s3.body.reason, 'data breakpoint', s3.body.description);
  assert.match(s3.body.description ?? '', /write of jiffies_64/);
  assert.ok(await readU64(jiffies.value) > before, 'the guest wrote a later jiffies value');
  const writer = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames.map(fnName);
  assert.ok(writer.some(n => /^(do_timer|tick_do_update_jiffies64)$/.test(n)), `stopped in the writer: ${writer.join(' <- ')}`);
  await dc.customRequest('setDataBreakpoints', { breakpoints: [] });
});

test('Debian\'s kernel booted without nokaslr: the debugger finds its KASLR slide from the IDT register and says it now uses the running kernel\'s addresses', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  const h = new Harness();
  await h.startServer();
  const dc = await h.startClient();
  t.after(async () => { await dc.stop(); await h.stopServer(); });
  const notice = new Promise<bigint>(resolve => {
    dc.on('output', (e: DebugProtocol.OutputEvent) => {
      const m = /relocated by KASLR, (0x[0-9a-f]+) above/.exec(e.body.output);
      if (m) resolve(BigInt(m[1]));
    });
  });
  await within(Promise.all([
    dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest()),
    dc.launch({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 panic=-1 acpi=off', cpus: 1, memory: 256 }),
  ]), 'launch', 60_000);
  const slide = await within(notice, 'the KASLR notice', BOOT_MS);
  const paused = dc.waitForEvent('stopped');
  await dc.pauseRequest({ threadId: 1 });
  await within(paused, 'the pause', 60_000);
  const f = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
  const regsRef = (await dc.scopesRequest({ frameId: f.id })).body.scopes.find(x => x.name === 'Registers')!.variablesReference;
  const idtr = (await dc.variablesRequest({ variablesReference: regsRef })).body.variables.find(v => v.name === 'idtr')!.value;
  const idt = loadElf(VMLINUX).symbols.lookup('idt_table')!;
  assert.equal(BigInt(idtr.split(' ')[0]) - idt.value, slide, 'the IDT is the vmlinux\'s idt_table moved by the slide');
  assert.equal(slide % 0x200000n, 0n, 'a multiple of the kernel\'s 2 MiB alignment');
});
