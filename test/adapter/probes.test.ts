/**
 * DebugClient tests of what the probes look like through the adapter: the
 * Kprobes view rows against the engine's debugfs list, launch `probes` and
 * `kprobesOptimization`, disassembly marks of the int3 / optimized jump,
 * memory reads (original vs patched) and writes over probes, instruction
 * and function breakpoints (symbol+0xoff, condition, hit condition, snippet
 * log messages).
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import {
  KPROBE_KIND_LETTER, ProbeDebugfsBody, ProbeEvent, ProbeInfo, ProbeRequest, ProbeStateBody,
} from '../../adapter/dapCustom';
import { kprobeListLine, kprobeRow } from '../../extension/probeRows';
import { FORK_C, Harness, KERNEL, markerLine, within } from './dapHarness';
import { assertFrameAt } from './frameAt';
import { repoPath } from '../util/paths';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const h = new Harness();
const KPROBE_EXAMPLE = repoPath('examples', 'probes', 'kprobe_example.kprobe');
const JPROBE_EXAMPLE = repoPath('examples', 'probes', 'jprobe_example.kprobe');
const KRETPROBE_EXAMPLE = repoPath('examples', 'probes', 'kretprobe_example.kprobe');
const FIB_PRE = repoPath('test', 'adapter', 'fixtures', 'fib_pre.kprobe');

async function req<T>(command: string, args?: object): Promise<T> {
  return (await within(h.dc.customRequest(command, args) as Promise<DebugProtocol.Response>, command)).body as T;
}
const probeList = () => req<ProbeStateBody>(ProbeRequest.list);
const debugfs = () => req<ProbeDebugfsBody>(ProbeRequest.debugfs);

async function rawRead(addr: string, count: number, patched: boolean): Promise<number[]> {
  const body = await req<DebugProtocol.ReadMemoryResponse['body']>(ProbeRequest.readMemory, { memoryReference: addr, count, patched });
  return [...Buffer.from(body!.data!, 'base64')];
}

async function dapRead(addr: string, count: number): Promise<number[]> {
  const r = await h.dc.customRequest('readMemory', { memoryReference: addr, count }) as DebugProtocol.ReadMemoryResponse;
  return [...Buffer.from(r.body!.data!, 'base64')];
}

async function disassembleAt(addr: string, count: number): Promise<DebugProtocol.DisassembledInstruction[]> {
  const r = await h.dc.customRequest('disassemble', { memoryReference: addr, instructionCount: count, resolveSymbols: true }) as DebugProtocol.DisassembleResponse;
  return r.body!.instructions;
}

/** Every `_probeState` event from now on, and a wait for one that satisfies a predicate. */
function watchStates(): { all: ProbeStateBody[]; until(pred: (s: ProbeStateBody) => boolean, what: string): Promise<ProbeStateBody> } {
  const all: ProbeStateBody[] = [];
  const waiters: { pred: (s: ProbeStateBody) => boolean; resolve: (s: ProbeStateBody) => void }[] = [];
  h.dc.on(ProbeEvent.state, (e: DebugProtocol.Event) => {
    const s = e.body as ProbeStateBody;
    all.push(s);
    for (const w of waiters.splice(0)) { if (w.pred(s)) w.resolve(s); else waiters.push(w); }
  });
  return {
    all,
    until(pred, what) {
      const seen = all.find(pred);
      if (seen) return Promise.resolve(seen);
      return within(new Promise<ProbeStateBody>(resolve => waiters.push({ pred, resolve })), what);
    },
  };
}

function collectOutput(): string[] {
  const out: string[] = [];
  h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
  return out;
}

const byName = (s: ProbeStateBody, name: string): ProbeInfo | undefined => s.kprobes.find(p => p.name === name);

describe('kprobe debug adapter: probes, views, disassembly marks, memory', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('Kprobes rows are the debugfs list lines (k/r/j, aggregate, [DISABLED]) with hits, missed and maxactive', async () => {
    let fbps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      fbps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'r:copy_process' }, { name: 'do_fork+0x4' }] })).body.breakpoints;
    }, { probes: [KPROBE_EXAMPLE, JPROBE_EXAMPLE, KRETPROBE_EXAMPLE] });
    assert.ok(fbps.every(b => b.verified), fbps.map(b => b.message).join('; '));
    await req(ProbeRequest.setEnabled, { id: fbps[1].id, enabled: false });

    const st = await probeList();
    const list = (await debugfs()).list.split('\n').filter(l => l !== '').map(l => l.trimEnd());
    // one row per registered probe, each exactly its debugfs line
    assert.deepEqual(st.kprobes.map(kprobeListLine).sort(), [...list].sort());
    assert.equal(list.length, 5);

    const k = byName(st, 'do_fork+0x0');
    const j = byName(st, 'j:do_fork+0x0');
    const r = byName(st, 'r:sys_open+0x0');
    const rbp = byName(st, 'r:copy_process+0x0');
    const off = byName(st, 'do_fork+0x4');
    assert.ok(k && j && r && rbp && off, st.kprobes.map(p => p.name).join(', '));
    assert.equal(k.kind, 'kprobe');
    assert.equal(j.kind, 'jprobe');
    assert.equal(j.address, k.address, 'the jprobe and the kprobe share do_fork (an aggregate)');
    assert.equal(r.kind, 'kretprobe');
    assert.equal(r.maxactive, 20, 'maxactive=20 from kretprobe_example.kprobe');
    assert.equal(rbp.maxactive, 10, 'a return breakpoint leaves maxactive 0: max(10, 2 * NR_CPUS) with 2 CPUs');
    assert.equal(k.maxactive, undefined);
    assert.equal(off.enabled, false);
    assert.equal(off.module, undefined, 'core kernel text: no module');
    assert.equal(off.ftrace, false);
    const line = (p: ProbeInfo) => list.find(l => l.startsWith(BigInt(p.address).toString(16).padStart(16, '0') + `  ${KPROBE_KIND_LETTER[p.kind]}  `)) ?? '';
    assert.equal(kprobeRow(off), `${line(off)}  hits 0, missed 0`);
    assert.ok(line(off).endsWith('[DISABLED]'), line(off));
    assert.equal(kprobeRow(r), `${line(r)}  hits 0, missed 0, maxactive 20`);
    assert.equal(kprobeRow(j), `${line(j)}  hits 0, missed 0`);
  });

  test('launch "probes": a .kprobe file runs alongside; its printk lines are output events and it is listed in _probeState', async () => {
    const out = collectOutput();
    const states = watchStates();
    await h.launchWith(async () => { /* no breakpoints */ }, { probes: [KPROBE_EXAMPLE] });
    const listed = await states.until(s => !!byName(s, 'do_fork+0x0'), 'a _probeState listing the file probe');
    assert.equal(byName(listed, 'do_fork+0x0')?.kind, 'kprobe');
    const exited = h.dc.waitForEvent('exited');
    await h.dc.continueRequest({ threadId: 1 });
    assert.equal((await within(exited, 'power off')).body.exitCode, 0);
    const text = out.join('');
    assert.match(text, /kprobe_example\.kprobe: 1 of 1 probe\(s\) registered/);
    assert.match(text, /\] pre_handler: p->addr=0x[0-9a-f]+, ip=[0-9a-f]+, flags=0x[0-9a-f]+$/m);
    assert.match(text, /\] post_handler: p->addr=0x[0-9a-f]+, flags=0x[0-9a-f]+$/m);
    const last = states.all[states.all.length - 1];
    assert.ok((byName(last, 'do_fork+0x0')?.nhit ?? 0) > 0, 'the hits reached the view');
  });

  test('bad "probes" / "kprobesOptimization" launch arguments are refused naming the attribute', async () => {
    await assert.rejects(h.dc.launch({ program: KERNEL, kprobesOptimization: 'off' }), /launch: "kprobesOptimization" must be true or false, got "off"/);
    await assert.rejects(h.dc.launch({ program: KERNEL, probes: 'x.kprobe' }), /launch: "probes" must be an array of \.kprobe file paths, got "x\.kprobe"/);
  });

  test('bad "handlerFaults" / "insnBoundary" launch arguments are refused naming the attribute and the choices', async () => {
    await assert.rejects(h.dc.launch({ program: KERNEL, handlerFaults: 'ignore' }), /launch: "handlerFaults" must be "oops" or "report", got "ignore"/);
    await assert.rejects(h.dc.launch({ program: KERNEL, insnBoundary: true }), /launch: "insnBoundary" must be "warn" or "reject", got true/);
  });

  test('insnBoundary: a function breakpoint inside an instruction warns by default and is -EILSEQ with "reject"', async () => {
    let warned: DebugProtocol.Breakpoint | undefined;
    await h.launchWith(async () => {
      warned = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork+0x3' }] })).body.breakpoints[0];
    });
    assert.ok(warned?.verified);
    assert.match(warned?.message ?? '', /^warning: do_fork\+0x3 is inside "mov rbp, rsp" \(do_fork\+0x1\.\.\+0x4\)/);
    await h.dc.disconnectRequest();
    await h.dc.stop();
    await h.startClient();
    let refused: DebugProtocol.Breakpoint | undefined;
    await h.launchWith(async () => {
      refused = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork+0x3' }] })).body.breakpoints[0];
    }, { insnBoundary: 'reject' });
    assert.equal(refused?.verified, false);
    assert.match(refused?.message ?? '', /register_kprobe failed: -EILSEQ \(do_fork\+0x3 is inside "mov rbp, rsp"/);
  });

  test('handlerFaults: an unhandled handler fault oopses by default; "report" reports it and the kernel goes on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kp-hf-'));
    const file = join(dir, 'fault.kprobe');
    writeFileSync(file, 'kprobe do_fork { pre { *(u64 *)0x10 = 1; return 0; } }\n');
    const runTo = async (extra: Record<string, unknown>): Promise<{ text: string; code: number }> => {
      const out: string[] = [];
      h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
      await h.launchWith(async () => { /* none */ }, { probes: [file], ...extra });
      const exited = h.dc.waitForEvent('exited');
      await h.dc.continueRequest({ threadId: 1 });
      const code = (await within(exited, 'the end of the run', 60_000)).body.exitCode as number;
      return { text: out.join(''), code };
    };
    const oops = await runTo({});
    assert.match(oops.text, /Oops/);
    assert.match(oops.text, /fault\.kprobe:1:/);
    await h.dc.stop();
    await h.startClient();
    const rep = await runTo({ handlerFaults: 'report' });
    assert.doesNotMatch(rep.text, /Oops/);
    assert.match(rep.text, /fault\.kprobe:1:/);
    assert.equal(rep.code, 0);
  });

  test('kprobesOptimization false: the sysctl is off and no probe is ever optimized', async () => {
    const states = watchStates();
    await h.launchWith(async () => { /* none */ }, { probes: [FIB_PRE], kprobesOptimization: false });
    assert.equal((await probeList()).optimization, false);
    const exited = h.dc.waitForEvent('exited');
    await h.dc.continueRequest({ threadId: 1 });
    await within(exited, 'power off');
    assert.ok(states.all.length > 0);
    for (const s of states.all) {
      assert.equal(s.optimization, false);
      assert.ok(s.kprobes.every(p => !p.optimized), 'no [OPTIMIZED] row');
    }
    assert.ok((byName(states.all[states.all.length - 1], 'fib+0x0')?.nhit ?? 0) > 0, 'fib was probed');
  });

  test('kprobesOptimization on: fib is optimized (jump marked in disassembly, original bytes read, writes refused); the sysctl off brings int3 back', async () => {
    const states = watchStates();
    await h.launchWith(async () => {
      const bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'forks_done' }] })).body.breakpoints;
      assert.ok(bps[0].verified, bps[0].message);
    }, { probes: [FIB_PRE], kprobesOptimization: true });
    const stop = h.dc.waitForEvent('stopped');
    await h.dc.continueRequest({ threadId: 1 });
    await states.until(s => byName(s, 'fib+0x0')?.optimized === true, 'a _probeState with fib [OPTIMIZED]');
    assert.equal(((await within(stop, 'the forks_done stop')) as DebugProtocol.StoppedEvent).body.description, 'breakpoint at forks_done+0x0');

    const fib = byName(await probeList(), 'fib+0x0');
    assert.ok(fib?.optimized, 'still optimized at the stop');
    assert.ok((await debugfs()).list.split('\n').some(l => l.includes('fib+0x0') && l.includes('[OPTIMIZED]')));
    const insns = await disassembleAt(fib.address, 4);
    assert.match(insns[0].instruction, /; \[OPTIMIZED\] kprobe: jmp 0x[0-9a-f]{16} \(detour buffer\) at fib\+0x0$/);
    assert.doesNotMatch(insns[0].instruction, /^jmp/, 'the original instruction is shown');
    assert.match(insns[1].instruction, /; \[OPTIMIZED\] overwritten by the jump of the kprobe at fib\+0x0$/);
    // DAP readMemory: the original bytes; _probeReadMemory patched: the jump (e9 rel32)
    const original = await dapRead(fib.address, 5);
    assert.deepEqual(await rawRead(fib.address, 5, false), original);
    const patched = await rawRead(fib.address, 5, true);
    assert.equal(patched[0], 0xe9, `jmp rel32 at fib: ${patched.map(b => b.toString(16)).join(' ')}`);
    assert.notDeepEqual(patched, original);
    const next = '0x' + (BigInt(fib.address) + 1n).toString(16);
    await assert.rejects(h.dc.customRequest('writeMemory', { memoryReference: next, data: Buffer.from([0x90]).toString('base64') }),
      /overlaps the optimized probe's jump region 0x[0-9a-f]{16}\.\.\+\d+ of the k probe at fib\+0x0: unregister the probe before changing its code/);

    const off = await req<ProbeStateBody>(ProbeRequest.setOptimization, { enabled: false });
    assert.equal(off.optimization, false);
    assert.equal(byName(off, 'fib+0x0')?.optimized, false);
    assert.match((await disassembleAt(fib.address, 1))[0].instruction, /; kprobe: int3 at fib\+0x0$/);
    assert.equal((await rawRead(fib.address, 1, true))[0], 0xcc);
    assert.deepEqual(await dapRead(fib.address, 5), original);
  });

  test('disassemble shows absolute kernel addresses as addresses with their symbol, mnemonics in a column (meant for people to read)', async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork' }] })).body.breakpoints;
    });
    const insns = await disassembleAt(bps[0].instructionReference!, 40);
    const text = insns.map(i => i.instruction);
    assert.ok(text.some(t => /^mov {5}rsi, 0xffffffff8[0-9a-f]{7} <nr_forks\+0x0\/0x8>$/.test(t)), text.join('\n'));
    assert.ok(!text.some(t => /-0x7e[0-9a-f]{6}/.test(t)), 'no kernel address printed as a negative number');
    assert.ok(text.some(t => /^call {4}0xffffffff8[0-9a-f]{7} <copy_process\+0x0\/0x[0-9a-f]+>$/.test(t)), 'branch targets named once');
  });

  test('disassemble marks the int3 of a kprobe and of a kretprobe; a disabled probe is marked as not written', async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork' }, { name: 'r:copy_process' }, { name: 'do_fork+0x4' }] })).body.breakpoints;
    });
    await req(ProbeRequest.setEnabled, { id: bps[2].id, enabled: false });
    const insns = await disassembleAt(bps[0].instructionReference!, 3);
    assert.equal(insns[0].instruction.split('  ;')[0], 'push    rbp', 'original instruction first (mnemonic in its aligned column)');
    assert.match(insns[0].instruction, /  ; kprobe: int3 at do_fork\+0x0$/);
    assert.doesNotMatch(insns[1].instruction, /;/, 'do_fork+0x1 is not probed');
    assert.match(insns[2].instruction, /  ; kprobe at do_fork\+0x4 \[DISABLED\]: no int3 written$/);
    const ret = await disassembleAt(bps[1].instructionReference!, 1);
    assert.match(ret[0].instruction, /  ; kretprobe: int3 at copy_process\+0x0$/);
  });

  test('readMemory returns the original bytes of probed code; _probeReadMemory patched shows int3; writes over a probe are refused, next to it allowed', async () => {
    let bp: DebugProtocol.Breakpoint | undefined;
    await h.launchWith(async () => {
      bp = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork+0x4' }] })).body.breakpoints[0];
    });
    const addr = bp!.instructionReference!;
    const original = await dapRead(addr, 2);
    assert.deepEqual(original, [0x41, 0x57], 'push r15 as compiled');
    assert.deepEqual(await rawRead(addr, 2, false), original);
    assert.deepEqual(await rawRead(addr, 2, true), [0xcc, 0x57]);
    await assert.rejects(h.dc.customRequest('writeMemory', { memoryReference: addr, offset: 1, data: Buffer.from([0x90]).toString('base64') }),
      /writeMemory: 0x[0-9a-f]{16}\.\.\+1 overlaps the probed instruction 0x[0-9a-f]{16}\.\.\+2 of the k probe at do_fork\+0x4/);
    // the byte before the probe is not the probe's: the write goes through (same value, the code is unchanged)
    const before = '0x' + (BigInt(addr) - 1n).toString(16);
    const b = await dapRead(before, 1);
    await h.dc.customRequest('writeMemory', { memoryReference: before, data: Buffer.from(b).toString('base64') });
    await assert.rejects(req(ProbeRequest.readMemory, { memoryReference: addr }), /_probeReadMemory needs \{"memoryReference": string, "count": number/);
    await assert.rejects(h.dc.customRequest('writeMemory', { memoryReference: '0x8000000000000000', data: Buffer.from([1]).toString('base64') }),
      /writeMemory: address 0x8000000000000000 is not a canonical address/);
    const bad = await disassembleAt('0x8000000000000000', 2);
    assert.deepEqual(bad.map(i => [i.instruction, i.presentationHint]), [['(bad)', 'invalid'], ['(bad)', 'invalid']]);
    const nonCanonical = await req<DebugProtocol.ReadMemoryResponse['body']>(ProbeRequest.readMemory, { memoryReference: '0x8000000000000000', count: 4, patched: true });
    assert.equal(nonCanonical?.unreadableBytes, 4, 'a non-canonical address reads as unreadable');
  });

  test('instruction breakpoints: do_fork+offset stops with a description naming it; a bad instructionReference is unverified with a message', async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      const fn = (await h.dc.evaluateRequest({ expression: 'do_fork' })).body.memoryReference!;
      const args: DebugProtocol.SetInstructionBreakpointsArguments = { breakpoints: [
        { instructionReference: fn, offset: 0x6 },
        { instructionReference: 'banana' },
      ] };
      bps = (await h.dc.customRequest('setInstructionBreakpoints', args) as DebugProtocol.SetInstructionBreakpointsResponse).body.breakpoints;
    });
    assert.equal(bps[0].verified, true, bps[0].message);
    assert.equal(bps[1].verified, false);
    assert.match(bps[1].message ?? '', /instructionReference "banana" is not an address/);
    const ev = await h.continueToStop();
    assert.equal(ev.body.reason, 'breakpoint');
    assert.equal(ev.body.description, 'breakpoint at do_fork+0x6');
    assert.deepEqual(ev.body.hitBreakpointIds, [bps[0].id]);
    assertFrameAt(await h.topFrame(ev.body.threadId!), 'do_fork', 0x6n);
  });

  test('function breakpoint do_fork+0x4 stops with "breakpoint at do_fork+0x4"', async () => {
    await h.launchWith(async () => {
      const b = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork+0x4' }] })).body.breakpoints[0];
      assert.ok(b.verified, b.message);
    });
    const ev = await h.continueToStop();
    assert.equal(ev.body.description, 'breakpoint at do_fork+0x4');
  });

  test('function breakpoint condition: stops only where the predicate holds', async () => {
    await h.launchWith(async () => {
      const b = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork', condition: 'arg3 == 0' }] })).body.breakpoints[0];
      assert.ok(b.verified, b.message);
    });
    const ev = await h.continueToStop();
    assert.equal(ev.body.description, 'breakpoint at do_fork+0x0');
    const frame = await h.topFrame(ev.body.threadId!);
    assert.equal(BigInt((await h.evaluate('arg3', frame.id)).result.split(' ')[0]), 0n, 'stack_size is 0 at the stop');
    const st = await probeList();
    assert.ok(st.kprobes[0].nhit > 1, `earlier calls with stack_size != 0 did not stop (hits ${st.kprobes[0].nhit})`);
  });

  test('function breakpoint hit condition: stops at the third hit', async () => {
    await h.launchWith(async () => {
      const b = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork', hitCondition: '3' }] })).body.breakpoints[0];
      assert.ok(b.verified, b.message);
    });
    await h.continueToStop();
    assert.equal((await probeList()).kprobes[0].nhit, 3);
  });

  test('a { ...; } snippet log message runs as the handler: printk output, no stop', async () => {
    const out = collectOutput();
    await h.launchWith(async () => {
      const b = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{
        line: markerLine(FORK_C, 'do_fork_body'), logMessage: '{ printk("snippet: fork flags=%lx\\n", arg0); }',
      }] })).body.breakpoints[0];
      assert.ok(b.verified, b.message);
    });
    let stops = 0;
    h.dc.on('stopped', () => { stops++; });
    const exited = h.dc.waitForEvent('exited');
    await h.dc.continueRequest({ threadId: 1 });
    assert.equal((await within(exited, 'power off')).body.exitCode, 0);
    assert.equal(stops, 0);
    const lines = out.join('').split('\n').filter(l => l.includes('snippet: fork flags='));
    assert.ok(lines.length > 0, 'the snippet printed');
    for (const l of lines) assert.match(l, /^\[ *\d+\.\d{6}\] snippet: fork flags=[0-9a-f]+$/);
  });

  test('Disable Probe on a breakpoint, which the client then drops (unticked): its probe stays listed [DISABLED] with its hits; ticked again it is the same breakpoint, enabled', async () => {
    const line = markerLine(FORK_C, 'do_fork_body');
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line }] })).body.breakpoints;
    });
    const id = bps[0].id as number;
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint');
    await req(ProbeRequest.setEnabled, { id, enabled: false });
    // the extension unticks the breakpoint: the client's next request leaves it out
    await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [] });
    const off = (await probeList()).kprobes.filter(p => p.id === id);
    assert.equal(off.length, 1, 'still listed');
    assert.equal(off[0].enabled, false);
    assert.equal(off[0].nhit, 1);
    assert.match((await debugfs()).list, /do_fork\+0x[0-9a-f]+ +\[DISABLED\]/);
    // ticked again (Enable Probe, or the checkbox): the same breakpoint id, enabled, its hits kept
    const again = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line }] })).body.breakpoints;
    assert.equal(again[0].id, id);
    assert.equal(again[0].verified, true);
    const on = (await probeList()).kprobes.filter(p => p.id === id);
    assert.equal(on.length, 1);
    assert.equal(on[0].enabled, true);
    assert.equal(on[0].nhit, 1);
    // a breakpoint removed without Disable Probe goes away as before
    await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [] });
    assert.equal((await probeList()).kprobes.filter(p => p.id === id).length, 0);
  });
});
