/**
 * One test per rule of the kprobes documentation, on the sample kernel.
 * Probe sites inside functions are found by decoding the image (never
 * hard-coded offsets). Every rule runs on each architecture with kprobes
 * (KPROBE_ARCHES); arch facts (trap numbers, argument registers, jump
 * optimization) come from the port tables.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { argRegNames, insns, KPROBE_ARCHES, portInfo, rig, Rig } from './harness';
import type { DecodedInsn } from '../../emulator/arch/types';
import { Errno } from '../../emulator/kernel/abi';
import {
  formatKprobeList, Jprobe, Kprobe, KPROBE_FLAG_DISABLED, Kretprobe, readTextWithoutProbes, writeKprobesEnabled,
} from '../../emulator/kprobes';
import { hex64, mustVAddr } from '../../emulator/memory/address';

const RAND1 = 0x2545f491n;
const TARGET_CALLS = 1 + 4 * 24;

const baselines = new Map<string, string[]>();
function baseline(arch: string): string[] {
  let b = baselines.get(arch);
  if (!b) { b = rig({ arch }).run(); baselines.set(arch, b); }
  return b;
}

/**
 * Same output as the probe-less run. Probes cost emulated instructions (the
 * int3, the single-step), which moves the CPUs' interleaving; the lines each
 * task prints are the same, so compare them as a sorted multiset.
 */
function assertSameOutput(arch: string, lines: string[], msg?: string): void {
  assert.deepEqual([...lines].sort(), [...baseline(arch)].sort(), msg);
}

function exTable(r: Rig): { insn: bigint; fixup: bigint }[] {
  const sec = r.image.section('__ex_table');
  assert.ok(sec);
  const dv = new DataView(sec.data.buffer, sec.data.byteOffset, sec.data.byteLength);
  const out = [];
  for (let o = 0; o + 16 <= dv.byteLength; o += 16) out.push({ insn: dv.getBigUint64(o, true), fixup: dv.getBigUint64(o + 8, true) });
  return out;
}

for (const arch of KPROBE_ARCHES) describe(arch, () => {
  /** the trap number a page fault reports to fault handlers (x86 14, arm64 ESR class 0x25, riscv scause 13) */
  const PF = portInfo(arch).abi.trapNumbers.pageFault;
  describe('registration rules', () => {
    test('addr and symbol_name together, or neither: -EINVAL; unknown symbol: -ENOENT', () => {
      const r = rig({ arch });
      assert.equal(r.engine.registerKprobe({ symbol_name: 'do_fork', addr: r.sym('do_fork') }), -Errno.EINVAL);
      assert.equal(r.engine.registerKprobe({}), -Errno.EINVAL);
      assert.equal(r.engine.registerKprobe({ symbol_name: 'no_such_function' }), -Errno.ENOENT);
      assert.equal(r.engine.registerKretprobe({ kp: { symbol_name: 'no_such_function' } }), -Errno.ENOENT);
    });

    test('blacklist (NOKPROBE_SYMBOL), engine code, non-text and re-registration: -EINVAL', () => {
      const r = rig({ arch });
      assert.equal(r.engine.registerKprobe({ symbol_name: 'notify_die' }), -Errno.EINVAL);
      assert.equal(r.engine.registerKprobe({ symbol_name: 'notify_die', offset: 4n }), -Errno.EINVAL);
      assert.equal(r.engine.registerKprobe({ addr: r.engine.kretprobes.trampoline }), -Errno.EINVAL);
      const kp: Kprobe = { symbol_name: 'vfs_read' };
      assert.equal(r.engine.registerKprobe(kp), 0);
      assert.equal(kp.ainsn?.mode, 'slot', 'vfs_read+0 is stepped out of line');
      assert.equal(r.engine.registerKprobe({ addr: kp.ainsn?.insn }), -Errno.EINVAL, 'instruction slot');
      assert.equal(r.engine.registerKprobe({ symbol_name: 'workers' }), -Errno.EINVAL, 'data symbol');
      assert.equal(r.engine.registerKprobe(kp), -Errno.EINVAL, 'already registered');
    });

    test('KPROBE_FLAG_DISABLED at registration; enable/disable', () => {
      const r = rig({ arch });
      const kp: Kprobe = { symbol_name: 'kprobe_target', flags: KPROBE_FLAG_DISABLED, pre_handler: () => 0 };
      assert.equal(r.engine.registerKprobe(kp), 0);
      assert.equal(r.engine.probes.isArmed(kp.addr as bigint), false);
      assert.match(formatKprobeList(r.engine), /\[DISABLED\]\n$/);
      assert.equal(r.engine.enableKprobe(kp), 0);
      assert.equal(r.engine.probes.isArmed(kp.addr as bigint), true);
      assert.equal(r.engine.disableKprobe(kp), 0);
      assert.equal(r.engine.probes.isArmed(kp.addr as bigint), false);
      r.run();
      assert.equal(kp.hits, 0);
      assert.equal(r.engine.enableKprobe({ symbol_name: 'x' }), -Errno.EINVAL, 'not registered');

      const r2 = rig({ arch });
      const kp2: Kprobe = { symbol_name: 'kprobe_target', flags: KPROBE_FLAG_DISABLED };
      r2.engine.registerKprobe(kp2);
      r2.engine.enableKprobe(kp2);
      r2.run();
      assert.equal(kp2.hits, TARGET_CALLS);
    });

    test('register_kprobes rolls back on failure; unregistering an unregistered probe clears its addr', () => {
      const r = rig({ arch });
      const good: Kprobe = { symbol_name: 'do_fork' };
      const bad: Kprobe = { symbol_name: 'no_such_function' };
      const before = r.engine.arming.readTextWithoutProbes(r.machine.kernel.mem, r.sym('do_fork'), 1, { patched: true });
      assert.equal(r.engine.registerKprobes([good, bad]), -Errno.ENOENT);
      assert.equal(r.engine.probes.isRegistered(good), false);
      assert.equal(formatKprobeList(r.engine), '');
      assert.deepEqual(r.engine.arming.readTextWithoutProbes(r.machine.kernel.mem, r.sym('do_fork'), 1, { patched: true }), before);

      const a: Kprobe = { symbol_name: 'vfs_read' };
      const stray: Kprobe = { addr: r.sym('sys_open') };
      assert.equal(r.engine.registerKprobe(a), 0);
      r.engine.unregisterKprobes([stray, a]);
      assert.equal(stray.addr, undefined);
      assert.equal(a.addr, r.sym('vfs_read'), 'a correctly unregistered probe keeps its addr');
      assert.equal(r.engine.probes.isRegistered(a), false);
      assert.equal(r.engine.probes.isArmed(r.sym('vfs_read')), false);
    });
  });

  describe('handlers', () => {
    test('aggregate probe: newest member first, a fault goes to the faulting member\'s fault_handler', () => {
      const r = rig({ arch });
      const order: string[] = [];
      const faults: string[] = [];
      const mk = (name: string, fault: boolean): Kprobe => ({
        symbol_name: 'kprobe_target',
        pre_handler: (_p, regs) => {
          order.push(name);
          if (fault) regs.cpu.mem.read64(0x10); // unmapped: a fault inside the handler
          return 0;
        },
        post_handler: () => { order.push(`${name}.post`); },
        fault_handler: (_p, _regs, trapnr) => { faults.push(`${name}:${trapnr}`); return 1; },
      });
      const a = mk('a', false), b = mk('b', true), c = mk('c', false);
      assert.equal(r.engine.registerKprobes([a, b, c]), 0);
      assert.equal(r.engine.probes.probesAt(r.sym('kprobe_target')).length, 3);
      r.run();
      assert.deepEqual(order.slice(0, 6), ['c', 'b', 'a', 'c.post', 'b.post', 'a.post']);
      assert.equal(faults.length, TARGET_CALLS);
      assert.ok(faults.every(f => f === `b:${PF}`), faults[0]);
      assert.equal(b.nmissed, TARGET_CALLS);
      assert.equal(a.nmissed, 0);
      assert.deepEqual([a.hits, b.hits, c.hits], [TARGET_CALLS, TARGET_CALLS, TARGET_CALLS]);
    });

    test('pre_handler returning 1 with a new ip skips the single-step and post_handler', () => {
      const r = rig({ arch });
      let post = 0;
      const kp: Kprobe = {
        symbol_name: 'kprobe_target',
        pre_handler: (_p, regs) => { regs.ip = r.sym('kprobe_target2'); return 1; },
        post_handler: () => { post++; },
      };
      assert.equal(r.engine.registerKprobe(kp), 0);
      const lines = r.run();
      assert.equal(post, 0);
      assert.ok(lines.includes(`selftest: kprobe_target(${RAND1}) = ${RAND1 / 3n + 1n}`));
    });

    test('fault during the single-step: fault_handler(page fault trapnr), then the normal path (__ex_table fixup)', () => {
      const r = rig({ arch });
      const ex = exTable(r).find(e => r.image.symbols.resolve(e.insn)?.sym.name === 'probe_kernel_read_long');
      assert.ok(ex);
      const faults: number[] = [];
      let posts = 0;
      const kp: Kprobe = {
        addr: ex.insn, post_handler: () => { posts++; },
        fault_handler: (_p, _regs, trapnr) => { faults.push(trapnr); return 0; },
      };
      assert.equal(r.engine.registerKprobe(kp), 0);
      const lines = r.run();
      assert.deepEqual(faults, [PF, PF, PF, PF, PF], 'self-test + one bad read per worker');
      assert.equal(posts, kp.hits as number - 5);
      assertSameOutput(arch, lines, 'the fixup still returns -EFAULT; nothing else changes');
    });

    test('fault_handler returning 1 after moving ip handles the single-step fault', () => {
      const r = rig({ arch });
      const ex = exTable(r).find(e => r.image.symbols.resolve(e.insn)?.sym.name === 'probe_kernel_read_long');
      assert.ok(ex);
      const kp: Kprobe = { addr: ex.insn, fault_handler: (_p, regs) => { regs.ip = ex.fixup; return 1; } };
      assert.equal(r.engine.registerKprobe(kp), 0);
      assertSameOutput(arch, r.run());
    });

    test('probes on every kind of instruction are transparent (pc-relative, call, jump, conditional, return, indirect jump)', () => {
      const r = rig({ arch });
      // riscv64 calls are auipc + jalr (the image is linked with -mno-relax): an indirect call there, a direct one elsewhere
      const want: DecodedInsn['flow'][] = ['call', 'indirectCall', 'jump', 'condJump', 'ret', 'indirectJump'];
      const sites = new Map<string, bigint>();
      // (traced_function's call __fentry__ would be an ftrace-based probe: not single-stepped, see ftrace.test.ts)
      for (const fn of ['read_boot_counter', 'fib', 'syscall_dispatch', 'do_fork', 'kprobe_stacktrace_target']) {
        for (const d of insns(r, fn)) {
          if (d.ipRelative && !sites.has('ipRelative')) sites.set('ipRelative', d.addr);
          if (want.includes(d.flow) && !sites.has(d.flow)) sites.set(d.flow, d.addr);
        }
      }
      const kinds = [...sites.keys()];
      for (const k of ['condJump', 'indirectJump', 'ipRelative', 'jump', 'ret']) assert.ok(kinds.includes(k), `a ${k} site in ${kinds}`);
      assert.ok(kinds.includes('call') || kinds.includes('indirectCall'), `a call site in ${kinds}`);
      const kps = [...sites.values()].map(addr => ({ addr, pre_handler: () => 0, post_handler: () => undefined } as Kprobe));
      assert.equal(r.engine.registerKprobes(kps), 0);
      assertSameOutput(arch, r.run());
      for (const k of kps) assert.ok((k.hits ?? 0) > 0, `${r.engine.describer.where(k.addr as bigint)} was hit`);
    });
  });

  describe('kretprobes', () => {
    test('maxactive too small: nmissed counts entries without an instance; entry_handler skipped too', () => {
      const r = rig({ arch });
      let entries = 0, returns = 0;
      const rp: Kretprobe = {
        kp: { symbol_name: 'fib' }, maxactive: 2,
        entry_handler: () => { entries++; return 0; }, handler: () => { returns++; return 0; },
      };
      assert.equal(r.engine.registerKretprobe(rp), 0);
      assertSameOutput(arch, r.run());
      assert.ok((rp.nmissed ?? 0) > 0);
      assert.equal(entries + (rp.nmissed ?? 0), rp.kp.hits);
      assert.equal(returns, entries);
      assert.equal(r.engine.kretprobes.freeInstances(rp), 2);
    });

    test('maxactive <= 0 defaults to max(10, 2*NR_CPUS)', () => {
      const r = rig({ arch, cpus: 8 });
      const rp: Kretprobe = { kp: { symbol_name: 'fib' } };
      assert.equal(r.engine.registerKretprobe(rp), 0);
      assert.equal(rp.maxactive, 16);
      const r2 = rig({ arch, cpus: 2 });
      const rp2: Kretprobe = { kp: { symbol_name: 'fib' }, maxactive: -1 };
      assert.equal(r2.engine.registerKretprobe(rp2), 0);
      assert.equal(rp2.maxactive, 10);
      assert.equal(r2.engine.registerKretprobe({ kp: { symbol_name: 'fib', offset: 4n } }), -Errno.EINVAL, 'not a function entry');
    });

    test('entry_handler returning non-zero: no return handler for that instance', () => {
      const r = rig({ arch });
      const seen: bigint[] = [];
      const rp: Kretprobe = {
        kp: { symbol_name: 'kprobe_target' }, data_size: 16,
        entry_handler: (ri, regs) => {
          const v = regs.arg(0) & 0xffffffffn;
          regs.cpu.mem.write64(mustVAddr(ri.data + 8n), v);
          return v % 2n === 1n ? 1 : 0;
        },
        handler: (ri, regs) => { seen.push(regs.cpu.mem.read64(mustVAddr(ri.data + 8n))); assert.equal(regs.ip, r.engine.kretprobes.trampoline); return 0; },
      };
      assert.equal(r.engine.registerKretprobe(rp), 0);
      r.run();
      assert.ok(seen.length > 0 && seen.length < TARGET_CALLS);
      assert.ok(seen.every(v => v % 2n === 0n));
    });

    test('a task exiting with live instances gets them recycled', () => {
      const r = rig({ arch });
      let returns = 0;
      const rp: Kretprobe = { kp: { symbol_name: 'worker_fn' }, maxactive: 4, handler: () => { returns++; return 0; } };
      assert.equal(r.engine.registerKretprobe(rp), 0);
      r.run();
      assert.equal(rp.kp.hits, 4);
      assert.equal(returns, 2, 'odd workers end with kp_thread_exit and never return');
      assert.equal(r.engine.kretprobes.freeInstances(rp), 4);
      assert.equal(r.machine.kernel.tasks().filter(t => r.engine.kretprobes.instancesOf(t).length).length, 0);
    });

    test('a return through the trampoline with no instance prints the kretprobe BUG line', () => {
      const r = rig({ arch });
      const tramp = r.engine.kretprobes.trampoline;
      // an empty post_handler keeps the probe from being optimized: an optimized probe ignores a changed ip
      const kp: Kprobe = { symbol_name: 'kprobe_target', pre_handler: (_p, regs) => { regs.ip = tramp; return 1; }, post_handler: () => undefined };
      assert.equal(r.engine.registerKprobe(kp), 0);
      const lines = r.run();
      assert.ok(lines.includes(`kretprobe BUG!: Processing kretprobe 0000000000000000 @ ${hex64(tramp)}`), lines.join('\n'));
      assert.ok(r.machine.kernel.oopsCount >= 1);
    });
  });

  describe('jprobes', () => {
    test('entry handler gets the arguments; registers and stack are restored', () => {
      const r = rig({ arch });
      const calls: bigint[][] = [];
      const jp: Jprobe = {
        kp: { symbol_name: 'do_fork' },
        entry: (args, regs) => {
          calls.push(args.slice(0, 4));
          // clobber what the probed function will use: all restored afterwards
          const [a0, a1] = argRegNames(arch);
        regs.set(a0, 0n); regs.set(a1, 0n); regs.sp = regs.sp - 64n;
          regs.cpu.mem.write64(mustVAddr(regs.sp + 64n), 0n);
          r.engine.jprobeReturn();
        },
      };
      assert.equal(r.engine.registerJprobe(jp), 0);
      assert.equal(r.engine.registerJprobe({ kp: { symbol_name: 'do_fork' }, entry: () => undefined }), -Errno.EEXIST, 'one jprobe per address');
      assert.equal(r.engine.registerJprobe({ kp: { symbol_name: 'do_fork', offset: 1n }, entry: () => undefined }), -Errno.EINVAL, 'function entry only');
      assertSameOutput(arch, r.run());
      assert.equal(calls.length, 4 * 24);
      assert.equal(calls[0][1], 0x7ff0000n, 'stack_start of iteration 0');
      assert.equal(calls[0][3], 0x2000n, 'stack_size');
      assert.match(formatKprobeList(r.engine), /  j  do_fork\+0x0  /);
    });
  });

  describe('debugfs and debugger helpers', () => {
    test('list text and the enabled knob', () => {
      const r = rig({ arch });
      const kp: Kprobe = { symbol_name: 'vfs_read' };
      const kp2: Kprobe = { symbol_name: 'sys_open', flags: KPROBE_FLAG_DISABLED };
      const rp: Kretprobe = { kp: { symbol_name: 'tcp_v4_rcv' } };
      const jp: Jprobe = { kp: { symbol_name: 'do_fork' }, entry: () => undefined };
      assert.equal(r.engine.registerKprobe(kp), 0);
      assert.equal(r.engine.registerKprobe(kp2), 0);
      assert.equal(r.engine.registerKretprobe(rp), 0);
      assert.equal(r.engine.registerJprobe(jp), 0);
      const line = (a: bigint, t: string, s: string, flags = ''): string => `${hex64(a)}  ${t}  ${s}+0x0    ${flags}\n`;
      const entries = [
        { a: r.sym('vfs_read'), l: line(r.sym('vfs_read'), 'k', 'vfs_read') },
        { a: r.sym('sys_open'), l: line(r.sym('sys_open'), 'k', 'sys_open', '[DISABLED]') },
        { a: r.sym('tcp_v4_rcv'), l: line(r.sym('tcp_v4_rcv'), 'r', 'tcp_v4_rcv') },
        { a: r.sym('do_fork'), l: line(r.sym('do_fork'), 'j', 'do_fork') },
      ].sort((x, y) => (x.a < y.a ? -1 : 1));
      assert.equal(formatKprobeList(r.engine), entries.map(e => e.l).join(''));
      assert.equal(writeKprobesEnabled(r.engine, '0\n'), 0);
      assert.equal(r.engine.enabled, false);
      for (const a of ['vfs_read', 'sys_open', 'tcp_v4_rcv', 'do_fork']) assert.equal(r.engine.probes.isArmed(r.sym(a)), false);
      assert.equal(formatKprobeList(r.engine), entries.map(e => e.l).join(''), 'states untouched');
      assert.equal(writeKprobesEnabled(r.engine, '1'), 0);
      assert.equal(r.engine.probes.isArmed(r.sym('vfs_read')), true);
      assert.equal(r.engine.probes.isArmed(r.sym('sys_open')), false, '[DISABLED] stays disarmed');
      assert.equal(writeKprobesEnabled(r.engine, 'x'), -Errno.EINVAL);
    });

    test('reading code shows the original bytes unless the patched bytes are asked for', () => {
      const r = rig({ arch });
      const mem = r.machine.kernel.mem;
      const a = r.sym('kprobe_target');
      const second = insns(r, 'kprobe_target')[1]; // a probe inside the read
      const off = Number(second.addr - a);
      const orig = mem.readBytes(mustVAddr(a), 16);
      const kp: Kprobe = { addr: second.addr };
      assert.equal(r.engine.registerKprobe(kp), 0);
      assert.deepEqual(readTextWithoutProbes(r.engine, mem, a, 16), orig);
      const patched = readTextWithoutProbes(r.engine, mem, a, 16, { patched: true });
      const bpLen = kp.opcode?.length ?? 0;
      assert.ok(bpLen > 0);
      // the breakpoint (x86 int3, arm64 brk, riscv ebreak or c.ebreak over a compressed instruction) and nothing else
      assert.equal(r.machine.arch.decodeBytes(patched.slice(off, off + bpLen), second.addr)?.flow, 'trap');
      assert.deepEqual([...patched.slice(0, off)], [...orig.slice(0, off)]);
      assert.deepEqual([...patched.slice(off + bpLen)], [...orig.slice(off + bpLen)]);
    });

    test('events: registered, hit, (optimized,) hit, (unoptimized,) stateChanged, unregistered', () => {
      const r = rig({ arch });
      const ev: string[] = [];
      r.engine.events.on(e => { if (e.type !== 'hit' || ev.filter(x => x === 'hit').length < 2) ev.push(e.type); });
      const kp: Kprobe = { symbol_name: 'kprobe_target' };
      r.engine.registerKprobe(kp);
      r.run();
      r.engine.disableKprobe(kp);
      r.engine.unregisterKprobe(kp);
      // with jump optimization (x86_64) kprobe_target+0 is optimizable: the first hit is a breakpoint hit,
      // then the optimizer writes the jump; disabling unoptimizes before the state change is reported
      assert.deepEqual(ev, portInfo(arch).optprobes
        ? ['registered', 'hit', 'optimized', 'hit', 'unoptimized', 'stateChanged', 'unregistered']
        : ['registered', 'hit', 'hit', 'stateChanged', 'unregistered']);
    });
  });

  describe('determinism', () => {
    test('deterministic: same probes, same transcript', () => {
      const run = (): string[] => {
        const r = rig({ arch });
        r.engine.registerKprobe({ symbol_name: 'vfs_read', pre_handler: (_p, regs) => { r.machine.kernel.printk(regs.cpu.id, `vfs_read count=${regs.arg(2)}`, 'probe'); return 0; } });
        return r.run();
      };
      assert.deepEqual(run(), run());
    });
  });
});

// x86 only: x86 has variable-length instructions and no boundary check (arm64 and riscv refuse a misaligned address: arm64.test.ts, riscv64.test.ts)
describe('x86: no instruction-boundary check', () => {
  test('a probe inside an instruction registers, is never hit, and corrupts that instruction', () => {
    const r = rig();
    const mov = insns(r, 'kprobe_target').find(d => d.length === 5 && d.bytes[0] === 0xb8);
    assert.ok(mov, 'kprobe_target has a mov $imm32 (the 0xaaaaaaab multiplier)');
    const kp: Kprobe = { addr: mov.addr + 1n, pre_handler: () => 0 };
    assert.equal(r.engine.registerKprobe(kp), 0, 'x86 does not validate the boundary');
    const lines = r.run();
    assert.equal(kp.hits, 0, 'the int3 byte is part of an immediate, never executed as int3');
    const st = lines.find(l => l.startsWith(`selftest: kprobe_target(${RAND1}) = `));
    assert.ok(st);
    assert.notEqual(st, `selftest: kprobe_target(${RAND1}) = ${RAND1 / 3n}`, 'the multiplier was corrupted');
  });
});
