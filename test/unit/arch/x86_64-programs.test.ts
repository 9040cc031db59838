/**
 * The x86_64 CPU on real compiled programs: every x86_64 ELF in
 * test/conformance/bin (clang/gcc at -O0/-O2/-Os, except the long-running
 * loopbench) runs in user mode under a minimal write/exit_group syscall
 * shim (test/fixtures/x86/userElf.ts, no emulated kernel involved); stdout
 * and exit code must equal the qemu-user goldens.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { repoPath } from '../../util/paths';
import { runUserElf } from '../../fixtures/x86/userElf';

const BIN = 'test/conformance/bin';
const GOLD = 'test/conformance/golden';
const EM_X86_64 = 62;
const programs = readdirSync(repoPath(BIN))
  .filter(f => f.endsWith('.elf') && !f.startsWith('loopbench'))
  .filter(f => readFileSync(repoPath(BIN, f)).readUInt16LE(18) === EM_X86_64)
  .sort();

describe('x86_64 CPU runs compiled programs like qemu-user', () => {
  test('there are x86_64 programs to run', () => {
    assert.ok(programs.length >= 30, `${programs.length} programs`);
  });
  for (const f of programs) {
    const name = f.slice(0, -'.elf'.length);
    test(name, () => {
      const want = readFileSync(repoPath(GOLD, `${name}.out`));
      const code = Number(readFileSync(repoPath(GOLD, `${name}.code`), 'utf8').trim());
      const r = runUserElf(repoPath(BIN, f));
      assert.equal(r.trap, null, 'no fault');
      if (!r.stdout.equals(want)) assert.equal(r.stdout.toString('latin1'), want.toString('latin1'));
      assert.equal(r.exitCode, code);
    });
  }
});
