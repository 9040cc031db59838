/**
 * The debugger's views of the guest kernel's own state, read from guest
 * memory (emulator/system/guest/: the guest's page tables, struct layouts
 * from the vmlinux's DWARF) against what the guest itself prints at the
 * same moment, on Debian's 6.1 kernel booted once (acpi=off, one CPU):
 * - the kprobes list = `cat /sys/kernel/debug/kprobes/list` after
 *   `insmod kprobe_example.ko` (its [FTRACE] probe on kernel_clone), after
 *   kprobe_events definitions are enabled (an aggregated probe on
 *   do_sys_openat2 holding a kprobe and a kretprobe, an [OPTIMIZED] one at
 *   +0x11), after /proc/sys/debug/kprobes-optimization goes to 0 and back to
 *   1, with one event disabled ([DISABLED]), and after `rmmod`;
 * - the module list = /proc/modules (loaded, then removed);
 * - the kprobe / uprobe event definitions and hit counts = tracefs
 *   kprobe_events, kprobe_profile, uprobe_events, uprobe_profile;
 * - a uprobe on /bin/busybox's ELF entry point (the file offset computed
 *   from the ELF: busybox-static is stripped, so the entry point is the one
 *   spot known to run) fires when `/bin/busybox true` runs (the trace line),
 *   and the uprobes reader shows it: the file's path, its inode number as
 *   `ls -i` prints it, the offset, the event's consumer, the processes it is
 *   installed in (init and the shell: both run busybox).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { loadElf } from '../../../emulator/elf';
import type { PcRun } from '../../../emulator/system/pcRun';
import { runConsoleSteps, type ConsoleStep } from '../../../emulator/system/guest/consoleSteps';
import { GuestKernel, type GuestSnapshot } from '../../../emulator/system/guest/guestKernel';
import { debianKernel, busyboxInitramfs } from '../../system/linuxFiles';
import { repoPath } from '../../util/paths';
import { unfetched } from '../../util/fetched';

const VMLINUX = repoPath('test', 'linux', 'dbg', 'cache', 'vmlinux');
const BUSYBOX = repoPath('test', 'userspace', 'debian', 'cache', 'amd64', 'bin', 'busybox');

/** busybox's ELF entry point as a file offset (the PT_LOAD holding it) */
function entryOffset(): { vaddr: bigint; offset: bigint } {
  const bb = loadElf(BUSYBOX);
  const seg = bb.segments.find(s => s.type === 1 && bb.entry >= s.vaddr && bb.entry < s.vaddr + s.filesz);
  assert.ok(seg, 'a PT_LOAD segment holds busybox\'s entry point');
  return { vaddr: bb.entry, offset: bb.entry - seg.vaddr + seg.offset };
}

test('the guest\'s kprobes, modules, trace events and uprobes read from its memory equal what the guest prints', (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) { unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)'); return; }
  if (!existsSync(BUSYBOX)) { unfetched(t, 'no Debian busybox-static (test/userspace/debian/fetch.sh)'); return; }
  const vmlinux = loadElf(VMLINUX);
  const entry = entryOffset();
  const off = `0x${entry.offset.toString(16)}`;
  let guest: GuestKernel | undefined;
  const snap = (run: PcRun): GuestSnapshot => (guest ??= new GuestKernel(vmlinux, run.machine.memory)).snapshot();
  const seen: string[] = [];
  const list = (moment: string, check?: (s: GuestSnapshot) => void): ConsoleStep => ({
    input: 'cat /sys/kernel/debug/kprobes/list',
    then: (out, run) => {
      const s = snap(run);
      assert.equal(s.render.kprobesList, out, `kprobes list ${moment}`);
      seen.push(moment);
      check?.(s);
    },
  });
  const same = (input: string, key: keyof GuestSnapshot['render'], check?: (s: GuestSnapshot, out: string) => void): ConsoleStep => ({
    input,
    then: (out, run) => {
      const s = snap(run);
      assert.equal(s.render[key], out, input);
      check?.(s, out);
    },
  });
  let ino = '', shell = '';
  const steps: ConsoleStep[] = [
    // the kernel's messages (the sample's handler lines) stay off the console, so each command's output is its own
    { input: 'dmesg -n 1' },
    { input: 'insmod /root/kprobe_example.ko' },
    list('after insmod kprobe_example.ko', s => {
      const k = s.kprobes.find(p => p.symbol === 'kernel_clone');
      assert.ok(k?.ftrace && k.owner === 'kprobe_example' && k.handler.startsWith('handler_pre'), JSON.stringify(k, (_, v) => typeof v === 'bigint' ? `0x${v.toString(16)}` : v));
    }),
    same('cat /proc/modules', 'procModules', s => {
      const m = s.modules.find(x => x.name === 'kprobe_example');
      assert.equal(m?.state, 'live');
    }),
    {
      input: 'cat /sys/module/kprobe_example/sections/.kprobes.text',
      then: (out, run) => {
        const at = snap(run).modules.find(x => x.name === 'kprobe_example')?.sections.get('.kprobes.text');
        assert.equal(`0x${at?.toString(16).padStart(16, '0')}\n`, out, 'the section address sysfs shows');
      },
    },
    { input: 'cd /sys/kernel/tracing' },
    { input: 'echo "p:myopen do_sys_openat2 dfd=%di:s32" > kprobe_events' },
    { input: 'echo "r:myret do_sys_openat2 \\$retval" >> kprobe_events' },
    { input: 'echo "p:myopt do_sys_openat2+0x11" >> kprobe_events' },
    { input: 'echo 1 > events/kprobes/enable' },
    same('cat kprobe_events', 'kprobeEvents'),
    list('after kprobe_events are enabled', s => {
      const agg = s.kprobes.filter(p => p.symbol === 'do_sys_openat2' && p.offset === 0n);
      assert.ok(agg.length === 2 && agg[0].aggregate !== null && agg.some(p => p.type === 'r' && p.kretprobe !== undefined), 'a kprobe and a kretprobe aggregated on do_sys_openat2');
    }),
    same('cat kprobe_profile', 'kprobeProfile', s => {
      assert.ok(s.events.some(e => e.kind === 'kprobe' && e.event === 'myopen' && e.hits > 0n), 'myopen was hit');
    }),
    { input: 'echo 0 > /proc/sys/debug/kprobes-optimization' },
    list('with kprobes-optimization 0', s => assert.ok(!s.kprobes.some(p => p.optimized), 'nothing optimized')),
    { input: 'echo 1 > /proc/sys/debug/kprobes-optimization' },
    list('with kprobes-optimization back to 1'),
    { input: 'ls -i /bin/busybox', then: out => { ino = out.trim().split(/\s+/)[0]; } },
    { input: 'echo $$', then: out => { shell = out.trim(); } },
    { input: `echo "p:bbentry /bin/busybox:${off}" > uprobe_events` },
    { input: 'echo 1 > events/uprobes/enable' },
    { input: '/bin/busybox true' },
    same('cat uprobe_events', 'uprobeEvents'),
    same('cat uprobe_profile', 'uprobeProfile', s => {
      const u = s.uprobes.find(x => x.offset === entry.offset);
      assert.ok(u, `a uprobe at ${off}`);
      assert.equal(u.path, '/bin/busybox');
      assert.equal(u.ino.toString(), ino, 'the inode number ls -i shows');
      assert.deepEqual(u.consumers.map(c => c.event), ['uprobes/bbentry']);
      // installed in every process running busybox: init (pid 1, busybox's sh) and this shell
      const pids = u.processes.map(p => String(p.pid));
      assert.ok(pids.includes('1') && pids.includes(shell), `processes ${JSON.stringify(u.processes)}, the shell is ${shell}`);
      assert.ok(s.events.some(e => e.kind === 'uprobe' && e.event === 'bbentry' && e.hits > 0n), 'bbentry was hit');
    }),
    { input: 'grep -m 1 bbentry: trace', then: out => assert.match(out, new RegExp(`busybox-\\d+ +\\[000\\] .*bbentry: \\(0x${entry.vaddr.toString(16)}\\)`)) },
    { input: 'echo 0 > events/kprobes/myopt/enable' },
    list('with one event disabled', s => assert.ok(s.kprobes.some(p => p.symbol === 'do_sys_openat2' && p.offset === 0x11n && p.disabled))),
    { input: 'rmmod kprobe_example' },
    list('after rmmod kprobe_example', s => assert.ok(!s.kprobes.some(p => p.owner === 'kprobe_example'), 'the module\'s probe is gone')),
    same('cat /proc/modules', 'procModules', s => assert.equal(s.modules.length, 0)),
  ];
  const r = runConsoleSteps({
    kernel: { name: kernel.path, data: kernel.data }, initrd: { name: initrd.path, data: initrd.data },
    cmdline: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, acpi: false, memoryMiB: 256,
    maxInstructions: 12_000_000_000, steps,
  });
  assert.equal(r.stop.kind, 'done', `${r.stop.kind}: ${r.stop.detail}; console tail:\n${r.console.slice(-3000)}`);
  assert.equal(r.done, steps.length);
  assert.equal(seen.length, 6);
});
