/**
 * `kprobe-run run --event` values holding newlines: as a write to
 * kprobe_events, each line is a definition of its own; an error shows its
 * own line in the error_log format with the '^' under the bad word, and the
 * summary names --event definitions, not a probe file.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { SAMPLE_IMAGE } from '../probes/helpers';

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo();
  const code = await runCli(argv, c.io);
  return { code, out: c.stdout(), err: c.stderr() };
}

const LEAD = '  Command: ';

/** error_log's three lines for `text` with the caret under `bad` */
function errorLines(err: string, label: string, text: string, bad: string): void {
  const lines = err.split('\n');
  const at = lines.findIndex(l => l.startsWith(`${label}: trace_kprobe: error: `));
  assert.ok(at >= 0, err);
  assert.equal(lines[at + 1], `${LEAD}${text}`);
  assert.equal(lines[at + 2], `${' '.repeat(LEAD.length + text.indexOf(bad))}^`);
}

describe('kprobe-run --event with newlines', () => {
  test('an error on the second line: that line alone in error_log, the caret under the bad word', async () => {
    const r = await cli('run', SAMPLE_IMAGE, '--event', 'p:myp do_fork\nr:x do_fork bad=%zz');
    assert.equal(r.code, 1);
    assert.equal(r.out, '');
    errorLines(r.err, '--event 1 line 2', 'r:x do_fork bad=%zz', '%zz');
    assert.doesNotMatch(r.err, /Command: p:myp/);
  });

  test('an error on the first line of two (CRLF): the second line is not printed with it', async () => {
    const r = await cli('run', SAMPLE_IMAGE, '--event', 'p:ok do_fork', '--event', 'p:myp do_fork bad=%zz\r\nr:x do_fork');
    assert.equal(r.code, 1);
    errorLines(r.err, '--event 2 line 1', 'p:myp do_fork bad=%zz', '%zz');
    assert.doesNotMatch(r.err, /^r:x do_fork$/m);
  });

  test('the summary of --event errors names --event definitions, not a probe file', async () => {
    const r = await cli('run', SAMPLE_IMAGE, '--event', 'p:myprobe do_sys_open %foo');
    assert.equal(r.code, 1);
    const last = r.err.trimEnd().split('\n').pop();
    assert.equal(last, 'kprobe-run: run: 1 error in --event definition; nothing was run');
  });

  test('two definitions in one --event value both register', async () => {
    const r = await cli('run', SAMPLE_IMAGE, '--event', 'p:myp do_fork\nr:x do_fork', '--list', '--max-instructions', '2000000');
    assert.equal(r.err.split('\n').filter(l => /error/.test(l)).length, 0, r.err);
    assert.match(r.out, /^p:kprobes\/myp do_fork\nr:kprobes\/x do_fork\n/m);
  });
});
