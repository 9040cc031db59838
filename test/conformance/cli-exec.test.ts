/**
 * The CLI's own output path, byte for byte: `node dist/cli.js exec PROG.elf`
 * as a child process for a handful of conformance programs — its stdout
 * (as raw bytes, including the non-ASCII byte the strings programs print)
 * must equal qemu-x86_64's golden, its exit code the golden .code (66 for
 * exitcode), and nothing may appear on stderr. The differential suite
 * drives the Machine directly; this one checks what a user of `kprobe-run`
 * gets. `npm test` builds dist/ first; a quick run needs `npm run build`.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { repoPath } from '../util/paths';

const CLI = repoPath('dist', 'cli.js');
const BIN = 'test/conformance/bin';
const GOLDEN = 'test/conformance/golden';

/** one program per source, both compilers, all three optimisation levels between them */
const PROGRAMS = [
  'exitcode-gcc-O0', 'exitcode-clang-O2',
  'strings-gcc-O2', 'strings-clang-Os',
  'control-clang-O0', 'intops-gcc-Os', 'flags-clang-O2', 'recursion-gcc-O2', 'bitops-clang-Os',
];

describe('kprobe-run exec (dist/cli.js) vs qemu-user goldens', () => {
  test('dist/cli.js is built', () => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first (npm test does)`);
  });
  test('the chosen programs cover an exit status other than 0 and non-ASCII output', () => {
    const codes = PROGRAMS.map(p => Number(readFileSync(repoPath(GOLDEN, `${p}.code`), 'utf8').trim()));
    assert.ok(codes.includes(66), 'exitcode (status 66) is among the programs');
    const bytes = PROGRAMS.flatMap(p => [...readFileSync(repoPath(GOLDEN, `${p}.out`))]);
    assert.ok(bytes.some(b => b >= 0x80), 'some golden has a byte >= 0x80');
  });
  for (const name of PROGRAMS) {
    test(name, () => {
      assert.ok(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first (npm test does)`);
      const want = readFileSync(repoPath(GOLDEN, `${name}.out`));
      const code = Number(readFileSync(repoPath(GOLDEN, `${name}.code`), 'utf8').trim());
      const r = spawnSync(process.execPath, [CLI, 'exec', repoPath(BIN, `${name}.elf`)], { cwd: repoPath(), timeout: 60_000 });
      assert.equal(r.error, undefined, `spawning ${CLI}: ${r.error?.message}`);
      assert.equal(r.stderr.toString('utf8'), '', 'nothing on stderr');
      if (!r.stdout.equals(want)) {
        // show where the bytes differ
        let k = 0;
        while (k < want.length && k < r.stdout.length && want[k] === r.stdout[k]) k++;
        assert.fail(`stdout differs from ${GOLDEN}/${name}.out at byte ${k} (got ${r.stdout.length} bytes, want ${want.length}): ` +
          `got ${JSON.stringify(r.stdout.subarray(k, k + 16).toString('latin1'))}, want ${JSON.stringify(want.subarray(k, k + 16).toString('latin1'))}`);
      }
      assert.equal(r.status, code, `exit code (signal ${r.signal})`);
    });
  }
});
