/**
 * compileProbeFile compiles a handler text once and lets later copies of
 * the same text run that compile (emulator/handlers/sharedSnippets.ts).
 * Each copy must behave exactly as its own compile would: its faults at
 * its own line and column (the oracle: the same file with every other
 * probe blanked out, so that the probe is alone at the same place), its
 * own statics, its own program names, its own warnings.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileProbeFile, HandlerFault } from '../../emulator/handlers';
import type { CheckOptions, CompiledHandler, ProbeSpec } from '../../emulator/handlers';
import { FakeEnv, X86_REGS } from './fakeEnv';
import { mulberry32 } from '../util/prng';

const OPTS: CheckOptions = { regNames: X86_REGS, imageArch: 'x86_64' };

function compiled(text: string, opts: CheckOptions = OPTS): ProbeSpec[] {
  const r = compileProbeFile(text, 't.kprobe', opts);
  assert.deepEqual(r.diagnostics.filter(d => d.severity === 'error'), [], text);
  return r.probes;
}

function faultOf(h: CompiledHandler | undefined): { kind: string; line: number; column: number; message: string } {
  assert.ok(h);
  try { h.run(new FakeEnv()); } catch (e) {
    if (e instanceof HandlerFault) return { kind: e.kind, line: e.line, column: e.column, message: e.message };
    throw e;
  }
  assert.fail('expected a HandlerFault');
}

/** the probes of `text` at lines `lines` (1-based), each alone: every other probe's line replaced by blanks */
function aloneText(text: string, probeLines: number[][], k: number): string {
  const lines = text.split('\n');
  probeLines.forEach((ls, i) => { if (i !== k) for (const l of ls) lines[l - 1] = ' '.repeat(lines[l - 1].length); });
  return lines.join('\n');
}

describe('probe files: a handler text compiled once, its copies in their own places', () => {
  test('a fault in a shared handler is at the copy\'s line and column (one-line and multi-line bodies, shifted columns)', () => {
    const one = '{ int x = 0; return *(int *)x; }';
    const multi = '{\n    int x = 0;\n  return *(int *)x; }';
    const parts = [
      `kprobe a { pre ${one} }`,
      `kprobe b { pre ${one} }`,
      `   kprobe c { pre    ${one} }`,
      `kprobe d { pre ${multi} }`,
      `kprobe eeee {  pre ${multi} }`,
      `jprobe f ${one}`,
      `jprobe gg    ${one}`,
      `kprobe h { pre ${one} post ${one} fault ${one} }`,
    ];
    const text = parts.join('\n');
    // the lines of each probe
    const probeLines: number[][] = [];
    let line = 1;
    for (const p of parts) { const n = p.split('\n').length; probeLines.push(Array.from({ length: n }, (_, i) => line + i)); line += n; }
    const all = compiled(text);
    assert.equal(all.length, parts.length);
    all.forEach((spec, k) => {
      const [own] = compiled(aloneText(text, probeLines, k));
      for (const kind of Object.keys(own.handlers) as (keyof ProbeSpec['handlers'])[]) {
        assert.deepEqual(faultOf(spec.handlers[kind]), faultOf(own.handlers[kind]), `probe ${k} ${kind}`);
      }
      assert.deepEqual(Object.keys(spec.handlers), Object.keys(own.handlers));
    });
    // the second and later copies of a text run the first one's compile (the faults above are theirs all the same)
    assert.equal(faultOf(all[1].handlers.pre).line, 2);
    assert.equal(faultOf(all[2].handlers.pre).column, faultOf(all[1].handlers.pre).column + 6);
  });

  test('random files of repeated bodies: every probe compiles, warns, errs and runs as it does alone at its place', () => {
    const rand = mulberry32(0x5eed5);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const BODIES = [
      '{ return 0; }', '{ return 0; }', '{ int x = 0; return *(int *)x; }', '{\n  int y = 1;\n  return 10 / (y - 1); }',
      '{ static int n; n++; return n; }', '{ /* } { */ return 2; }', '{ printk("}%d{", 1); return 3; }', '{ return v; }',
      '{ regs->ip = 1; return 0; }', '{ return 1 }', '{ 5; }', '{}', '{ if (1) { return 4; } return 5; }',
    ];
    const probe = (i: number): string => {
      const pad = ' '.repeat(Math.floor(rand() * 3));
      if (rand() < 0.2) return `${pad}jprobe f${i} ${pick(BODIES)}`;
      const hs = ['pre', 'post', 'fault'].filter(() => rand() < 0.6);
      return `${pad}kprobe f${i}+${Math.floor(rand() * 4)} {${hs.map(h => ` ${h}${pad} ${pick(BODIES)}`).join('')} }`;
    };
    const opts: CheckOptions = { ...OPTS, symbolExists: () => true };
    const key = (d: { line: number; column: number; endLine: number; endColumn: number; message: string; severity: string }): string =>
      `${d.line}:${d.column}-${d.endLine}:${d.endColumn} ${d.severity} ${d.message}`;
    const outcome = (h: CompiledHandler | undefined): unknown => {
      if (!h) return 'none';
      try { return h.run(new FakeEnv()); } catch (e) {
        if (e instanceof HandlerFault) return [e.kind, e.line, e.column, e.message];
        throw e;
      }
    };
    for (let round = 0; round < 12; round++) {
      const parts = Array.from({ length: 14 }, (_, i) => probe(i));
      const text = parts.join('\n');
      const probeLines: number[][] = [];
      let line = 1;
      for (const p of parts) { const n = p.split('\n').length; probeLines.push(Array.from({ length: n }, (_, i) => line + i)); line += n; }
      const all = compileProbeFile(text, 't.kprobe', opts);
      const alone = parts.map((_, k) => compileProbeFile(aloneText(text, probeLines, k), 't.kprobe', opts));
      assert.deepEqual(all.diagnostics.map(key).sort(), alone.flatMap(r => r.diagnostics.map(key)).sort(), text);
      const specs = alone.flatMap(r => r.probes);
      assert.deepEqual(all.probes.map(s => s.line), specs.map(s => s.line), text);
      all.probes.forEach((s, i) => {
        for (const kind of ['pre', 'post', 'fault', 'jprobe'] as const) {
          assert.deepEqual(outcome(s.handlers[kind]), outcome(specs[i].handlers[kind]), `${text}\nprobe at line ${s.line} ${kind}`);
        }
      });
    }
  });

  test('a handler with statics is never shared: each probe counts its own', () => {
    const body = '{ static int n; n++; return n; }';
    const [a, b] = compiled(`kprobe a { pre ${body} }\nkprobe b { pre ${body} }`);
    const env = new FakeEnv();
    assert.equal(a.handlers.pre?.run(env), 1n);
    assert.equal(a.handlers.pre?.run(env), 2n);
    assert.equal(b.handlers.pre?.run(env), 1n);
    assert.equal(a.handlers.pre?.run(env), 3n);
  });

  test('a handler that names the probed program\'s variables is compiled for each probe (its names are those at its target)', () => {
    const opts: CheckOptions = {
      ...OPTS,
      programNamesFor: t => (t.kind === 'symbol' ? name => (name === 'v' ? { unavailable: `is optimized out in ${t.name}` } : undefined) : undefined),
    };
    const r = compileProbeFile('kprobe first { pre { return v; } }\nkprobe second { pre { return v; } }', 't.kprobe', opts);
    assert.deepEqual(r.diagnostics.map(d => [d.line, d.column, d.message]), [
      [1, 29, "'v' is optimized out in first"],
      [2, 30, "'v' is optimized out in second"],
    ]);
  });

  test('a shared handler\'s warnings are at the copy\'s place, and its string literals read the same', () => {
    const r = compileProbeFile('kprobe a { pre { printk("hi %d", 1); regs->ip = 1; } }\n  kprobe b { pre { printk("hi %d", 1); regs->ip = 1; } }', 't.kprobe', OPTS);
    const warnings = r.diagnostics.filter(d => d.severity === 'warning').map(d => [d.line, d.column, d.endLine, d.endColumn]);
    assert.deepEqual(warnings, [[1, 38, 1, 46], [2, 40, 2, 48]]);
    for (const p of r.probes) {
      const env = new FakeEnv();
      p.handlers.pre?.run(env);
      assert.equal(env.text, 'hi 1');
    }
  });
});
