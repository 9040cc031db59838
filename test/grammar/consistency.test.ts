/**
 * The grammar knows the handler language's vocabulary: every builtin, typedef,
 * context variable and handler kind exported by emulator/handlers gets its
 * scope, so adding one there without the grammar fails here.
 */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import type { IGrammar } from 'vscode-textmate';
import { readFileSync } from 'node:fs';
import { abiFactsArches, abiFactsFor } from '../../emulator/arch/abiFacts';
import { archByName } from '../../emulator/arch/registry';
import { PORTS } from '../../emulator/ports';
import { compileProbeFile } from '../../emulator/handlers';
import { BUILTINS } from '../../emulator/handlers/builtins';
import { HANDLER_KINDS, contextFields } from '../../emulator/handlers/context';
import { TYPEDEFS } from '../../emulator/handlers/ctypes';
import { repoPath } from '../util/paths';
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

  test('every register name after regs-> is variable.other.register (every port\'s pt_regs and the ABI facts of every other arch)', () => {
    const names = new Set<string>();
    for (const p of PORTS) for (const r of p.regs) names.add(r.name);
    for (const a of abiFactsArches()) {
      const f = abiFactsFor(a)!;
      for (const r of [...f.argRegs, f.retReg, f.pcReg, f.spReg]) if (/^[A-Za-z_]\w*$/.test(r)) names.add(r);
    }
    assert.ok(names.has('ip') && names.has('epc') && names.has('x0'));
    for (const r of names) {
      const t = tokenize(grammar, `kprobe f { pre { regs->${r} = regs->${r} + 1; return 1; } post { } }\n`);
      assert.ok(scopesOf(t, 1, r).includes('variable.other.register.kprobe'), `${r}: ${scopesOf(t, 1, r).join(' ')}`);
      assert.ok(scopesOf(t, 1, r, 1).includes('variable.other.register.kprobe'), `${r} (read)`);
    }
  });

  test('every field of p, ri and current is variable.other.member, also when indexed (ri->data[i])', () => {
    for (const k of HANDLER_KINDS) {
      for (const v of contextFields(k.name, []).filter(c => c.fields.length > 0)) {
        for (const f of v.fields) {
          const t = tokenize(grammar, `jprobe f { x = ${v.name}->${f.name}[0] + ${v.name}->${f.name}; }\n`);
          assert.ok(scopesOf(t, 1, f.name).includes('variable.other.member.kprobe'), `${v.name}->${f.name}: ${scopesOf(t, 1, f.name).join(' ')}`);
          assert.ok(scopesOf(t, 1, '[').includes('punctuation.section.brackets.begin.bracket.square.kprobe'), `${v.name}->${f.name}[`);
        }
      }
    }
  });

  test('the registers.kprobe fixture is valid in the language (no diagnostics: the post handlers keep the ip changes honoured)', () => {
    const text = readFileSync(repoPath('test', 'grammar', 'fixtures', 'registers.kprobe'), 'utf8');
    const regNames = archByName('x86_64')!.regs.map(r => r.name);
    const r = compileProbeFile(text, 'registers.kprobe', { regNames, imageArch: 'x86_64' });
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.probes.length, 3);
  });
});
