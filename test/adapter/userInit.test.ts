/**
 * DebugClient tests of the launch attributes `rootfs` / `exec` with the
 * sample kernel, which starts user space as Linux's kernel_init runs init:
 * the program runs and a gutter breakpoint in its source (a uprobe) is hit;
 * a kernel image that powers off without ever calling kp_user_init says in
 * the Debug Console that the programs never ran.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, KERNEL, lineOf, within } from './dapHarness';
import { repoPath } from '../util/paths';

const h = new Harness();
const SRC = repoPath('test', 'userspace', 'programs', 'uprobed.c');
const PROG = repoPath('test', 'uprobes', 'bin', 'uprobed-x86_64-gcc-O0.elf');
/** a kernel image that never calls kp_user_init (hypercall edge cases; powers off with 42) */
const NO_USER_INIT = repoPath('test', 'fixtures', 'kernel', 'bin', 'hcall.elf');

let root = '';

describe('adapter: the launch\'s exec with the sample kernel', () => {
  before(async () => {
    await h.startServer();
    root = mkdtempSync(join(tmpdir(), 'kprobe-userinit-'));
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

  test('the program given by exec runs: a breakpoint in its source stops in its task (uprobe)', async () => {
    const leafLine = lineOf(SRC, 'long leaf(long x)');
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line: leafLine }] })).body.breakpoints;
    }, { program: KERNEL, rootfs: root, exec: ['/bin/uprobed'] });
    assert.equal(bps[0]?.verified, true, JSON.stringify(bps));
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint');
    assert.deepEqual(stop.body.hitBreakpointIds, [bps[0].id]);
    assert.match(String(stop.body.description), /uprobe, uprobed\[\d+\]/);
    const top = await h.topFrame(stop.body.threadId as number);
    assert.equal(top.line, leafLine);
    assert.match(top.source?.path ?? '', /uprobed\.c$/);
  });

  test('a kernel that powers off without starting them: the Debug Console says the programs never ran', async () => {
    const out: DebugProtocol.OutputEvent['body'][] = [];
    h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body));
    const exited = h.dc.waitForEvent('exited');
    await within(Promise.all([h.dc.configurationSequence(),
      h.dc.launch({ program: NO_USER_INIT, cpus: 2, rootfs: root, exec: ['/bin/uprobed'] })]), 'launch');
    assert.equal((await within(exited, 'the exit')).body.exitCode, 42);
    const line = out.find(o => /the kernel powered off without starting user space/.test(o.output));
    assert.ok(line, out.map(o => o.output).join(''));
    assert.equal(line.category, 'stderr');
    assert.match(line.output, /"\/bin\/uprobed" never ran \(the image never called kp_user_init/);
  });
});
