/**
 * A breakpoint in a kprobe module's fault_handler through the adapter, on
 * every architecture with kprobes (test/adapter/fixtures/modules/
 * fault_example.c: its pre_handler on do_fork reads an unmapped address
 * through the kernel's probe_kernel_read_long). The fault is taken while
 * do_fork's kprobe is being handled, during the kernel's trap handling; the
 * fault_handler then runs on the CPU as ordinary code (nested in the
 * pre_handler it interrupted), so the debugger stops in it with its
 * variables; continuing goes on with the kernel's fault handling (the
 * __ex_table fixup: the read returns -EFAULT to the pre_handler) and the
 * run ends normally, every fault seen by the fault_handler. The same for a
 * fault of the single-stepped probed instruction (fault_step_example.c: a
 * kprobe on probe_kernel_read_long's guarded load): the single-step ends,
 * the fault_handler runs on the CPU, then the kernel's fixup.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { KPROBE_ARCHES } from '../kprobes/harness';
import { Harness, kernelImage, lineOf, markerLine } from './dapHarness';
import { repoPath } from '../util/paths';
import { assertFramesBelow } from '../kprobes/belowHandler';

const h = new Harness();
const SRC = repoPath('test', 'adapter', 'fixtures', 'modules', 'fault_example.c');
const MAIN_C = repoPath('examples', 'kernel', 'main.c');
const MISC_C = repoPath('examples', 'kernel', 'misc.c');
/** the guarded load of probe_kernel_read_long (examples/kernel/misc.c), per arch */
const GUARDED_LOAD: Record<string, string> = { x86_64: '"1: movq (%[src])', aarch64: '"1: ldr %[val], [%[src]]', riscv64: '"1: ld %[val], 0(%[src])' };
const TRAP_PAGE_FAULT: Record<string, string> = { x86_64: '14', aarch64: '37', riscv64: '13' };

function collectOutput(): string[] {
  const out: string[] = [];
  h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
  return out;
}

/** the frame's non-register variables by name */
async function frameVars(frameId: number): Promise<Map<string, DebugProtocol.Variable>> {
  const scopes = (await h.dc.scopesRequest({ frameId })).body.scopes;
  const vars = new Map<string, DebugProtocol.Variable>();
  for (const s of scopes.filter(x => !/register|global/i.test(x.name))) {
    for (const v of (await h.dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables) vars.set(v.name, v);
  }
  return vars;
}

for (const arch of KPROBE_ARCHES) describe(`a breakpoint in a kprobe fault_handler on the ${arch} kernel`, () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('stops in handler_fault with its variables; continuing lets the kernel fix the fault up and the run ends normally', async () => {
    const out = collectOutput();
    const line = markerLine(SRC, 'FAULT_HANDLER');
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line }] });
    }, { program: kernelImage(arch), modules: [repoPath('test', 'adapter', 'fixtures', 'modules', 'build', `fault_example-${arch}.ko`)], stopAtExit: true });

    const stop = await h.continueToStop();
    const lines = (): string => out.join('').split('\n').filter(l => /missed|fault|Planted|Oops|BUG/.test(l)).slice(0, 6).join('\n');
    assert.equal(stop.body.reason, 'breakpoint', `${stop.body.description}: ${lines()}`);
    assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at do_fork\+0x0 is being handled\)/);
    const threadId = stop.body.threadId as number;
    const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
    assert.match(frames[0].name, /^handler_fault\b/);
    assert.equal(frames[0].line, line);
    // below the handler: the faulting read in probe_kernel_read_long, the pre_handler that called it, the
    // kprobe's handling, do_fork at the probed address and its caller
    assertFramesBelow(frames, 1, [
      { stub: true },
      { fn: 'probe_kernel_read_long', line: lineOf(MISC_C, GUARDED_LOAD[arch]) },
      { module: 'handler_pre', line: lineOf(SRC, 'read_long(&v, UNMAPPED)') },
      { stub: true },
      { fn: 'do_fork', offset: 0n },
      { fn: 'worker_fn', line: lineOf(MAIN_C, 'pid = do_fork(') },
    ], kernelImage(arch));
    const vars = await frameVars(frames[0].id);
    assert.ok(vars.has('p') && vars.has('regs') && vars.has('trapnr'), [...vars.keys()].join(' '));
    // the page fault's trap number (riscv64's clang keeps it only in the printk's argument register by then)
    const trapnr = vars.get('trapnr')?.value;
    assert.ok(trapnr === TRAP_PAGE_FAULT[arch] || (arch === 'riscv64' && trapnr === '<optimized out>'), JSON.stringify(vars.get('trapnr')));

    // no printk of this call yet; continuing runs the rest of handler_fault, then the kernel's fixup
    assert.doesNotMatch(out.join(''), /fault_handler: /);
    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [] });
    const end = await h.continueToStop(threadId);
    assert.notEqual(end.body.reason, 'breakpoint');
    const text = out.join('');
    assert.doesNotMatch(text, /Oops|BUG:/);
    const pre = text.split('\n').filter(l => /fault_pre: read returned -14$/.test(l.trimEnd())).length;
    const faults = text.split('\n').filter(l => /fault_handler: p->addr=\S+, trap #\d+, fault \d+/.test(l)).length;
    assert.ok(pre > 2, lines());
    assert.equal(faults, pre, 'one fault_handler call per faulting read, each fixed up by the kernel');
  });

  test('stops in the fault_handler of a probe whose single-stepped instruction faults; continuing, the kernel fixes the read up', async () => {
    const out = collectOutput();
    const src = repoPath('test', 'adapter', 'fixtures', 'modules', 'fault_step_example.c');
    const line = markerLine(src, 'STEP_FAULT');
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: src }, breakpoints: [{ line }] });
    }, { program: kernelImage(arch), modules: [repoPath('test', 'adapter', 'fixtures', 'modules', 'build', `fault_step_example-${arch}.ko`)], stopAtExit: true });
    const stop = await h.continueToStop();
    const lines = (): string => out.join('').split('\n').filter(l => /missed|fault|Planted|Oops|BUG/.test(l)).slice(0, 6).join('\n');
    assert.equal(stop.body.reason, 'breakpoint', `${stop.body.description}: ${lines()}`);
    assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at probe_kernel_read_long\+0x[0-9a-f]+ is being handled\)/);
    const threadId = stop.body.threadId as number;
    const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
    assert.match(frames[0].name, /^step_fault\b/);
    assert.equal(frames[0].line, line);
    // below the handler: the probed load (single-stepped out of line when it faulted) in its function, and its caller
    assertFramesBelow(frames, 1, [
      { stub: true },
      { fn: 'probe_kernel_read_long', line: lineOf(MISC_C, GUARDED_LOAD[arch]) },
      { fn: 'worker_fn', line: lineOf(MAIN_C, 'err = probe_kernel_read_long(&v, i == ITERS') },
    ], kernelImage(arch));
    const vars = await frameVars(frames[0].id);
    const trapnr = vars.get('trapnr')?.value;
    assert.ok(trapnr === TRAP_PAGE_FAULT[arch] || (arch === 'riscv64' && trapnr === '<optimized out>'), JSON.stringify(vars.get('trapnr')));
    await h.dc.setBreakpointsRequest({ source: { path: src }, breakpoints: [] });
    const end = await h.continueToStop(threadId);
    assert.notEqual(end.body.reason, 'breakpoint');
    const text = out.join('');
    assert.doesNotMatch(text, /Oops|BUG:/);
    const faults = text.split('\n').filter(l => /step_fault: p->addr=\S+, trap #\d+, fault \d+/.test(l)).length;
    assert.ok(faults >= 2, lines());
    // every worker finished (the faulting reads returned -EFAULT through the fixup)
    assert.ok(text.split('\n').filter(l => /: done, read \d+ bytes, checksum/.test(l)).length >= 2, text.split('\n').slice(-8).join('\n'));
  });
});
