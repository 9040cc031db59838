/**
 * Frames in code the emulator owns (named as Linux names them): the
 * kernel-thread return page is `ret_from_fork`, an idle CPU shows one
 * `do_idle` frame, both with a source the adapter serves (never "Unknown
 * Source"); the string of a char array (`current->comm`) is shown as the
 * string.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import { framePc, frameOffsetIn, symbolAddress } from './frameAt';
import { debugInfoOf } from '../../emulator/elf/dwarf/info';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { FORK_C, Harness, KERNEL, markerLine } from './dapHarness';

const h = new Harness();

async function sourceText(src: DebugProtocol.Source): Promise<string> {
  return (await h.dc.sourceRequest({ source: src, sourceReference: src.sourceReference ?? 0 })).body.content;
}

describe('kprobe debug adapter: frames in code the emulator owns', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('the bottom frame of a kernel thread is ret_from_fork, with a source the adapter serves', async () => {
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] });
    });
    const ev = await h.continueToStop();
    const frames = (await h.dc.stackTraceRequest({ threadId: ev.body.threadId! })).body.stackFrames;
    assert.equal(frames[0].name, 'do_fork');
    const last = frames[frames.length - 1];
    assert.equal(last.name, 'ret_from_fork+0x0', frames.map(f => f.name).join(' <- '));
    assert.ok(last.source?.sourceReference, 'a source with a reference, not "Unknown Source"');
    assert.equal(last.source.name, 'kernel thread entry');
    assert.match(last.instructionPointerReference ?? '', /^0x[0-9a-f]{16}$/);
    assert.match(await sourceText(last.source), /^ret_from_fork: the kernel-thread return page of the emulated kernel, 0x/);
    // every frame is named: a symbol, or code the emulator owns
    for (const f of frames) assert.doesNotMatch(f.name, /^0x[0-9a-f]+$/, 'a bare address');
    // current->comm of the stopped task: the string alone
    const comm = (await h.dc.evaluateRequest({ expression: 'current->comm', frameId: frames[0].id, context: 'watch' })).body;
    const threads = (await h.dc.threadsRequest()).body.threads;
    const name = threads.find(t => t.id === ev.body.threadId)?.name ?? '';
    assert.equal(comm.result, JSON.stringify(/^CPU \d+: (.+) \[\d+\]$/.exec(name)?.[1]), `${comm.result} vs thread ${name}`);
    assert.equal(comm.type, 'char [16]', "Linux's char comm[TASK_COMM_LEN]");
    // a real kernel pointer to a string keeps its address: p->addr is not a string, a cast one is
    assert.match((await h.dc.evaluateRequest({ expression: '(char *)p->addr', frameId: frames[0].id, context: 'watch' })).body.result, /^0x[0-9a-f]{16} ".*"$/);
  });

  test('a frame with a source line is named by its function alone; its instructionPointerReference is the exact pc', async () => {
    let bp: DebugProtocol.Breakpoint | undefined;
    await h.launchWith(async () => {
      bp = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] })).body.breakpoints[0];
    });
    assert.ok(bp?.verified && bp.instructionReference, JSON.stringify(bp));
    const ev = await h.continueToStop();
    const frames = (await h.dc.stackTraceRequest({ threadId: ev.body.threadId! })).body.stackFrames;
    const names = frames.map(f => f.name).join(' <- ');
    // the name is the function, as VS Code users expect; the offset is in the address
    assert.equal(frames[0].name, 'do_fork', names);
    assert.equal(frames[0].line, markerLine(FORK_C, 'do_fork_body'));
    assert.equal(framePc(frames[0]), BigInt(bp.instructionReference), 'the pc of the breakpoint, exactly');
    assert.ok(framePc(frames[0]) > symbolAddress('do_fork'), 'past the entry: the offset is only in the address');
    // every frame with a source line is named without +0x; code the emulator owns keeps its offset
    for (const f of frames) {
      if (f.source?.path) assert.doesNotMatch(f.name, /\+0x/, names);
      else assert.match(f.name, /\+0x[0-9a-f]+/, names);
    }
  });

  test('an inlined call is a frame of its own, as gdb shows it: the inlined function at the line, its caller at the call', async () => {
    // lib.c's static out_char is inlined into vsnprintf and out_number (no out-of-line copy)
    const libC = FORK_C.replace(/fork\.c$/, 'lib.c');
    const lines = readFileSync(libC, 'utf8').split('\n');
    const line = lines.indexOf('\to->len++;') + 1;
    assert.ok(line > 0);
    await h.launchWith(async () => {
      const bp = (await h.dc.setBreakpointsRequest({ source: { path: libC }, breakpoints: [{ line }] })).body.breakpoints[0];
      assert.ok(bp.verified, bp.message);
    });
    const ev = await h.continueToStop();
    const frames = (await h.dc.stackTraceRequest({ threadId: ev.body.threadId! })).body.stackFrames;
    const names = frames.map(f => `${f.name}@${f.line}`).join(' <- ');
    assert.equal(frames[0].name, 'out_char', names);
    assert.equal(frames[0].line, line);
    assert.match(frames[1].name, /^(vsnprintf|out_number)$/, names);
    assert.ok(frameOffsetIn(frames[1], frames[1].name) > 0n, 'the call is inside its caller');
    assert.equal(frames[1].source?.path, libC);
    assert.match(lines[frames[1].line - 1], /\bout_char\(&?o, /, `frame 1 is at an out_char call: lib.c:${frames[1].line}`);
    // one physical frame: the same pc
    assert.equal(frames[0].instructionPointerReference, frames[1].instructionPointerReference);
    // each frame has its own function's names
    const argNames = async (frameId: number): Promise<string[]> => {
      const scopes = (await h.dc.scopesRequest({ frameId })).body.scopes;
      const a = scopes.find(x => x.name === 'Arguments');
      assert.ok(a, scopes.map(x => x.name).join(', '));
      return (await h.dc.variablesRequest({ variablesReference: a.variablesReference })).body.variables.map(v => v.name);
    };
    assert.deepEqual(await argNames(frames[0].id), ['o', 'c']);
    const callerArgs = await argNames(frames[1].id);
    if (frames[1].name === 'vsnprintf') assert.deepEqual(callerArgs, ['buf', 'size', 'fmt', 'ap']);
    else assert.ok(callerArgs.includes('o') && !callerArgs.includes('c'), callerArgs.join(', '));
    // evaluate in the inlined frame sees its names; the caller's frame its own
    assert.equal((await h.evaluate('c', frames[0].id)).type, 'char');
    assert.equal((await h.evaluate('o', frames[0].id)).type, 'struct outbuf *');
    assert.match(await h.evaluateError('fmt', frames[0].id), /not declared/);
    if (frames[1].name === 'vsnprintf') {
      assert.equal((await h.evaluate('o', frames[1].id)).type, 'struct outbuf');
      assert.equal((await h.evaluate('fmt', frames[1].id)).type, 'const char *');
    }
  });

  test('a frame whose DWARF cannot be read: registers only, and the reason once in the Debug Console', async () => {
    // the sample kernel with the first DIE of fork.c's unit given an abbreviation code its table lacks
    const image = loadElf(KERNEL);
    const doFork = image.symbols.lookup('do_fork')!.value;
    const u = debugInfoOf(image).unitFor(doFork)!;
    const bytes = readFileSync(KERNEL);
    bytes[Number(image.section('.debug_info')!.offset) + u.dieOffset] = 0x7f;
    const dir = mkdtempSync(join(tmpdir(), 'kprobe-bad-dwarf-'));
    const broken = join(dir, 'kernel-x86_64.elf');
    writeFileSync(broken, bytes);
    try {
      await h.launchWith(async () => {
        const bp = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork' }] })).body.breakpoints[0];
        assert.ok(bp.verified, bp.message);
      }, { program: broken });
      const logged: string[] = [];
      h.dc.on('output', (e: DebugProtocol.OutputEvent) => { logged.push(e.body.output); });
      const ev = await h.continueToStop();
      const frames = (await h.dc.stackTraceRequest({ threadId: ev.body.threadId! })).body.stackFrames;
      assert.match(frames[0].name, /^do_fork/);
      for (let i = 0; i < 2; i++) {
        const scopes = (await h.dc.scopesRequest({ frameId: frames[0].id })).body.scopes.map(s => s.name);
        assert.deepEqual(scopes, ['Probe', 'Registers']);
      }
      const lines = logged.filter(l => l.includes('no debug info for this frame'));
      assert.equal(lines.length, 1, logged.join(''));
      assert.match(lines[0], /^kprobe: no debug info for this frame \(do_fork\+0x[0-9a-f]+\): .*unit at 0x[0-9a-f]+: DIE at 0x[0-9a-f]+: abbreviation code 127 is not in the table/);
      // evaluate still answers with what needs no DWARF
      assert.match((await h.evaluate('regs->di', frames[0].id)).result, /^0x[0-9a-f]+/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an idle CPU shows one do_idle frame (the swapper task), never a 0x0 frame', async () => {
    await h.launchWith(async () => { /* stopped at the entry: only start_kernel runs, on CPU 0 */ });
    const threads = (await h.dc.threadsRequest()).body.threads;
    const idle = threads.find(t => t.name === 'CPU 1: swapper/1');
    assert.ok(idle, threads.map(t => t.name).join(', '));
    const body = (await h.dc.stackTraceRequest({ threadId: idle.id })).body;
    assert.deepEqual(body.stackFrames.map(f => f.name), ['do_idle']);
    assert.equal(body.totalFrames, 1);
    const f = body.stackFrames[0];
    assert.equal(f.source?.name, 'idle task');
    assert.match(await sourceText(f.source!), /^do_idle: the CPU is idle, running Linux's idle task \(swapper\/N/);
    // its Registers scope still answers (the CPU's registers as they are)
    const scopes = (await h.dc.scopesRequest({ frameId: f.id })).body.scopes;
    assert.deepEqual(scopes.map(s => s.name), ['Registers']);
    // a reference nobody handed out is an error, not an empty text
    await assert.rejects(h.dc.sourceRequest({ sourceReference: 999 }), /no source with reference 999/);
  });
});
