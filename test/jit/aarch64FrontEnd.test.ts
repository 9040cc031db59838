/**
 * The aarch64 front end (emulator/arch/aarch64/jit.ts): every aarch64
 * conformance program (except the long-running loopbench) runs with the
 * translator in lockstep (each exit of translated code compared with the
 * interpreter: registers, NZCV, counts, memory) and prints and exits
 * exactly as with the interpreter alone; the translated code retired
 * instructions of its own.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { repoPath } from '../util/paths';
import { runUser } from '../fixtures/kernel/harness';
import { allTranslators } from '../../emulator/jit';

const BIN = 'test/conformance/bin/aarch64';
const programs = readdirSync(repoPath(BIN)).filter(f => f.endsWith('.elf') && !f.startsWith('loopbench')).sort();

function translatedInsns(): number {
  return allTranslators().get('aarch64:lockstep')?.stats.translatedInsns ?? 0;
}

describe('aarch64 front end: lockstep against the interpreter', () => {
  test('there are programs to run', () => {
    assert.ok(programs.length >= 40, `only ${programs.length} programs in ${BIN}`);
  });
  for (const f of programs) {
    test(f.slice(0, -'.elf'.length), () => {
      const path = `${BIN}/${f}`;
      const off = runUser(path, [path], { translate: 'off' });
      const before = translatedInsns();
      const on = runUser(path, [path], { translate: 'lockstep' });
      assert.equal(on.stderr, off.stderr);
      assert.equal(on.stdout.toString('latin1'), off.stdout.toString('latin1'));
      assert.deepEqual(on.exit, off.exit);
      assert.equal(on.machine.totalInstructions, off.machine.totalInstructions);
      assert.ok(translatedInsns() > before, 'instructions ran translated');
    });
  }
});
