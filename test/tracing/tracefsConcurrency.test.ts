/**
 * tracefs from user space while probes are hit (Debian's busybox-static on
 * the sample kernel, amd64; fetch: test/userspace/debian/fetch.sh):
 *  - two readers of trace_pipe at once: every line is consumed once, by one
 *    of them (Linux's rule: a consuming read takes the line out of the ring
 *    buffer for every reader);
 *  - kprobe_events written (events added, enabled, disabled, removed) while
 *    another process keeps hitting the probed function on the other CPU:
 *    every write succeeds but the clearing of an enabled event (-EBUSY);
 *  - a symbol the kernel has twice (`name_show`) is refused as Linux 6.1's
 *    number_of_same_symbols refuses it: -EADDRNOTAVAIL and error_log's
 *    "The symbol is not unique" with `^` under the symbol.
 * Hits come from the shell's own opens: each open(2) of a user program runs
 * the kernel's do_sys_openat2 (emulator/kernel/user/imageCalls.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { repoPath } from '../util/paths';
import { debianBusybox } from '../userspace/debian/busybox';
import { unfetched } from '../util/fetched';
import { between, busyboxScript } from './busyboxScript';

const KERNEL = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const T = '/sys/kernel/tracing';

describe('tracefs from user space while probes are hit (busybox, the sample kernel)', () => {
  test('amd64: two concurrent trace_pipe readers consume each line once between them', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    const N = 30;
    const r = await busyboxScript(bb, KERNEL, [
      `echo 'p:po do_sys_openat2 path=+0($arg2):ustring' > ${T}/kprobe_events`,
      `cat ${T}/trace_pipe > /tmp/a & A=$!`,
      `cat ${T}/trace_pipe > /tmp/b & B=$!`,
      `echo 1 > ${T}/events/kprobes/po/enable`,
      `i=0; while [ $i -lt ${N} ]; do i=$((i+1)); true 2>/dev/null < /nonexistent-$i; done`,
      `echo 0 > ${T}/events/kprobes/po/enable`,
      // the readers have taken every line once `trace` (which does not consume) shows none
      `while grep -q " po: " ${T}/trace; do :; done`,
      'kill $A $B; wait',
      'echo @a; grep -o "nonexistent-[0-9]*" /tmp/a; echo @b; grep -o "nonexistent-[0-9]*" /tmp/b; echo @end',
    ].join('\n'));
    assert.equal(r.code, 0, r.err + r.out.slice(-3000));
    const a = between(r.out, '@a', '@b').split('\n').filter(Boolean);
    const b = between(r.out, '@b', '@end').split('\n').filter(Boolean);
    t.diagnostic(`reader a took ${a.length} lines, reader b ${b.length}`);
    const all = [...a, ...b].sort((x, y) => Number(x.split('-')[1]) - Number(y.split('-')[1]));
    assert.deepEqual(all, Array.from({ length: N }, (_, i) => `nonexistent-${i + 1}`), 'each line read once, by one reader');
    // each reader sees its lines in the order they were written
    for (const lines of [a, b]) assert.deepEqual(lines, [...lines].sort((x, y) => Number(x.split('-')[1]) - Number(y.split('-')[1])));
  });

  test('amd64: kprobe_events written while another process keeps hitting the probed function', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    const N = 20;
    const r = await busyboxScript(bb, KERNEL, [
      `echo 'p:hot do_sys_openat2' > ${T}/kprobe_events`,
      `echo 1 > ${T}/events/kprobes/hot/enable`,
      // the background process hits do_sys_openat2 until told to stop (a file, not a sleep)
      '(while [ ! -e /tmp/stop ]; do true 2>/dev/null < /hot-x; done) & H=$!',
      `i=0; while [ $i -lt ${N} ]; do i=$((i+1))`,
      `  echo "p:e$i do_sys_openat2 path=+0(\\$arg2):ustring" >> ${T}/kprobe_events || echo add-failed-$i`,
      `  echo 1 > ${T}/events/kprobes/e$i/enable || echo enable-failed-$i`,
      '  true 2>/dev/null < /mine-$i',
      `  echo 0 > ${T}/events/kprobes/e$i/enable || echo disable-failed-$i`,
      `  echo "-:e$i" >> ${T}/kprobe_events || echo remove-failed-$i`,
      'done',
      // the enabled event cannot go: -EBUSY (Linux's only refusal of a removal)
      `echo > ${T}/kprobe_events; echo clear-rc=$?`,
      `echo 0 > ${T}/events/kprobes/hot/enable`,
      'echo > /tmp/stop; wait $H',
      `echo @events; cat ${T}/kprobe_events; echo @list; cat /sys/kernel/debug/kprobes/list; echo @hot`,
      `grep -c " hot: " ${T}/trace; echo @mine; grep -o " e[0-9]*: .*" ${T}/trace | grep mine; echo @end`,
    ].join('\n'));
    assert.equal(r.code, 0, r.err + r.out.slice(-3000));
    assert.doesNotMatch(r.out, /-failed-/);
    assert.match(r.out, new RegExp(`can't create ${T}/kprobe_events: Device or resource busy\nclear-rc=1\n`));
    assert.equal(between(r.out, '@events', '@list'), 'p:kprobes/hot do_sys_openat2\n');
    assert.match(between(r.out, '@list', '@hot'), /^ffffffff[0-9a-f]{8}  k  do_sys_openat2\+0x0 {4}(\[DISABLED\]|\[OPTIMIZED\]|)\s*\n$/);
    const hot = Number(between(r.out, '@hot', '@mine').trim());
    assert.ok(hot > N, `the background process hit the probe (${hot} lines)`);
    // each event, enabled around its own open, saw it with the process's path
    const mine = between(r.out, '@mine', '@end').split('\n').filter(Boolean);
    for (let i = 1; i <= N; i++) assert.ok(mine.some(l => new RegExp(`^ e${i}: \\(do_sys_openat2\\+0x0/0x[0-9a-f]+\\) path="/mine-${i}"$`).test(l)), `e${i} saw /mine-${i}:\n${mine.join('\n')}`);
  });

  test('amd64: a symbol the kernel has twice is refused (-EADDRNOTAVAIL, "The symbol is not unique")', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    const r = await busyboxScript(bb, KERNEL, [
      `grep -c -E "[[:alnum:]]+ t name_show$" /proc/kallsyms`,
      `echo "p:nu name_show" > ${T}/kprobe_events; echo rc=$?`,
      `echo @log; cat ${T}/error_log; echo @events; cat ${T}/kprobe_events; echo @end`,
    ].join('\n'));
    assert.equal(r.code, 0, r.err + r.out.slice(-3000));
    assert.match(r.out, /^2\nsh: write error: Cannot assign requested address\nrc=1\n/m);
    const log = between(r.out, '@log', '@events').split('\n');
    assert.match(log[0], /^\[ +\d+\.\d{6}\] trace_kprobe: error: The symbol is not unique$/);
    assert.equal(log[1], '  Command: p:nu name_show');
    assert.equal(log[2], `${' '.repeat('  Command: p:nu '.length)}^`);
    assert.equal(between(r.out, '@events', '@end'), '');
  });
});
