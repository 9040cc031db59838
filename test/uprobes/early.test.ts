/**
 * The early user-space probes interface (reference 004, emulator/uprobes/early.ts)
 * on the uprobes table: register_kprobe_user once per (inode, offset),
 * insert_kprobe_userspace / remove_kprobe_user per page (user->addr, vma,
 * page), unregister_kprobe_user once every inserted copy is gone; pages read
 * in after registration (an exec'd image) get the probe; pre_handler before
 * and post_handler after the step. Program: test/uprobes/bin/uprobed-*
 * (calls listed at the top of engine.test.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PAGE_SIZE } from '../../emulator/memory/backing';
import {
  insertKprobeUserspace, registerKprobeUser, removeKprobeUser, unregisterKprobeUser, UprobeConsumer, UserKprobe,
} from '../../emulator/uprobes';
import { registerKprobeUserReason } from '../../emulator/uprobes/early';
import { ARCHES, Prog } from './prog';

const EINVAL = -22, ENOENT = -2, EEXIST = -17, EFAULT = -14, EBUSY = -16;
/** user->vma is the mapping the caller looked up: it stays valid while its pages are copied for a breakpoint and put back */
const LEAF_ARGS = [2n, 5n, ...Array.from({ length: 20 }, (_, i) => BigInt(i)), 5n, 7n, 0n, 1n, 2n, 3n, 4n, 11n];


for (const arch of ARCHES) {
  describe(`early user-space probes (${arch}): the calls and their errors`, () => {
    test('register_kprobe_user: once per (inode, offset), a second time -EEXIST; a bad offset -EINVAL; no page changes', () => {
      const p = new Prog(arch, 'O2');
      const e = p.m.uprobes;
      const k1 = p.kp('leaf', { pre_handler: () => 0 });
      assert.equal(registerKprobeUser(e, k1), 0);
      assert.equal(k1.hits, 0);
      assert.equal(k1.nmissed, 0);
      assert.equal(registerKprobeUser(e, k1), EEXIST);
      const k2 = p.kp('leaf', { pre_handler: () => 0 });
      assert.equal(registerKprobeUser(e, k2), EEXIST);
      assert.match(registerKprobeUserReason(e, k2) ?? '', /already registered/);
      assert.equal(registerKprobeUser(e, { user: { inode: p.inode, offset: BigInt(p.inode.size) } }), EINVAL);
      assert.match(registerKprobeUserReason(e, { user: { inode: p.inode, offset: BigInt(p.inode.size) } }) ?? '', /outside the file/);
      // x86_64: the ELF header is in no executable segment; aarch64 / riscv64: an odd offset is no instruction boundary
      assert.equal(registerKprobeUser(e, { user: { inode: p.inode, offset: arch === 'x86_64' ? 0n : p.off('leaf') + 1n } }), EINVAL);
      const u = p.maybeUprobe('leaf');
      assert.ok(u);
      assert.equal(u.early, k1);
      assert.deepEqual(e.list(), [u], 'the failed registrations left nothing');
      assert.equal(u.insertions.size, 0, 'registration inserts in no page present now');
      assert.deepEqual(p.mem(p.init, 'leaf'), p.orig('leaf'));
      assert.ok(p.isCacheWindow(p.init, 'leaf'));
    });

    test('registerKprobeUserReason only asks: it registers nothing', () => {
      const p = new Prog(arch, 'O2');
      const e = p.m.uprobes;
      assert.equal(registerKprobeUserReason(e, p.kp('leaf')), undefined, 'nothing wrong with the pair');
      assert.deepEqual(e.list(), [], 'no uprobe made by asking');
    });

    test('insert_kprobe_userspace: -ENOENT unregistered, -EINVAL addr outside vma / not the probe\'s address, -EFAULT page mismatch, -EEXIST twice', () => {
      const p = new Prog(arch, 'O2');
      const e = p.m.uprobes;
      const k = p.kp('leaf', { pre_handler: () => 0 });
      // not registered yet
      assert.equal(insertKprobeUserspace(e, p.at(k, p.init, 'leaf')), ENOENT);
      assert.equal(registerKprobeUser(e, k), 0);
      // a struct kprobe for the pair that is not the registered one
      assert.equal(insertKprobeUserspace(e, p.at(p.kp('leaf'), p.init, 'leaf')), ENOENT);
      // another pair, not registered
      assert.equal(insertKprobeUserspace(e, p.at(p.kp('fact'), p.init, 'fact')), ENOENT);
      // no addr / vma
      k.user = { inode: p.inode, offset: p.off('leaf') };
      assert.equal(insertKprobeUserspace(e, k), EINVAL, 'user->addr and vma missing');
      const vma = p.init.mm.regionAt(Number(p.vaddr('leaf')))!;
      const good = { addr: p.vaddr('leaf'), vma, page: p.vaddr('leaf') & ~BigInt(PAGE_SIZE - 1) };
      // addr outside the vma
      k.user = { ...k.user, ...good, addr: BigInt(vma.end), page: BigInt(vma.end) };
      assert.equal(insertKprobeUserspace(e, k), EINVAL);
      const stack = p.init.mm.allRegions().find(r => r.name === '[stack]')!;
      k.user = { ...k.user, ...good, vma: stack };
      assert.equal(insertKprobeUserspace(e, k), EINVAL, 'the vma does not hold addr');
      // page not addr's
      k.user = { ...k.user, ...good, page: good.page + BigInt(PAGE_SIZE) };
      assert.equal(insertKprobeUserspace(e, k), EFAULT);
      // addr in the vma, but the vma shows another file byte there
      k.user = { ...k.user, ...good, addr: p.vaddr('fact'), page: p.vaddr('fact') & ~BigInt(PAGE_SIZE - 1) };
      assert.equal(insertKprobeUserspace(e, k), EINVAL);
      assert.equal(p.maybeUprobe('leaf')!.insertions.size, 0, 'nothing inserted by the failures');
      assert.deepEqual(p.mem(p.init, 'leaf'), p.orig('leaf'));
      // right: inserted in pid 1's private copy, the file keeps its bytes
      k.user = { ...k.user, ...good };
      assert.equal(insertKprobeUserspace(e, k), 0);
      assert.deepEqual(p.mem(p.init, 'leaf'), p.swbp);
      assert.deepEqual(p.inode.read(Number(p.off('leaf')), p.swbp.length), p.orig('leaf'));
      assert.equal(p.isCacheWindow(p.init, 'leaf'), false);
      const ins = p.maybeUprobe('leaf')!.insertions.get(p.init.mm)?.get(p.vaddr('leaf'));
      assert.ok(ins && ins.early && !ins.modern && ins.pid === 1);
      // page may be left out (the vma and addr name it)
      k.user = { ...k.user, ...good, vma: p.init.mm.regionAt(Number(good.addr))!, page: undefined };
      assert.equal(insertKprobeUserspace(e, k), EEXIST, 'a second insert in the same page');
    });

    test('remove_kprobe_user / unregister_kprobe_user: -ENOENT where not inserted, -EBUSY while inserted, then 0; the page cache comes back', () => {
      const p = new Prog(arch, 'O2');
      const e = p.m.uprobes;
      const k = p.kp('leaf', { pre_handler: () => 0 });
      assert.equal(unregisterKprobeUser(e, k), ENOENT, 'not registered');
      assert.equal(registerKprobeUser(e, k), 0);
      assert.equal(removeKprobeUser(e, p.at(k, p.init, 'leaf')), ENOENT, 'not inserted');
      assert.equal(insertKprobeUserspace(e, p.at(k, p.init, 'leaf')), 0);
      assert.equal(unregisterKprobeUser(e, k), EBUSY);
      assert.equal(removeKprobeUser(e, p.at(k, p.init, 'leaf')), 0);
      assert.deepEqual(p.mem(p.init, 'leaf'), p.orig('leaf'));
      assert.ok(p.isCacheWindow(p.init, 'leaf'), 'the private copy is gone');
      assert.equal(e.pages.copies(p.init.mm), 0);
      assert.equal(removeKprobeUser(e, p.at(k, p.init, 'leaf')), ENOENT, 'removed already');
      assert.equal(unregisterKprobeUser(e, k), 0);
      assert.deepEqual(e.list(), []);
      assert.equal(unregisterKprobeUser(e, k), ENOENT, 'unregistered already');
      // registered again after that: a fresh registration
      assert.equal(registerKprobeUser(e, k), 0);
      assert.equal(unregisterKprobeUser(e, k), 0);
      p.runGolden();
      assert.equal(e.stats.hits, 0);
    });

    test('the struct kprobe given to insert_kprobe_userspace removes the probe again as it is (user->vma stays valid)', () => {
      const p = new Prog(arch, 'O2');
      const e = p.m.uprobes;
      const k = p.kp('leaf', { pre_handler: () => 0 });
      assert.equal(registerKprobeUser(e, k), 0);
      assert.equal(insertKprobeUserspace(e, p.at(k, p.init, 'leaf')), 0);
      // the reference: remove_kprobe_user takes user->addr, page and vma "containing the address", as insert did
      assert.equal(removeKprobeUser(e, k), 0);
      assert.deepEqual(p.mem(p.init, 'leaf'), p.orig('leaf'));
      assert.equal(unregisterKprobeUser(e, k), 0);
    });

    test('two early probes in one mapping, vma taken once: both insert, both remove', () => {
      const p = new Prog(arch, 'O2');
      const e = p.m.uprobes;
      const vma = p.init.mm.regionAt(Number(p.vaddr('leaf')))!;
      const ks = ['leaf', 'bump'].map(name => {
        const k = p.kp(name, { pre_handler: () => 0 });
        assert.equal(registerKprobeUser(e, k), 0);
        k.user.addr = p.vaddr(name);
        k.user.vma = vma;
        return k;
      });
      assert.equal(insertKprobeUserspace(e, ks[0]), 0);
      assert.equal(insertKprobeUserspace(e, ks[1]), 0, 'the vma of the mapping, as when the caller looked it up');
      assert.equal(removeKprobeUser(e, ks[0]), 0);
      assert.equal(removeKprobeUser(e, ks[1]), 0);
    });
  });

  describe(`early user-space probes (${arch}): hits`, () => {
    test('pre_handler before the step (ip = addr), post_handler after it (ip = the next instruction); hits counted; copies go with their processes', () => {
      const p = new Prog(arch, 'O2');
      const e = p.m.uprobes;
      const va = p.vaddr('leaf');
      const ev: { what: 'pre' | 'post'; pid: number; ip: bigint; arg: bigint; mem?: Uint8Array }[] = [];
      const k = p.kp('leaf', {
        pre_handler: (_p, regs) => { ev.push({ what: 'pre', pid: p.proc(regs).pid, ip: regs.ip, arg: regs.arg(0), mem: regs.cpu.mem.readBytes(Number(va), p.swbp.length) }); return 0; },
        post_handler: (_p, regs, flags) => { p.check(() => assert.equal(flags, 0)); ev.push({ what: 'post', pid: p.proc(regs).pid, ip: regs.ip, arg: 0n }); },
      });
      assert.equal(registerKprobeUser(e, k), 0);
      assert.equal(insertKprobeUserspace(e, p.at(k, p.init, 'leaf')), 0);
      p.runGolden();
      const len = BigInt(p.maybeUprobe('leaf')!.arch.length);
      assert.equal(ev.length, 60);
      ev.forEach((x, i) => {
        assert.equal(x.what, i % 2 ? 'post' : 'pre', `event ${i}`);
        if (x.what === 'pre') {
          assert.equal(x.ip, va);
          assert.deepEqual(x.mem, p.swbp);
        } else {
          assert.equal(x.ip, va + len, 'after the stepped instruction');
          assert.equal(x.pid, ev[i - 1].pid);
        }
      });
      assert.deepEqual(ev.filter(x => x.what === 'pre').map(x => x.arg), LEAF_ARGS, 'pid 1, its fork (copied) and the exec\'d image (read in later)');
      assert.equal(k.hits, 30);
      assert.equal(k.nmissed, 0);
      assert.equal(p.maybeUprobe('leaf')!.insertions.size, 0, 'every process ended: no copy left');
      assert.equal(unregisterKprobeUser(e, k), 0, 'nothing inserted remains');
    });

    test('pages read in after register_kprobe_user (an exec\'d image) get the probe; pages present then do not', () => {
      const p = new Prog(arch, 'O2');
      const e = p.m.uprobes;
      const seen: [number, bigint][] = [];
      const k: UserKprobe = p.kp('leaf', {
        pre_handler: (_p, regs) => {
          seen.push([p.proc(regs).pid, regs.arg(0)]);
          p.check(() => assert.equal(unregisterKprobeUser(e, k), EBUSY, 'inserted in this live process'));
          return 0;
        },
      });
      assert.equal(registerKprobeUser(e, k), 0);
      p.runGolden();
      assert.equal(seen.length, 1);
      assert.notEqual(seen[0][0], 1);
      assert.equal(seen[0][1], 11n, 'exec leaf');
      assert.equal(k.hits, 1);
      assert.equal(unregisterKprobeUser(e, k), 0);
    });

    test('removing the probe from one process\'s page leaves the other process\'s copy (fact at -O0)', () => {
      const p = new Prog(arch, 'O0');
      const e = p.m.uprobes;
      const hits: [number, bigint][] = [];
      let removed = false;
      const k: UserKprobe = p.kp('fact', {
        pre_handler: (_p, regs) => {
          const proc = p.proc(regs);
          hits.push([proc.pid, regs.arg(0)]);
          if (proc.pid !== 1 && !removed) {
            removed = true;
            p.check(() => {
              const u = p.maybeUprobe('fact')!;
              assert.ok(u.insertions.has(proc.mm) && u.insertions.has(p.init.mm));
              // the registered struct with this process's addr / vma / page
              const saved = k.user;
              k.user = { ...saved, addr: p.vaddr('fact'), vma: proc.mm.regionAt(Number(p.vaddr('fact'))), page: undefined };
              assert.equal(removeKprobeUser(e, k), 0);
              k.user = saved;
              assert.deepEqual(p.mem(proc, 'fact'), p.orig('fact'));
              assert.ok(p.isCacheWindow(proc, 'fact'));
              assert.deepEqual(p.mem(p.init, 'fact'), p.swbp, 'pid 1 keeps its copy');
              assert.deepEqual([...u.insertions.keys()], [p.init.mm]);
            });
          }
          return 0;
        },
      });
      assert.equal(registerKprobeUser(e, k), 0);
      assert.equal(insertKprobeUserspace(e, p.at(k, p.init, 'fact')), 0);
      p.runGolden();
      assert.ok(removed);
      const down = (n: number): bigint[] => Array.from({ length: n }, (_, i) => BigInt(n - i));
      assert.deepEqual(hits.filter(([pid]) => pid === 1).map(([, a]) => a), [...down(10), ...down(6)], 'pid 1: fact(10) and fact(6), all nested calls');
      assert.deepEqual(hits.filter(([pid]) => pid !== 1).map(([, a]) => a), [5n], 'the exec\'d image: the first call only');
      assert.equal(k.hits, 17);
      assert.equal(unregisterKprobeUser(e, k), 0);
    });

    test('the early probe and a consumer on the same pair: one breakpoint, pre_handler then handler; each owner removes its part', () => {
      const p = new Prog(arch, 'O2');
      const e = p.m.uprobes;
      const order: string[] = [];
      const k = p.kp('leaf', { pre_handler: (_p, regs) => { order.push(`pre ${regs.arg(0)}`); return 0; } });
      const uc: UprobeConsumer = { handler: (_uc, regs) => { order.push(`handler ${regs.arg(0)}`); return 0; } };
      assert.equal(registerKprobeUser(e, k), 0);
      assert.equal(insertKprobeUserspace(e, p.at(k, p.init, 'leaf')), 0);
      assert.equal(e.uprobeRegister(p.inode, p.off('leaf'), uc), 0);
      const u = p.maybeUprobe('leaf')!;
      assert.deepEqual(e.list(), [u]);
      const ins = u.insertions.get(p.init.mm)!.get(p.vaddr('leaf'))!;
      assert.ok(ins.early && ins.modern);
      assert.equal(e.uprobeUnregister(p.inode, p.off('leaf'), uc), 0);
      assert.ok(ins.early && !ins.modern, 'the early insertion stays');
      assert.deepEqual(p.mem(p.init, 'leaf'), p.swbp);
      assert.equal(e.uprobeRegister(p.inode, p.off('leaf'), uc), 0);
      p.runGolden();
      assert.deepEqual(order.slice(0, 4), ['pre 2', 'handler 2', 'pre 5', 'handler 5']);
      assert.equal(order.length, 60);
      assert.equal(k.hits, 30);
      assert.equal(u.hits, 30);
      assert.equal(unregisterKprobeUser(e, k), 0);
      assert.deepEqual(e.list(), [u], 'the consumer keeps the uprobe');
      assert.equal(e.uprobeUnregister(p.inode, p.off('leaf'), uc), 0);
      assert.deepEqual(e.list(), []);
    });

    test('a pre_handler that does the function itself and returns 1: no step, no post_handler, the program cannot tell', () => {
      const p = new Prog(arch, 'O2');
      const e = p.m.uprobes;
      let post = 0;
      const k = p.kp('leaf', {
        pre_handler: (_p, regs) => {
          // leaf(x) = 3x + 1, then return to the caller
          regs.returnValue = regs.arg(0) * 3n + 1n;
          if (arch === 'x86_64') {
            regs.ip = regs.cpu.mem.read64(Number(regs.sp));
            regs.sp = regs.sp + 8n;
          } else {
            regs.ip = regs.get(arch === 'aarch64' ? 'x30' : 'ra');
          }
          return 1;
        },
        post_handler: () => { post++; },
      });
      assert.equal(registerKprobeUser(e, k), 0);
      assert.equal(insertKprobeUserspace(e, p.at(k, p.init, 'leaf')), 0);
      p.runGolden();
      assert.equal(k.hits, 30);
      assert.equal(post, 0);
      assert.equal(e.stats.xolSteps + e.stats.simulated, 0, 'nothing stepped');
    });
  });
}
