/**
 * Diagnostics over LSP: syntax errors with their position, unknown registers
 * and fields, unknown symbols checked against the image the file names, and
 * handler kinds that do not belong to the probe kind.
 */
import { test, describe, before, after as afterAll } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Diagnostic, Position } from 'vscode-languageserver-protocol';
import { repoPath } from '../util/paths';
import { portByName } from '../../emulator/ports';
import { LspClient, after, fileUri, positionOf } from './lspHarness';

const DIR = repoPath('examples', 'probes');
const HEADER = 'image "../kernel/build/kernel-x86_64.elf"\n';

/** The example from the handler-language spec: valid against the sample x86_64 kernel. */
const VALID = `${HEADER}// comment
kprobe do_fork {
  pre   { printk("pre_handler: p->addr=%p, ip=%lx, flags=0x%lx\\n", p->addr, regs->ip, regs->flags); dump_stack(); return 0; }
  post  { printk("post_handler: p->addr=%p, flags=0x%lx\\n", p->addr, regs->flags); }
  fault { printk("fault_handler: p->addr=%p, trap #%d\\n", p->addr, trapnr); return 0; }
}
kretprobe sys_open maxactive=20 data_size=8 {
  entry  { *(u64 *)ri->data = ktime_get(); return 0; }
  return { long rv = regs_return_value(regs); if (rv < 0) printk("sys_open: return val = %ld (duration = %lld ns)\\n", rv, ktime_get() - *(u64 *)ri->data); }
}
jprobe do_fork { printk("jprobe: clone_flags=0x%lx, stack_size=0x%lx\\n", regs->di, regs->cx); }
kprobe do_fork+0x4 { pre { return 0; } }
`;

function covers(d: Diagnostic, p: Position): boolean {
  const le = (a: Position, b: Position): boolean => a.line < b.line || (a.line === b.line && a.character <= b.character);
  return le(d.range.start, p) && (le(p, d.range.end));
}

function expectOne(diags: Diagnostic[], text: string, needle: string, message: RegExp, nth = 0): Diagnostic {
  const at = positionOf(text, needle, 0, nth);
  const hits = diags.filter(d => message.test(d.message));
  assert.equal(hits.length, 1, `expected one diagnostic matching ${message}, got ${JSON.stringify(diags, null, 1)}`);
  const d = hits[0];
  assert.ok(covers(d, at), `diagnostic ${JSON.stringify(d.range)} does not cover ${needle} at ${JSON.stringify(at)}`);
  assert.equal(d.source, 'kprobe');
  return d;
}

describe('kprobe language server: diagnostics', { timeout: 30_000 }, () => {
  let c: LspClient;
  let n = 0;
  const open = (text: string): Promise<Diagnostic[]> => c.open(fileUri(join(DIR, `diag-${n++}.kprobe`)), text);
  before(async () => { c = await LspClient.start(); });
  afterAll(async () => { await c.stop(); });

  test('the example file is clean', async () => {
    assert.deepEqual(await open(VALID), []);
  });

  test('syntax error with its position', async () => {
    const text = `${HEADER}kprobe do_fork {\n  pre { printk("x\\n") return 0; }\n}\n`;
    const diags = await open(text);
    assert.ok(diags.length >= 1, 'no diagnostic for a syntax error');
    const d = diags[0];
    assert.equal(d.severity, 1);
    assert.equal(d.range.start.line, 2);
    assert.ok(covers(d, positionOf(text, 'return')), `${JSON.stringify(d)} not at "return"`);
  });

  test('unknown register for the image architecture', async () => {
    const text = `${HEADER}kprobe do_fork { pre { printk("%lx\\n", regs->eip); return 0; } }\n`;
    const d = expectOne(await open(text), text, 'eip', /eip/);
    assert.equal(d.severity, 1);
  });

  test('unknown field of a context variable', async () => {
    const text = `${HEADER}kprobe do_fork { pre { printk("%lx\\n", p->address); return 0; } }\n`;
    expectOne(await open(text), text, 'address', /address/);
  });

  test('unknown probe target and symbol() name, checked against the image', async () => {
    const text = `${HEADER}kprobe no_such_function { pre { return 0; } }\n`
      + 'kprobe do_fork { pre { printk("%lx\\n", symbol("not_a_symbol")); return 0; } }\n';
    const diags = await open(text);
    expectOne(diags, text, 'no_such_function', /no_such_function/);
    expectOne(diags, text, 'not_a_symbol', /not_a_symbol/);
  });

  test('without an image, probe targets and symbol() names are not checked', async () => {
    const text = 'kprobe no_such_function { pre { printk("%lx\\n", symbol("not_a_symbol")); return 0; } }\n';
    assert.deepEqual(await open(text), []);
  });

  test('handler kind that does not belong to the probe kind', async () => {
    const text = `${HEADER}kprobe do_fork {\n  entry { return 0; }\n}\nkretprobe sys_open {\n  pre { return 0; }\n}\n`;
    const diags = await open(text);
    expectOne(diags, text, 'entry', /^'entry' handlers belong to kretprobes/);
    expectOne(diags, text, 'pre', /^'pre' handlers belong to kprobes/);
    assert.equal(diags.length, 2, JSON.stringify(diags));
  });

  test('registers follow the image architecture (aarch64 sample kernel)', async () => {
    const text = 'image "../kernel/build/kernel-aarch64.elf"\nkprobe do_fork { pre { printk("%lx\\n", regs->ax); return 0; } }\n';
    const uri = fileUri(join(DIR, 'diag-aarch64.kprobe'));
    const diags = await c.open(uri, text);
    const items = (await c.completion(uri, after(text, 'regs->'))).map(i => i.label);
    const table = portByName('aarch64');
    if (table) {
      // x86's ax is not an aarch64 pt_regs field; completion offers the aarch64 table
      expectOne(diags, text, 'ax', /unknown register 'ax'/);
      assert.deepEqual(items, table.regs.map(r => r.name));
    } else {
      // no aarch64 table registered yet: one warning on the image line, registers unchecked
      assert.equal(diags.length, 1, JSON.stringify(diags));
      assert.match(diags[0].message, /aarch64 has no register table/);
      assert.equal(diags[0].severity, 2);
      assert.equal(diags[0].range.start.line, 0);
      assert.deepEqual(items, []);
    }
  });

  test('warning: a pre handler assigning regs->ip in a kprobe without a post handler (lost once jump-optimized)', async () => {
    const text = `${HEADER}kprobe do_fork {\n  pre { regs->ax = 0; regs->ip = *(u64 *)regs->sp; regs->sp += 8; return 1; }\n}\n`;
    const diags = await open(text);
    const d = expectOne(diags, text, 'regs->ip', /regs->ip.*ignored once the probe is jump-optimized/);
    assert.equal(diags.length, 1, JSON.stringify(diags));
    assert.equal(d.severity, 2, 'a warning, not an error');
    assert.deepEqual(d.range, { start: positionOf(text, 'regs->ip'), end: after(text, 'regs->ip') });
    assert.match(d.message, /empty `post \{\}` handler/);
    assert.match(d.message, /--sysctl debug\.kprobes_optimization=0/);
    // the documented ways out: an empty post handler keeps the probe a breakpoint
    assert.deepEqual(await open(text.replace('return 1; }\n', 'return 1; }\n  post { }\n')), []);
  });

  test('warning: a kprobe offset or address inside an x86 instruction names the instruction (a breakpoint there would split it); boundaries are clean', async () => {
    const doFork = (await import('../../emulator/elf/elfFile')).loadElf(repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf')).symbols.lookup('do_fork');
    assert.ok(doFork);
    const inside = `0x${(doFork.value + 3n).toString(16)}`;
    const text = `${HEADER}kprobe do_fork+0x3 { pre { return 0; } }\nkprobe do_fork+0x4 { pre { return 0; } }\nkprobe ${inside} { pre { return 0; } }\nkretprobe do_fork { return { } }\n`;
    const diags = await open(text);
    const warns = diags.filter(d => /is inside/.test(d.message));
    assert.equal(warns.length, 2, JSON.stringify(diags, null, 1));
    const msg = /^do_fork\+0x3 is inside "mov rbp, rsp" \(do_fork\+0x1\.\.\+0x4\): the probe is registered as on Linux 2\.6 .*"insnBoundary": "reject"/;
    const d = expectOne([warns[0]], text, 'do_fork+0x3', msg);
    assert.equal(d.severity, 2 /* Warning */);
    expectOne([warns[1]], text, inside, msg);
    assert.deepEqual(diags.filter(x => !/is inside/.test(x.message)), [], 'nothing else: +0x4 is a boundary');
  });

  test('the handler kernel API is clean: batch, static, ri->rp, control functions, calls of image functions (what a module\'s handler could call)', async () => {
    const text = `${HEADER}batch {
  kprobe kprobe_target { pre { static int n; long v = kprobe_target2(n++); if (v > 100) disable_kprobe(p); return 0; } }
  kretprobe alloc_pid maxactive=-1 { return { if (ri->rp->nmissed > 0) unregister_kretprobe(ri->rp); } }
}
`;
    assert.deepEqual(await open(text), []);
    const bad = `${HEADER}kprobe do_fork { pre { kprobe_targett(1); return 0; } }\n`;
    expectOne(await open(bad), bad, 'kprobe_targett', /unknown function 'kprobe_targett'/);
  });

  test('diagnostics follow edits (versioned publications)', async () => {
    const uri = fileUri(join(DIR, 'diag-edit.kprobe'));
    const bad = `${HEADER}kprobe do_fork { pre { regs->eax = 0; } }\n`;
    assert.equal((await c.open(uri, bad)).length, 1);
    assert.deepEqual(await c.change(uri, bad.replace('eax', 'ax')), []);
    assert.equal((await c.change(uri, bad)).length, 1);
  });

  test('garbage never takes the server down', async () => {
    const garbage = '}{ kprobe "\\x \u0000 /* unterminated \n kretprobe { { { ((( regs->\n';
    const diags = await open(garbage);
    assert.ok(diags.length >= 1);
    // still answering
    assert.deepEqual(await open(VALID), []);
  });
});
