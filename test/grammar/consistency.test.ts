/**
 * The grammar knows the handler language's vocabulary: every builtin, typedef,
 * context variable and handler kind exported by emulator/handlers gets its
 * scope, so adding one there without the grammar fails here.
 */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import type { IGrammar } from 'vscode-textmate';
import { BUILTINS } from '../../emulator/handlers/builtins';
import { HANDLER_KINDS, contextFields } from '../../emulator/handlers/context';
import { TYPEDEFS } from '../../emulator/handlers/ctypes';
import { loadKprobeGrammar, scopesOf, tokenize } from './grammarHost';

describe('grammar covers the handler language', () => {
  let grammar: IGrammar;
  before(async () => { grammar = await loadKprobeGrammar(); });

  test('every builtin function is support.function.builtin', () => {
    for (const b of BUILTINS) {
      const t = tokenize(grammar, `jprobe f { ${b.name}(); }\n`);
      assert.ok(scopesOf(t, 1, b.name).includes('support.function.builtin.kprobe'), `${b.name}: ${scopesOf(t, 1, b.name).join(' ')}`);
    }
  });

  test('every typedef is storage.type', () => {
    for (const name of TYPEDEFS.keys()) {
      const t = tokenize(grammar, `jprobe f { ${name} x = (${name})0; }\n`);
      assert.ok(scopesOf(t, 1, name).includes('storage.type.builtin.kprobe'), `${name}: ${scopesOf(t, 1, name).join(' ')}`);
      assert.ok(scopesOf(t, 1, name, 1).includes('meta.cast.kprobe'), `(${name}) is not a cast`);
    }
  });

  test('every context variable is variable.language (jiffies: support.variable)', () => {
    const names = new Set<string>();
    for (const k of HANDLER_KINDS) for (const v of contextFields(k.name, [])) names.add(v.name);
    assert.ok(names.has('regs') && names.has('arg0'));
    for (const name of names) {
      const t = tokenize(grammar, `jprobe f { x = ${name}; }\n`);
      const want = name === 'jiffies' ? 'support.variable.builtin.kprobe' : `variable.language.${name}.kprobe`;
      assert.ok(scopesOf(t, 1, name).includes(want), `${name}: ${scopesOf(t, 1, name).join(' ')}`);
    }
  });

  test('probe handler kinds are keyword.other.handler-kind inside a probe block', () => {
    for (const k of HANDLER_KINDS.filter(h => ['pre', 'post', 'fault', 'entry', 'return'].includes(h.name))) {
      const t = tokenize(grammar, `kprobe f { ${k.name} { } }\n`);
      assert.ok(scopesOf(t, 1, k.name).includes('keyword.other.handler-kind.kprobe'), k.name);
    }
  });
});
