/**
 * `kprobe-run run | head`: when the reader of the CLI's output goes away,
 * the write fails with EPIPE and dist/cli.js ends quietly with status 141
 * (128 + SIGPIPE, what the shell shows for a producer killed by SIGPIPE),
 * no uncaught 'error' event and no stack trace on stderr. Runs the built
 * CLI as a child process whose stdout's read end is closed before it
 * writes anything (`npm test` builds dist/ first).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { repoPath } from '../../util/paths';

const CLI = repoPath('dist', 'cli.js');

/** the CLI with `args`, its stdout closed at once; its exit status and stderr */
function runClosed(args: string[], closed: 'stdout' | 'stderr'): Promise<{ code: number | null; signal: string | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: repoPath(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '', stdout = '';
    if (closed === 'stdout') child.stdout.destroy();
    else { child.stderr.destroy(); child.stdout.on('data', d => { stdout += String(d); }); }
    if (closed === 'stdout') child.stderr.on('data', d => { stderr += String(d); });
    const timer = setTimeout(() => { child.kill(); reject(new Error('the CLI did not end within 60 s')); }, 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stderr, stdout }); });
  });
}

describe('kprobe-run with a reader that went away (EPIPE)', () => {
  test('dist/cli.js is built', () => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first (npm test does)`);
  });

  test('stdout closed: status 141, nothing on stderr', async () => {
    const r = await runClosed(['run', '--probes', 'examples/probes/kprobe_example.kprobe', '--list'], 'stdout');
    assert.equal(r.signal, null);
    assert.equal(r.stderr, '', 'no uncaught error, no stack trace');
    assert.equal(r.code, 141);
  });

  test('stderr closed: the kernel log and the report reach stdout whole, and the run ends at its first write to stderr (--stats) with status 141', async () => {
    const r = await runClosed(['run', '--probes', 'examples/probes/kprobe_example.kprobe', '--stats', '--list'], 'stderr');
    assert.equal(r.code, 141);
    assert.match(r.stdout, /Power down\.\n/);
    assert.match(r.stdout, /# probe hits\n.*kprobe do_fork: \d+ hits, 0 missed\n$/s);
  });
});
