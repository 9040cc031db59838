/**
 * Kprobes registered by the guest kernel's own engine on the debugger's
 * request: kprobe-debug's agent module (test/linux/agent/kprobe_agent.c,
 * built by build-agent.sh with Kbuild against Debian's headers) loaded in
 * Debian's 6.1 kernel booted once (acpi=off, one CPU), the channel device
 * (emulator/system/devices/agentChannel.ts) on the machine's port bus.
 * The debugger asks for a kprobe and a kretprobe on do_sys_openat2 and one
 * on a function Linux refuses (exc_int3, in .noinstr.text: the guest's
 * -EINVAL comes back); busybox opens files; the hits arrive through the
 * channel with the guest's pt_regs, from which the debugger reads the path
 * each open was given (regs->si, in the opener's own address space) and the
 * return values (regs->ax). The kprobes reader shows the agent's probes as
 * the guest's debugfs list does, disabled when the debugger disables one;
 * a kprobe event on the agent's own code turns [GONE] when the module goes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { loadElf } from '../../../emulator/elf';
import type { PcRun } from '../../../emulator/system/pcRun';
import type { AgentChannel, AgentHit, AgentReply } from '../../../emulator/system/devices/agentChannel';
import { runConsoleSteps, type ConsoleStep } from '../../../emulator/system/guest/consoleSteps';
import { GuestKernel, type GuestSnapshot } from '../../../emulator/system/guest/guestKernel';
import { currentTask, userMemory } from '../../../emulator/system/guest/tasks';
import { debianKernel, busyboxInitramfs } from '../../system/linuxFiles';
import { repoPath } from '../../util/paths';
import { unfetched } from '../../util/fetched';

const VMLINUX = repoPath('test', 'linux', 'dbg', 'cache', 'vmlinux');
const AGENT_CPIO = repoPath('test', 'linux', 'agent', 'cache', 'agent.cpio.gz');

test('the agent module registers the debugger\'s kprobes through the guest\'s register_kprobe; hits arrive with pt_regs; the kprobes view shows them', (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) { unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)'); return; }
  if (!existsSync(AGENT_CPIO)) { unfetched(t, 'no test/linux/agent/cache/agent.cpio.gz (test/linux/agent/build-agent.sh)'); return; }
  const vmlinux = loadElf(VMLINUX);
  const agentCpio = new Uint8Array(readFileSync(AGENT_CPIO));
  const initrdBytes = new Uint8Array(initrd.data.length + agentCpio.length);
  initrdBytes.set(initrd.data);
  initrdBytes.set(agentCpio, initrd.data.length);

  let channel!: AgentChannel;
  const replies: AgentReply[] = [];
  const hits: (AgentHit & { path?: string; ret?: bigint; comm: string })[] = [];
  let guest: GuestKernel | undefined;
  const g = (run: PcRun): GuestKernel => (guest ??= new GuestKernel(vmlinux, run.machine.memory));
  let theRun: PcRun | undefined;
  const onReply = (r: AgentReply): void => { replies.push(r); };
  const onHit = (h: AgentHit): void => {
    // the hit is reported from inside the probe handler: the opener is the current task, its pt_regs live
    const k = g(theRun!), L = k.layout, mem = k.memory();
    const task = currentTask(mem, L, k.symbols);
    if (h.kind === 'entry') {
      const user = userMemory(mem, L, k.symbols, task);
      const filename = mem.u64(h.regs + L.off('pt_regs', 'si'));
      hits.push({ ...h, comm: task.comm, path: user?.cstring(filename, 4096) });
    } else hits.push({ ...h, comm: task.comm, ret: BigInt.asIntN(64, mem.u64(h.regs + L.off('pt_regs', 'ax'))) });
  };
  const reply = (id: number): AgentReply | undefined => replies.filter(r => r.id === id).pop();
  const list = (moment: string, check?: (s: GuestSnapshot) => void): ConsoleStep => ({
    input: 'cat /sys/kernel/debug/kprobes/list',
    then: (out, run) => {
      const s = g(run).snapshot();
      assert.equal(s.render.kprobesList, out, `kprobes list ${moment}`);
      check?.(s);
    },
  });
  const agentProbes = (s: GuestSnapshot): GuestSnapshot['kprobes'] => s.kprobes.filter(k => k.owner === 'kprobe_agent');
  const steps: ConsoleStep[] = [
    { input: 'dmesg -n 1' },
    {
      input: 'insmod /root/kprobe_agent.ko',
      then: () => {
        channel.register(0, 'do_sys_openat2');
        channel.register(1, 'do_sys_openat2', 0, true, 4);
        channel.register(2, 'exc_int3');
      },
    },
    // the agent's thread takes the requests at its next poll (every 10 ms of guest time)
    { input: 'sleep 0.1', then: () => { assert.equal(channel.pending, 0, 'the agent took the requests'); } },
    list('with the agent\'s probes', s => {
      assert.equal(reply(0)?.result, 0, 'kprobe registered');
      assert.equal(reply(1)?.result, 0, 'kretprobe registered');
      assert.equal(reply(2)?.result, -22, 'exc_int3 refused with the guest\'s -EINVAL');
      const mine = agentProbes(s);
      assert.deepEqual(mine.map(k => [k.symbol, k.type, k.kp]).sort(), [['do_sys_openat2', 'k', reply(0)!.kprobe], ['do_sys_openat2', 'r', reply(1)!.kprobe]].sort());
      assert.equal(mine.find(k => k.type === 'r')?.kretprobe?.maxactive, 4);
    }),
    {
      input: 'cat /proc/version > /dev/null',
      then: () => {
        const opens = hits.filter(h => h.id === 0 && h.kind === 'entry');
        assert.ok(opens.some(h => h.path === '/proc/version' && h.comm === 'cat'), `cat's open of /proc/version among ${JSON.stringify(opens.map(h => [h.comm, h.path]))}`);
        assert.ok(opens.every(h => h.kprobe === reply(0)!.kprobe));
        const rets = hits.filter(h => h.id === 1 && h.kind === 'return');
        assert.ok(rets.length > 0 && rets.some(h => h.comm === 'cat' && h.ret !== undefined && h.ret >= 0n), 'the kretprobe saw cat\'s open return a descriptor');
      },
    },
    { input: 'true', then: () => { channel.disable(0); channel.unregister(1); } },
    { input: 'sleep 0.1' },
    list('after the debugger disabled one and unregistered the other', s => {
      assert.equal(reply(0)?.result, 0);
      assert.equal(reply(1)?.result, 0);
      assert.deepEqual(agentProbes(s).map(k => [k.symbol, k.disabled]), [['do_sys_openat2', true]]);
    }),
    { input: 'echo "p:agentp kprobe_agent:agent_poll" > /sys/kernel/tracing/kprobe_events' },
    list('with an event on the agent\'s own code', s => assert.ok(s.kprobes.some(k => k.module === 'kprobe_agent' && k.symbol === 'agent_poll' && k.disabled))),
    { input: 'rmmod kprobe_agent' },
    list('after rmmod kprobe_agent', s => {
      assert.equal(agentProbes(s).length, 0, 'the agent unregistered its probes');
      assert.ok(s.kprobes.some(k => k.gone && k.symbol === null), 'the event on the removed module is [GONE]');
    }),
  ];
  const r = runConsoleSteps({
    kernel: { name: kernel.path, data: kernel.data }, initrd: { name: `${initrd.path}+agent.cpio.gz`, data: initrdBytes },
    cmdline: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, acpi: false, memoryMiB: 256,
    maxInstructions: 12_000_000_000, steps,
    // the machine's own channel (pcMachine.ts wires it at AGENT_PORT)
    atBoot: run => { theRun = run; channel = run.machine.agent; channel.onReply = onReply; channel.onHit = onHit; },
  });
  assert.equal(r.stop.kind, 'done', `${r.stop.kind}: ${r.stop.detail}; console tail:\n${r.console.slice(-3000)}`);
  assert.equal(r.done, steps.length);
  assert.deepEqual(channel.malformed, []);
});
