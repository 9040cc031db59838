/**
 * The kernel's number parsers as the probe-event parser uses them
 * (emulator/tracing/events/kstrto.ts, after lib/kstrtox.c and
 * simple_strtoul): base 0 is 0x hex, 0 octal or decimal; the whole string
 * must be the number; ranges as the C types have them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kstrtol, kstrtoull, kstrtouint, simpleStrtoul } from '../../emulator/tracing/events/kstrto';
import { errorLog, parseEventDefinition } from '../../emulator/tracing/events';

test('kstrtoull: base 0, an optional +, a trailing newline, 64 bits', () => {
  assert.equal(kstrtoull('0x1F'), 31n);
  assert.equal(kstrtoull('017'), 15n);
  assert.equal(kstrtoull('17'), 17n);
  assert.equal(kstrtoull('0'), 0n);
  assert.equal(kstrtoull('+5\n'), 5n);
  assert.equal(kstrtoull('0xffffffffffffffff'), 0xffffffffffffffffn);
  for (const bad of ['', '0x', '1a111', '08', '-1', '0x1_0', '0x10000000000000000']) assert.equal(kstrtoull(bad), undefined, bad);
  assert.equal(kstrtoull('010', 10), 10n);
});

test('kstrtouint: 32 bits; kstrtol: a sign and 63 bits', () => {
  assert.equal(kstrtouint('0xffffffff'), 0xffffffffn);
  assert.equal(kstrtouint('0x100000000'), undefined);
  assert.equal(kstrtol('-0x10'), -16n);
  assert.equal(kstrtol('+10'), 10n);
  assert.equal(kstrtol('0x8000000000000000'), undefined);
  assert.equal(kstrtol('-0x8000000000000000'), -(1n << 63n));
  assert.equal(kstrtol('1000-1000'), undefined);
});

test('simple_strtoul: the number at the start and where it stops (0 and nothing read when there is none)', () => {
  assert.deepEqual(simpleStrtoul('4@8/32'), { value: 4n, end: 1 });
  assert.deepEqual(simpleStrtoul('0x10@'), { value: 16n, end: 4 });
  assert.deepEqual(simpleStrtoul('010/'), { value: 8n, end: 3 });
  assert.deepEqual(simpleStrtoul('a/16'), { value: 0n, end: 0 });
});

test("errorLog logs the command as Linux does, its words joined by one blank, the '^' moved with them", () => {
  const text = 'p:e   do_fork\t $retval';
  const r = parseEventDefinition(text);
  assert.ok(!r.ok);
  assert.equal(r.error.column, 16);
  assert.equal(errorLog(text, r.error), 'trace_kprobe: error: $retval is not available on probe\n'
    + '  Command: p:e do_fork $retval\n'
    + `${' '.repeat('  Command: p:e do_fork '.length)}^\n`);
});
