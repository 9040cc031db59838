/**
 * Tokenization goldens for syntaxes/kprobe.tmLanguage.json: every
 * test/grammar/fixtures/*.kprobe is tokenized and compared with the committed
 * *.tokens beside it. Regenerate (then READ the diff) with
 *   UPDATE_GOLDENS=1 scripts/quicktest.sh test/grammar/tokenize.test.ts
 */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IGrammar } from 'vscode-textmate';
import { repoPath } from '../util/paths';
import { loadKprobeGrammar, renderGolden, scopesOf, tokenize } from './grammarHost';

const FIXTURES = repoPath('test', 'grammar', 'fixtures');
const UPDATE = process.env.UPDATE_GOLDENS === '1';

describe('kprobe TextMate grammar', () => {
  let grammar: IGrammar;
  before(async () => { grammar = await loadKprobeGrammar(); });

  const fixtures = readdirSync(FIXTURES).filter(f => f.endsWith('.kprobe')).sort();
  test('has fixtures', () => assert.ok(fixtures.length >= 2, `fixtures in ${FIXTURES}: ${fixtures.join(', ')}`));

  for (const name of fixtures) {
    test(`golden tokens: ${name}`, () => {
      const src = readFileSync(join(FIXTURES, name), 'utf8');
      const actual = renderGolden(src, tokenize(grammar, src));
      const goldenPath = join(FIXTURES, name.replace(/\.kprobe$/, '.tokens'));
      if (UPDATE) writeFileSync(goldenPath, actual);
      assert.ok(existsSync(goldenPath), `missing golden ${goldenPath} (run with UPDATE_GOLDENS=1 and review it)`);
      assert.equal(actual, readFileSync(goldenPath, 'utf8'), `${goldenPath} differs`);
    });
  }

  test('header, probe kinds and targets', () => {
    const t = tokenize(grammar, readFileSync(join(FIXTURES, 'example.kprobe'), 'utf8'));
    assert.deepEqual(scopesOf(t, 1, 'image'), ['meta.image.kprobe', 'keyword.other.image.kprobe']);
    assert.ok(scopesOf(t, 1, '../kernel/build/kernel-x86_64.elf').includes('string.quoted.double.path.kprobe'));
    assert.deepEqual(scopesOf(t, 2, '//'), ['comment.line.double-slash.kprobe', 'punctuation.definition.comment.kprobe']);
    assert.deepEqual(scopesOf(t, 2, ' comment'), ['comment.line.double-slash.kprobe']);
    for (const [line, kw] of [[3, 'kprobe'], [8, 'kretprobe'], [12, 'jprobe']] as const) {
      assert.ok(scopesOf(t, line, kw).includes('keyword.other.probe-kind.kprobe'), `${kw} on line ${line}`);
    }
    assert.ok(scopesOf(t, 3, 'do_fork').includes('entity.name.function.target.kprobe'));
    assert.ok(scopesOf(t, 13, 'kernel.c').includes('string.unquoted.source-file.kprobe'));
    assert.ok(scopesOf(t, 13, '42').includes('constant.numeric.line-number.kprobe'));
    assert.ok(scopesOf(t, 13, 'disabled').includes('storage.modifier.disabled.kprobe'));
    assert.ok(scopesOf(t, 14, '0xffffffff81000010').includes('constant.numeric.hex.address.kprobe'));
    assert.ok(scopesOf(t, 15, '0x4').includes('constant.numeric.offset.kprobe'));
    assert.ok(scopesOf(t, 8, 'maxactive').includes('variable.parameter.option.kprobe'));
    assert.ok(scopesOf(t, 8, '20').includes('constant.numeric.option.kprobe'));
  });

  test('handler kinds versus the C return keyword', () => {
    const t = tokenize(grammar, readFileSync(join(FIXTURES, 'example.kprobe'), 'utf8'));
    for (const [line, kind] of [[4, 'pre'], [5, 'post'], [6, 'fault'], [9, 'entry'], [10, 'return']] as const) {
      assert.ok(scopesOf(t, line, kind).includes('keyword.other.handler-kind.kprobe'), `${kind} on line ${line}`);
    }
    // line 9's "return" is a statement inside the entry handler's body
    assert.ok(scopesOf(t, 9, 'return').includes('keyword.control.return.kprobe'));
    assert.ok(!scopesOf(t, 9, 'return').includes('keyword.other.handler-kind.kprobe'));
  });

  test('C subset: builtins, context variables, registers, printk formats', () => {
    const t = tokenize(grammar, readFileSync(join(FIXTURES, 'example.kprobe'), 'utf8'));
    assert.ok(scopesOf(t, 4, 'printk').includes('support.function.builtin.kprobe'));
    assert.ok(scopesOf(t, 4, 'dump_stack').includes('support.function.builtin.kprobe'));
    assert.ok(scopesOf(t, 4, 'p').includes('variable.language.p.kprobe'));
    assert.ok(scopesOf(t, 4, 'regs').includes('variable.language.regs.kprobe'));
    assert.ok(scopesOf(t, 4, 'ip').includes('variable.other.register.kprobe'));
    assert.ok(scopesOf(t, 4, 'addr').includes('variable.other.member.kprobe'));
    const fmt = scopesOf(t, 4, '%lx');
    assert.ok(fmt.includes('string.quoted.double.kprobe') && fmt.includes('constant.character.format.placeholder.kprobe'));
    assert.ok(scopesOf(t, 4, '\\n').includes('constant.character.escape.kprobe'));
    assert.ok(scopesOf(t, 9, 'u64').includes('storage.type.builtin.kprobe'));
    assert.ok(scopesOf(t, 9, 'u64').includes('meta.cast.kprobe'));
    assert.ok(scopesOf(t, 9, 'ri').includes('variable.language.ri.kprobe'));
    assert.ok(scopesOf(t, 10, 'if').includes('keyword.control.if.kprobe'));
    assert.ok(scopesOf(t, 10, '<').includes('keyword.operator.comparison.kprobe'));
  });

  test('multi-line constructs keep their state across lines', () => {
    const t = tokenize(grammar, readFileSync(join(FIXTURES, 'handlers.kprobe'), 'utf8'));
    assert.ok(scopesOf(t, 2, '   spanning lines ').includes('comment.block.kprobe'));
    // "pre" alone on its line, its "{" on the next line
    assert.ok(scopesOf(t, 6, 'pre').includes('keyword.other.handler-kind.kprobe'));
    assert.ok(scopesOf(t, 8, 'unsigned').includes('meta.handler.body.kprobe'));
    assert.ok(scopesOf(t, 15, '%%').includes('constant.character.format.placeholder.percent.kprobe'));
    assert.ok(scopesOf(t, 15, '%px').includes('constant.character.format.placeholder.kprobe'));
    assert.ok(scopesOf(t, 15, 'jiffies').includes('support.variable.builtin.kprobe'));
    assert.ok(scopesOf(t, 20, 'bogus').includes('invalid.illegal.handler-kind.kprobe'));
    assert.ok(scopesOf(t, 21, '}').includes('punctuation.section.probe.end.bracket.curly.kprobe'));
  });

  test('kprobe_events lines: kind, maxactive, event, target, fetch args and types; -:EVENT', () => {
    const t = tokenize(grammar, 'r8:grp/ev sys_open+0 rv=$retval:s64 p=+0(%di):string\n-:grp/ev\n');
    assert.ok(scopesOf(t, 1, 'r').includes('keyword.other.probe-kind.kprobe'));
    assert.ok(scopesOf(t, 1, '8').includes('constant.numeric.option.kprobe'));
    assert.ok(scopesOf(t, 1, 'grp/ev').includes('entity.name.tag.event.kprobe'));
    assert.ok(scopesOf(t, 1, 'sys_open').includes('entity.name.function.target.kprobe'));
    assert.ok(scopesOf(t, 1, 'rv').includes('variable.parameter.fetch-arg.kprobe'));
    assert.ok(scopesOf(t, 1, '$retval').includes('variable.language.fetch-arg.kprobe'));
    assert.ok(scopesOf(t, 1, 's64').includes('storage.type.fetch-arg.kprobe'));
    assert.ok(scopesOf(t, 1, '%di').includes('variable.language.register.kprobe'));
    assert.ok(scopesOf(t, 1, 'string').includes('storage.type.fetch-arg.kprobe'));
    assert.deepEqual(scopesOf(t, 2, 'grp/ev'), ['meta.probe.event-removal.kprobe', 'entity.name.tag.event.kprobe']);
  });
});
