/**
 * The debugger on the sample kernel of every architecture with kprobes
 * (x86_64, aarch64, riscv64): a function breakpoint stops with the port's
 * registers (pt_regs names: x86 di/ip/flags, arm64 x0/x30/pc/pstate, riscv
 * a0/ra/epc/status) and a stack walked to the kernel-thread entry; a
 * source-line breakpoint in fork.c maps through the arch's line table; a
 * return breakpoint (kretprobe) stops at the return with the return
 * register = the return value; the disassembly shows the arch's
 * instructions with the breakpoint the probe wrote marked (int3, brk,
 * ebreak or c.ebreak over a compressed instruction).
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { archByName } from '../../emulator/arch/registry';
import { KPROBE_ARCHES, portInfo } from '../kprobes/harness';
import { FORK_C, Harness, kernelImage, markerLine } from './dapHarness';
import { assertFrameAt } from './frameAt';

const h = new Harness();

/** What the port says the debugger shows. */
function facts(arch: string): { regs: string[]; ret: string; bp: (insnLength: number) => string; optprobes: boolean } {
  const p = portInfo(arch);
  const name = (i: number): string => p.regs[i].name;
  const regs = [name(p.abi.argRegs[0]), name(p.abi.spReg), name(p.abi.pcReg)];
  if (p.abi.flagsReg >= 0) regs.push(name(p.abi.flagsReg));
  if (p.abi.returnAddress.kind === 'reg') regs.push(name(p.abi.returnAddress.reg));
  const ops = archByName(arch);
  assert.ok(ops);
  const full = ops.decodeBytes(p.breakpointInsn, 0n)?.mnemonic ?? '';
  const short = p.shortBreakpoint;
  return { regs, ret: name(p.abi.retReg), bp: len => (short && len === short.bytes.length ? short.mnemonic : full), optprobes: p.optprobes };
}

for (const arch of KPROBE_ARCHES) describe(`kprobe debug adapter on the ${arch} kernel`, () => {
  const program = kernelImage(arch);
  const f = facts(arch);
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test(`function breakpoint: ${f.regs.join(', ')}, frames down to ret_from_fork, the breakpoint marked in the disassembly`, async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork' }] })).body.breakpoints;
    }, { program });
    assert.equal(bps[0].verified, true, bps[0].message);
    const ev = await h.continueToStop();
    assert.equal(ev.body.reason, 'breakpoint');
    const threadId = ev.body.threadId!;
    const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
    assertFrameAt(frames[0], 'do_fork', 0n, program);
    assert.equal(frames.at(-1)?.name, 'ret_from_fork+0x0', frames.map(x => x.name).join(' < '));
    const scopes = (await h.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
    const regScope = scopes.find(s => /register/i.test(s.name));
    assert.ok(regScope, scopes.map(s => s.name).join(', '));
    const regs = (await h.dc.variablesRequest({ variablesReference: regScope.variablesReference })).body.variables;
    const names = regs.map(v => v.name);
    for (const n of f.regs) assert.ok(names.includes(n), `${n} in ${names.join(' ')}`);
    assert.equal(BigInt(frames[0].instructionPointerReference!), BigInt(bps[0].instructionReference!), 'frame 0 is at the probe');
    const dis = (await h.dc.customRequest('disassemble', { memoryReference: bps[0].instructionReference!, instructionCount: 2 }) as DebugProtocol.DisassembleResponse).body!.instructions;
    const len = (BigInt(dis[1].address) - BigInt(dis[0].address));
    const bp = f.bp(Number(len));
    assert.doesNotMatch(dis[0].instruction.split('  ;')[0], new RegExp(`^${bp.replace('.', '\\.')}\\b`), 'the original instruction is shown');
    if (f.optprobes) {
      // with jump optimization (x86_64) do_fork+0 has been optimized by the time of the stop
      assert.match(dis[0].instruction, /  ; \[OPTIMIZED\] kprobe: jmp 0x[0-9a-f]+ \(detour buffer\) at do_fork\+0x0$/);
    } else {
      assert.equal(dis[0].instruction.split('  ;')[1], ` kprobe: ${bp} at do_fork+0x0`);
      assert.doesNotMatch(dis[1].instruction, /;/, 'the next instruction is untouched');
    }
  });

  test(`source line breakpoint and a return breakpoint (kretprobe): ${f.ret} is the return value`, async () => {
    let line: DebugProtocol.Breakpoint | undefined;
    let ret: DebugProtocol.Breakpoint | undefined;
    await h.launchWith(async () => {
      line = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] })).body.breakpoints[0];
      ret = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'r:alloc_pid' }] })).body.breakpoints[0];
    }, { program });
    assert.ok(line?.verified && ret?.verified, `${line?.message} ${ret?.message}`);
    assert.equal(line.line, markerLine(FORK_C, 'do_fork_body'));
    const seen: number[] = [];
    let threadId = 1;
    for (let i = 0; i < 2; i++) {
      const stop = await h.continueToStop(threadId);
      threadId = stop.body.threadId!;
      const id = stop.body.hitBreakpointIds?.[0] as number;
      seen.push(id);
      const top = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames[0];
      if (id === line.id) {
        assert.equal(top.source?.path, FORK_C);
        assert.equal(top.line, line.line);
      } else {
        assert.equal(id, ret.id);
        assert.match(stop.body.description ?? '', /^return from alloc_pid = /);
        const reg = await h.evaluate(`regs->${f.ret}`, top.id);
        const rv = await h.evaluate('regs_return_value(regs)', top.id);
        assert.equal(rv.result, reg.result);
      }
    }
    assert.deepEqual([...seen].sort(), [line.id, ret.id].sort(), 'both breakpoints stopped');
  });
});
