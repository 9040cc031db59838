/** syntaxes/language-configuration.json: well-formed, and its regular expressions compile and behave. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { repoPath } from '../util/paths';

interface LangConfig {
  comments: { lineComment: string; blockComment: [string, string] };
  brackets: [string, string][];
  autoClosingPairs: { open: string; close: string; notIn?: string[] }[];
  surroundingPairs: [string, string][];
  indentationRules: { increaseIndentPattern: string; decreaseIndentPattern: string };
  onEnterRules: { beforeText: string; afterText?: string }[];
  wordPattern: string;
}

const cfg = JSON.parse(readFileSync(repoPath('syntaxes', 'language-configuration.json'), 'utf8')) as LangConfig;

test('comments, brackets and pairs', () => {
  assert.equal(cfg.comments.lineComment, '//');
  assert.deepEqual(cfg.comments.blockComment, ['/*', '*/']);
  assert.deepEqual(cfg.brackets.map(b => b[0]).sort(), ['(', '[', '{']);
  const opens = cfg.autoClosingPairs.map(p => p.open);
  for (const o of ['{', '(', '[', '"', '\'']) assert.ok(opens.includes(o), `auto-closing ${o}`);
  assert.ok(cfg.autoClosingPairs.find(p => p.open === '"')?.notIn?.includes('string'));
  assert.ok(cfg.surroundingPairs.some(p => p[0] === '"'));
});

test('indentation rules: a line opening a probe or handler indents, a closing brace outdents', () => {
  const inc = new RegExp(cfg.indentationRules.increaseIndentPattern);
  const dec = new RegExp(cfg.indentationRules.decreaseIndentPattern);
  assert.ok(inc.test('kprobe do_fork {'));
  assert.ok(inc.test('  pre {'));
  assert.ok(!inc.test('  pre { return 0; }'));
  assert.ok(!inc.test('// kprobe do_fork {'));
  assert.ok(dec.test('  }'));
  assert.ok(!dec.test('  return 0;'));
});

test('word pattern and onEnter rules compile', () => {
  const word = new RegExp(cfg.wordPattern, 'g');
  assert.deepEqual('regs->orig_ax + do_fork'.match(word), ['regs', 'orig_ax', 'do_fork']);
  for (const r of cfg.onEnterRules) {
    assert.doesNotThrow(() => new RegExp(r.beforeText));
    if (r.afterText) assert.doesNotThrow(() => new RegExp(r.afterText as string));
  }
  assert.ok(new RegExp(cfg.onEnterRules[0].beforeText).test('/** doc'));
});
