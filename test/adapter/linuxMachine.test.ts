/**
 * The full-system PC through the adapter (launch.json `kernel`, `initrd`,
 * `append`, `cpus`, `memory`) on synthetic bzImages whose 64-bit entry runs
 * a few instructions (test/system/boot/syntheticBzImage.ts): the console in
 * the Debug Console, input typed with `>TEXT`, an instruction breakpoint
 * that stops without writing guest memory, a step, registers with the
 * control registers, memory through the guest's page tables, a panic and a
 * triple fault that stop the session inspectable with their text; bad input
 * answers the launch with one line. Addresses come from the image's own
 * setup header (pref_address) and the code's layout, never typed in.
 */
import { describe, test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, kernelImage, within } from './dapHarness';
import { bzImage } from '../system/boot/syntheticBzImage';
import { cpio } from '../userspace/cpio';
import { loadElf } from '../../emulator/elf';
import { ProbeRequest, type ProbeStateBody } from '../../adapter/dapCustom';

const SETUP_SECTS = 4;
const PANIC = 'Kernel panic - not syncing: synthetic';
const outByte = (port: number, v: number): number[] => [0x66, 0xba, port & 0xff, port >> 8, 0xb0, v, 0xee];
const outText = (text: string): number[] => [...text].flatMap(ch => outByte(0x3f8, ch.charCodeAt(0)));

/** the code at the 64-bit entry, and where its parts start (offsets from the entry) */
function echoProgram(): { code: number[]; marks: { bp: number; loop: number } } {
  const code = outText('hello\n');
  const bp = code.length;
  code.push(0x90); // the instruction the breakpoint is set on
  const loop = code.length;
  // poll LSR.DR, read RBR, echo it; a newline ends the loop
  code.push(0x66, 0xba, 0xfd, 0x03, 0xec, 0xa8, 0x01);
  code.push(0x74, (loop - (code.length + 2)) & 0xff);
  code.push(0x66, 0xba, 0xf8, 0x03, 0xec, 0xee, 0x3c, 0x0a);
  code.push(0x75, (loop - (code.length + 2)) & 0xff);
  code.push(...outText(`${PANIC}\n`), ...outByte(0xcf9, 6), 0xf4);
  return { code, marks: { bp, loop } };
}

function withEntryCode(code: number[]): { image: Uint8Array; entry: bigint } {
  const img = bzImage({ kernelBytes: 0x1000, setupSects: SETUP_SECTS });
  img.set(code, (SETUP_SECTS + 1) * 512 + 0x200);
  // the loader puts the kernel at its pref_address; the 64-bit entry is 0x200 into it
  const pref = new DataView(img.buffer).getBigUint64(0x258, true);
  return { image: img, entry: pref + 0x200n };
}

const hex = (v: bigint): string => `0x${v.toString(16).padStart(16, '0')}`;

describe('the full-system PC in the debugger (synthetic kernels)', () => {
  const h = new Harness();
  let dir = '';
  const file = (name: string, data: Uint8Array | string): string => { const p = join(dir, name); writeFileSync(p, data); return p; };
  const initrd = (): string => file('initrd.cpio', cpio([{ name: 'init', mode: 0o100755, data: '#!/bin/sh\n' }]));
  before(async () => { dir = mkdtempSync(join(tmpdir(), 'kp-linux-')); await h.startServer(); });
  after(async () => { rmSync(dir, { recursive: true, force: true }); await h.stopServer(); });
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  /** console output so far (the Debug Console's stdout) */
  function collectOutput(): { text: () => string; console: () => string } {
    let out = '', con = '';
    h.dc.on('output', (e: DebugProtocol.OutputEvent) => { if (e.body.category === 'stdout') out += e.body.output; else con += e.body.output; });
    return { text: () => out, console: () => con };
  }

  async function launchError(args: Record<string, unknown>): Promise<string> {
    await h.dc.initializeRequest();
    try {
      await h.dc.launchRequest(args as DebugProtocol.LaunchRequestArguments);
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('the launch succeeded');
  }

  async function register(threadId: number, name: string): Promise<string> {
    const f = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames[0];
    const scope = (await h.dc.scopesRequest({ frameId: f.id })).body.scopes.find(s => s.name === 'Registers');
    assert.ok(scope, 'a Registers scope');
    const v = (await h.dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables.find(x => x.name === name);
    assert.ok(v, `register ${name}`);
    return v.value;
  }

  async function memory(addr: bigint, count: number): Promise<Uint8Array> {
    const r = await h.dc.customRequest('readMemory', { memoryReference: hex(addr), count });
    return new Uint8Array(Buffer.from(r.body.data as string, 'base64'));
  }

  test('console out and in, an instruction breakpoint the guest cannot see, a step, registers, memory, then a panic that stays inspectable', async () => {
    const prog = echoProgram();
    const { image, entry } = withEntryCode(prog.code);
    const kernel = file('bz-echo', image);
    const out = collectOutput();
    const dc = h.dc;
    const bpAddr = entry + BigInt(prog.marks.bp);
    const entryStop = dc.waitForEvent('stopped');
    let bpResult: DebugProtocol.Breakpoint[] = [];
    await within(Promise.all([
      dc.waitForEvent('initialized').then(async () => {
        bpResult = (await dc.customRequest('setInstructionBreakpoints', { breakpoints: [{ instructionReference: hex(bpAddr) }] })).body.breakpoints as DebugProtocol.Breakpoint[];
      }).then(() => dc.configurationDoneRequest()),
      dc.launch({ kernel, initrd: initrd(), append: 'console=ttyS0 acpi=off', cpus: 1, memory: 128, stopOnEntry: true }),
    ]), 'launch');
    const e0 = await within(entryStop, 'the entry stop') as DebugProtocol.StoppedEvent;
    assert.equal(e0.body.reason, 'entry');
    assert.equal(bpResult.length, 1);
    assert.equal(bpResult[0].verified, true, bpResult[0].message);

    // at the entry: the 64-bit boot protocol's state
    assert.equal(BigInt(await register(1, 'rip')), entry);
    assert.equal(BigInt(await register(1, 'efer')) & 0x500n, 0x500n, 'EFER.LME and LMA');
    assert.equal(BigInt(await register(1, 'cr0')) & 0x80000001n, 0x80000001n, 'CR0.PG and PE');
    assert.notEqual(BigInt(await register(1, 'cr3')), 0n);
    assert.ok(await register(1, 'cr4'));
    assert.ok(await register(1, 'cr2'));
    assert.deepEqual([...await memory(entry, prog.code.length)], prog.code, 'the code at the entry, read through the page tables');

    // the breakpoint: a stop before the instruction, the guest's byte unchanged, the console's text so far
    const s1 = await h.continueToStop();
    assert.equal(s1.body.reason, 'instruction breakpoint');
    assert.equal(BigInt(await register(1, 'rip')), bpAddr);
    assert.deepEqual([...await memory(bpAddr, 1)], [0x90], 'no int3 in guest memory');
    assert.equal(out.text(), 'hello\n');
    const top = await h.topFrame(1);
    assert.equal(BigInt(top.instructionPointerReference!), bpAddr);

    // the debugger's own write lands in guest memory through the page tables (a byte past the program)
    const scratch = entry + BigInt(prog.code.length) + 0x100n;
    await dc.customRequest('writeMemory', { memoryReference: hex(scratch), data: Buffer.from([0x5a, 0xa5]).toString('base64') });
    assert.deepEqual([...await memory(scratch, 2)], [0x5a, 0xa5]);

    // a step: one instruction
    const s2 = await h.stepAndWait(() => dc.nextRequest({ threadId: 1, granularity: 'instruction' }));
    assert.equal(s2.body.reason, 'step');
    assert.equal(BigInt(await register(1, 'rip')), bpAddr + 1n);

    // typed input reaches the guest's UART (the program echoes it); its newline leads to the panic
    const panic = dc.waitForEvent('stopped');
    await within(dc.continueRequest({ threadId: 1 }), 'continue');
    const typed = await h.evaluate('>hi', undefined, 'repl');
    assert.equal(typeof typed.result, 'string');
    const s3 = await within(panic, 'the panic stop', 60_000) as DebugProtocol.StoppedEvent;
    assert.equal(s3.body.reason, 'exception');
    assert.match(s3.body.description ?? '', /The guest panicked: Kernel panic - not syncing: synthetic/);
    assert.match(out.text(), /^hello\nhi\nKernel panic - not syncing: synthetic\n/);
    assert.match(out.console(), /kprobe: The guest panicked: Kernel panic - not syncing: synthetic/);
    // inspectable: registers and memory of the stopped machine
    const rip = BigInt(await register(1, 'rip'));
    assert.ok(rip > entry && rip <= entry + BigInt(prog.code.length), `rip ${rip.toString(16)} in the program`);
    assert.deepEqual([...await memory(entry, 4)], prog.code.slice(0, 4));
    // continue: the reset the guest asked for ends the session
    const ended = dc.waitForEvent('terminated');
    await within(dc.continueRequest({ threadId: 1 }), 'continue after the panic');
    await within(ended, 'the end of the session');
  });

  test('a triple fault stops the session with its reason, registers still readable', async () => {
    const { image, entry } = withEntryCode([0x0f, 0x0b]); // ud2 with no IDT: #UD, #GP, #DF, shutdown
    const kernel = file('bz-ud2', image);
    const dc = h.dc;
    const stop = dc.waitForEvent('stopped');
    await within(Promise.all([
      dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest()),
      dc.launch({ kernel, append: 'console=ttyS0 acpi=off', cpus: 1, memory: 128 }),
    ]), 'launch');
    const s = await within(stop, 'the triple-fault stop') as DebugProtocol.StoppedEvent;
    assert.equal(s.body.reason, 'exception');
    assert.match(s.body.description ?? '', /triple-faulted/);
    assert.equal(BigInt(await register(1, 'rip')), entry);
    assert.equal((await h.dc.threadsRequest()).body.threads.length, 1);
    // what the Linux machine does not do yet says so
    await assert.rejects(h.dc.customRequest('restart', {}), /kprobe: restart: the Linux machine does not restart in place yet/);
    await assert.rejects(h.dc.customRequest('stepBack', { threadId: 1 }), /kprobe: CPU 0 has not run an instruction yet/);
  });

  test('bad input answers the launch with one line', async () => {
    const notKernel = file('notes.txt', 'hello, this is not a kernel\n'.repeat(40));
    assert.match(await launchError({ kernel: notKernel }), /^kprobe: launch: .*notes\.txt.*not .*bzImage[^\n]*$/i);
  });

  test('an initrd that is not a cpio archive', async () => {
    const k = file('bz1', bzImage());
    const bad = file('initrd.txt', 'plain text, not an archive');
    assert.match(await launchError({ kernel: k, initrd: bad, append: 'console=ttyS0 acpi=off', cpus: 1 }), /^kprobe: launch: .*initrd\.txt.*is not an initramfs[^\n]*$/);
  });

  test('a command line over the kernel\'s limit', async () => {
    const k = file('bz2', bzImage({ cmdlineSize: 255 }));
    assert.match(await launchError({ kernel: k, append: 'x'.repeat(300), cpus: 1 }), /^kprobe: launch: .*the command line is 300 bytes; this kernel takes at most 255[^\n]*$/);
  });

  test('memory too small for the kernel', async () => {
    const k = file('bz3', bzImage({ initSize: 0x4000000 }));
    assert.match(await launchError({ kernel: k, memory: 16, append: 'console=ttyS0 acpi=off' }), /^kprobe: launch: .*16 MiB is too small[^\n]*$/);
  });

  test('a vmlinux that is not an ELF, or is another architecture\'s', async () => {
    const k = file('bz5', bzImage());
    const text = file('vmlinux.txt', 'not an ELF file\n'.repeat(10));
    assert.match(await launchError({ kernel: k, vmlinux: text, append: 'console=ttyS0 acpi=off' }), /^kprobe: launch: "vmlinux" .*vmlinux\.txt: [^\n]+$/);
    await h.dc.stop();
    await h.startClient();
    assert.match(await launchError({ kernel: k, vmlinux: kernelImage('aarch64'), append: 'console=ttyS0 acpi=off' }), /^kprobe: launch: "vmlinux" .*kernel-aarch64\.elf is built for aarch64; the full-system PC runs x86_64 kernels$/);
  });

  test('gutter kprobes without the guest\'s agent are refused with how to get it; the views say why they are empty', async () => {
    const { image } = withEntryCode(echoProgram().code);
    const kernel = file('bz-agentless', image);
    const vmlinux = kernelImage('x86_64');
    const fn = loadElf(vmlinux).symbols.all().find(x => x.type === 'func' && x.size > 0n)!;
    const dc = h.dc;
    const entryStop = dc.waitForEvent('stopped');
    let bps: DebugProtocol.Breakpoint[] = [];
    await within(Promise.all([
      dc.waitForEvent('initialized').then(async () => {
        bps = (await dc.customRequest('setFunctionBreakpoints', { breakpoints: [{ name: fn.name, mode: 'kretprobe' }, { name: fn.name }] })).body.breakpoints as DebugProtocol.Breakpoint[];
      }).then(() => dc.configurationDoneRequest()),
      dc.launch({ kernel, vmlinux, initrd: initrd(), append: 'console=ttyS0 acpi=off', cpus: 1, memory: 128, stopOnEntry: true }),
    ]), 'launch');
    await within(entryStop, 'the entry stop');
    assert.equal(bps.length, 2);
    assert.equal(bps[0].verified, false);
    assert.match(bps[0].message ?? '', /kprobes the guest registers through kprobe-debug's agent: launch with "vmlinux" and "agent"/);
    assert.equal(bps[1].verified, true, 'an ordinary function breakpoint is the debugger\'s own');
    const st = (await dc.customRequest(ProbeRequest.list)).body as ProbeStateBody;
    assert.deepEqual([st.kprobes, st.uprobes], [[], []]);
    assert.match(st.unavailable ?? '', /^the guest kernel's lists cannot be read yet: /);
    // a condition is a kprobe the guest runs it in: refused too; the view's actions on the guest need the agent
    const cond = (await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: fn.name, condition: 'regs->di == 0' }] })).body.breakpoints;
    assert.match(cond[0].message ?? '', /^logpoints, conditions and Kretprobe mode on the Linux machine are kprobes the guest registers through kprobe-debug's agent/);
    await assert.rejects(dc.customRequest(ProbeRequest.setOptimization, { enabled: false }), /_probeSetOptimization: the Kprobes view acts on the guest through kprobe-debug's agent: launch with "agent"/);
    await assert.rejects(dc.customRequest(ProbeRequest.setEnabled, { id: -1 }), /_probeSetEnabled needs \{"id": number, "enabled": true\|false\}/);
    await h.dc.stop();
    await h.startClient();
    assert.match(await launchError({ kernel, agent: initrd() }), /^kprobe: launch: "agent" is an initramfs segment appended to "initrd": set "initrd" too$/);
  });

  test('a kernel file that is not there, and a bad attribute', async () => {
    assert.match(await launchError({ kernel: join(dir, 'nothing') }), /^kprobe: launch: "kernel" .*nothing: no such file$/);
    await h.dc.stop();
    await h.startClient();
    const k = file('bz4', bzImage());
    assert.match(await launchError({ kernel: k, cpus: 'two' }), /^kprobe: launch: "cpus" must be an integer/);
  });
});
