import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { compileHandler } from '../../emulator/handlers';
import { repoPath } from '../util/paths';
import { FakeEnv, X86_REGS } from './fakeEnv';

interface Golden { charSigned: boolean; decls: string; cases: { expr: string; gcc: string }[] }

test('integer expressions evaluate exactly as gcc does (golden from test/handlers/gen-gcc-golden.mjs)', () => {
  const g = JSON.parse(readFileSync(repoPath('test', 'handlers', 'golden', 'c-semantics.json'), 'utf8')) as Golden;
  assert.ok(g.cases.length >= 400);
  const mismatches: string[] = [];
  for (const c of g.cases) {
    const r = compileHandler(`${g.decls} printk("%llx %d", (unsigned long long)(${c.expr}), (int)sizeof(${c.expr}));`, 'pre', { regNames: X86_REGS, charSigned: g.charSigned });
    assert.ok(r.handler, `${c.expr}: ${r.diagnostics.map(d => d.message).join('; ')}`);
    const env = new FakeEnv();
    r.handler.run(env);
    if (env.text !== c.gcc) mismatches.push(`${c.expr}: got ${env.text}, gcc ${c.gcc}`);
  }
  assert.deepEqual(mismatches, []);
});
