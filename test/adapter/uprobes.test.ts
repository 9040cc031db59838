/**
 * DebugClient tests of breakpoints in user programs (not only in the kernel):
 * a kernel that starts user space runs test/uprobes' uprobed program from the
 * launch's rootfs; a gutter breakpoint in its source (found through the
 * program's DWARF in the machine's filesystem) becomes a uprobe: the stop
 * shows the user task's registers and its user stack symbolized from the
 * program's ELF; the Uprobes view lists the (inode, offset) row with the
 * processes it is inserted in; a return breakpoint is a uretprobe.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';
import { Harness, lineOf, within } from './dapHarness';
import { repoPath } from '../util/paths';
import { frameOffsetIn } from './frameAt';

const h = new Harness();
const KERNEL = repoPath('test', 'fixtures', 'kernel', 'bin', 'userinit.elf');
const SRC = repoPath('test', 'userspace', 'programs', 'uprobed.c');
const PROG = repoPath('test', 'uprobes', 'bin', 'uprobed-x86_64-gcc-O0.elf');

let root = '';

async function probeList(): Promise<ProbeStateBody> {
  return (await within(h.dc.customRequest(ProbeRequest.list) as Promise<DebugProtocol.Response>, 'probe list')).body as ProbeStateBody;
}

describe('adapter: breakpoints in user programs are uprobes', () => {
  before(async () => {
    await h.startServer();
    root = mkdtempSync(join(tmpdir(), 'kprobe-uprobes-'));
    mkdirSync(join(root, 'bin'));
    copyFileSync(PROG, join(root, 'bin', 'uprobed'));
    chmodSync(join(root, 'bin', 'uprobed'), 0o755);
  });
  after(async () => {
    await h.stopServer();
    rmSync(root, { recursive: true, force: true });
  });
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('a gutter breakpoint in the program source stops in the user task: user registers, user stack, the Uprobes row and its process', async () => {
    const leafLine = lineOf(SRC, 'long leaf(long x)');
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      const r = await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line: leafLine }] });
      bps = r.body.breakpoints;
    }, { program: KERNEL, rootfs: root, exec: ['/bin/uprobed'] });
    assert.equal(bps.length, 1);
    assert.equal(bps[0].verified, true, JSON.stringify(bps[0]));
    assert.equal(bps[0].line, leafLine);

    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint');
    assert.deepEqual(stop.body.hitBreakpointIds, [bps[0].id]);
    assert.match(String(stop.body.description), /uprobe, uprobed\[\d+\]/);
    const threadId = stop.body.threadId as number;
    const st = await h.dc.stackTraceRequest({ threadId });
    const frames = st.body.stackFrames;
    assert.equal(frames[0].name, 'leaf');
    assert.ok(frameOffsetIn(frames[0], 'leaf', PROG) > 0n, 'past the prologue, as gdb places a line breakpoint');
    assert.equal(frames[0].line, leafLine);
    assert.match(frames[0].source?.path ?? '', /uprobed\.c$/);
    assert.equal(frames[1].name, 'cstart', JSON.stringify(frames.map(f => f.name)));
    assert.ok(frameOffsetIn(frames[1], 'cstart', PROG) > 0n, 'the return address is inside cstart');
    assert.equal(frames[1].line, lineOf(SRC, 'kv("leaf", leaf(2));'));
    // the user task's registers: leaf(2) is called with rdi = 2
    const scopes = await h.dc.scopesRequest({ frameId: frames[0].id });
    const regsScope = scopes.body.scopes.find(s => s.name === 'Registers');
    assert.ok(regsScope, JSON.stringify(scopes.body.scopes.map(s => s.name)));
    const regs = (await h.dc.variablesRequest({ variablesReference: regsScope.variablesReference })).body.variables;
    const di = regs.find(v => v.name === 'di');
    assert.ok(di, regs.map(v => v.name).join(' '));
    assert.equal(BigInt(di.value), 2n);

    // the program's own DWARF: leaf's parameter in the Arguments scope
    const argsScope = scopes.body.scopes.find(s => s.name === 'Arguments');
    assert.ok(argsScope, JSON.stringify(scopes.body.scopes.map(s => s.name)));
    const args = (await h.dc.variablesRequest({ variablesReference: argsScope.variablesReference })).body.variables;
    assert.deepEqual(args.map(v => [v.name, v.value]), [['x', '2']]);
    const hover = await h.dc.evaluateRequest({ expression: 'x * 10', frameId: frames[0].id, context: 'watch' });
    assert.equal(hover.body.result, '0x14 (20)');

    // the Uprobes view: one row, inode/offset of /bin/uprobed, inserted in the running process
    const list = await probeList();
    assert.equal(list.uprobes.length, 1, JSON.stringify(list.uprobes));
    const row = list.uprobes[0];
    assert.equal(row.path, '/bin/uprobed');
    assert.equal(row.kind, 'uprobe');
    assert.match(row.symbol ?? '', /^leaf\+0x[0-9a-f]+$/);
    assert.equal(row.nhit, 1);
    assert.equal(row.id, bps[0].id);
    assert.equal(row.processes.length, 1);
    assert.equal(row.processes[0].comm, 'uprobed');
    assert.equal(row.processes[0].address, row.address);
    assert.match(row.processes[0].page, /private copy/);
    assert.equal(row.source?.line, leafLine);

    // the view's actions: disable (the consumer unregistered: no process has the breakpoint), enable, unregister
    const req = async (command: string, args: object): Promise<ProbeStateBody> =>
      (await within(h.dc.customRequest(command, args) as Promise<DebugProtocol.Response>, command)).body as ProbeStateBody;
    let st2 = await req(ProbeRequest.setEnabled, { id: row.id, enabled: false });
    assert.equal(st2.uprobes[0].enabled, false);
    assert.deepEqual(st2.uprobes[0].processes, []);
    st2 = await req(ProbeRequest.setEnabled, { id: row.id, enabled: true });
    assert.equal(st2.uprobes[0].enabled, true);
    assert.equal(st2.uprobes[0].processes.length, 1);
    st2 = await req(ProbeRequest.unregister, { id: row.id });
    assert.deepEqual(st2.uprobes, []);

    // run to the end
    const exited = h.dc.waitForEvent('exited');
    await h.dc.continueRequest({ threadId });
    await within(exited, 'the end of the machine');
  });

  test('a return breakpoint (kretprobe mode) on a program line is a uretprobe: it stops at the return with the value', async () => {
    const line = lineOf(SRC, 'long fact(long n)');
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      const r = await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line, mode: 'kretprobe', hitCondition: '==10' }] });
      bps = r.body.breakpoints;
    }, { program: KERNEL, rootfs: root, exec: ['/bin/uprobed'] });
    assert.equal(bps[0].verified, true, JSON.stringify(bps[0]));
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint');
    // the 10th return of fact(10)'s recursion is the outermost: 3628800 = 0x375f00
    assert.match(String(stop.body.description), /return from \/bin\/uprobed:fact\+0x0 = 0x0*375f00/);
    const list = await probeList();
    assert.equal(list.uprobes[0].kind, 'uretprobe');
  });

  test('a condition names the program\'s own variables (its DWARF): x == 5 stops at leaf(5)', async () => {
    const leafLine = lineOf(SRC, 'long leaf(long x)');
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      const r = await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line: leafLine, condition: 'x == 5' }] });
      bps = r.body.breakpoints;
    }, { program: KERNEL, rootfs: root, exec: ['/bin/uprobed'] });
    assert.equal(bps[0].verified, true, JSON.stringify(bps[0]));
    const stop = await h.continueToStop();
    const threadId = stop.body.threadId as number;
    const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
    const x = await h.dc.evaluateRequest({ expression: 'x', frameId: frames[0].id, context: 'hover' });
    assert.equal(x.body.result, '5');
    assert.equal(frames[1].name, 'tail', 'leaf(5) is the call from tail(4)');
  });

  test('a source file no program of the filesystem has: unverified, pending a module that may have it', async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      const r = await h.dc.setBreakpointsRequest({ source: { path: repoPath('test', 'userspace', 'programs', 'procs.c') }, breakpoints: [{ line: 10 }] });
      bps = r.body.breakpoints;
    }, { program: KERNEL, rootfs: root, exec: ['/bin/uprobed'] });
    assert.equal(bps[0].verified, false);
    assert.match(bps[0].message ?? '', /^pending: no line information for procs\.c in the kernel, its programs or its loaded modules/);
  });
});
