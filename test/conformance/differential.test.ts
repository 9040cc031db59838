/**
 * Differential conformance: every test/conformance/bin/*.elf (except the
 * long-running loopbench) runs through the Machine as a user program; its
 * stdout bytes and exit status must equal qemu-x86_64's goldens.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { repoPath } from '../util/paths';
import { runUser } from '../fixtures/kernel/harness';

const BIN = 'test/conformance/bin';
const programs = readdirSync(repoPath(BIN)).filter(f => f.endsWith('.elf') && !f.startsWith('loopbench')).sort();

describe('differential: Machine vs qemu-user goldens', () => {
  test('there are programs to compare', () => {
    assert.ok(programs.length >= 40, `only ${programs.length} programs in ${BIN}`);
  });
  for (const f of programs) {
    const name = f.slice(0, -'.elf'.length);
    test(name, () => {
      const want = readFileSync(repoPath('test/conformance/golden', `${name}.out`));
      const code = Number(readFileSync(repoPath('test/conformance/golden', `${name}.code`), 'utf8').trim());
      const r = runUser(`${BIN}/${f}`, [`${BIN}/${f}`]);
      assert.equal(r.stderr, '', 'nothing on stderr');
      assert.equal(r.exit.reason, 'poweroff');
      if (!r.stdout.equals(want)) assert.equal(r.stdout.toString('latin1'), want.toString('latin1'));
      assert.equal(r.exit.code, code);
    });
  }
});
