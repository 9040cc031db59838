/**
 * Fuzz: thousands of random and mutated snippets / probe files (seeded,
 * deterministic) through parser, checker, compiler and — when they compile —
 * the runtime. No exception may escape except HandlerFault from run(), and
 * every diagnostic must have a valid position inside the text.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  checkProbeFile, compileHandler, compileLogMessage, compileProbeFile, CompiledHandler, Diagnostic, HANDLER_KIND_NAMES,
  HandlerFault, parseProbeFile,
} from '../../emulator/handlers';
import { repoPath } from '../util/paths';
import { FakeEnv, X86_REGS } from './fakeEnv';
import { mulberry32 as prng } from '../util/prng';

const rand = prng(0x6b70726f);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const int = (n: number): number => Math.floor(rand() * n);

const VOCAB = [
  'int', 'long', 'unsigned', 'char', 'u8', 'u16', 'u32', 'u64', 's64', 'void', 'bool', '*', 'x', 'y', 'i', 'regs', '->', 'ip', 'ax', 'di',
  'p', 'addr', 'ri', 'data', 'current', 'comm', 'pid', 'trapnr', 'jiffies', 'arg0', 'if', 'else', 'while', 'for', 'do', 'break', 'continue',
  'return', 'sizeof', 'printk', 'symbol', 'strlen', 'ktime_get', 'dump_stack', 'regs_return_value', '(', ')', '{', '}', '[', ']', ';', ',',
  '=', '+=', '<<=', '++', '--', '+', '-', '/', '%', '<<', '>>', '<', '>=', '==', '!=', '&&', '||', '!', '~', '&', '|', '^', '?', ':',
  '0', '1', '-1', '0x7fffffff', '0xffffffffffffffffUL', '077', "'a'", "'\\n'", '"s=%s d=%d\\n"', '"%lx %p"', '"do_fork"', 'NULL',
  'kprobe', 'kretprobe', 'jprobe', 'pre', 'post', 'fault', 'entry', 'image', '"x.elf"', 'do_fork', 'sys_open', '+0x10', 'maxactive=20',
  'data_size=8', 'disabled', 'fs.c:38', '0xffffffff81000000', '/*', '*/', '//', '\n', '"', "'", '@', '#', '\\',
];

function soup(): string {
  const n = 1 + int(40);
  let s = '';
  for (let i = 0; i < n; i++) s += pick(VOCAB) + (rand() < 0.8 ? ' ' : '');
  return s;
}

const VARS = ['x', 'y', 'i'];
function genExpr(d: number): string {
  if (d <= 0 || rand() < 0.25) {
    return pick([...VARS, '0', '1', '-1', '7', '0x80000000', '255', '0xffffffffffffffffUL', 'regs->ax', 'regs->di', 'jiffies', 'arg1', "'q'", 'sizeof(long)', 'p->nmissed']);
  }
  const a = genExpr(d - 1), b = genExpr(d - 1);
  switch (int(12)) {
    case 0: return `(${a} ${pick(['+', '-', '*', '&', '|', '^', '<<', '>>', '<', '==', '&&', '||', '/', '%'])} ${b})`;
    case 1: return `(${pick(['-', '~', '!'])}${a})`;
    case 2: return `((${pick(['u8', 's8', 'int', 'unsigned', 'long', 'u64', 'bool'])})${a})`;
    case 3: return `(${a} ? ${b} : ${genExpr(d - 1)})`;
    case 4: return `*(${pick(['u8', 'u16', 'u32', 'u64'])} *)(0x1000 + ((${a}) & 0x3f))`;
    case 5: return `((u8 *)0x1000)[(${a}) & 15]`;
    case 6: return `strlen("abc")`;
    case 7: return `(x ${pick(['+=', '-=', '*=', '<<=', '>>=', '|=', '='])} ${a})`;
    case 8: return `(${pick(VARS)}${pick(['++', '--'])})`;
    default: return `(${a} + ${b})`;
  }
}

function genStmt(d: number): string {
  switch (d <= 0 ? 0 : int(8)) {
    case 0: return `x = ${genExpr(2)};`;
    case 1: return `if (${genExpr(2)}) { ${genStmt(d - 1)} } else ${genStmt(d - 1)}`;
    case 2: return `for (i = 0; i < ${int(20)}; i++) { ${genStmt(d - 1)} if (${genExpr(1)}) break; }`;
    case 3: return `while (${genExpr(2)}) { ${genStmt(d - 1)} }`;
    case 4: return `printk("%d %lx %s %5u|\\n", ${genExpr(2)}, ${genExpr(2)}, "lit", ${genExpr(1)});`;
    case 5: return `*(u32 *)(0x1000 + ((${genExpr(2)}) & 0x3c)) = ${genExpr(2)};`;
    case 6: return `return ${genExpr(3)};`;
    default: return `{ ${pick(['long', 'u8', 's16', 'unsigned'])} t = ${genExpr(2)}; y += t; }`;
  }
}

function genSnippet(): string {
  let s = 'long x = 1, y = 2, i = 0; ';
  const n = 1 + int(4);
  for (let k = 0; k < n; k++) s += genStmt(2) + ' ';
  return s;
}

function mutate(s: string): string {
  const n = 1 + int(4);
  for (let k = 0; k < n; k++) {
    const at = int(s.length + 1);
    switch (int(5)) {
      case 0: s = s.slice(0, at) + s.slice(at + 1 + int(6)); break;
      case 1: s = s.slice(0, at) + pick(VOCAB) + s.slice(at); break;
      case 2: s = s.slice(0, at) + s.slice(int(s.length), int(s.length)) + s.slice(at); break;
      case 3: s = s.slice(0, at) + String.fromCharCode(int(128)) + s.slice(at); break;
      default: { const b = int(s.length + 1); s = s.slice(0, Math.min(at, b)) + s.slice(Math.max(at, b)); }
    }
  }
  return s;
}

function checkDiags(ds: Diagnostic[], text: string, lineOffset = 0, columnOffset = 0): void {
  const lines = text.split('\n').length + lineOffset;
  for (const d of ds) {
    const where = `${JSON.stringify(d)} in ${JSON.stringify(text)}`;
    assert.ok(Number.isInteger(d.line) && Number.isInteger(d.column) && Number.isInteger(d.endLine) && Number.isInteger(d.endColumn), where);
    assert.ok(d.line >= 1 + lineOffset && d.line <= lines && d.endLine <= lines, where);
    assert.ok(d.column >= 1 && (d.line > 1 + lineOffset || d.column >= 1 + columnOffset), where);
    assert.ok(d.endLine > d.line || (d.endLine === d.line && d.endColumn >= d.column), where);
    assert.ok(d.message.length > 0 && (d.severity === 'error' || d.severity === 'warning'), where);
  }
}

function fuzzEnv(): FakeEnv {
  const env = new FakeEnv();
  env.map(0x1000n, 0x80);
  env.probe = { addr: 0xffffffff81000000n, symbol_name: 'do_fork', offset: 0n, nmissed: 1n, flags: 0n };
  env.ri = { ret_addr: 0xffffffff81000100n, task: 0x2000n, data: 0x1000n };
  env.trapnr = 14;
  env.postFlags = 0n;
  return env;
}

function runSafely(h: CompiledHandler, text: string): void {
  try {
    h.run(fuzzEnv());
  } catch (e) {
    if (e instanceof HandlerFault) {
      assert.ok(e.line >= 1 && e.column >= 1, `fault position in ${text}`);
      return;
    }
    assert.fail(`run() threw ${String(e)} for ${JSON.stringify(text)}`);
  }
}

const SYMS = new Set(['do_fork', 'sys_open']);
const copts = { regNames: X86_REGS, symbolExists: (n: string) => SYMS.has(n), stepBudget: 2000 };

describe('fuzz', () => {
  test('5000 random and mutated snippets and probe files: no uncaught exception, valid positions', () => {
    const samples = ['kprobe_example.kprobe', 'kretprobe_example.kprobe', 'jprobe_example.kprobe'].map(f => readFileSync(repoPath('examples', 'probes', f), 'utf8'));
    let compiled = 0, ran = 0;
    for (let iter = 0; iter < 5000; iter++) {
      const mode = iter % 5;
      if (mode <= 2) {
        // snippets: generated (valid-ish), mutated, or token soup
        const text = mode === 0 ? genSnippet() : mode === 1 ? mutate(genSnippet()) : soup();
        const kind = pick(HANDLER_KIND_NAMES);
        const lineOffset = int(3), columnOffset = int(5);
        const r = compileHandler(text, kind, { ...copts, lineOffset, columnOffset });
        checkDiags(r.diagnostics, text, lineOffset, columnOffset);
        assert.equal(!!r.handler, !r.diagnostics.some(d => d.severity === 'error'), text);
        if (r.handler) { compiled++; if (kind !== 'condition' || rand() < 0.5) { runSafely(r.handler, text); ran++; } }
        if (iter % 10 === 0) {
          const lm = compileLogMessage(mutate(`v={${genExpr(2)}} s={p->symbol_name}`), copts);
          if (lm.handler) runSafely(lm.handler, 'log message');
        }
      } else {
        const text = mode === 3 ? mutate(pick(samples)) : `kprobe do_fork { pre { ${mutate(genSnippet())} } }\n${soup()}`;
        const parsed = parseProbeFile(text, 'fuzz.kprobe');
        checkDiags(parsed.diagnostics, text);
        checkDiags(checkProbeFile(parsed.file, { regNames: X86_REGS, symbolExists: copts.symbolExists }), text);
        const r = compileProbeFile(text, 'fuzz.kprobe', { ...copts, imageArch: 'x86_64' });
        checkDiags(r.diagnostics, text);
        for (const p of r.probes) for (const h of Object.values(p.handlers)) if (h) { compiled++; runSafely(h, text); ran++; }
      }
    }
    if (process.env.FUZZ_STATS) console.log({ compiled, ran });
    // the generator must produce plenty of programs that compile and run
    assert.ok(compiled > 1000, `only ${compiled} compiled`);
    assert.ok(ran > 1000, `only ${ran} ran`);
  });

  test('deep nesting is a diagnostic, not a stack overflow', () => {
    const deep = 'return ' + '('.repeat(5000) + '1' + ')'.repeat(5000) + ';';
    const r = compileHandler(deep, 'pre', copts);
    assert.ok(r.diagnostics.some(d => /nested too deeply/.test(d.message)));
    checkDiags(r.diagnostics, deep);
    const blocks = '{'.repeat(3000) + '}'.repeat(3000);
    const b = compileHandler(blocks, 'pre', copts);
    assert.ok(b.diagnostics.some(d => /nested too deeply/.test(d.message)));
    const unary = 'return ' + '-'.repeat(5000) + '1;';
    assert.ok(compileHandler(unary, 'pre', copts).diagnostics.some(d => /nested too deeply/.test(d.message)));
  });
});
