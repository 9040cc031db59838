/**
 * The one nesting limit (deep code is a diagnostic, never a crash): long
 * left-associative chains, postfix chains, comma lists, ?: chains,
 * parentheses and blocks all end in the same positioned "nested too deeply"
 * diagnostic from the parser (never a stack overflow in the checker or the
 * compiler), at the token where MAX_NESTING is passed; code just under the
 * limit compiles and runs.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkProbeFile, compileHandler, compileLogMessage, compileProbeFile, Diagnostic, parseProbeFile } from '../../emulator/handlers';
import { Expr, MAX_NESTING, SnippetAst, Span } from '../../emulator/handlers/ast';
import { compileSnippetAst } from '../../emulator/handlers/compiler';
import { T } from '../../emulator/handlers/ctypes';
import { FakeEnv, X86_REGS } from './fakeEnv';

const copts = { regNames: X86_REGS, symbolExists: (n: string) => n === 'do_fork' };

function nestingErrors(ds: Diagnostic[]): Diagnostic[] {
  return ds.filter(d => /nested too deeply: more than \d+ levels/.test(d.message));
}

/** 1-based column of the n-th (0-based) occurrence of `needle` in a one-line text. */
function columnOf(text: string, needle: string, n: number): number {
  let at = -1;
  for (let i = 0; i <= n; i++) at = text.indexOf(needle, at + 1);
  assert.ok(at >= 0, `${needle} #${n}`);
  return at + 1;
}

function chain(op: string, terms: number): string {
  return Array.from({ length: terms }, () => '1').join(` ${op} `);
}

describe('handler nesting limit', () => {
  test('a 5,000-term chain `1 + 1 + ...` is one diagnostic at the operator past the limit', () => {
    const src = `return ${chain('+', 5000)};`;
    const r = compileHandler(src, 'pre', copts);
    const errs = nestingErrors(r.diagnostics);
    assert.equal(errs.length, 1, JSON.stringify(r.diagnostics));
    assert.equal(r.handler, undefined);
    // the statement and the return value's assignment take two levels, each operator one more and
    // its right operand one: the (MAX_NESTING - 2)-th operator's right operand is where the limit is passed
    assert.deepEqual([errs[0].line, errs[0].column], [1, columnOf(src, '+', MAX_NESTING - 3) + 2]);
  });

  for (const op of ['-', '*', '<<', '&&', '||', '|', '==', '<']) {
    test(`5,000-term chains of '${op}' hit the same limit`, () => {
      const r = compileHandler(`return ${chain(op, 5000)};`, 'pre', copts);
      assert.equal(nestingErrors(r.diagnostics).length, 1);
    });
  }

  test('postfix, comma, ?: and assignment chains hit the same limit', () => {
    const srcs = [
      `u64 x = 0; x${' ++'.repeat(5000)};`,
      `return regs${'->ip'.repeat(1)}${'[0]'.repeat(5000)};`,
      `return ${chain(',', 5000)};`,
      `return ${Array.from({ length: 5000 }, () => '1 ? 1 :').join(' ')} 0;`,
      `int a; return ${'a = '.repeat(5000)}1;`,
    ];
    for (const s of srcs) {
      const r = compileHandler(s, 'pre', copts);
      assert.ok(nestingErrors(r.diagnostics).length >= 1, `${s.slice(0, 40)}: ${JSON.stringify(r.diagnostics.slice(0, 2))}`);
    }
  });

  test('log messages: a chain in {...} hits the same limit at its position', () => {
    const msg = `fork {${chain('+', 5000)}}`;
    const r = compileLogMessage(msg, copts);
    const errs = nestingErrors(r.diagnostics);
    assert.equal(errs.length, 1);
    assert.equal(r.handler, undefined);
    assert.ok(errs[0].column > 100);
  });

  test('a chain just under the limit compiles and computes', () => {
    const terms = MAX_NESTING - 2;
    const r = compileHandler(`return ${chain('+', terms)};`, 'pre', copts);
    assert.deepEqual(r.diagnostics, []);
    assert.ok(r.handler);
    assert.equal(r.handler.run(new FakeEnv()), BigInt(terms));
    const over = compileHandler(`return ${chain('+', terms + 1)};`, 'pre', copts);
    assert.equal(nestingErrors(over.diagnostics).length, 1);
  });

  test('statements inside one another share the limit, and the parser recovers after it', () => {
    const deepIf = 'if (1) '.repeat(5000) + 'return 1;';
    assert.equal(nestingErrors(compileHandler(deepIf, 'pre', copts).diagnostics).length, 1);
    // after the error the parser goes on with the next statement, its nesting level restored
    const r = compileHandler(`${deepIf}\n${'if (1) '.repeat(140)}return 2;\nreturn 1 +;`, 'pre', copts);
    assert.deepEqual(r.diagnostics.map(d => [d.line, /nested too deeply/.test(d.message) ? 'deep' : d.message]),
      [[1, 'deep'], [3, "expected an expression but found ';'"]]);
  });

  test('in a .kprobe file: the chain is that probe\'s positioned error; the other probes compile', () => {
    const text = `kprobe do_fork { pre { return ${chain('+', 5000)}; } }\nkprobe do_fork+0x4 { pre { return 1 + 1; } }\n`;
    const r = compileProbeFile(text, 't.kprobe', { ...copts, imageArch: 'x86_64' });
    const errs = nestingErrors(r.diagnostics);
    assert.equal(errs.length, 1);
    assert.equal(errs[0].line, 1);
    assert.ok(errs[0].column > 30);
    assert.equal(r.probes.length, 1);
    assert.equal(r.probes[0].line, 2);
    const parsed = parseProbeFile(text, 't.kprobe');
    assert.doesNotThrow(() => checkProbeFile(parsed.file, { regNames: X86_REGS }));
  });

  test('the compiler checks the same limit on a tree the parser did not build', () => {
    const span: Span = { line: 3, column: 7, endLine: 3, endColumn: 8 };
    let e: Expr = { k: 'num', value: 1n, type: T.int, span };
    const leaf = e;
    for (let i = 0; i < 20000; i++) e = { k: 'binary', op: '+', left: e, right: leaf, span };
    const ast: SnippetAst = { k: 'body', body: [{ k: 'return', value: e, span }], span };
    const diags: Diagnostic[] = [];
    const r = compileSnippetAst(ast, 'pre', copts, diags);
    assert.equal(r.handler, undefined);
    assert.ok(nestingErrors(diags).length >= 1);
    assert.deepEqual(diags.map(d => [d.line, d.column]).filter(([l, c]) => l !== 3 || c !== 7), []);
  });
});
