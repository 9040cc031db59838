/**
 * Differential conformance: every test/conformance/bin/*.elf (x86_64),
 * bin/aarch64/*.elf and bin/riscv64/*.elf (except the long-running
 * loopbench) runs through the Machine as a user program; its stdout bytes
 * and exit status must equal qemu-user's goldens (golden/, golden/aarch64/,
 * golden/riscv64/).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { repoPath } from '../util/paths';
import { runUser } from '../fixtures/kernel/harness';

const SUITES = [
  { arch: 'x86_64', bin: 'test/conformance/bin', golden: 'test/conformance/golden', min: 40 },
  { arch: 'aarch64', bin: 'test/conformance/bin/aarch64', golden: 'test/conformance/golden/aarch64', min: 40 },
  { arch: 'riscv64', bin: 'test/conformance/bin/riscv64', golden: 'test/conformance/golden/riscv64', min: 42 },
];

for (const s of SUITES) {
  const programs = readdirSync(repoPath(s.bin)).filter(f => f.endsWith('.elf') && !f.startsWith('loopbench')).sort();
  describe(`differential (${s.arch}): Machine vs qemu-user goldens`, () => {
    test('there are programs to compare', () => {
      assert.ok(programs.length >= s.min, `only ${programs.length} programs in ${s.bin}`);
    });
    for (const f of programs) {
      const name = f.slice(0, -'.elf'.length);
      test(name, () => {
        const want = readFileSync(repoPath(s.golden, `${name}.out`));
        const code = Number(readFileSync(repoPath(s.golden, `${name}.code`), 'utf8').trim());
        const r = runUser(`${s.bin}/${f}`, [`${s.bin}/${f}`]);
        assert.equal(r.stderr, '', 'nothing on stderr');
        assert.equal(r.exit.reason, 'poweroff');
        if (!r.stdout.equals(want)) assert.equal(r.stdout.toString('latin1'), want.toString('latin1'));
        assert.equal(r.exit.code, code);
      });
    }
  });
}
