import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo, Server } from 'node:net';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { startServer } from '../../adapter/server';
import { readFileSync } from 'node:fs';
import { ProbeEvent, ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';
import { repoPath } from '../util/paths';
import { assertFrameAt, frameOffsetIn } from './frameAt';

const KERNEL = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');

/** 1-based line of the "#BP name" marker comment in a sample kernel source (never hard-coded lines). */
function markerLine(file: string, name: string): number {
  const lines = readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex(l => l.includes(`/* #BP ${name} */`));
  if (i < 0) throw new Error(`marker #BP ${name} not found in ${file}`);
  return i + 1;
}

describe('kprobe debug adapter (DAP)', () => {
  let server: Server;
  let dc: DebugClient;

  before(async () => { server = await startServer(0); });
  after(() => new Promise<void>(r => server.close(() => r())));
  beforeEach(async () => {
    dc = new DebugClient('node', 'unused', 'kprobe');
    dc.defaultTimeout = 20_000;
    await dc.start((server.address() as AddressInfo).port);
  });
  afterEach(async () => { await dc.stop(); });

  /** Outputs collected from now on. */
  function collectOutput(): string[] {
    const out: string[] = [];
    dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
    return out;
  }

  test('a missing program is refused with an error naming the file', async () => {
    const missing = repoPath('examples', 'kernel', 'build', 'no-such.elf');
    await assert.rejects(dc.launch({ program: missing }), (e: Error) => {
      assert.ok(e.message.includes(missing), e.message);
      return true;
    });
  });

  test('a program that is not an ELF is refused', async () => {
    const notElf = repoPath('examples', 'kernel', 'main.c');
    await assert.rejects(dc.launch({ program: notElf }), (e: Error) => {
      assert.ok(e.message.startsWith('kprobe: '), e.message);
      assert.ok(e.message.includes('main.c'), e.message);
      return true;
    });
  });

  test('bad launch arguments are refused before booting', async () => {
    await assert.rejects(dc.launch({ program: KERNEL, cpus: 0 }), /"cpus" must be an integer from 1 to 64/);
  });

  test('a kernel that starts user space: the launch\'s rootfs and exec run a program whose output is in the Debug Console (debugging a kernel with its user space)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kprobe-launch-rootfs-'));
    try {
      mkdirSync(join(root, 'bin'));
      copyFileSync(repoPath('test', 'userspace', 'bin', 'procs-x86_64-gcc-O2.elf'), join(root, 'bin', 'procs'));
      chmodSync(join(root, 'bin', 'procs'), 0o755);
      const out = collectOutput();
      const exited = dc.waitForEvent('exited');
      await Promise.all([dc.configurationSequence(), dc.launch({
        program: repoPath('test', 'fixtures', 'kernel', 'bin', 'userinit.elf'), cpus: 2, rootfs: root, exec: ['/bin/procs'],
      })]);
      assert.equal((await exited).body.exitCode, 5);
      const text = out.join('');
      assert.match(text, /\] kernel: starting user space$/m);
      assert.match(text, /\] pipe bytes 33$/m);
      assert.match(text, /\] exec child: argc 3 \[procs-child\] \[exec-child\] \[two words\] env K=v$/m);
      assert.match(text, /\] kernel: user space ended=5$/m);
      await assert.rejects(dc.launch({ program: KERNEL, exec: '/bin/sh' }), /launch: "exec" must be an array of strings \(command lines such as "\/bin\/prog arg"\), got "\/bin\/sh"/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a missing rootfs is refused with one line naming it', async () => {
    const missing = join(tmpdir(), 'kprobe-no-such-rootfs');
    await assert.rejects(dc.launch({ program: KERNEL, rootfs: missing }), new RegExp(`rootfs ${missing}: no such directory`));
  });

  test('boots the sample kernel to power off: printk lines become output events, exit code 0', async () => {
    const out = collectOutput();
    const exited = dc.waitForEvent('exited');
    const terminated = dc.waitForEvent('terminated');
    await Promise.all([dc.configurationSequence(), dc.launch({ program: KERNEL, cpus: 2 })]);
    assert.equal((await exited).body.exitCode, 0);
    await terminated;
    const text = out.join('');
    assert.match(text, /^\[ *\d+\.\d{6}\] Linux version 2\.6\.99-kp \(kprobe-debug sample kernel\) x86_64$/m);
    assert.match(text, /\] smp: 2 CPUs online$/m);
    assert.match(text, /\] Power down\.$/m);
    assert.match(text, /kprobe: machine powered off \(exit code 0\)/);
  });

  test('stopOnEntry: stopped at the entry point, one thread per CPU, stack and registers', async () => {
    const stoppedEv = dc.waitForEvent('stopped');
    await Promise.all([dc.configurationSequence(), dc.launch({ program: KERNEL, cpus: 2, stopOnEntry: true })]);
    const ev = await stoppedEv as DebugProtocol.StoppedEvent;
    assert.equal(ev.body.reason, 'entry');
    const threads = (await dc.threadsRequest()).body.threads;
    assert.deepEqual(threads.map(t => t.id), [1, 2]);
    assert.match(threads[0].name, /^CPU 0: init \[1\]$/);
    assert.match(threads[1].name, /^CPU 1: /);
    const st = await dc.stackTraceRequest({ threadId: 1 });
    const top = st.body.stackFrames[0];
    assert.ok(top.instructionPointerReference, 'top frame has a pc');
    assertFrameAt(top, 'start_kernel', 0n);
    assert.ok(top.source?.path?.endsWith('main.c'), `source of start_kernel: ${top.source?.path}`);
    const scopes = await dc.scopesRequest({ frameId: top.id });
    const regScope = scopes.body.scopes.find(x => x.name === 'Registers');
    assert.ok(regScope, scopes.body.scopes.map(x => x.name).join(', '));
    // DWARF scopes come first when the pc has debug info (start_kernel: no parameters)
    assert.deepEqual(scopes.body.scopes.map(x => x.name), ['Arguments', 'Locals', 'Globals', 'Registers']);
    const regs = (await dc.variablesRequest({ variablesReference: regScope.variablesReference })).body.variables;
    const ip = regs.find(r => r.name === 'ip');
    assert.ok(ip, 'ip register listed');
    assert.equal(BigInt(ip.value), BigInt(top.instructionPointerReference!));
  });

  test('setVariable writes a register; a bad value is refused with a clear message', async () => {
    const stoppedEv = dc.waitForEvent('stopped');
    await Promise.all([dc.configurationSequence(), dc.launch({ program: KERNEL, cpus: 1, stopOnEntry: true })]);
    await stoppedEv;
    const frame = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    const ref = (await dc.scopesRequest({ frameId: frame.id })).body.scopes.find(x => x.name === 'Registers')?.variablesReference ?? -1;
    const set = await dc.setVariableRequest({ variablesReference: ref, name: 'r12', value: '0x1234' });
    assert.equal(set.body.value, '0x0000000000001234');
    const regs = (await dc.variablesRequest({ variablesReference: ref })).body.variables;
    assert.equal(regs.find(r => r.name === 'r12')?.value, '0x0000000000001234');
    await assert.rejects(dc.setVariableRequest({ variablesReference: ref, name: 'r12', value: 'banana' }), /register r12: "banana" is not a number/);
  });

  test('readMemory / writeMemory / disassemble at a symbol', async () => {
    const stoppedEv = dc.waitForEvent('stopped');
    await Promise.all([dc.configurationSequence(), dc.launch({ program: KERNEL, cpus: 1, stopOnEntry: true })]);
    await stoppedEv;
    const ev = await dc.evaluateRequest({ expression: 'start_kernel' });
    const addr = ev.body.memoryReference!;
    assert.match(addr, /^0xffffffff8[0-9a-f]{7}$/);
    const mem = await dc.customRequest('readMemory', { memoryReference: addr, count: 4 }) as DebugProtocol.ReadMemoryResponse;
    assert.equal(Buffer.from(mem.body!.data!, 'base64').length, 4);
    const dis = await dc.customRequest('disassemble', { memoryReference: addr, instructionCount: 3, resolveSymbols: true }) as DebugProtocol.DisassembleResponse;
    const insns = dis.body!.instructions;
    assert.equal(insns.length, 3);
    assert.equal(BigInt(insns[0].address), BigInt(addr));
    assert.equal(insns[0].symbol, 'start_kernel');
    assert.match(insns[1].symbol ?? '', /^start_kernel\+0x[0-9a-f]+$/);
    const before = await dc.customRequest('disassemble', { memoryReference: insns[2].address, instructionOffset: -2, instructionCount: 2 }) as DebugProtocol.DisassembleResponse;
    assert.deepEqual(before.body!.instructions.map(i => i.address), [insns[0].address, insns[1].address]);
    // writeMemory into a data-less scratch spot: the stack top of the current task, read back.
    const sp = (await dc.evaluateRequest({ expression: '$sp' })).body.result;
    const target = '0x' + (BigInt(sp) - 64n).toString(16);
    await dc.customRequest('writeMemory', { memoryReference: target, data: Buffer.from([1, 2, 3, 4]).toString('base64') });
    const back = await dc.customRequest('readMemory', { memoryReference: target, count: 4 }) as DebugProtocol.ReadMemoryResponse;
    assert.deepEqual([...Buffer.from(back.body!.data!, 'base64')], [1, 2, 3, 4]);
    const bad = await dc.customRequest('readMemory', { memoryReference: '0x10', count: 8 }) as DebugProtocol.ReadMemoryResponse;
    assert.equal(bad.body!.unreadableBytes, 8);
  });

  test('instruction steps into a callee: the frame-pointer walk shows start_kernel as its caller', async () => {
    const entry = dc.waitForEvent('stopped');
    await Promise.all([dc.configurationSequence(), dc.launch({ program: KERNEL, cpus: 1, stopOnEntry: true })]);
    await entry;
    let frames: DebugProtocol.StackFrame[] = [];
    for (let i = 0; i < 500; i++) {
      const stepped = dc.waitForEvent('stopped');
      await dc.nextRequest({ threadId: 1, granularity: 'instruction' });
      assert.equal(((await stepped) as DebugProtocol.StoppedEvent).body.reason, 'step');
      frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
      if (frames[0].name !== 'start_kernel' && frames.length >= 2 && frames[1].name === 'start_kernel') break;
    }
    assert.notEqual(frames[0].name, 'start_kernel', `stepped into a callee: ${frames.map(f => f.name).join(' <- ')}`);
    assert.equal(frames[1].name, 'start_kernel');
    assert.ok(frameOffsetIn(frames[1], 'start_kernel') > 0n, 'the return address is inside start_kernel');
    assert.ok(frames[1].source?.path?.endsWith('main.c'), `caller line in main.c: ${frames[1].source?.path}`);
    assert.ok(frames[1].line > 0);
  });

  test('pause while running, inspect, continue to power off', async () => {
    const entry = dc.waitForEvent('stopped');
    await Promise.all([dc.configurationSequence(), dc.launch({ program: KERNEL, cpus: 2, stopOnEntry: true })]);
    await entry;
    const paused = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: 1 });
    await dc.pauseRequest({ threadId: 1 });
    const ev = await paused as DebugProtocol.StoppedEvent;
    assert.equal(ev.body.reason, 'pause');
    const threads = (await dc.threadsRequest()).body.threads;
    assert.equal(threads.length, 2);
    for (const t of threads) {
      const frames = (await dc.stackTraceRequest({ threadId: t.id })).body.stackFrames;
      assert.ok(frames.length >= 1);
      // an idle CPU runs no code: its one frame, do_idle, has no instruction pointer (adapter/inspector.ts)
      if (t.name.includes(': swapper/')) assert.deepEqual(frames.map(f => f.name), ['do_idle']);
      else assert.ok(frames[0].instructionPointerReference);
    }
    const exited = dc.waitForEvent('exited');
    await dc.continueRequest({ threadId: 1 });
    assert.equal((await exited).body.exitCode, 0);
  });

  /** Launch stopped at entry with breakpoints set in the configuration phase. */
  async function launchWith(setup: () => Promise<void>, cpus = 2): Promise<void> {
    const entry = dc.waitForEvent('stopped');
    await Promise.all([
      dc.waitForEvent('initialized').then(setup).then(() => dc.configurationDoneRequest()),
      dc.launch({ program: KERNEL, cpus, stopOnEntry: true }),
    ]);
    await entry;
  }

  test('a source breakpoint becomes a kprobe: verified, hit, stack on the marker line, hit count in _probeState', async () => {
    const fork = repoPath('examples', 'kernel', 'fork.c');
    const line = markerLine(fork, 'do_fork_body');
    let bp: DebugProtocol.Breakpoint | undefined;
    await launchWith(async () => {
      bp = (await dc.setBreakpointsRequest({ source: { path: fork }, breakpoints: [{ line }] })).body.breakpoints[0];
    });
    assert.ok(bp?.verified, `verified: ${bp?.message}`);
    assert.equal(bp.line, line);
    const hit = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: 1 });
    const ev = await hit as DebugProtocol.StoppedEvent;
    assert.equal(ev.body.reason, 'breakpoint');
    assert.deepEqual(ev.body.hitBreakpointIds, [bp.id]);
    const frames = (await dc.stackTraceRequest({ threadId: ev.body.threadId! })).body.stackFrames;
    assert.equal(frames[0].name, 'do_fork');
    assert.equal(frames[0].instructionPointerReference, bp.instructionReference, 'the breakpoint\'s address');
    assert.equal(frames[0].line, line);
    assert.equal(frames[0].source?.path, fork);
    assert.equal(BigInt(frames[0].instructionPointerReference!), BigInt(bp.instructionReference!));
    assert.ok(frames.length >= 2, 'the caller of do_fork is listed');
    const state = (await dc.customRequest(ProbeRequest.list) as DebugProtocol.Response).body as ProbeStateBody;
    assert.equal(state.kprobes.length, 1);
    const probe = state.kprobes[0];
    assert.equal(probe.id, bp.id);
    assert.equal(probe.nhit, 1);
    assert.equal(probe.source?.line, line);
    assert.equal(probe.kind, 'kprobe');
  });

  test('function breakpoints: r:sys_open becomes a kretprobe; an unknown symbol is refused', async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    await launchWith(async () => {
      bps = (await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'r:sys_open' }, { name: 'no_such_function' }] })).body.breakpoints;
    });
    assert.equal(bps[0].verified, true, bps[0].message);
    assert.equal(bps[1].verified, false);
    assert.match(bps[1].message ?? '', /no_such_function/);
    const hit = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: 1 });
    const ev = await hit as DebugProtocol.StoppedEvent;
    assert.equal(ev.body.reason, 'breakpoint');
    assert.deepEqual(ev.body.hitBreakpointIds, [bps[0].id]);
    const state = (await dc.customRequest(ProbeRequest.list) as DebugProtocol.Response).body as ProbeStateBody;
    const rp = state.kprobes.find(p => p.id === bps[0].id);
    assert.equal(rp?.kind, 'kretprobe');
    assert.equal(rp?.name, 'r:sys_open+0x0');
  });

  test('_probe requests: disable, knobs and unregister change the engine and the snapshot', async () => {
    const fork = repoPath('examples', 'kernel', 'fork.c');
    let bp: DebugProtocol.Breakpoint | undefined;
    const states: ProbeStateBody[] = [];
    dc.on(ProbeEvent.state, (e: DebugProtocol.Event) => states.push(e.body as ProbeStateBody));
    await launchWith(async () => {
      bp = (await dc.setBreakpointsRequest({ source: { path: fork }, breakpoints: [{ line: markerLine(fork, 'do_fork_body') }] })).body.breakpoints[0];
    });
    const id = bp!.id!;
    const req = async (cmd: string, args: object) => (await dc.customRequest(cmd, args) as DebugProtocol.Response).body as ProbeStateBody;
    assert.equal((await req(ProbeRequest.setEnabled, { id, enabled: false })).kprobes[0].enabled, false);
    assert.equal((await req(ProbeRequest.setEnabled, { id, enabled: true })).kprobes[0].enabled, true);
    assert.equal((await req(ProbeRequest.setGlobalEnabled, { enabled: false })).enabled, false);
    assert.equal((await req(ProbeRequest.setGlobalEnabled, { enabled: true })).enabled, true);
    assert.equal((await req(ProbeRequest.setOptimization, { enabled: false })).optimization, false);
    assert.deepEqual((await req(ProbeRequest.unregister, { id })).kprobes, []);
    await assert.rejects(req(ProbeRequest.unregister, { id }), new RegExp(`no probe with id ${id}`));
    // With the probe gone the kernel runs to power off.
    const exited = dc.waitForEvent('exited');
    await dc.continueRequest({ threadId: 1 });
    assert.equal((await exited).body.exitCode, 0);
    assert.ok(states.some(s => s.kprobes.length === 1), 'a _probeState event listed the probe');
  });
  test('a logpoint in do_fork prints on every call and never stops; disassembly and readMemory show the original code, the int3 marked', async () => {
    const out = collectOutput();
    let bp: DebugProtocol.Breakpoint | undefined;
    await launchWith(async () => {
      const fork = repoPath('examples', 'kernel', 'fork.c');
      bp = (await dc.setBreakpointsRequest({ source: { path: fork }, breakpoints: [{ line: markerLine(fork, 'do_fork_body'), logMessage: 'fork flags={arg0}' }] })).body.breakpoints[0];
    });
    assert.ok(bp?.verified, bp?.message);
    const dis = await dc.customRequest('disassemble', { memoryReference: bp.instructionReference!, instructionCount: 1 }) as DebugProtocol.DisassembleResponse;
    const [insn, note] = dis.body!.instructions[0].instruction.split('  ; ');
    assert.doesNotMatch(insn, /int3/, 'the original instruction is shown');
    assert.match(note ?? '', /^kprobe: int3 at do_fork\+0x[0-9a-f]+$/, 'the probe\'s int3 is marked');
    const mem = await dc.customRequest('readMemory', { memoryReference: bp.instructionReference!, count: 1 }) as DebugProtocol.ReadMemoryResponse;
    const original = [...Buffer.from(mem.body!.data!, 'base64')];
    assert.notDeepEqual(original, [0xcc], 'readMemory shows the original byte');
    const raw = (await dc.customRequest(ProbeRequest.readMemory, { memoryReference: bp.instructionReference!, count: 1, patched: true }) as DebugProtocol.Response).body as DebugProtocol.ReadMemoryResponse['body'];
    assert.deepEqual([...Buffer.from(raw!.data!, 'base64')], [0xcc], '_probeReadMemory patched shows the armed breakpoint byte');
    let stops = 0;
    dc.on('stopped', () => { stops++; });
    const exited = dc.waitForEvent('exited');
    await dc.continueRequest({ threadId: 1 });
    assert.equal((await exited).body.exitCode, 0);
    assert.equal(stops, 0, 'a logpoint never stops');
    const text = out.join('');
    const forks = /summary: forks (\d+)/.exec(text);
    assert.ok(forks, 'the kernel printed its summary');
    const logged = text.split('\n').filter(l => /\] fork flags=/.test(l));
    for (const l of logged) assert.match(l, /\] fork flags=(0x[0-9a-f]+|\d+)$/);
    // every successful fork went through do_fork; failed copy_process calls are logged too
    assert.ok(logged.length >= Number(forks[1]) && Number(forks[1]) > 0, `${logged.length} logged, ${forks[1]} forks`);
  });
});
