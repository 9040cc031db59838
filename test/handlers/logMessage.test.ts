import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileLogMessage, contextFields, HANDLER_KINDS, BUILTINS, isHandlerSnippetLogMessage } from '../../emulator/handlers';
import { FakeEnv, X86_REGS } from './fakeEnv';

const opts = { regNames: X86_REGS };

describe('breakpoint log messages', () => {
  test('plain messages interpolate {expr} by type and end with a newline', () => {
    const env = new FakeEnv();
    env.regs.set('di', 0x100n);
    env.probe = { addr: 0xffffffff81000400n, symbol_name: 'do_fork', offset: 0n, nmissed: 0n, flags: 0n };
    const r = compileLogMessage('fork flags={regs->di & 0x100} sym={p->symbol_name} at {p->addr} neg={(int)-5} {{literal}}', opts);
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.handler!.run(env), 0n);
    assert.equal(env.text, 'fork flags=256 sym=do_fork at 0xffffffff81000400 neg=-5 {literal}\n');
  });

  test('a braced body with a semicolon is a snippet', () => {
    assert.equal(isHandlerSnippetLogMessage('{ printk("x\\n"); }'), true);
    assert.equal(isHandlerSnippetLogMessage('{a}; {b}'), false);
    assert.equal(isHandlerSnippetLogMessage('{regs->ax}'), false);
    assert.equal(isHandlerSnippetLogMessage('{ printk("}; {"); }'), true);
    const env = new FakeEnv();
    env.regs.set('ax', 3n);
    const r = compileLogMessage('{ if (regs->ax > 2) printk("big %lu\\n", regs->ax); }', opts);
    assert.deepEqual(r.diagnostics, []);
    r.handler!.run(env);
    assert.equal(env.text, 'big 3\n');
    const plain = compileLogMessage('{regs->ax}; {regs->ax + 1}', opts);
    plain.handler!.run(env);
    assert.equal(env.text, 'big 3\n3; 4\n');
  });

  test('errors inside {} carry positions shifted by the offsets', () => {
    const r = compileLogMessage('x={regs->bogus}', { ...opts, lineOffset: 9, columnOffset: 4 });
    assert.equal(r.handler, undefined);
    assert.equal(r.diagnostics.length, 1);
    assert.match(r.diagnostics[0].message, /unknown register 'bogus'/);
    assert.deepEqual([r.diagnostics[0].line, r.diagnostics[0].column], [10, 5 + 'x={regs->'.length]);
    const u = compileLogMessage('open {regs->ax', opts);
    assert.match(u.diagnostics[0].message, /unclosed '\{'/);
    assert.equal(u.diagnostics[0].column, 6);
  });
});

describe('completion data', () => {
  test('HANDLER_KINDS, contextFields and BUILTINS describe the language', () => {
    assert.deepEqual(HANDLER_KINDS.map(k => k.name), ['pre', 'post', 'fault', 'entry', 'return', 'jprobe', 'condition', 'log', 'kwatch']);
    assert.ok(HANDLER_KINDS.find(k => k.name === 'fault')!.context.includes('trapnr'));
    assert.ok(!HANDLER_KINDS.find(k => k.name === 'pre')!.context.includes('trapnr'));
    const regs = contextFields('pre', X86_REGS).find(v => v.name === 'regs')!;
    assert.deepEqual(regs.fields.map(f => f.name), X86_REGS);
    assert.ok(contextFields('entry', X86_REGS).find(v => v.name === 'ri')!.fields.some(f => f.name === 'data'));
    assert.ok(BUILTINS.some(b => b.name === 'printk' && b.signature.startsWith('int printk')));
  });
});
