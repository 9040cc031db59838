/**
 * Event filters (tracefs events/GRP/EVENT/filter) in Linux 6.1's syntax and
 * errors (kernel/trace/trace_events_filter.c parse_pred / calc_stack, its
 * err_text messages; Documentation/trace/events.rst section 5, "Event
 * filtering", for the examples: "((sig >= 10 && sig < 15) || sig == 17) &&
 * comm != bash" with the string quoted as 6.1 requires, "common_preempt_count
 * > 4", globs "*sh", "sh*", "*sh*"). A bad filter is -EINVAL, an error_log
 * entry "event filter parse error: error: MESSAGE" with the command and '^'
 * under the position, and the filter file shows the string, the '^' line and
 * "parse_error: MESSAGE" as append_filter_err prints them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { attachProbes } from '../../emulator/probes/attach';
import { openPseudo } from '../../emulator/kernel/fs/pseudo';
import { FieldKind, FieldValue, filterErrorText, filterMatch, parseFilter } from '../../emulator/tracing/events/filter';
import { repoPath } from '../util/paths';

const FIELDS = new Map<string, FieldKind>([['sig', 'num'], ['comm', 'str'], ['common_preempt_count', 'num'], ['flags', 'num'], ['delta', 'num']]);
const num = (v: bigint, signed = true): FieldValue => ({ kind: 'num', v, signed });
const values = (o: { sig?: bigint; comm?: string; pc?: bigint; flags?: bigint; delta?: bigint }): Map<string, FieldValue> => new Map<string, FieldValue>([
  ['sig', num(o.sig ?? 0n)], ['comm', { kind: 'str', v: o.comm ?? '' }], ['common_preempt_count', num(o.pc ?? 0n, false)],
  ['flags', num(o.flags ?? 0n, false)], ['delta', num(o.delta ?? 0n, true)],
]);

function matches(filter: string, o: Parameters<typeof values>[0]): boolean {
  const r = parseFilter(filter, FIELDS);
  assert.ok(r.ok, `${filter}: ${r.ok ? '' : r.error.message}`);
  return filterMatch(r.filter, values(o));
}

describe('event filter syntax (trace_events_filter.c)', () => {
  test('events.rst\'s examples: && || ! and parentheses, comparisons, string == / !=', () => {
    const f = '((sig >= 10 && sig < 15) || sig == 17) && comm != "bash"';
    assert.equal(matches(f, { sig: 10n, comm: 'sh' }), true);
    assert.equal(matches(f, { sig: 14n, comm: 'sh' }), true);
    assert.equal(matches(f, { sig: 15n, comm: 'sh' }), false);
    assert.equal(matches(f, { sig: 17n, comm: 'sh' }), true);
    assert.equal(matches(f, { sig: 17n, comm: 'bash' }), false);
    assert.equal(matches('common_preempt_count > 4', { pc: 5n }), true);
    assert.equal(matches('common_preempt_count > 4', { pc: 4n }), false);
    assert.equal(matches('!(sig == 1) && sig <= 3', { sig: 3n }), true);
    assert.equal(matches('!(sig == 1) && sig <= 3', { sig: 1n }), false);
    assert.equal(matches("comm == 'sh'", { comm: 'sh' }), true);
  });

  test('& is a bit test; hex, octal and negative values; a signed field compares signed', () => {
    assert.equal(matches('flags & 0x100', { flags: 0x711n }), true);
    assert.equal(matches('flags & 0x100', { flags: 0x11n }), false);
    assert.equal(matches('flags == 021', { flags: 17n }), true);
    assert.equal(matches('delta < -1', { delta: -5n }), true);
    assert.equal(matches('delta < -1', { delta: 3n }), false);
  });

  test('~ globs: *sh, sh*, *sh*, classes', () => {
    assert.equal(matches('comm ~ "*sh"', { comm: 'bash' }), true);
    assert.equal(matches('comm ~ "*sh"', { comm: 'shell' }), false);
    assert.equal(matches('comm ~ "sh*"', { comm: 'shell' }), true);
    assert.equal(matches('comm ~ "*sh*"', { comm: 'pushd' }), true);
    assert.equal(matches('comm ~ "[a-c]at"', { comm: 'cat' }), true);
    assert.equal(matches('comm ~ "[a-c]at"', { comm: 'rat' }), false);
  });

  test('errors: Linux\'s messages at parse_pred\'s positions; the filter file\'s error text', () => {
    const err = (f: string): [string, number] => {
      const r = parseFilter(f, FIELDS);
      assert.ok(!r.ok, f);
      return [r.error.message, r.error.pos];
    };
    const bad = '((sig >= 10 && sig < 15) || dsig == 17) && comm != "bash"';
    assert.deepEqual(err(bad), ['Field not found', bad.indexOf('dsig') + 4]);
    assert.deepEqual(err('sig = 10'), ['Invalid operator', 4]);
    assert.deepEqual(err('comm == bash'), ['Invalid value (did you forget quotes)?', 8]);
    assert.deepEqual(err('sig == "10"'), ['Expecting numeric field', 7]);
    assert.deepEqual(err('comm < "a"'), ['Illegal operation for field type', 7]);
    assert.deepEqual(err('comm == 5'), ['Expecting string field', 8]);
    assert.deepEqual(err('sig ~ 5'), ['Illegal operation for field type', 6]);
    assert.deepEqual(err('sig == 12x'), ['Illegal integer value', 7]);
    assert.deepEqual(err('(sig == 1'), ['Too many \'(\'', 0]);
    assert.deepEqual(err('sig == 1)'), ['Too few \'(\'', 8]);
    assert.deepEqual(err('comm == "abc'), ['Missing matching quote', 8]);
    const r = parseFilter('sig = 10', FIELDS);
    assert.ok(!r.ok);
    assert.equal(filterErrorText('sig = 10', r.error), 'sig = 10\n    ^\nparse_error: Invalid operator\n');
  });
});

describe('events/GRP/EVENT/filter through tracefs (sample kernel, x86_64)', () => {
  /** run the sample kernel with `p:myprobe do_fork flags=%di:x64` enabled and `filter` written; its trace lines and files */
  function run(filter: string | null): { lines: string[]; rc: number; filterText: string; errorLog: string } {
    const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf')));
    attachProbes(m);
    const open = (path: string, flags: number) => {
      const r = m.kernel.fs.lookup(path, m.kernel.fs.root);
      assert.ok(r.ok && r.inode.pseudo, path);
      const dev = openPseudo(r.inode.pseudo, flags);
      assert.ok(typeof dev !== 'number', path);
      return dev;
    };
    const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
    const read = (path: string): string => new TextDecoder().decode(open(path, 0).read(65536) as Uint8Array);
    const E = '/sys/kernel/tracing/events/kprobes/myprobe';
    open('/sys/kernel/tracing/kprobe_events', 1).write(enc('p:myprobe do_fork flags=%di:x64\n'));
    assert.equal(read(`${E}/filter`), 'none\n');
    const rc = filter === null ? 0 : open(`${E}/filter`, 1).write(enc(`${filter}\n`)) as number;
    open(`${E}/enable`, 1).write(enc('1\n'));
    m.run();
    return {
      lines: m.printkRecords.filter(r => / myprobe: \(do_fork\+0x0\//.test(r.text)).map(r => r.text),
      rc, filterText: read(`${E}/filter`), errorLog: read('/sys/kernel/tracing/error_log'),
    };
  }

  test('a filter keeps only the hits it passes (CLONE_VM forks: flags & 0x100); it reads back as written; "0" clears it', () => {
    const all = run(null);
    assert.ok(all.lines.some(l => / flags=0x711$/.test(l)) && all.lines.some(l => / flags=0x11$/.test(l)), all.lines.join('\n'));
    const vm = run('flags & 0x100');
    assert.ok(vm.rc > 0);
    assert.equal(vm.filterText, 'flags & 0x100\n');
    // the same run (deterministic) with the other hits left out
    assert.ok(vm.lines.length > 0);
    assert.deepEqual(vm.lines, all.lines.filter(l => / flags=0x711$/.test(l)));
    const pid = run('common_pid < 0 || !(flags == 0x11)');
    assert.equal(pid.lines.length, vm.lines.length);
    const cleared = run('0');
    assert.equal(cleared.filterText, 'none\n');
    assert.equal(cleared.lines.length, all.lines.length);
  });

  test('a bad filter: -EINVAL, error_log\'s "event filter parse error" entry with the caret, the file shows the error, the event is unfiltered', () => {
    const r = run('flag & 0x100');
    assert.equal(r.rc, -22);
    assert.equal(r.filterText, 'flag & 0x100\n    ^\nparse_error: Field not found\n');
    const log = r.errorLog.split('\n');
    assert.match(log[0], /^\[ +\d+\.\d{6}\] event filter parse error: error: Field not found$/);
    assert.equal(log[1], '  Command: flag & 0x100');
    assert.equal(log[2], `${' '.repeat('  Command: flag'.length)}^`);
    assert.equal(r.lines.length, run(null).lines.length);
  });
});
