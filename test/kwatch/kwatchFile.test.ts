/**
 * `kwatch` lines of .kprobe files: parsing, the checker's diagnostics
 * (missing / bad len and type, positions), and the handler context names
 * (debugreg, addr, access, old, new, HW_BREAKPOINT_*), without a machine.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileProbeFile, compileHandler, contextFields, Diagnostic, parseProbeFile } from '../../emulator/handlers';
import { FakeEnv, X86_REGS } from '../handlers/fakeEnv';
import { cursorContext } from '../../extension/languageServer/cursorContext';
import { complete } from '../../extension/languageServer/completion';

const SYMS = new Set(['boot_counter', 'do_fork']);
const opts = { regNames: X86_REGS, symbolExists: (n: string) => SYMS.has(n), imageArch: 'x86_64' };

function posOf(text: string, needle: string): { line: number; column: number } {
  const idx = text.indexOf(needle);
  assert.ok(idx >= 0, needle);
  const before = text.slice(0, idx).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}

function errors(text: string): Diagnostic[] {
  return compileProbeFile(text, 't.kprobe', opts).diagnostics.filter(d => d.severity === 'error');
}

function oneError(text: string, needle: string, msg: RegExp): void {
  const e = errors(text);
  assert.equal(e.length, 1, JSON.stringify(e));
  assert.match(e[0].message, msg);
  assert.deepEqual({ line: e[0].line, column: e[0].column }, posOf(text, needle), e[0].message);
}

describe('kwatch in .kprobe files', () => {
  test('parses symbol, symbol+off and address targets with len and type; the body is the handler', () => {
    const text = 'kwatch boot_counter len=8 type=w { printk("%d\\n", debugreg); }\n'
      + 'kwatch boot_counter+4 len=4 type=rw { }\n'
      + 'kwatch 0xffffffff81005000 len=2 type=x disabled { }\n'
      + 'kwatch do_fork len=1 type=1 { }\n';
    const r = compileProbeFile(text, 't.kprobe', opts);
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.probes.length, 4);
    const [a, b, c, d] = r.probes;
    assert.equal(a.kind, 'kwatch');
    assert.deepEqual(a.target, { kind: 'symbol', name: 'boot_counter', offset: 0n });
    assert.deepEqual(a.attrs, { len: 8, type: 'w' });
    assert.ok(a.handlers.kwatch, 'the body compiles as the kwatch handler');
    assert.deepEqual(b.target, { kind: 'symbol', name: 'boot_counter', offset: 4n });
    assert.equal(b.attrs.type, 'rw');
    assert.deepEqual(c.target, { kind: 'address', addr: 0xffffffff81005000n });
    assert.deepEqual(c.attrs, { len: 2, type: 'x', disabled: true });
    assert.equal(d.attrs.type, 'w', 'DR7 code 1 = write');
    const ast = parseProbeFile(text, 't.kprobe').file.probes[0];
    assert.equal(ast.handlers[0].kind, 'kwatch');
  });

  test('a missing len: an error at the kwatch keyword', () => {
    oneError('\n  kwatch boot_counter type=w { }\n', 'kwatch', /a kwatch needs len=N/);
  });

  test('a missing type: an error at the kwatch keyword', () => {
    oneError('kwatch boot_counter len=4 { }\n', 'kwatch', /a kwatch needs type=w\|rw\|x/);
  });

  test('len that is not a number, or out of range; an unknown type: errors at the value', () => {
    oneError('kwatch boot_counter len=abc type=w { }\n', 'abc', /'len' must be a number of bytes .* not 'abc'/);
    oneError('kwatch boot_counter len=16 type=w { }\n', '16', /'len' of 16 is out of range/);
    oneError('kwatch boot_counter len=4 type=rx { }\n', 'rx', /unknown kwatch type 'rx' \(expected w, rw, x or r/);
  });

  test('attributes of other kinds, source lines and unknown symbols are errors', () => {
    oneError('kwatch boot_counter len=4 type=w maxactive=3 { }\n', 'maxactive', /attribute 'maxactive' only applies to kretprobes/);
    oneError('kwatch main.c:12 len=4 type=w { }\n', 'main.c:12', /a kwatch watches memory: .* not the source line main\.c:12/);
    // checkProbeFile (the editor) reports an unknown symbol; compileProbeFile leaves it to registration (-ENOENT)
    assert.equal(errors('kwatch nope len=4 type=w { }\n').length, 0);
    assert.equal(compileProbeFile('kwatch nope len=4 type=w { }\n', 't.kprobe', opts).probes.length, 1);
    oneError('kprobe do_fork { pre { return addr; } }\n', 'addr', /'addr' is not declared/);
  });

  test('a kwatch in a batch is an error', () => {
    oneError('batch { kwatch boot_counter len=4 type=w { } }\n', 'kwatch', /cannot be in a batch/);
  });

  test('handler context: debugreg, addr, access, old, new and HW_BREAKPOINT_* read the hit; they are read-only', () => {
    const h = compileHandler('printk("%d %lx %d %lu %lu %d\\n", debugreg, addr, access, old, new, access == HW_BREAKPOINT_W);', 'kwatch', { regNames: X86_REGS });
    assert.deepEqual(h.diagnostics, []);
    const env = new FakeEnv();
    (env as unknown as { watch: unknown }).watch = { debugreg: 2, addr: 0xffffffff810055d8n, access: 2, old: 41n, new: 42n };
    h.handler!.run(env);
    assert.deepEqual(env.log, ['2 ffffffff810055d8 2 41 42 1\n']);
    const ro = compileHandler('new = 1;', 'kwatch', { regNames: X86_REGS });
    assert.match(ro.diagnostics[0]?.message ?? '', /'new' is read-only/);
    const redecl = compileHandler('int addr = 0;', 'kwatch', { regNames: X86_REGS });
    assert.match(redecl.diagnostics[0]?.message ?? '', /'addr' is a context name/);
    // other handler kinds may use these names for their own locals
    assert.deepEqual(compileHandler('unsigned long addr = 1; return addr;', 'pre', { regNames: X86_REGS }).diagnostics, []);
    const names = contextFields('kwatch', X86_REGS).map(v => v.name);
    for (const n of ['regs', 'debugreg', 'addr', 'access', 'old', 'new', 'current', 'jiffies']) assert.ok(names.includes(n), n);
    assert.ok(!names.includes('p'), 'a kwatch has no struct kprobe');
  });

  test('language server: the cursor in a kwatch body is in its handler; completion offers the context names and len= / type=', () => {
    const text = 'kwatch boot_counter len=8 type=w { x = a';
    assert.deepEqual(cursorContext(text, text.length), { where: 'handler', probe: 'kwatch', handler: 'kwatch' });
    const labels = complete({ text, offset: text.length, regNames: X86_REGS }).map(i => i.label);
    for (const n of ['debugreg', 'addr', 'access', 'old', 'new', 'regs']) assert.ok(labels.includes(n), `${n} in ${labels.join(',')}`);
    const attrs = 'kwatch boot_counter l';
    const a = complete({ text: attrs, offset: attrs.length, regNames: X86_REGS }).map(i => i.label);
    assert.ok(a.includes('len') && a.includes('type'), a.join(','));
    const top = complete({ text: 'kw', offset: 2, regNames: X86_REGS }).map(i => i.label);
    assert.ok(top.includes('kwatch'));
  });
});
