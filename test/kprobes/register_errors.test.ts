/**
 * Bad input to the registration APIs: an errno, never a JS exception, and
 * nothing changed on failure (the caller's structures, the probe table,
 * the kretprobe data area).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KPROBE_ARCHES, rig } from './harness';
import { Errno } from '../../emulator/kernel/abi';
import { formatKprobeList, Jprobe, Kprobe, Kretprobe } from '../../emulator/kprobes';

/** the value as any field type (what the handler language or JSON could hand over) */
function bad<T>(v: unknown): T {
  return v as T;
}

/** data address a fresh engine gives the first kretprobe (the data area is untouched before) */
function firstObjectAddress(arch: string): bigint {
  const r = rig({ arch });
  const rp: Kretprobe = { kp: { symbol_name: 'kprobe_target' }, maxactive: 4, data_size: 8 };
  assert.equal(r.engine.registerKretprobe(rp), 0);
  return r.engine.kretprobes.objectAddress(rp);
}

for (const arch of KPROBE_ARCHES) describe(arch, () => {
  describe('register_kretprobe: sizes', () => {
    test('maxactive 100000 x data_size 4096 does not fit: -ENOMEM, rp and its kprobe untouched, no block leaked', () => {
      const r = rig({ arch });
      const pre = (): number => 0;
      const rp: Kretprobe = { kp: { symbol_name: 'kprobe_target', pre_handler: pre }, maxactive: 100000, data_size: 4096, handler: () => 0 };
      assert.equal(r.engine.registerKretprobe(rp), -Errno.ENOMEM);
      assert.equal(rp.maxactive, 100000);
      assert.equal(rp.kp.pre_handler, pre);
      assert.equal(rp.nmissed, undefined);
      assert.equal(r.engine.probes.isRegistered(rp.kp), false);
      assert.equal(formatKprobeList(r.engine), '');
      const ok: Kretprobe = { kp: { symbol_name: 'kprobe_target' }, maxactive: 4, data_size: 8 };
      assert.equal(r.engine.registerKretprobe(ok), 0);
      assert.equal(r.engine.kretprobes.objectAddress(ok), firstObjectAddress(arch), 'the failed registration allocated nothing');
    });

    test('data_size > KRETPROBE_MAX_DATA_SIZE: -E2BIG; negative, fractional, NaN sizes and maxactive: -EINVAL', () => {
      const r = rig({ arch });
      const mk = (over: Partial<Kretprobe>): Kretprobe => ({ kp: { symbol_name: 'kprobe_target' }, ...over });
      assert.equal(r.engine.registerKretprobe(mk({ data_size: 4097 })), -Errno.E2BIG);
      assert.equal(r.engine.registerKretprobe(mk({ data_size: -1 })), -Errno.EINVAL);
      assert.equal(r.engine.registerKretprobe(mk({ data_size: 1.5 })), -Errno.EINVAL);
      assert.equal(r.engine.registerKretprobe(mk({ data_size: NaN })), -Errno.EINVAL);
      assert.equal(r.engine.registerKretprobe(mk({ maxactive: NaN })), -Errno.EINVAL);
      assert.equal(r.engine.registerKretprobe(mk({ maxactive: Infinity })), -Errno.EINVAL);
      assert.equal(r.engine.registerKretprobe(mk({ maxactive: 2.5 })), -Errno.EINVAL);
      assert.equal(formatKprobeList(r.engine), '');
      // the limit itself is fine
      const edge = mk({ data_size: 4096, maxactive: 8 });
      assert.equal(r.engine.registerKretprobe(edge), 0);
      assert.equal(r.engine.kretprobes.freeInstances(edge), 8);
    });

    test('the kprobe refused after the instances were allocated (blacklisted): block freed, kprobe restored', () => {
      const r = rig({ arch });
      const rp: Kretprobe = { kp: { symbol_name: 'notify_die' }, maxactive: 4, data_size: 8 };
      assert.equal(r.engine.registerKretprobe(rp), -Errno.EINVAL);
      assert.equal(rp.kp.pre_handler, undefined);
      assert.equal(rp.maxactive, 4);
      assert.equal(r.engine.probes.kindOf(rp.kp), 'k');
      const ok: Kretprobe = { kp: { symbol_name: 'kprobe_target' }, maxactive: 4, data_size: 8 };
      assert.equal(r.engine.registerKretprobe(ok), 0);
      assert.equal(r.engine.kretprobes.objectAddress(ok), firstObjectAddress(arch));
    });
  });

  describe('bad structures: -EINVAL, no exception', () => {
    test('register_kprobe: fields of the wrong type', () => {
      const r = rig({ arch });
      const fib = r.sym('fib');
      for (const p of [
        bad<Kprobe>(null), bad<Kprobe>(42), bad<Kprobe>({ addr: Number(fib & 0xffffn) }), bad<Kprobe>({ symbol_name: 'fib', offset: 4 }),
        bad<Kprobe>({ symbol_name: 7 }), bad<Kprobe>({ symbol_name: 'fib', pre_handler: 'x' }),
        bad<Kprobe>({ symbol_name: 'fib', post_handler: 1 }), bad<Kprobe>({ symbol_name: 'fib', fault_handler: {} }),
        bad<Kprobe>({ symbol_name: 'fib', flags: 'on' }),
      ]) {
        assert.equal(r.engine.registerKprobe(p), -Errno.EINVAL, JSON.stringify(p, (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
      }
      assert.equal(r.engine.registerKprobes(bad<Kprobe[]>(null)), -Errno.EINVAL);
      assert.equal(r.engine.registerKprobes([]), -Errno.EINVAL);
      assert.equal(r.engine.registerKprobes([{ symbol_name: 'fib' }, bad<Kprobe>(null)]), -Errno.EINVAL, 'rolled back');
      assert.equal(formatKprobeList(r.engine), '');
    });

    test('register_kretprobe / register_jprobe: missing kp, missing entry, handlers of the wrong type', () => {
      const r = rig({ arch });
      assert.equal(r.engine.registerKretprobe(bad<Kretprobe>(null)), -Errno.EINVAL);
      assert.equal(r.engine.registerKretprobe(bad<Kretprobe>({})), -Errno.EINVAL);
      assert.equal(r.engine.registerKretprobe(bad<Kretprobe>({ kp: { symbol_name: 'fib' }, handler: 3 })), -Errno.EINVAL);
      assert.equal(r.engine.registerKretprobes(bad<Kretprobe[]>('rp')), -Errno.EINVAL);
      assert.equal(r.engine.registerJprobe(bad<Jprobe>({ kp: { symbol_name: 'fib' } })), -Errno.EINVAL);
      assert.equal(r.engine.registerJprobe(bad<Jprobe>({ entry: () => undefined })), -Errno.EINVAL);
      assert.equal(r.engine.registerJprobes(bad<Jprobe[]>(undefined)), -Errno.EINVAL);
      // a jprobe refused by the kprobe checks leaves its kprobe as it was
      const jp: Jprobe = { kp: { symbol_name: 'notify_die' }, entry: () => undefined };
      assert.equal(r.engine.registerJprobe(jp), -Errno.EINVAL);
      assert.equal(jp.kp.pre_handler, undefined);
      assert.equal(formatKprobeList(r.engine), '');
    });

    test('unregister / enable / disable on junk or unregistered structures do nothing and do not throw', () => {
      const r = rig({ arch });
      r.engine.unregisterKprobe(bad<Kprobe>(null));
      r.engine.unregisterKprobes(bad<Kprobe[]>(undefined));
      r.engine.unregisterKprobes([bad<Kprobe>(null), bad<Kprobe>(1)]);
      r.engine.unregisterKretprobe(bad<Kretprobe>({}));
      r.engine.unregisterKretprobes(bad<Kretprobe[]>(null));
      r.engine.unregisterJprobes(bad<Jprobe[]>([null]));
      assert.equal(r.engine.disableKprobe(bad<Kprobe>(null)), -Errno.EINVAL);
      assert.equal(r.engine.enableKprobe(bad<Kprobe>({})), -Errno.EINVAL);
      assert.equal(r.engine.enableKretprobe(bad<Kretprobe>({ kp: {} })), -Errno.EINVAL);
    });

    test('a probe whose addr its owner changed after registration is still disabled and unregistered at its real address', () => {
      const r = rig({ arch });
      const fib = r.sym('fib');
      const kp: Kprobe = { addr: fib, pre_handler: () => 0 };
      assert.equal(r.engine.registerKprobe(kp), 0);
      kp.addr = 0x1234n;
      assert.equal(r.engine.disableKprobe(kp), 0);
      assert.equal(r.engine.probes.isArmed(fib), false);
      assert.equal(kp.addr, fib, 'given back');
      kp.addr = 0x1234n;
      assert.equal(r.engine.enableKprobe(kp), 0);
      assert.equal(r.engine.probes.isArmed(fib), true);
      kp.addr = undefined;
      r.engine.unregisterKprobe(kp);
      assert.equal(kp.addr, fib);
      assert.equal(r.engine.probes.isArmed(fib), false);
      assert.equal(r.engine.getKprobe(fib), undefined);
      assert.equal(formatKprobeList(r.engine), '');
    });
  });

  describe('a refusal carries its reason (registerKprobeResult & co.)', () => {
    test('the check that refused says why; the errno is the one register_* returns', () => {
      const r = rig({ arch });
      const e = r.engine;
      const hexOf = (a: bigint): string => `0x${a.toString(16)}`;
      assert.deepEqual(e.registerKprobeResult({ symbol_name: 'no_such_fn' }), { errno: -Errno.ENOENT, reason: "unknown symbol 'no_such_fn'" });
      assert.deepEqual(e.registerKprobeResult({ symbol_name: 'fib', addr: r.sym('fib') }), { errno: -Errno.EINVAL, reason: 'give either a symbol or an address' });
      assert.deepEqual(e.registerKprobeResult({ symbol_name: 'notify_die' }), { errno: -Errno.EINVAL, reason: 'address is inside the kprobe blacklist' });
      assert.deepEqual(e.registerKprobeResult({ symbol_name: 'workers' }), { errno: -Errno.EINVAL, reason: 'workers+0x0 is not in kernel text' });
      const tramp = e.kretprobes.trampoline;
      assert.deepEqual(e.registerKprobeResult({ addr: tramp }), { errno: -Errno.EINVAL, reason: `${hexOf(tramp)} is inside the kprobes code kretprobe_trampoline+0x0` });
      const kp: Kprobe = { symbol_name: 'vfs_read' };
      assert.equal(e.registerKprobeResult(kp), 0);
      const slot = kp.ainsn?.insn as bigint;
      assert.deepEqual(e.registerKprobeResult({ addr: slot }), { errno: -Errno.EINVAL, reason: `${hexOf(slot)} is inside the kprobes code kprobe_insn_slot[vfs_read]+0x0` });
      assert.deepEqual(e.registerKprobeResult(kp), { errno: -Errno.EINVAL, reason: 'the probe is already registered' });
      assert.deepEqual(e.registerKprobeResult(bad<Kprobe>({ symbol_name: 7 })), { errno: -Errno.EINVAL, reason: 'struct kprobe: a field has the wrong type or is out of range' });
      assert.deepEqual(e.registerKretprobeResult({ kp: { symbol_name: 'do_fork', offset: 1n } }),
        { errno: -Errno.EINVAL, reason: 'a kretprobe must be placed at a function entry, not do_fork+0x1' });
      assert.deepEqual(e.registerKretprobeResult({ kp: { symbol_name: 'fib' }, data_size: 5000 }),
        { errno: -Errno.E2BIG, reason: 'struct kretprobe: data_size is above KRETPROBE_MAX_DATA_SIZE' });
      const j1: Jprobe = { kp: { symbol_name: 'do_fork' }, entry: () => undefined };
      assert.equal(e.registerJprobeResult(j1), 0);
      assert.deepEqual(e.registerJprobeResult({ kp: { symbol_name: 'do_fork' }, entry: () => undefined }),
        { errno: -Errno.EEXIST, reason: 'another jprobe is already registered at do_fork+0x0' });
      // what is refused without a reason through the Linux-shaped API returns the same errno
      assert.equal(e.registerKprobe({ symbol_name: 'no_such_fn' }), -Errno.ENOENT);
    });
  });
});
