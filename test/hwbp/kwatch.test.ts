/**
 * Kernel watchpoint probes on the sample kernel (emulator/hwbp/): the
 * reference's register_kwatch / unregister_kwatch, its return values, the
 * handler's view (register, address, access, regs after the access, old and
 * new value), determinism, the allocator's priorities seen through kwatch,
 * and the interplay with kprobes the issue lists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Errno } from '../../emulator/kernel/abi';
import { HwBp } from '../../emulator/hwbp';
import type { KwatchContext } from '../../emulator/hwbp';
import { mustVAddr } from '../../emulator/memory/address';
import { bytesAt, insns, rig, sampleImage } from '../kprobes/harness';
import { Machine } from '../../emulator/machine';

/** the arches whose CPU has debug registers (each must be here: a port losing them fails this list) */
const HW_ARCHES = ['x86_64', 'aarch64'].filter(a => new Machine(sampleImage(a), { cpus: 1 }).hwbp.unavailable === undefined);

const le = (b: Uint8Array | undefined): bigint => (b ? b.reduceRight((v, x) => (v << 8n) | BigInt(x), 0n) : -1n);

test('x86_64 and aarch64 have debug registers; riscv64 says clearly it has none', () => {
  assert.deepEqual(HW_ARCHES, ['x86_64', 'aarch64']);
  const m = new Machine(sampleImage('riscv64'), { cpus: 1 });
  assert.match(m.hwbp.unavailable ?? '', /riscv64: no debug registers/);
  const r = m.kwatch.register_kwatch(m.image.symbols.lookup('boot_counter')!.value, 8, 'w', () => undefined);
  assert.equal(r, -Errno.ENODEV);
  assert.match(m.kwatch.lastError, /^-ENODEV: riscv64: no debug registers/);
});

for (const arch of HW_ARCHES) {
  test(`${arch}: a write kwatch on nr_forks sees every increment, after the access, with old and new value`, () => {
    const r = rig({ arch });
    const addr = r.sym('nr_forks');
    const hits: { ctx: KwatchContext; ip: bigint; old: bigint; now: bigint; inFn?: string }[] = [];
    const reg = r.machine.kwatch.register_kwatch(addr, 8, 'w', ctx => {
      hits.push({ ctx, ip: ctx.hit.regs.ip, old: le(ctx.hit.oldValue), now: le(ctx.hit.newValue), inFn: r.image.symbols.resolve(ctx.hit.regs.ip)?.sym.name });
    });
    assert.equal(reg, 0, 'the first debug register');
    r.run();
    const final = r.machine.kernel.mem.read64(mustVAddr(addr));
    assert.ok(final > 0n, 'the kernel forked');
    assert.equal(BigInt(hits.length), final, 'one hit per increment');
    hits.forEach((h, i) => {
      assert.equal(h.ctx.debugreg, 0);
      assert.equal(h.ctx.access, 'write');
      assert.equal(h.ctx.addr, addr);
      assert.equal(h.old, BigInt(i), 'old value');
      assert.equal(h.now, BigInt(i + 1), 'new value: the access completed before the handler ran');
      assert.equal(h.inFn, 'atomic_add_return', 'regs at the instruction after the access');
    });
    assert.equal(r.machine.hwbp.list()[0].hits, hits.length);
  });

  test(`${arch}: the same run with the same watch hits at the same instruction counts`, () => {
    const once = (): string[] => {
      const r = rig({ arch });
      const seen: string[] = [];
      r.machine.kwatch.register_kwatch(r.sym('boot_counter'), 8, arch === 'x86_64' ? 'rw' : 'r', ctx => {
        seen.push(`${ctx.hit.cpu.id}:${ctx.hit.cpu.instret}:${ctx.access}`);
      });
      r.run();
      return seen;
    };
    const a = once();
    assert.ok(a.length > 0);
    assert.deepEqual(once(), a);
  });

  test(`${arch}: register_kwatch's return values: the register number, -EINVAL, -EFAULT, -ENOSPC; nothing allocated on refusal`, () => {
    const r = rig({ arch, cpus: 1 });
    const k = r.machine.kwatch;
    // the workers' table: room for five 8-byte watches
    const base = r.sym('workers');
    // x86: lengths 1, 2, 4, 8; arm64: 1..8 bytes inside one aligned doubleword (3 is fine there, 9 is not)
    assert.equal(k.register_kwatch(base, arch === 'x86_64' ? 3 : 9, 'w', () => undefined), -Errno.EINVAL);
    assert.match(k.lastError, /^-EINVAL: /);
    if (arch === 'aarch64') {
      assert.equal(k.register_kwatch(base, 3, 'w', () => undefined), 0);
      k.unregister_kwatch(0);
      assert.equal(k.register_kwatch(base + 6n, 3, 'w', () => undefined), -Errno.EINVAL, 'leaves the doubleword');
    }
    assert.equal(k.register_kwatch(base + 1n, 8, 'w', () => undefined), -Errno.EINVAL, 'misaligned');
    assert.equal(k.register_kwatch(0x10n, 8, 'w', () => undefined), -Errno.EFAULT, 'not mapped');
    assert.match(k.lastError, /^-EFAULT: 0x10 is not mapped kernel memory/);
    assert.equal(k.register_kwatch(base, 8, 7, () => undefined), -Errno.EINVAL, 'type 7 is no watch type');
    assert.equal(r.machine.hwbp.list().length, 0, 'nothing allocated by the refusals');
    const regs = [0, 1, 2, 3].map(i => k.register_kwatch(base + BigInt(i * 8), 8, 'w', () => undefined));
    assert.deepEqual(regs, [0, 1, 2, 3]);
    assert.equal(k.register_kwatch(base + 64n, 8, 'w', () => undefined), -Errno.ENOSPC, 'a fifth concurrent watch');
    assert.match(k.lastError, /^-ENOSPC: all 4 debug registers are in use/);
    k.unregister_kwatch(2);
    assert.equal(k.register_kwatch(base + 64n, 8, 'w', () => undefined), 2, 'the freed register');
    k.unregister_kwatch(99); // not a number register_kwatch returned: ignored
    assert.equal(r.machine.hwbp.list().length, 4);
  });

  test(`${arch}: the debugger displaces a kwatch, which stops firing, waits on its register and comes back`, () => {
    const r = rig({ arch, cpus: 1 });
    const k = r.machine.kwatch;
    const addr = r.sym('nr_forks');
    const c = [0, 0, 0, 0];
    for (let i = 0; i < 4; i++) assert.equal(k.register_kwatch(addr, 8, 'w', () => { c[i]++; }), i);
    const d = r.machine.hwbp.register('debugger', { addr: r.sym('boot_counter'), len: 8, type: 'w' }, { handler: () => undefined });
    assert.ok(d instanceof HwBp);
    assert.equal(d.index, 3, 'the most recent kwatch gave its register up');
    const victim = k.get(3)!;
    assert.equal(victim.active, false);
    // the forks run from about instruction 250,000 on: let some happen
    r.machine.runSlice(400_000);
    assert.ok(c[0] > 0, 'the others fire');
    assert.equal(c[3], 0, 'a displaced kwatch does not fire');
    const atResume = c[0];
    r.machine.hwbp.unregister(d);
    assert.equal(victim.active, true, 'given back when the debugger lets go');
    r.run();
    assert.ok(c[0] > atResume, 'forks after the debugger let go');
    assert.equal(c[3], c[0] - atResume, 'it fires again, from then on');
  });

  test(`${arch}: a kprobe on the instruction that writes the watched variable: both handlers run on every hit`, () => {
    // first run: the store that writes fib_last_leaf (the instruction before the one a hit reports)
    const find = rig({ arch, cpus: 1 });
    const addr = find.sym('fib_last_leaf');
    let after: bigint | undefined;
    find.machine.kwatch.register_kwatch(addr, 4, 'w', ctx => { after ??= ctx.hit.regs.ip; });
    find.run();
    assert.ok(after !== undefined, 'fib_last_leaf is written');
    const fn = find.image.symbols.resolve(after)!.sym;
    const writer = insns(find, fn.name).find(d => d.addr + BigInt(d.length) === after);
    assert.ok(writer, 'the writing instruction');

    const r = rig({ arch, cpus: 1 });
    const order: string[] = [];
    const kp = { addr: writer.addr, pre_handler: () => { order.push('pre'); return 0; }, post_handler: () => { order.push('post'); } };
    assert.equal(r.engine.registerKprobe(kp), 0);
    const news: bigint[] = [];
    assert.equal(r.machine.kwatch.register_kwatch(addr, 4, 'w', ctx => { order.push('watch'); news.push(le(ctx.hit.newValue)); }), 0);
    r.run();
    const pre = order.filter(x => x === 'pre').length;
    assert.ok(pre > 0);
    assert.equal(order.filter(x => x === 'post').length, pre, 'every single-step completed');
    assert.equal(order.filter(x => x === 'watch').length, pre, 'every stepped store reported');
    // per hit: the pre_handler before the instruction, then the step's store: the watch and the post handler
    for (let i = 0; i < order.length; i += 3) assert.equal(order[i], 'pre');
    assert.equal(news.at(-1), BigInt(r.machine.kernel.mem.read32(mustVAddr(addr))), 'the value the last store left');
  });

  test(`${arch}: an execute breakpoint and a kprobe on one address: the breakpoint first, then the kprobe, memory untouched by the breakpoint`, () => {
    const r = rig({ arch, cpus: 1 });
    const at = r.sym('do_fork');
    const before = bytesAt(r, at, 8);
    const order: string[] = [];
    const hw = r.machine.hwbp.register('debugger', { addr: at, len: arch === 'x86_64' ? 1 : 4, type: 'x' }, {
      handler: hit => { order.push('hw'); assert.equal(hit.regs.ip, at, 'before the instruction'); },
    });
    assert.ok(hw instanceof HwBp);
    assert.deepEqual(bytesAt(r, at, 8), before, 'an execute debug register changes nothing in memory');
    assert.equal(r.engine.registerKprobe({ addr: at, pre_handler: () => { order.push('kp'); return 0; } }), 0);
    r.run();
    assert.ok(order.length >= 2);
    assert.deepEqual(order, order.map((_, i) => (i % 2 ? 'kp' : 'hw')), 'hw, kp, hw, kp ...');
    assert.equal(hw.hits, order.length / 2);
  });

  test(`${arch}: a watched variable read inside a kprobe handler is a watchpoint hit too`, () => {
    const count = (withHandlerRead: boolean): { watch: number; probe: number } => {
      const r = rig({ arch, cpus: 1 });
      const addr = r.sym('guarded_value');
      let watch = 0, probe = 0;
      assert.equal(r.machine.kwatch.register_kwatch(addr, 8, arch === 'x86_64' ? 'rw' : 'r', () => { watch++; }), 0);
      assert.equal(r.engine.registerKprobe({
        symbol_name: 'read_boot_counter',
        pre_handler: (_p, regs) => { probe++; if (withHandlerRead) regs.cpu.mem.read64(mustVAddr(addr)); return 0; },
      }), 0);
      r.run();
      return { watch, probe };
    };
    const plain = count(false), reading = count(true);
    assert.ok(plain.watch > 0, 'the kernel reads guarded_value itself');
    assert.equal(reading.probe, plain.probe);
    assert.equal(reading.watch - plain.watch, reading.probe, 'one more hit per handler run');
  });
}
