/**
 * compileProbeFile checks and compiles each probe as soon as the parser
 * hands it on (parseProbeFileTaking), so that a file of thousands of probes
 * never holds all of their trees. What is handed on must be exactly what
 * parseProbeFile returns, in the same order, with the same diagnostics:
 * on every probe file and handler source of the repository and on random
 * soups of probe-file words (batches, events and `-:` lines, errors); and
 * it must be handed on early: a plain probe before the parse reaches the
 * probe after the next, a batch member only once its batch is closed, a
 * kprobe_events line (and all after it) only at the end.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseProbeFile, checkProbeFile, compileProbeFile } from '../../emulator/handlers';
import type { CheckOptions } from '../../emulator/handlers';
import { parseProbeFileTaking } from '../../emulator/handlers/probeFile';
import type { ProbeAst } from '../../emulator/handlers/probeFile';
import { repoPath } from '../util/paths';
import { mulberry32 as prng } from '../util/prng';

const rand = prng(0x74616b65);
const int = (n: number): number => Math.floor(rand() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];

/** probe-file words (probes, batches, events and their removal, handler words) and some that make errors */
const WORDS = [
  'kprobe', 'kretprobe', 'jprobe', 'kwatch', 'batch', 'image', '"k.elf"', 'pre', 'post', 'fault', 'entry', 'return',
  'do_fork', 'do_fork+0x4', 'sym@0x10', '0xffffffff81000000', 'fork.c:32', 'maxactive=20', 'disabled', 'len=8', 'type=w',
  '\np:myprobe do_fork', '\nr:ret do_fork $retval', '\n-:myprobe', '\n-:ret', '\np:other do_sys_open dfd=%di',
  '{', '}', '{ return 0; }', '(', ')', ';', '=', '+', 'int', 'x', 'if', 'printk', '"%d\\n"', '0', '0x10UL', '/*', '*/', '\n', '@', '#',
];

function soup(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += pick(WORDS) + (rand() < 0.75 ? ' ' : '');
  return s;
}

function repoSources(): { name: string; text: string }[] {
  const files = execFileSync('git', ['ls-files', '*.kprobe', '*.kp', 'examples/**/*.c'], { cwd: repoPath(), encoding: 'utf8' })
    .split('\n').filter(Boolean);
  return files.map(f => ({ name: f, text: readFileSync(repoPath(f), 'utf8') }));
}

function sameAsWhole(text: string, name: string): void {
  const whole = parseProbeFile(text, name);
  const taken: ProbeAst[] = [];
  const r = parseProbeFileTaking(text, name, undefined, pr => taken.push(pr));
  assert.deepStrictEqual(taken, whole.file.probes, `${name}: the probes handed on`);
  assert.deepStrictEqual(r.diagnostics, whole.diagnostics, `${name}: diagnostics`);
  assert.deepStrictEqual(r.file.image, whole.file.image, `${name}: image`);
  assert.equal(r.file.probes.length, 0);
}

/** options without an image: no symbol is unknown, so checkProbeFile's analysis is compileProbeFile's */
const OPTS: CheckOptions = { regNames: ['ax', 'bx', 'cx', 'dx', 'si', 'di', 'bp', 'sp', 'ip', 'flags'], imageArch: 'x86_64' };

/** compileProbeFile's diagnostics are the parse's then the analysis's, as for the whole parsed file */
function sameCompile(text: string, name: string): void {
  const whole = parseProbeFile(text, name);
  const c = compileProbeFile(text, name, OPTS);
  assert.deepStrictEqual(c.diagnostics, [...whole.diagnostics, ...checkProbeFile(whole.file, OPTS)], `${name}: compile diagnostics`);
  // the specs: probes of the whole parse, in order; none whose text holds an error
  const pos = whole.file.probes.map(p => `${p.span.line}:${p.span.column}`);
  let at = 0;
  for (const s of c.probes) {
    const i = pos.indexOf(`${s.line}:${s.column}`, at);
    assert.ok(i >= 0, `${name}: spec at ${s.line}:${s.column} is a probe of the parse, in order`);
    const ast = whole.file.probes[i];
    assert.ok(!c.diagnostics.some(d => d.severity === 'error' && d.line >= ast.fullSpan.line && d.line <= ast.fullSpan.endLine), `${name}: spec at ${s.line}:${s.column} holds an error`);
    at = i + 1;
  }
}

describe('probes handed on as they are parsed (parseProbeFileTaking)', () => {
  test('every probe file and handler source of the repository: the probes and diagnostics of parseProbeFile', () => {
    for (const { name, text } of repoSources()) { sameAsWhole(text, name); sameCompile(text, name); }
  });

  test('3,000 random soups of probe-file words', () => {
    for (let k = 0; k < 3000; k++) {
      const text = soup(1 + int(80));
      sameAsWhole(text, `soup${k}`);
      if (k % 3 === 0) sameCompile(text, `soup${k}`);
    }
  });

  test('a plain probe is handed on before the parse reaches the probe after the next', () => {
    // each probe's handler names its own struct: the parser asks programType for it while parsing that probe
    const n = 50;
    const text = Array.from({ length: n }, (_, i) => `kprobe f${i} { pre { return sizeof(struct s${i}); } }\n`).join('');
    const log: string[] = [];
    parseProbeFileTaking(text, 'x.kprobe', (_kind, name) => { log.push(`parse ${name}`); return undefined; }, pr => log.push(`take ${pr.targetText}`));
    for (let i = 0; i + 2 < n; i++) assert.ok(log.indexOf(`take f${i}`) < log.indexOf(`parse s${i + 2}`), `f${i}: ${log.slice(0, 12).join(', ')}`);
    assert.equal(log.filter(l => l.startsWith('take')).length, n);
  });

  test('batch members wait for their batch to close; events and the probes after them for the end of the file', () => {
    const text = [
      'kprobe a { pre { return sizeof(struct sa); } }',
      'batch { kprobe b1 { pre { return sizeof(struct sb1); } } kprobe b2 { pre { return sizeof(struct sb2); } } }',
      'kprobe c { pre { return sizeof(struct sc); } }',
      'p:ev do_fork',
      'kprobe d { pre { return sizeof(struct sd); } }',
      '-:ev',
      'kprobe e { pre { return sizeof(struct se); } }',
    ].join('\n');
    const log: string[] = [];
    parseProbeFileTaking(text, 'x.kprobe', (_kind, name) => { log.push(`parse ${name}`); return undefined; }, pr => log.push(`take ${pr.targetText}${pr.batch ? ` (batch of ${pr.batch.size})` : ''}`));
    assert.deepEqual(log, [
      'parse sa', 'take a', 'parse sb1', 'parse sb2', 'take b1 (batch of 2)', 'take b2 (batch of 2)', 'parse sc', 'take c',
      // the event waits; the `-:` line removes it, so d goes on at once
      'parse sd', 'take d', 'parse se', 'take e',
    ]);
    const kept: string[] = [];
    parseProbeFileTaking('kprobe a { }\np:ev do_fork\nkprobe d { pre { return sizeof(struct sd); } }\n', 'y.kprobe', (_k, name) => { kept.push(`parse ${name}`); return undefined; }, pr => kept.push(`take ${pr.targetText}`));
    assert.deepEqual(kept, ['take a', 'parse sd', 'take do_fork', 'take d']);
  });
});
