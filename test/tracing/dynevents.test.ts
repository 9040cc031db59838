/**
 * Synthetic events in tracefs from user space (Debian's busybox-static on
 * the sample kernel, amd64; fetch: test/userspace/debian/fetch.sh), against
 * Linux 6.1's kernel/trace/trace_events_synth.c and trace_dynevent.c:
 *  - `s:[synthetic/]NAME FIELDS` in dynamic_events and `NAME FIELDS` in
 *    synthetic_events define events/synthetic/NAME; dynamic_events lists
 *    "s:synthetic/NAME\tTYPE FIELD; TYPE FIELD" (synth_event_show),
 *    synthetic_events the same without "s:synthetic/";
 *  - `!s:NAME ...` in dynamic_events and `!NAME` in synthetic_events remove
 *    one; `>` of synthetic_events clears only synthetic events, `>` of
 *    kprobe_events only kprobe events;
 *  - a bad field type is -EINVAL with error_log's "synthetic_events: error:
 *    Invalid type" and '^' under the type (err_pos).
 * Event probes on the system-call events (trace_eprobe.c, trace_syscalls.c):
 *  - `e:EVENT syscalls/sys_enter_chdir file=+0($filename):ustring` records,
 *    when enabled, "EVENT: (syscalls.sys_enter_chdir) file="PATH"" for the
 *    shell's chdir (print_eprobe_event), beside the syscall event's own
 *    "sys_chdir(filename: HEX)" (print_syscall_enter);
 *  - an `if FILTER` on the attached event's fields drops what fails it;
 *  - a name taken by another event (a syscall event, a kprobe event) is
 *    -EEXIST; removal with the attached event and arguments, and of a
 *    whole group with `-:GRP/`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { repoPath } from '../util/paths';
import { debianBusybox } from '../userspace/debian/busybox';
import { unfetched } from '../util/fetched';
import { between, busyboxScript } from './busyboxScript';

const KERNEL = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const T = '/sys/kernel/tracing';

describe('synthetic events (tracefs dynamic_events / synthetic_events)', () => {
  test('amd64: define, list, format, remove and clear synthetic events; a bad type in error_log', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    const r = await busyboxScript(bb, KERNEL, [
      `cd ${T}`,
      `echo 's:latency1 u64 lat; pid_t pid;' >> dynamic_events`,
      `echo 'wakeup char comm[16]; unsigned int prio; char name[]' >> synthetic_events`,
      'echo "p:myevent1 kernel_clone" >> dynamic_events',
      'echo @dyn; cat dynamic_events; echo @syn; cat synthetic_events; echo @fmt; cat events/synthetic/latency1/format; echo @end',
      'test -d events/synthetic/wakeup && echo wakeup-dir',
      `echo 's:latency1 u64 lat' >> dynamic_events; echo dup=$?`,
      `echo > error_log; echo 'bad u65 lat' >> synthetic_events; echo bad=$?`,
      'echo @log; cat error_log; echo @logend',
      `echo '!s:latency1 u64 lat; pid_t pid;' >> dynamic_events; echo rm=$?`,
      'test -d events/synthetic/latency1 || echo latency1-gone',
      'echo "!nosuch" >> synthetic_events; echo rmnone=$?',
      'echo > kprobe_events; echo @afterk; cat dynamic_events; echo @afterkend',
      'echo "p:myevent1 kernel_clone" >> dynamic_events',
      'echo > synthetic_events; echo @afters; cat dynamic_events; echo @aftersend',
      'test -d events/synthetic || echo synthetic-gone',
    ].join('\n'));
    assert.equal(r.code, 0, r.err + r.out.slice(-3000));
    assert.equal(between(r.out, '@dyn', '@syn'),
      's:synthetic/latency1\tu64 lat; pid_t pid\n' +
      's:synthetic/wakeup\tchar[16] comm; unsigned int prio; char[] name\n' +
      'p:kprobes/myevent1 kernel_clone\n');
    assert.equal(between(r.out, '@syn', '@fmt'), 'latency1\tu64 lat; pid_t pid\nwakeup\tchar[16] comm; unsigned int prio; char[] name\n');
    const fmt = between(r.out, '@fmt', '@end');
    assert.match(fmt, /^name: latency1\nID: \d+\nformat:\n/);
    assert.match(fmt, /\tfield:u64 lat;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:pid_t pid;\toffset:16;\tsize:4;\tsigned:1;\n/);
    assert.match(fmt, /print fmt: "lat=%llu, pid=%d", REC->lat, REC->pid\n/);
    assert.match(r.out, /\nwakeup-dir\n/);
    assert.match(r.out, /\ndup=1\n/, 'a second latency1 is refused');
    assert.match(r.out, /\nbad=1\n/);
    assert.equal(between(r.out, '@log', '@logend').replace(/^\[[ \d.]+\] /, ''),
      'synthetic_events: error: Invalid type\n  Command: bad u65 lat\n               ^\n');
    assert.match(r.out, /\nrm=0\n/);
    assert.match(r.out, /\nlatency1-gone\n/);
    assert.match(r.out, /\nrmnone=1\n/);
    assert.equal(between(r.out, '@afterk', '@afterkend'), 's:synthetic/wakeup\tchar[16] comm; unsigned int prio; char[] name\n');
    assert.equal(between(r.out, '@afters', '@aftersend'), 'p:kprobes/myevent1 kernel_clone\n');
    assert.match(r.out, /\nsynthetic-gone\n/);
  });

  test('amd64: an event probe on sys_enter_chdir records the path; names taken and removals', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    const r = await busyboxScript(bb, KERNEL, [
      `cd ${T}`,
      `echo 'e:ech syscalls/sys_enter_chdir file=+0($filename):ustring' >> dynamic_events; echo add=$?`,
      `echo 'e:grp/only_tmp syscalls.sys_enter_chdir file=+0($filename):ustring nr=$__syscall_nr:u32 if filename != 0 && dfd == 1' >> dynamic_events; echo badfilter=$?`,
      `echo 'e:syscalls/sys_enter_open syscalls/sys_enter_chdir' >> dynamic_events; echo dupsys=$?`,
      `echo 'p:eprobes/ech kernel_clone' >> dynamic_events; echo dupk=$?`,
      'echo @dyn; cat dynamic_events; echo @dynend',
      'echo 1 > events/eprobes/ech/enable; echo 1 > events/syscalls/sys_enter_chdir/enable',
      'cd /tmp; cd /; cd /nonexistent-dir 2>/dev/null',
      `cd ${T}`,
      'echo 0 > events/eprobes/ech/enable; echo 0 > events/syscalls/sys_enter_chdir/enable',
      'echo @trace; grep -o -E "(ech: |sys_chdir\\().*" trace; echo @traceend',
      `echo '-:ech syscalls/sys_enter_chdir file=+0($filename):ustring' >> dynamic_events; echo rm=$?`,
      'test -d events/eprobes || echo eprobes-gone',
    ].join('\n'));
    assert.equal(r.code, 0, r.err + r.out.slice(-3000));
    assert.match(r.out, /\nadd=0\n/);
    assert.match(r.out, /\nbadfilter=1\n/, 'dfd is not a field of sys_enter_chdir');
    assert.match(r.out, /\ndupsys=1\n/);
    assert.match(r.out, /\ndupk=1\n/);
    assert.equal(between(r.out, '@dyn', '@dynend'), 'e:eprobes/ech syscalls.sys_enter_chdir file=+0($filename):ustring\n');
    const lines = between(r.out, '@trace', '@traceend').split('\n').filter(Boolean);
    // each chdir: the syscall event's line, then the probe's; the shell's cd runs chdir with its user-space path
    assert.equal(lines.length, 8, lines.join('\n'));
    assert.deepEqual(lines.filter(l => l.startsWith('ech')), [
      `ech: (syscalls.sys_enter_chdir) file="/tmp"`, `ech: (syscalls.sys_enter_chdir) file="/"`,
      `ech: (syscalls.sys_enter_chdir) file="/nonexistent-dir"`, `ech: (syscalls.sys_enter_chdir) file="${T}"`,
    ]);
    for (const l of lines.filter(x => x.startsWith('sys_chdir'))) assert.match(l, /^sys_chdir\(filename: [0-9a-f]+\)$/);
    assert.match(r.out, /\nrm=0\n/);
    assert.match(r.out, /\neprobes-gone\n/);
  });

  test('amd64: a filter on the attached event\'s fields', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    const r = await busyboxScript(bb, KERNEL, [
      `cd ${T}`,
      // the shell's chdir to /tmp passes the path as its only argument; a filter on __syscall_nr keeps every one, on filename == 0 none
      `echo 'e:grp/all syscalls.sys_enter_chdir file=+0($filename):ustring if __syscall_nr == 80' >> dynamic_events; echo a=$?`,
      `echo 'e:grp/none syscalls.sys_enter_chdir file=+0($filename):ustring if filename == 0' >> dynamic_events; echo b=$?`,
      'echo 1 > events/grp/enable',
      'cd /tmp',
      `cd ${T}`,
      'echo 0 > events/grp/enable',
      'echo @trace; grep -o -E " (all|none): .*" trace; echo @traceend',
      'echo "-:grp/" >> dynamic_events; echo rm=$?; test -d events/grp || echo grp-gone',
    ].join('\n'));
    assert.equal(r.code, 0, r.err + r.out.slice(-3000));
    assert.match(r.out, /\na=0\n/);
    assert.match(r.out, /\nb=0\n/);
    assert.equal(between(r.out, '@trace', '@traceend'),
      ` all: (syscalls.sys_enter_chdir) file="/tmp"\n all: (syscalls.sys_enter_chdir) file="${T}"\n`);
    assert.match(r.out, /\nrm=0\n/);
    assert.match(r.out, /\ngrp-gone\n/);
  });
});
