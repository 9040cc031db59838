/**
 * Time travel on the Linux machine (emulator/timetravel/pcTimeTravel.ts as
 * emulator/debug LinuxTarget drives it): Debian's kernel booted (acpi=off,
 * one CPU, 256 MiB, the -dbg vmlinux) with kprobe-debug's agent and one
 * gutter kprobe registered by the guest's engine: a conditional stop on
 * do_sys_openat2 for `cat`. `cat` opens two files: two stops. Reported:
 * the time to the first stop (power-on, insmod of the agent, cat's first
 * open), the recording then (snapshots and MiB, the largest), and what each
 * move costs from the second stop: Reverse Continue (to the first stop),
 * Step Back (one instruction), go to a hit of the timeline (the first hit),
 * then a continue back to the second stop (quiet re-execution).
 *
 * Needs the fetched kernel, initramfs, vmlinux and the agent (test/linux/
 * fetch-kernel.sh, make-initramfs.sh, dbg/fetch-vmlinux-dbg.sh,
 * agent/build-agent.sh); without them the section says so and ends.
 * `--quick` leaves the boot out.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { repoRoot } from './lib/root';
import { launchLinuxTarget } from '../../emulator/debug/index';
import type { LinuxStop, LinuxTarget } from '../../emulator/debug/index';

const root = repoRoot('linuxTimeTravel');
const kernel = join(root, 'test', 'linux', 'cache', 'vmlinuz');
const initrd = join(root, 'test', 'linux', 'cache', 'initramfs.cpio.gz');
const vmlinux = join(root, 'test', 'linux', 'dbg', 'cache', 'vmlinux');
const agent = join(root, 'test', 'linux', 'agent', 'cache', 'agent.cpio.gz');
const mib = (b: number): string => `${(b / 1048576).toFixed(1)} MiB`;
/** wall time (the machine is shared: CPU time too) */
const row = (what: string, m: { ms: number; cpuMs: number }, detail: string): void =>
  console.log(`${what.padEnd(44)} ${`${(m.ms / 1000).toFixed(2)} s`.padStart(9)}   CPU ${(m.cpuMs / 1000).toFixed(2)} s; ${detail}`);

async function main(): Promise<void> {
  if (process.argv.includes('--quick')) { console.log('Linux time travel: skipped (--quick: it boots Debian\'s kernel)'); return; }
  const missing = [kernel, initrd, vmlinux, agent].filter(p => !existsSync(p));
  if (missing.length > 0) {
    console.log(`Linux time travel: skipped, not fetched: ${missing.map(p => p.slice(root.length + 1)).join(', ')} (test/linux/fetch-kernel.sh, make-initramfs.sh, dbg/fetch-vmlinux-dbg.sh, agent/build-agent.sh)`);
    return;
  }
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const t: LinuxTarget = launchLinuxTarget({ kernel, initrd, vmlinux, agent, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256 });
  const openat2 = t.functionAddress('do_sys_openat2');
  if (typeof openat2 === 'string') throw new Error(openat2);
  const probes = t.agentProbes!;
  probes.set('bench', [{ bpId: 1, address: openat2, ret: false, condition: 'strcmp(current->comm, "cat") == 0' }]);
  let console_ = '', typed = false;
  t.onConsole(text => {
    console_ += text;
    if (!typed && console_.includes('/ # ')) {
      typed = true;
      t.typeInput('dmesg -n 1; insmod /root/kprobe_agent.ko; sleep 0.1; cat /proc/version /proc/cmdline > /dev/null\n');
    }
  });
  let next: ((s: LinuxStop | string) => void) | null = null;
  t.setRunListeners(s => next?.(s), e => next?.(`${e.kind}: ${e.detail}`));
  const stop = (go: () => string | undefined | void): Promise<{ s: LinuxStop; ms: number; cpuMs: number }> => new Promise((resolve, reject) => {
    const s0 = performance.now(), c0 = process.cpuUsage();
    const cpuMs = (): number => { const c = process.cpuUsage(c0); return (c.user + c.system) / 1000; };
    next = s => (typeof s === 'string' ? reject(new Error(`the machine ended: ${s}`)) : resolve({ s, ms: performance.now() - s0, cpuMs: cpuMs() }));
    const why = go();
    if (typeof why === 'string') reject(new Error(why));
  });
  const first = await stop(() => t.resume());
  const cpu = process.cpuUsage(cpu0);
  const tt = t.travel;
  row('time to the first agent stop', { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 }, `${t.run.instructions} instructions (${first.s.description})`);
  const second = await stop(() => t.resume());
  row('continue to the second stop', second, `${t.run.instructions} instructions`);
  console.log(`${'recording at the second stop'.padEnd(44)} ${''.padStart(9)}   ${tt.snapshotCount} snapshots, ${mib(tt.snapshotBytes)} (largest ${mib(tt.stats.maxSnapshotBytes)}), capture ${(tt.stats.captureMs / 1000).toFixed(2)} s in all`);
  const back = await stop(() => t.reverseContinue());
  row('Reverse Continue (to the first stop)', back, `now at ${t.run.instructions} instructions: ${back.s.description}`);
  const stepped = await stop(() => t.stepBack(back.s.cpu));
  row('Step Back (one instruction)', stepped, `now at ${t.run.instructions} instructions`);
  const hit = probes.hitLog.records().find(r => r.comm === 'cat');
  if (hit) {
    const gone = await stop(() => t.goToHit(hit.seq));
    row('go to hit (the timeline\'s first cat hit)', gone, `now at ${t.run.instructions} instructions: ${gone.s.description}`);
  }
  const again = await stop(() => t.resume());
  row('continue forward to the second stop again', again, `${t.run.instructions} instructions (quiet re-execution)`);
  console.log(`${'replayed in all'.padEnd(44)} ${''.padStart(9)}   ${tt.stats.replayedInstructions} instructions, ${tt.stats.restores} restores (${(tt.stats.restoreMs / 1000).toFixed(2)} s)`);
  console.log(`${'peak RSS'.padEnd(44)} ${''.padStart(9)}   ${mib(process.resourceUsage().maxRSS * 1024)}`);
  t.dispose();
}

main().catch(e => { console.log(`Linux time travel: ${(e as Error).message}`); process.exitCode = 1; });
