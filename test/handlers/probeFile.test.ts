import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { checkProbeFile, compileProbeFile, Diagnostic, ignoredPcWriteMessage, parseProbeFile, parseTarget } from '../../emulator/handlers';
import { repoPath } from '../util/paths';
import { FakeEnv, X86_REGS } from './fakeEnv';

const KERNEL_SYMBOLS = new Set(['do_fork', 'sys_open', 'vfs_read']);
const opts = { regNames: X86_REGS, symbolExists: (n: string) => KERNEL_SYMBOLS.has(n), imageArch: 'x86_64' };

/** 1-based position of the n-th occurrence of needle in text. */
function posOf(text: string, needle: string, nth = 0): { line: number; column: number } {
  let idx = -1;
  for (let i = 0; i <= nth; i++) { idx = text.indexOf(needle, idx + 1); assert.ok(idx >= 0, `marker ${needle} not found`); }
  const before = text.slice(0, idx).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}

function errorsOf(text: string): Diagnostic[] {
  const r = compileProbeFile(text, 't.kprobe', opts);
  return r.diagnostics.filter(d => d.severity === 'error');
}

/** exactly one error, at needle, whose message matches */
function expectError(text: string, needle: string, msg: RegExp, nth = 0): void {
  const errs = errorsOf(text);
  assert.equal(errs.length, 1, `want one error, got ${JSON.stringify(errs)}`);
  assert.match(errs[0].message, msg);
  const p = posOf(text, needle, nth);
  assert.deepEqual({ line: errs[0].line, column: errs[0].column }, p, errs[0].message);
  assert.ok(errs[0].endLine > errs[0].line || errs[0].endColumn > errs[0].column);
}

const sample = (name: string): string => readFileSync(repoPath('examples', 'probes', name), 'utf8');

describe('.kprobe files: the documentation samples', () => {
  test('the samples target functions the sample kernel defines', () => {
    const src = readFileSync(repoPath('examples', 'kernel', 'fork.c'), 'utf8') + readFileSync(repoPath('examples', 'kernel', 'fs.c'), 'utf8');
    assert.match(src, /long do_fork\(unsigned long clone_flags/);
    assert.match(src, /long sys_open\(const char \*filename/);
  });

  test('kprobe_example: pre/post/fault on do_fork', () => {
    const text = sample('kprobe_example.kprobe');
    const parsed = parseProbeFile(text, 'kprobe_example.kprobe');
    assert.deepEqual(parsed.diagnostics, []);
    assert.equal(parsed.file.image?.path, '../kernel/build/kernel-x86_64.elf');
    const r = compileProbeFile(text, 'kprobe_example.kprobe', opts);
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.probes.length, 1);
    const p = r.probes[0];
    assert.equal(p.kind, 'kprobe');
    assert.deepEqual(p.target, { kind: 'symbol', name: 'do_fork', offset: 0n });
    assert.deepEqual(Object.keys(p.handlers).sort(), ['fault', 'post', 'pre']);
    assert.deepEqual({ line: p.line, column: p.column }, posOf(text, 'kprobe do_fork'));
    const env = new FakeEnv();
    env.probe = { addr: 0xffffffff81000400n, symbol_name: 'do_fork', offset: 0n, nmissed: 0n, flags: 0n };
    env.regs.set('ip', 0xffffffff81000401n); env.regs.set('flags', 0x246n);
    assert.equal(p.handlers.pre!.run(env), 0n);
    assert.equal(env.stacks, 1);
    p.handlers.post!.run(env);
    env.trapnr = 14;
    assert.equal(p.handlers.fault!.run(env), 0n);
    assert.equal(env.text,
      'pre_handler: p->addr=0xffffffff81000400, ip=ffffffff81000401, flags=0x246\n' +
      'post_handler: p->addr=0xffffffff81000400, flags=0x246\n' +
      'fault_handler: p->addr=0xffffffff81000400, trap #14\n');
  });

  test('kretprobe_example: entry stores a timestamp in ri->data, return reports failures', () => {
    const r = compileProbeFile(sample('kretprobe_example.kprobe'), 'kretprobe_example.kprobe', opts);
    assert.deepEqual(r.diagnostics, []);
    const p = r.probes[0];
    assert.equal(p.kind, 'kretprobe');
    assert.deepEqual(p.attrs, { maxactive: 20, data_size: 8 });
    const env = new FakeEnv();
    env.map(0x8000n, 8);
    env.probe = { addr: 0xffffffff81000800n, symbol_name: 'sys_open', offset: 0n, nmissed: 0n, flags: 0n };
    env.ri = { ret_addr: 0xffffffff81000900n, task: 0x9000n, data: 0x8000n };
    env.time = 5000n;
    assert.equal(p.handlers.entry!.run(env), 0n);
    env.time = 5600n;
    env.retval = BigInt.asUintN(64, -2n);
    p.handlers.return!.run(env);
    env.retval = 3n;
    p.handlers.return!.run(env);
    assert.equal(env.text, 'sys_open: return val = -2 (duration = 600 ns)\n');
  });

  test('jprobe_example: the body sees do_fork arguments', () => {
    const r = compileProbeFile(sample('jprobe_example.kprobe'), 'jprobe_example.kprobe', opts);
    assert.deepEqual(r.diagnostics, []);
    const p = r.probes[0];
    assert.equal(p.kind, 'jprobe');
    const env = new FakeEnv();
    env.regs.set('di', 0x11n); env.regs.set('dx', 0xffff888000002000n); env.regs.set('cx', 0x2000n);
    p.handlers.jprobe!.run(env);
    assert.equal(env.text, 'jprobe: clone_flags=0x11, stack_size=0x2000, regs=0xffff888000002000\n');
  });
});

describe('.kprobe files: targets and attributes', () => {
  test('target forms', () => {
    assert.deepEqual(parseTarget('do_fork+0x10'), { kind: 'symbol', name: 'do_fork', offset: 16n });
    assert.deepEqual(parseTarget('0xffffffff81000000'), { kind: 'address', addr: 0xffffffff81000000n });
    assert.deepEqual(parseTarget('0xffffffffffffffff'), { kind: 'address', addr: 0xffffffffffffffffn });
    assert.equal(parseTarget('0x1ffffffffffffffff'), undefined);
    assert.deepEqual(parseTarget('fs.c:38'), { kind: 'line', file: 'fs.c', line: 38 });
    const r = compileProbeFile('kprobe do_fork + 4 { pre { } }\nkprobe 0xffffffff81000010 disabled { post { } }\nkprobe ../kernel/fs.c:38 { pre { } }', 't', opts);
    assert.deepEqual(r.diagnostics, []);
    assert.deepEqual(r.probes.map(p => p.target), [
      { kind: 'symbol', name: 'do_fork', offset: 4n },
      { kind: 'address', addr: 0xffffffff81000010n },
      { kind: 'line', file: '../kernel/fs.c', line: 38 },
    ]);
    assert.deepEqual(r.probes[1].attrs, { disabled: true });
  });

  test('comments are ignored', () => {
    const r = compileProbeFile('/* c */ kprobe do_fork { // c\n pre { /* x */ return 0; } }', 't', opts);
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.probes.length, 1);
  });
});

describe('.kprobe files: diagnostics with positions', () => {
  test('wrong handler kinds for the probe kind', () => {
    expectError('kprobe do_fork {\n  entry { return 0; }\n}', 'entry', /'entry' handlers belong to kretprobes/);
    expectError('kretprobe sys_open {\n  pre { return 0; }\n}', 'pre', /'pre' handlers belong to kprobes/);
    expectError('kprobe do_fork { prefix { } }', 'prefix', /unknown handler kind 'prefix'/);
  });

  test('duplicate handlers', () => {
    expectError('kprobe do_fork {\n  pre { }\n  pre { }\n}', 'pre', /duplicate 'pre' handler \(the first is at line 2\)/, 1);
  });

  test('unknown registers, fields and context names', () => {
    expectError('kprobe do_fork { pre { printk("%lx", regs->eip); } }', 'eip', /unknown register 'eip'/);
    expectError('kprobe do_fork { pre { return p->bogus; } }', 'bogus', /no field 'bogus'/);
    expectError('kprobe do_fork { pre { return trapnr; } }', 'trapnr', /only available in fault handlers/);
    expectError('kprobe do_fork { pre { return ri->data != 0; } }', 'ri', /'ri' is not available in a pre handler/);
    expectError('kprobe do_fork { pre { return ax; } }', 'ax', /'ax' is not declared \(did you mean regs->ax\?\)/);
  });

  test('unknown symbols: as a target and in symbol()', () => {
    // compiled to register: an unknown target is left to registration (-ENOENT for that probe alone)
    const text = 'kprobe do_frok { pre { } }\nkprobe do_fork { pre { } }\n';
    const r = compileProbeFile(text, 't.kprobe', opts);
    assert.deepEqual(r.diagnostics.filter(d => d.severity === 'error'), []);
    assert.deepEqual(r.probes.map(p => p.target), [{ kind: 'symbol', name: 'do_frok', offset: 0n }, { kind: 'symbol', name: 'do_fork', offset: 0n }]);
    // checked for an editor: an error on the target, with a "did you mean" when a name is near
    const parsed = parseProbeFile(text, 't.kprobe');
    const errs = checkProbeFile(parsed.file, { ...opts, similarSymbols: (n: string) => (n === 'do_frok' ? ['do_fork'] : []) })
      .filter(d => d.severity === 'error');
    assert.equal(errs.length, 1);
    assert.equal(errs[0].message, "unknown symbol 'do_frok' in the image (did you mean 'do_fork'?)");
    assert.deepEqual({ line: errs[0].line, column: errs[0].column }, posOf(text, 'do_frok'));
    assert.equal(checkProbeFile(parseProbeFile('kprobe nope_fn { pre { } }', 't.kprobe').file, opts)[0].message, "unknown symbol 'nope_fn' in the image");
    expectError('kprobe do_fork { pre { regs->ip = symbol("nope"); return 1; } }', '"nope"', /unknown symbol 'nope'/);
  });

  test('bad attributes', () => {
    expectError('kprobe do_fork maxactive=3 { pre { } }', 'maxactive', /only applies to kretprobes/);
    expectError('kretprobe sys_open maxactive=lots { return { } }', 'lots', /'maxactive' must be an integer \(<= 0: the default\), not 'lots'/);
    expectError('kretprobe sys_open data_size=-1 { return { } }', '-1', /expected a value for attribute 'data_size'|'data_size' must be a non-negative integer/);
    expectError('kretprobe sys_open data_size=100000 { return { } }', '100000', /too large/);
    expectError('kretprobe sys_open colour=red { return { } }', 'colour', /unknown attribute 'colour'/);
    expectError('kretprobe sys_open maxactive=1 maxactive=2 { return { } }', 'maxactive', /duplicate attribute/, 1);
    expectError('kprobe do_fork disabled=maybe { pre { } }', 'maybe', /true or false/);
  });

  test('placement rules: kretprobe/jprobe at function entry, one jprobe per function', () => {
    expectError('kretprobe sys_open+4 { return { } }', 'sys_open+4', /function entry/);
    expectError('jprobe fs.c:38 { }', 'fs.c:38', /not a source line/);
    expectError('jprobe do_fork { }\njprobe do_fork { }', 'do_fork', /only one jprobe per function/, 1);
    expectError('kprobe 0x0 { pre { } }', '0x0', /address 0/);
  });

  test('syntax errors', () => {
    expectError('kprobe { pre { } }', '{', /missing target/);
    expectError('kprobe do_fork { pre { int x = ; } }', ';', /expected an expression/);
    expectError('kprobe do_fork { pre { printk("oops); \n} }', '"oops', /unterminated string/);
    expectError('probe do_fork { }', 'probe', /expected 'kprobe', 'kretprobe', 'jprobe', 'kwatch', 'uprobe', 'uretprobe', a kprobe_events \/ uprobe_events line \(p\[:\[GRP\/\]EVENT\] TARGET \[FETCHARGS\], r\[MAXACTIVE\]\[:\.\.\.\], -:\[GRP\/\]EVENT\), 'batch' or 'image'/);
    expectError('kprobe do_fork { pre { return 0; }', 'kprobe', /missing '}' to close the kprobe/, 0);
    expectError('kprobe do@fork { pre { } }', 'do@fork', /invalid probe target 'do@fork' \(expected symbol, symbol\+offset, 0xaddress or file.c:line\)/);
    expectError('kprobe do#fork { pre { } }', '#', /invalid probe target: unexpected character/);
    expectError('image "a.elf"\nimage "b.elf"\nkprobe do_fork { pre { } }', 'image', /duplicate 'image'/, 1);
  });

  test('type errors inside handlers', () => {
    expectError('kprobe do_fork { pre { return *ri; } }', 'ri', /not available/);
    expectError('kprobe do_fork { pre { void *v = (void *)regs->sp; return *v; } }', '*v', /cannot dereference 'void \*'/, 1);
    expectError('kprobe do_fork { post { p->addr = 0; } }', 'p->addr', /read-only/);
    expectError('kprobe do_fork { pre { int x; return &x != 0; } }', '&x', /address of a local/);
    expectError('kprobe do_fork { pre { while (1) { } break; } }', 'break', /outside a loop/);
    expectError('kprobe do_fork { pre { int x; int x; } }', 'x', /redeclaration/, 1);
    expectError('kprobe do_fork { pre { frobnicate(1); } }', 'frobnicate', /unknown function 'frobnicate'/);
    expectError('kprobe do_fork { pre { printk(); } }', 'printk', /takes at least 1 argument/);
  });

  test('warnings: ri->data without data_size, probe without handlers', () => {
    const text = 'kretprobe sys_open { entry { *(u64 *)ri->data = 1; return 0; } }\nkprobe do_fork { }';
    const d = checkProbeFile(parseProbeFile(text, 't').file, opts);
    assert.deepEqual(d.map(x => [x.severity, x.line, x.column]), [['warning', 1, 1], ['warning', 2, 1]]);
    assert.match(d[0].message, /data_size/);
    assert.match(d[1].message, /no handlers/);
  });

  test('warning: a pre handler assigning the pc of a kprobe that may be jump-optimized (no post handler)', () => {
    const text = 'kprobe do_fork {\n  pre { regs->ax = 42; regs->ip = *(u64 *)regs->sp; regs->sp += 8; return 1; }\n}';
    const d = compileProbeFile(text, 't', opts);
    assert.equal(d.diagnostics.length, 1, JSON.stringify(d.diagnostics));
    const w = d.diagnostics[0];
    assert.equal(w.severity, 'warning');
    assert.deepEqual({ line: w.line, column: w.column, endColumn: w.endColumn }, { ...posOf(text, 'regs->ip'), endColumn: posOf(text, 'regs->ip').column + 'regs->ip'.length });
    assert.equal(w.message, ignoredPcWriteMessage('ip'));
    assert.match(w.message, /regs->ip.*ignored once the probe is jump-optimized/);
    assert.match(w.message, /empty `post \{\}` handler/);
    assert.match(w.message, /--sysctl debug\.kprobes_optimization=0/);
    assert.equal(d.probes.length, 1, 'a warning does not keep the probe from registering');
    // the first assignment is the one reported; ++ and op= count as assignments
    for (const body of ['regs->ip++; regs->ip = 0;', 'regs->ip += 4;', 'if (arg0) regs->ip = symbol("vfs_read");']) {
      const t2 = `kprobe do_fork+0x4 { pre { ${body} return 1; } }`;
      const ws = compileProbeFile(t2, 't', opts).diagnostics;
      assert.deepEqual(ws.map(x => [x.severity, x.column]), [['warning', posOf(t2, 'regs->ip').column]], body);
    }
  });

  test('no ip warning: a post handler (even empty), other registers, other probe kinds, arches without optprobes', () => {
    const quiet = [
      'kprobe do_fork { pre { regs->ip = regs->ip + 2; return 1; } post { } }',
      'kprobe do_fork { post { } pre { regs->ip = 0; return 1; } }',
      'kprobe do_fork { pre { regs->ax = 1; regs->sp -= 8; return 0; } }',
      'kprobe do_fork { pre { return regs->ip == 0; } }',
      'kprobe do_fork { fault { regs->ip = 0; return 1; } }',
      'kretprobe do_fork { entry { regs->ip = 0; return 0; } return { regs->ip = 1; } }',
      'jprobe do_fork { regs->ip = 0; }',
    ];
    for (const t of quiet) assert.deepEqual(compileProbeFile(t, 't', opts).diagnostics, [], t);
    // aarch64 and riscv64 kernels have no optprobes: assigning their pc is honoured at every hit
    const arm = compileProbeFile('kprobe do_fork { pre { regs->pc = regs->x30; return 1; } }', 't', { regNames: ['pc', 'sp', 'x0', 'x30'], imageArch: 'aarch64' });
    assert.deepEqual(arm.diagnostics, []);
    const rv = compileProbeFile('kprobe do_fork { pre { regs->epc = regs->ra; return 1; } }', 't', { regNames: ['epc', 'ra', 'sp', 'a0'], imageArch: 'riscv64' });
    assert.deepEqual(rv.diagnostics, []);
    // 32-bit arm has optprobes and calls its pc "pc"
    const arm32 = compileProbeFile('kprobe do_fork { pre { regs->pc = regs->lr; return 1; } }', 't', { regNames: ['r0', 'lr', 'pc', 'sp'], imageArch: 'arm' });
    assert.deepEqual(arm32.diagnostics.map(x => [x.severity, x.message]), [['warning', ignoredPcWriteMessage('pc')]]);
  });

  test('a probe with errors is left out, the others compile', () => {
    const r = compileProbeFile('kprobe do_fork { pre { return regs->nope; } }\nkretprobe sys_open { return { } }', 't', opts);
    assert.equal(r.diagnostics.filter(d => d.severity === 'error').length, 1);
    assert.deepEqual(r.probes.map(p => p.kind), ['kretprobe']);
    const s = compileProbeFile('kprobe do_fork { pre { int x = ; } }\nkretprobe sys_open { return { } }', 't', opts);
    assert.deepEqual(s.probes.map(p => p.kind), ['kretprobe']);
  });
});
