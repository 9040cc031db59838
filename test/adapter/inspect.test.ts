import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeRequest } from '../../adapter/dapCustom';
import { FORK_C, Harness, KERNEL, lineOf, markerLine } from './dapHarness';
import { loadElf } from '../../emulator/elf/elfFile';
import { frameOffsetIn } from './frameAt';
import { repoPath } from '../util/paths';

const h = new Harness();

/** Variables of a scope by name. */
async function scopeVars(frameId: number, name: string): Promise<Map<string, DebugProtocol.Variable>> {
  const scopes = (await h.dc.scopesRequest({ frameId })).body.scopes;
  const s = scopes.find(x => x.name === name);
  assert.ok(s, `scope ${name} in [${scopes.map(x => x.name).join(', ')}]`);
  const vars = (await h.dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables;
  return new Map(vars.map(v => [v.name, v]));
}

/** Stopped at the do_fork_body breakpoint: the breakpoint and the top frame. */
async function stopInDoFork(): Promise<{ bp: DebugProtocol.Breakpoint; ev: DebugProtocol.StoppedEvent; frame: DebugProtocol.StackFrame }> {
  let bp: DebugProtocol.Breakpoint | undefined;
  await h.launchWith(async () => {
    bp = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] })).body.breakpoints[0];
  });
  assert.ok(bp?.verified, bp?.message);
  const ev = await h.continueToStop();
  assert.equal(ev.body.reason, 'breakpoint');
  return { bp, ev, frame: await h.topFrame(ev.body.threadId!) };
}

describe('kprobe debug adapter: capabilities, Probe scope, evaluate', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('initialize advertises kprobe/kretprobe/hardware breakpoint modes (source, instruction, function), restart, stepping granularity, hover evaluate', async () => {
    const caps = (await h.dc.initializeRequest()).body!;
    const modes = caps.breakpointModes ?? [];
    assert.deepEqual(modes.map(m => m.mode), ['kprobe', 'kretprobe', 'hardware']);
    for (const m of modes) {
      assert.ok(m.appliesTo.includes('source'), `${m.mode} applies to source breakpoints`);
      assert.ok(m.appliesTo.includes('instruction'), `${m.mode} applies to instruction breakpoints`);
      assert.ok(m.appliesTo.includes('function'), `${m.mode} applies to function breakpoints`);
    }
    assert.equal(caps.supportsRestartRequest, true);
    assert.equal(caps.supportsSteppingGranularity, true);
    assert.equal(caps.supportsEvaluateForHovers, true);
    assert.equal(caps.supportsLogPoints, true);
  });

  test('a breakpoint stop names the probe symbol+0xoff; the Probe scope shows p fields, hits and debugfs flags', async () => {
    const { bp, ev, frame } = await stopInDoFork();
    assert.match(ev.body.description ?? '', /^breakpoint at do_fork\+0x[0-9a-f]+$/);
    const scopes = (await h.dc.scopesRequest({ frameId: frame.id })).body.scopes.map(s => s.name);
    assert.deepEqual(scopes, ['Arguments', 'Locals', 'Globals', 'Probe', 'Registers']);
    // DWARF (the source's names, not only registers): do_fork's parameters with their C types; the first is the first argument register
    const args = await scopeVars(frame.id, 'Arguments');
    assert.deepEqual([...args.keys()], ['clone_flags', 'stack_start', 'regs', 'stack_size', 'parent_tidptr', 'child_tidptr']);
    assert.equal(args.get('regs')?.type, 'struct pt_regs *');
    const regsScope = await scopeVars(frame.id, 'Registers');
    const di = regsScope.get('rdi')?.value ?? regsScope.get('di')?.value;
    assert.ok(di !== undefined, [...regsScope.keys()].join(' '));
    assert.equal(BigInt(args.get('clone_flags')?.value ?? 'x'), BigInt(di));
    const locals = await scopeVars(frame.id, 'Locals');
    assert.deepEqual([...locals.keys()].sort(), ['err', 'pid']);
    let p = await scopeVars(frame.id, 'Probe');
    assert.equal(p.get('kind')?.value, 'kprobe');
    const addr = BigInt(bp.instructionReference!);
    const addrHex = '0x' + addr.toString(16).padStart(16, '0');
    assert.match(p.get('p->addr')!.value, new RegExp(`^${addrHex} <do_fork\\+0x[0-9a-f]+>$`));
    assert.equal(p.get('p->addr')!.evaluateName, 'p->addr');
    assert.equal(p.get('hits')?.value, '1');
    assert.equal(p.get('p->nmissed')?.value, '0x0 (0)');
    assert.match(p.get('p->flags')!.value, /^0x[0-4] \([0-4]\)/);
    assert.doesNotMatch(p.get('p->flags')!.value, /DISABLED/);
    // a line breakpoint is registered as perf probe does: the function's symbol_name + offset
    assert.equal(p.get('p->symbol_name')?.value, '"do_fork"');
    assert.equal(BigInt(p.get('p->offset')!.value.split(' ')[0]), addr - loadElf(KERNEL).symbols.lookup('do_fork')!.value);
    assert.ok(!p.has('ri->ret_addr'), 'no kretprobe instance at a kprobe stop');
    // Disabling the probe shows KPROBE_FLAG_DISABLED and the debugfs [DISABLED] flag.
    await h.dc.customRequest(ProbeRequest.setEnabled, { id: bp.id, enabled: false });
    p = await scopeVars(frame.id, 'Probe');
    assert.match(p.get('p->flags')!.value, /^0x[26] \([26]\) \[DISABLED\]/);
    // Caller frames have no Probe scope; their DWARF scopes use the registers the CFI recovers
    const frames = (await h.dc.stackTraceRequest({ threadId: ev.body.threadId! })).body.stackFrames;
    assert.deepEqual((await h.dc.scopesRequest({ frameId: frames[1].id })).body.scopes.map(s => s.name), ['Arguments', 'Locals', 'Globals', 'Registers']);
    const callerLocals = await scopeVars(frames[1].id, 'Locals');
    const callerArgs = await scopeVars(frames[1].id, 'Arguments');
    assert.ok(callerLocals.size + callerArgs.size > 0, `${frames[1].name}: some variables`);
    for (const v of [...callerLocals.values(), ...callerArgs.values()]) assert.doesNotMatch(v.value, /^<error/, `${v.name}: ${v.value}`);
  });

  test('evaluate: handler-language expressions over the stopped CPU, hex and decimal', async () => {
    const { bp, frame } = await stopInDoFork();
    const addr = BigInt(bp.instructionReference!);
    const ip = await h.evaluate('regs->ip', frame.id);
    assert.equal(ip.result, `0x${addr.toString(16)} (${addr})`, 'regs->ip is the probe address at a kprobe stop');
    assert.equal(ip.type, 'unsigned long');
    assert.match((await h.evaluate('p->addr', frame.id)).result, new RegExp(`^0x${addr.toString(16)} <do_fork\\+0x[0-9a-f]+>$`));
    assert.equal((await h.evaluate('2 + 3 * 4', frame.id)).result, '0xe (14)');
    assert.equal((await h.evaluate('-22', frame.id)).result, '0xffffffea (-22)');
    assert.equal((await h.evaluate('(u8)0x1ff', frame.id)).result, '0xff (255)');
    // symbol("...") and a bare symbol name agree
    const sym = await h.evaluate('symbol("do_fork")', frame.id);
    const bare = await h.evaluate('do_fork', frame.id);
    assert.equal(BigInt(sym.result.split(' ')[0]), BigInt(bare.memoryReference!));
    assert.match(bare.result, /^0xffffffff8[0-9a-f]{7} <do_fork>$/);
    // memory through a cast pointer, checked against readMemory
    const sp = BigInt((await h.evaluate('regs->sp', frame.id)).result.split(' ')[0]);
    const word = await h.evaluate('*(u32 *)(regs->sp + 8)', frame.id);
    const mem = await h.dc.customRequest('readMemory', { memoryReference: '0x' + (sp + 8n).toString(16), count: 4 }) as DebugProtocol.ReadMemoryResponse;
    const expected = Buffer.from(mem.body!.data!, 'base64').readUInt32LE(0);
    assert.equal(word.result, `0x${expected.toString(16)} (${expected})`);
    assert.equal(word.type, 'u32');
    // arg0 is the first argument register (clone_flags of do_fork)
    assert.equal((await h.evaluate('arg0 == regs->di', frame.id)).result, '0x1 (1)');
    assert.match((await h.evaluate('jiffies', frame.id)).result, /^0x[0-9a-f]+ \(\d+\)$/);
    // the task's char comm[16]: the string alone (its copy in the handler has no kernel address)
    assert.match((await h.evaluate('current->comm', frame.id)).result, /^"[^"]+"$/);
    // hover on a C identifier that is a kernel symbol: its address
    const hover = await h.evaluate('copy_process', frame.id, 'hover');
    assert.match(hover.result, /^0xffffffff8[0-9a-f]{7} <copy_process>$/);
  });

  test('evaluate and hover C names from DWARF: parameters of the frame, globals and statics by value (as gdb prints them)', async () => {
    const { frame } = await stopInDoFork();
    const args = await scopeVars(frame.id, 'Arguments');
    const flags = await h.evaluate('clone_flags', frame.id, 'repl');
    assert.equal(flags.result, args.get('clone_flags')?.value);
    assert.equal(flags.type, 'unsigned long');
    const hover = await h.evaluate('stack_size', frame.id, 'hover');
    assert.equal(hover.result, args.get('stack_size')?.value);
    // fork.c: static long last_pid = 100, incremented once per alloc_pid(): a value, not its address
    const lp = await h.evaluate('last_pid', frame.id, 'hover');
    assert.equal(lp.type, 'long');
    assert.match(lp.result, /^\d+$/);
    assert.ok(BigInt(lp.result) >= 100n);
    // the value in memory is what the handler language reads through the symbol's address
    const raw = await h.evaluate('*(long *)symbol("last_pid")', frame.id, 'repl');
    assert.equal(BigInt(raw.result.split(' ')[0]), BigInt(lp.result));
    // a function stays a symbol (its address)
    assert.match((await h.evaluate('do_fork', frame.id, 'hover')).result, /^0xffffffff[0-9a-f]+ <do_fork>$/);
  });

  test('a struct pointer argument expands to the struct\'s members, read from memory (vfs_read\'s file)', async () => {
    await h.launchWith(async () => {
      const bp = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'vfs_read' }] })).body.breakpoints[0];
      assert.ok(bp.verified, bp.message);
    });
    const ev = await h.continueToStop();
    const frame = await h.topFrame(ev.body.threadId!);
    const args = await scopeVars(frame.id, 'Arguments');
    const file = args.get('file');
    assert.equal(file?.type, 'struct file *');
    assert.ok(file && file.variablesReference > 0, 'expandable');
    const members = (await h.dc.variablesRequest({ variablesReference: file.variablesReference })).body.variables;
    assert.deepEqual(members.map(v => `${v.type} ${v.name}`), ['const char * name', 'const char * data', 'size_t size', 'int fd', 'int mode']);
    // the same bytes through the handler language: file->name is the first pointer of the struct
    const name = members[0].value;
    // the value is gdb-style: `0x… <file_table+96>`
    assert.match(file.value, /^0x[0-9a-f]+ <file_table(\+\d+)?>$/);
    const viaHandler = await h.evaluate(`*(u64 *)${file.value.split(' ')[0]}`, frame.id, 'repl');
    assert.equal(BigInt(name.split(' ')[0]), BigInt(viaHandler.result.split(' ')[0]));
    assert.match(name, /^0x[0-9a-f]+ "\/[^"]+"$/, 'a path string');
  });

  test('evaluate: errors are clear messages with the column', async () => {
    const { frame } = await stopInDoFork();
    assert.match(await h.evaluateError('regs->nosuch', frame.id), /cannot evaluate "regs->nosuch": 1:7: .*nosuch/);
    assert.match(await h.evaluateError('1 +', frame.id), /cannot evaluate "1 \+": 1:4: /);
    assert.match(await h.evaluateError('*(u32 *)0x10', frame.id), /1:\d+: null fault: /);
    assert.match(await h.evaluateError('symbol("no_such_symbol_xyz")', frame.id), /no_such_symbol_xyz/);
    assert.match(await h.evaluateError('ri->ret_addr', frame.id), /'ri' is not available/);
    assert.match(await h.evaluateError('1 / 0', frame.id), /divide fault/);
    // a register spelled without regs->: the message says how to write it
    assert.match(await h.evaluateError('rdi + 1', frame.id), /cannot evaluate "rdi \+ 1": .*\(registers are regs->di here, or \$di\)/);
    assert.match(await h.evaluateError('$nosuch', frame.id), /no register nosuch on x86_64 \(registers: r15 .* di /);
  });

  test('evaluate: registers gdb-style ($rdi, rdi, $rip) and pt_regs-style ($di)', async () => {
    const { frame } = await stopInDoFork();
    const di = (await h.evaluate('regs->di', frame.id)).result.split(' ')[0];
    for (const e of ['$di', '$rdi', 'rdi', 'di']) assert.equal(BigInt((await h.evaluate(e, frame.id)).result), BigInt(di), e);
    assert.equal((await h.evaluate('$rip', frame.id)).result, (await h.evaluate('$ip', frame.id)).result);
  });

  test('a kretprobe (function breakpoint r:sys_open): return stop, Probe scope with ri fields and maxactive', async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'sys_open', mode: 'kretprobe' } as DebugProtocol.FunctionBreakpoint] })).body.breakpoints;
    });
    assert.equal(bps[0].verified, true, bps[0].message);
    const ev = await h.continueToStop();
    assert.equal(ev.body.reason, 'breakpoint');
    assert.match(ev.body.description ?? '', /^return from sys_open = 0x[0-9a-f]+ to [a-z_]+\+0x[0-9a-f]+$/);
    const frame = await h.topFrame(ev.body.threadId!);
    const p = await scopeVars(frame.id, 'Probe');
    assert.equal(p.get('kind')?.value, 'kretprobe');
    assert.match(p.get('p->addr')!.value, /<sys_open(\+0x0)?>$/);
    const ret = BigInt(frame.instructionPointerReference!);
    assert.equal(BigInt(p.get('ri->ret_addr')!.value.split(' ')[0]), ret, 'ri->ret_addr is where the stop is shown');
    assert.match(p.get('ri->task')!.value, /^0x[0-9a-f]+ \(.+ \[\d+\]\)$/);
    assert.equal(p.get('maxactive')?.value, '10', 'register_kretprobe default max(10, 2 * NR_CPUS) with 2 CPUs');
    assert.match(p.get('ri->data')!.value, /not available/);
    assert.ok(p.has('return value'));
    assert.equal(BigInt((await h.evaluate('ri->ret_addr', frame.id)).result.split(' ')[0]), ret);
    assert.match(await h.evaluateError('ri->data', frame.id), /recycled/);
    const rv = (await h.evaluate('regs_return_value(regs)', frame.id)).result;
    assert.equal(rv.split(' ')[0], p.get('return value')!.value.split(' ')[0]);
  });

  test('stack trace through live kretprobe instances: frames show the real return addresses and are marked', async () => {
    const misc = repoPath('examples', 'kernel', 'misc.c');
    let bps: DebugProtocol.Breakpoint[] = [];
    let src: DebugProtocol.Breakpoint | undefined;
    await h.launchWith(async () => {
      // a return probe on the recursive fib that never stops (condition 0): its instances stay live
      bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'r:fib', condition: '0' }] })).body.breakpoints;
      src = (await h.dc.setBreakpointsRequest({ source: { path: misc }, breakpoints: [{ line: markerLine(misc, 'fib_base') }] })).body.breakpoints[0];
    });
    assert.equal(bps[0].verified, true, bps[0].message);
    assert.ok(src?.verified, src?.message);
    const ev = await h.continueToStop();
    const frames = (await h.dc.stackTraceRequest({ threadId: ev.body.threadId! })).body.stackFrames;
    assert.equal(frames[0].name, 'fib');
    assert.ok(frameOffsetIn(frames[0], 'fib') > 0n, 'at the fib_base line, past the entry');
    // every fib frame returned into by a probed fib call had its return address replaced
    const marked = frames.filter(f => f.name.includes('[kretprobe: stack holds trampoline'));
    assert.ok(marked.length >= 2, frames.map(f => f.name).join(' | '));
    for (const f of marked) {
      assert.equal(f.presentationHint, 'label');
      // the shown pc is the real return address inside a caller, not the trampoline
      assert.doesNotMatch(f.name, /^kretprobe_trampoline|^0x/);
      assert.ok(f.line > 0, `${f.name} has a source line`);
    }
    const tramp = marked[0].name.match(/trampoline (0x[0-9a-f]+)/)![1];
    assert.notEqual(BigInt(marked[0].instructionPointerReference!), BigInt(tramp));
    // the trampoline is engine code outside the image: disassembly names it as Linux's kallsyms does
    const dis = (await h.dc.customRequest('disassemble', { memoryReference: tramp, instructionCount: 1 })).body.instructions;
    assert.equal(dis[0].symbol, 'kretprobe_trampoline+0x0');
  });

  test('a source breakpoint in kretprobe mode probes the function containing the line and keeps its line', async () => {
    const line = markerLine(FORK_C, 'do_fork_body');
    let bp: DebugProtocol.Breakpoint | undefined;
    await h.launchWith(async () => {
      bp = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line, mode: 'kretprobe' }] })).body.breakpoints[0];
    });
    assert.ok(bp?.verified, bp?.message);
    assert.equal(bp.line, line);
    const ev = await h.continueToStop();
    assert.deepEqual(ev.body.hitBreakpointIds, [bp.id]);
    assert.match(ev.body.description ?? '', /^return from do_fork = /);
  });

  test('unverified breakpoints say why: blacklisted (-EINVAL), no code (moved to the next line), unknown symbol, unknown file', async () => {
    const misc = repoPath('examples', 'kernel', 'misc.c');
    const blacklisted = markerLine(misc, 'notify_die');
    const comment = lineOf(FORK_C, 'do_fork: the jprobe example');
    let inMisc: DebugProtocol.Breakpoint[] = [];
    let inFork: DebugProtocol.Breakpoint[] = [];
    let fn: DebugProtocol.Breakpoint[] = [];
    let noFile: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      inMisc = (await h.dc.setBreakpointsRequest({ source: { path: misc }, breakpoints: [{ line: blacklisted }] })).body.breakpoints;
      inFork = (await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: comment }] })).body.breakpoints;
      fn = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'no_such_function' }] })).body.breakpoints;
      // a header only modules include: the kernel image has no line of it (kernel.h now has inline helpers)
      noFile = (await h.dc.setBreakpointsRequest({ source: { path: repoPath('examples', 'include', 'linux', 'kprobes.h') }, breakpoints: [{ line: 1 }] })).body.breakpoints;
    });
    assert.equal(inMisc[0].verified, false);
    assert.match(inMisc[0].message ?? '', /-EINVAL/);
    assert.equal(inFork[0].verified, true, inFork[0].message);
    assert.ok(inFork[0].line! > comment, `moved from the comment line ${comment} to code: ${inFork[0].line}`);
    assert.equal(fn[0].verified, false);
    assert.match(fn[0].message ?? '', /no_such_function/);
    assert.equal(noFile[0].verified, false);
    assert.match(noFile[0].message ?? '', /no line information for .*kprobes\.h/);
  });
});
