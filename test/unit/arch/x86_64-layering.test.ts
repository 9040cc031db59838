/**
 * x86_64 module layering: table.ts imports the executors (exec/*.ts), so
 * neither the executors nor insn.ts (which they import) may import the
 * table; the kprobes hooks use the decoder's field offsets and relocate.ts
 * instead of parsing instruction bytes themselves.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { repoPath } from '../../util/paths';

const X86 = 'emulator/arch/x86_64';

function importsOf(rel: string): string[] {
  const src = readFileSync(repoPath(rel), 'utf8');
  return [...src.matchAll(/^import\s[^;]*?from\s+'([^']+)'/gm)].map(m => m[1]);
}

describe('x86_64 layering', () => {
  test('executors and insn.ts never import the table', () => {
    const files = readdirSync(repoPath(`${X86}/exec`)).filter(f => f.endsWith('.ts')).map(f => `${X86}/exec/${f}`);
    files.push(`${X86}/insn.ts`);
    const bad = files.flatMap(f => importsOf(f).filter(i => /(^|\/)table$/.test(i)).map(i => `${f} imports ${i}`));
    assert.ok(files.length > 5);
    assert.deepEqual(bad, []);
  });
  test('the table imports the executors', () => {
    assert.ok(importsOf(`${X86}/table.ts`).some(i => i.startsWith('./exec/')));
  });
  test('the kprobes hooks relocate through relocate.ts', () => {
    for (const f of ['index.ts', 'opt.ts']) assert.ok(importsOf(`${X86}/kprobes/${f}`).includes('../relocate'), f);
  });
});
