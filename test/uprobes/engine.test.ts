/**
 * The uprobes engine, today's interface (emulator/uprobes/core.ts, traps.ts):
 * one test per rule, on test/uprobes/bin/uprobed-* (x86_64, aarch64 and
 * riscv64). The program's calls are known (test/userspace/programs/uprobed.c):
 *
 *   pid 1      leaf(2), tail(4) -> leaf(5), work(20): leaf(0..19) + bump x20,
 *              escape(3..0) + longjmp, leaf(5), fact(10), fork A, fork B,
 *              fact(6)
 *   child A    leaf(7), work(5): leaf(0..4) + bump x5, exit
 *   child B    execve(/proc/self/exe again): leaf(11), fact(5), exit
 *
 * Handlers run inside the engine, which reports and swallows their throws:
 * checks made there go through Prog.check and are rethrown after the run.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UserProcess } from '../../emulator/kernel/user/process';
import { PERM_W, PERM_X } from '../../emulator/memory/memory';
import { PAGE_SIZE } from '../../emulator/memory/backing';
import { UPROBE_HANDLER_REMOVE, UprobeConsumer, XOL_AREA_NAME } from '../../emulator/uprobes';
import { ARCHES, BIN, GOLDEN, Prog } from './prog';


/** leaf's arguments, in call order, over the whole run (pid 1, child A, child B) */
const LEAF_ARGS_1 = [2n, 5n, ...Array.from({ length: 20 }, (_, i) => BigInt(i)), 5n];
const LEAF_ARGS_A = [7n, 0n, 1n, 2n, 3n, 4n];
const LEAF_ARGS_B = [11n];
const leafOf = (x: bigint): bigint => x * 3n + 1n;


/** bytes the process sees at vaddr */
const memAt = (proc: UserProcess, va: bigint, n: number): Uint8Array => proc.mm.readBytes(Number(va), n);

for (const arch of ARCHES) {
  describe(`uprobes (${arch}): breakpoints and handlers`, () => {
    test('a uprobe on a function entry: its handler runs once per call, ip = the probe address, arg(0) = the first argument; hits counted', () => {
      const p = new Prog(arch, 'O2');
      const va = p.vaddr('leaf');
      const seen: { pid: number; ip: bigint; arg: bigint }[] = [];
      const uc: UprobeConsumer = { handler: (_uc, regs) => { seen.push({ pid: p.pidOf(regs), ip: regs.ip, arg: regs.arg(0) }); return 0; } };
      p.register('leaf', uc);
      p.runGolden();
      assert.deepEqual(seen.map(s => s.arg), [...LEAF_ARGS_1, ...LEAF_ARGS_A, ...LEAF_ARGS_B]);
      assert.ok(seen.every(s => s.ip === va), 'ip is the probe address');
      assert.deepEqual([...new Set(seen.map(s => s.pid))].length, 3, 'hits in pid 1, the forked child and the exec\'d one');
      assert.equal(p.uprobe('leaf').hits, seen.length);
      assert.equal(p.m.uprobes.stats.hits, seen.length);
      assert.equal(p.m.uprobes.stats.retHits, 0);
      assert.equal(p.m.uprobes.stats.removedByHandler, 0);
    });

    test('the file keeps its bytes (inode data, read, page cache) while the process runs a private copy holding the breakpoint', () => {
      const p = new Prog(arch, 'O2');
      const n = 4;
      const names = ['leaf', 'bump'];
      const snaps: { pid: number; name: string; mem: Uint8Array; data: Uint8Array; read: Uint8Array; cache: Uint8Array; cow: boolean; cacheWindow: boolean }[] = [];
      for (const name of names) {
        const off = Number(p.off(name));
        const va = p.vaddr(name);
        p.register(name, {
          handler: (_uc, regs) => {
            const proc = p.m.kernel.processes.get(p.pidOf(regs))!;
            snaps.push({
              pid: proc.pid, name,
              mem: regs.cpu.mem.readBytes(Number(va), p.swbp.length),
              data: p.inode.data().slice(off, off + n),
              read: p.inode.read(off, n),
              cache: p.inode.pages().bytes.slice(off, off + n),
              cow: p.m.uprobes.pages.copyAt(regs.cpu.mem, va) !== undefined,
              cacheWindow: regs.cpu.mem.regionAt(Number(va))!.backing === p.inode.pages(),
            });
            return 0;
          },
        });
        // inserted in pid 1 at once (register_for_each_vma)
        assert.deepEqual(memAt(p.init, va, p.swbp.length), p.swbp);
        assert.deepEqual(p.uprobe(name).arch.insn, p.orig(name, p.uprobe(name).arch.length), 'analysed from the file\'s bytes');
      }
      p.runGolden();
      assert.equal(snaps.length, 30 + 25);
      for (const s of snaps) {
        assert.deepEqual(s.mem, p.swbp, `${s.name} in pid ${s.pid}: the breakpoint`);
        assert.deepEqual(s.data, p.orig(s.name, n), `${s.name}: inode.data() keeps the file`);
        assert.deepEqual(s.read, p.orig(s.name, n), `${s.name}: inode.read() keeps the file`);
        assert.deepEqual(s.cache, p.orig(s.name, n), `${s.name}: the page cache keeps the file`);
        assert.ok(s.cow && !s.cacheWindow, `${s.name} in pid ${s.pid}: runs a private copy of the page`);
      }
      assert.deepEqual(new Set(snaps.map(s => s.pid)).size, 3);
      for (const name of names) assert.deepEqual(p.inode.read(Number(p.off(name)), n), p.orig(name, n));
    });

    test('the XOL area "[uprobes]" is mapped on the first hit, executable and not writable', () => {
      const p = new Prog(arch, 'O2');
      const at: boolean[] = [];
      p.register('leaf', { handler: (_uc, regs) => { at.push(p.m.uprobes.xolOf(regs.cpu.mem) !== undefined); return 0; } });
      assert.equal(p.m.uprobes.xolOf(p.init.mm), undefined, 'nothing mapped at registration');
      let xolChecked = false;
      p.register('bump', {
        handler: (_uc, regs) => {
          if (!xolChecked) {
            xolChecked = true;
            p.check(() => {
              const x = p.m.uprobes.xolOf(regs.cpu.mem);
              assert.ok(x);
              assert.equal(x.region.name, XOL_AREA_NAME);
              assert.ok(regs.cpu.mem.allRegions().includes(x.region));
              assert.ok((x.region.perms & PERM_X) !== 0 && (x.region.perms & PERM_W) === 0);
            });
          }
          return 0;
        },
      });
      p.runGolden();
      assert.equal(at[0], false, 'not yet at the first hit\'s handler');
      assert.equal(at[1], true, 'there from the first step on');
      assert.ok(xolChecked);
    });
  });

  describe(`uprobes (${arch}): processes`, () => {
    test('fork copies inserted breakpoints, exec gives the new image the probe, exec and exit drop the old space\'s state', () => {
      const p = new Prog(arch, 'O2');
      const name = 'leaf';
      const va = p.vaddr(name);
      const hits = new Map<number, bigint[]>();
      const forks: number[] = [], released: number[] = [], execs: number[] = [];
      p.register(name, {
        handler: (_uc, regs) => {
          const pid = p.pidOf(regs);
          hits.set(pid, [...(hits.get(pid) ?? []), regs.arg(0)]);
          if (pid !== 1) {
            p.check(() => {
              const u = p.uprobe(name);
              assert.ok(u.insertions.get(regs.cpu.mem)?.get(va), `pid ${pid}: its insertion`);
              assert.equal(u.insertions.get(regs.cpu.mem)!.get(va)!.pid, pid);
              assert.ok(u.insertions.has(p.init.mm), 'pid 1 keeps its own');
              assert.equal(u.insertions.size, 2, 'one per live space (pid 1 and this one)');
            });
          }
          return 0;
        },
      });
      p.observe({
        forked: (_parent, child) => p.check(() => {
          forks.push(child.pid);
          const ins = p.uprobe(name).insertions.get(child.mm)?.get(va);
          assert.ok(ins, 'the child\'s copy of the breakpoint is listed');
          assert.equal(ins.pid, child.pid);
          assert.equal(ins.hits, 0);
          assert.equal(p.m.uprobes.at(child.mm, va), p.uprobe(name));
          assert.deepEqual(memAt(child, va, p.swbp.length), p.swbp);
          assert.equal(p.m.uprobes.pages.copies(child.mm), 1, 'the child\'s page is a private copy too');
        }),
        mmReleased: (proc, mm) => p.check(() => {
          released.push(proc.pid);
          assert.equal(p.uprobe(name).insertions.has(mm), false, `pid ${proc.pid}: insertions of the released space`);
          assert.equal(p.m.uprobes.at(mm, va), undefined);
          assert.equal(p.m.uprobes.pages.copies(mm), 0);
          assert.equal(p.m.uprobes.xolOf(mm), undefined);
        }),
        imageMapped: proc => p.check(() => {
          execs.push(proc.pid);
          assert.ok(p.uprobe(name).insertions.get(proc.mm)?.get(va), 'the exec\'d image has the probe');
          assert.deepEqual(memAt(proc, va, p.swbp.length), p.swbp);
        }),
      });
      p.runGolden();
      assert.equal(forks.length, 2);
      const [a, b] = forks;
      assert.deepEqual(execs, [b]);
      assert.deepEqual(released, [a, b, b, 1], 'A exits, B execs then exits, pid 1 exits');
      assert.deepEqual(hits.get(1), LEAF_ARGS_1);
      assert.deepEqual(hits.get(a), LEAF_ARGS_A);
      assert.deepEqual(hits.get(b), LEAF_ARGS_B);
      const u = p.uprobe(name);
      assert.equal(u.insertions.size, 0, 'no insertion outlives its process');
      assert.equal(u.consumers.length, 1, 'the registration stays');
      assert.equal(u.hits, 30);
    });

    test('two probes on one page: the page stays a private copy until the last is removed, then the page cache is mapped back', () => {
      const p = new Prog(arch, 'O2');
      const [va1, va2] = [p.vaddr('leaf'), p.vaddr('bump')];
      assert.equal(Math.floor(Number(va1) / PAGE_SIZE), Math.floor(Number(va2) / PAGE_SIZE), 'leaf and bump share a page');
      const uc1: UprobeConsumer = { handler: () => 0 };
      const uc2: UprobeConsumer = { handler: () => 0 };
      const region = (): unknown => p.init.mm.regionAt(Number(va1))!.backing;
      assert.equal(region(), p.inode.pages(), 'before: the page cache');
      p.register('leaf', uc1);
      p.register('bump', uc2);
      assert.equal(p.m.uprobes.pages.copies(p.init.mm), 1);
      assert.notEqual(region(), p.inode.pages());
      assert.deepEqual(memAt(p.init, va1, p.swbp.length), p.swbp);
      assert.deepEqual(memAt(p.init, va2, p.swbp.length), p.swbp);
      assert.equal(p.m.uprobes.uprobeUnregister(p.inode, p.off('leaf'), uc1), 0);
      assert.equal(p.m.uprobes.get(p.inode, p.off('leaf')), undefined, 'the last consumer gone: the uprobe goes');
      assert.deepEqual(memAt(p.init, va1, p.swbp.length), p.orig('leaf'));
      assert.deepEqual(memAt(p.init, va2, p.swbp.length), p.swbp);
      assert.equal(p.m.uprobes.pages.copies(p.init.mm), 1, 'bump still needs the copy');
      assert.equal(p.m.uprobes.uprobeUnregister(p.inode, p.off('leaf'), uc1), -2, 'not registered any more: -ENOENT');
      assert.equal(p.m.uprobes.uprobeUnregister(p.inode, p.off('bump'), uc2), 0);
      assert.equal(p.m.uprobes.pages.copies(p.init.mm), 0);
      assert.equal(region(), p.inode.pages(), 'after: the page cache again');
      assert.deepEqual(memAt(p.init, va2, p.swbp.length), p.orig('bump'));
      assert.deepEqual(p.m.uprobes.list(), []);
      p.runGolden();
      assert.equal(p.m.uprobes.stats.hits, 0);
    });

    test('uprobeUnregister mid-run (in the forked child): both processes\' breakpoints go, their pages are the page cache again, later calls do not hit (pid 1 too)', () => {
      const p = new Prog(arch, 'O2');
      const va = p.vaddr('leaf');
      const off = p.off('leaf');
      const args: [number, bigint][] = [];
      let done = false;
      const uc: UprobeConsumer = {
        handler: (_uc, regs) => {
          const pid = p.pidOf(regs);
          args.push([pid, regs.arg(0)]);
          if (pid !== 1 && !done) {
            done = true;
            const child = p.m.kernel.processes.get(pid)!;
            p.check(() => {
              const u = p.uprobe('leaf');
              assert.ok(u.insertions.has(p.init.mm) && u.insertions.has(child.mm), 'both processes hold the breakpoint');
              assert.equal(p.m.uprobes.uprobeUnregister(p.inode, off, uc), 0);
              assert.equal(p.m.uprobes.uprobeUnregister(p.inode, p.off('fact'), factUc), 0);
              assert.equal(u.insertions.size, 0);
              assert.deepEqual(p.m.uprobes.list(), []);
              for (const proc of [p.init, child]) {
                const r = proc.mm.regionAt(Number(va))!;
                assert.equal(r.backing, p.inode.pages(), `pid ${proc.pid}: the file's page-cache window again`);
                assert.equal(p.m.uprobes.pages.copies(proc.mm), 0);
                assert.deepEqual(memAt(proc, va, 4), p.orig('leaf', 4));
              }
            });
          }
          return 0;
        },
      };
      p.register('leaf', uc);
      const factArgs: bigint[] = [];
      const factUc: UprobeConsumer = { handler: (_uc, regs) => { factArgs.push(regs.arg(0)); return 0; } };
      p.register('fact', factUc);
      p.runGolden();
      assert.ok(done);
      assert.deepEqual(factArgs, [10n], 'pid 1\'s fact(10) before; its fact(6) after the unregister runs the page cache again');
      const a = args.find(([pid]) => pid !== 1)![0];
      assert.deepEqual(args, [...LEAF_ARGS_1.map(x => [1, x] as [number, bigint]), [a, 7n]], 'no hit after the unregister (child A\'s work, the exec\'d image)');
    });

    test('a handler returning UPROBE_HANDLER_REMOVE: the breakpoint leaves that process only; a fork made after has none; a new exec gets it again', () => {
      const p = new Prog(arch, 'O2');
      const va = p.vaddr('leaf');
      const hits: [number, bigint][] = [];
      const forkHad: boolean[] = [];
      // the consumer stops wanting a process once it has seen it (filter), and asks for the removal
      const seen = new Set<number>();
      p.register('leaf', {
        filter: (_uc, proc) => !seen.has(proc.pid),
        handler: (_uc, regs) => { const pid = p.pidOf(regs); seen.add(pid); hits.push([pid, regs.arg(0)]); return UPROBE_HANDLER_REMOVE; },
      });
      p.observe({
        forked: (parent, child) => p.check(() => {
          forkHad.push(p.uprobe('leaf').insertions.has(child.mm));
          assert.equal(parent.mm.regionAt(Number(va))!.backing, p.inode.pages(), 'pid 1 runs the page cache again');
          assert.deepEqual(memAt(child, va, p.swbp.length), p.orig('leaf'));
        }),
      });
      p.runGolden();
      assert.deepEqual(forkHad, [false, false]);
      assert.equal(hits.length, 2);
      assert.deepEqual(hits[0], [1, 2n], 'pid 1: its first call only');
      assert.notEqual(hits[1][0], 1);
      assert.equal(hits[1][1], 11n, 'the exec\'d image: its first call');
      assert.equal(p.m.uprobes.stats.removedByHandler, 2);
      assert.equal(p.uprobe('leaf').consumers.length, 1, 'the consumer stays registered');
    });

    test('UPROBE_HANDLER_REMOVE from one consumer while another wants the breakpoint: it stays', () => {
      const p = new Prog(arch, 'O2');
      let a = 0, b = 0;
      p.register('leaf', { handler: () => { a++; return UPROBE_HANDLER_REMOVE; } });
      p.register('leaf', { handler: () => { b++; return 0; } });
      p.runGolden();
      assert.equal(a, 30);
      assert.equal(b, 30);
      assert.equal(p.m.uprobes.stats.removedByHandler, 0);
    });

    test('a filter rejecting a process: no breakpoint there (nor in its fork); accepted processes get it', () => {
      const p = new Prog(arch, 'O2');
      const asked = new Set<number>();
      const hits: [number, bigint][] = [];
      p.register('leaf', {
        filter: (_uc, proc) => { asked.add(proc.pid); return proc.pid !== 1; },
        handler: (_uc, regs) => { hits.push([p.pidOf(regs), regs.arg(0)]); return 0; },
      });
      assert.equal(p.uprobe('leaf').insertions.size, 0, 'nothing in pid 1');
      assert.deepEqual(memAt(p.init, p.vaddr('leaf'), p.swbp.length), p.orig('leaf'));
      assert.equal(p.m.uprobes.pages.copies(p.init.mm), 0);
      p.runGolden();
      assert.ok(asked.has(1));
      assert.equal(hits.length, 1);
      assert.notEqual(hits[0][0], 1);
      assert.equal(hits[0][1], 11n, 'only the exec\'d image (accepted) hit');
      assert.ok(asked.has(hits[0][0]));
    });
  });

  describe(`uprobes (${arch}): consumers`, () => {
    test('a handler that throws: reported in the kernel log, counted as missed, the program goes on unchanged', () => {
      const p = new Prog(arch, 'O2');
      let calls = 0;
      p.register('leaf', { handler: () => { calls++; throw new Error('boom'); } });
      const e = p.run();
      assert.equal(p.out, GOLDEN('O2'));
      assert.equal(e.code, 0);
      assert.equal(calls, 30);
      assert.equal(p.uprobe('leaf').nmissed, 30);
      assert.equal(p.uprobe('leaf').hits, 30);
      const w = p.warnings(/a handler of .* failed: boom/);
      assert.ok(w.length >= 1, 'reported');
    });

    test('uprobeRegister mid-run (in the forked child): every live process gets the breakpoint at once', () => {
      const p = new Prog(arch, 'O2');
      const bumpHits: number[] = [];
      const bump: UprobeConsumer = { handler: (_uc, regs) => { bumpHits.push(p.pidOf(regs)); return 0; } };
      const factHits: [number, bigint][] = [];
      const fact: UprobeConsumer = { handler: (_uc, regs) => { factHits.push([p.pidOf(regs), regs.arg(0)]); return 0; } };
      let child = 0;
      p.register('leaf', {
        handler: (_uc, regs) => {
          const pid = p.pidOf(regs);
          if (pid !== 1 && !child) {
            child = pid;
            p.check(() => {
              p.register('bump', bump);
              p.register('fact', fact);
              const u = p.uprobe('bump');
              assert.ok(u.insertions.has(p.init.mm) && u.insertions.has(regs.cpu.mem), 'pid 1 (waiting) and the child');
              assert.deepEqual(memAt(p.init, p.vaddr('bump'), p.swbp.length), p.swbp);
            });
          }
          return 0;
        },
      });
      p.runGolden();
      assert.deepEqual(bumpHits, [child, child, child, child, child], 'child A\'s work(5): bump x5');
      // fact, already run (decoded) by pid 1 before the fork, registered from the child: pid 1's fact(6) hits
      assert.deepEqual(factHits.map(([pid, n]) => [pid === 1 ? 1 : 'B', n]), [['B', 5n], [1, 6n]]);
    });

    test('a disabled uprobe (the enable knob): breakpoints stay and hits count, handlers and ret_handlers do not run', () => {
      const p = new Prog(arch, 'O2');
      let h = 0, r = 0;
      p.register('leaf', { handler: () => { h++; return 0; }, ret_handler: () => { r++; return 0; } });
      p.uprobe('leaf').disabled = true;
      p.runGolden();
      assert.equal(h, 0);
      assert.equal(r, 0);
      assert.equal(p.uprobe('leaf').hits, 30);
    });

    test('uprobeUnregister in the middle of a recursion (fact at -O0): the pending returns still go back right, no ret_handler runs after', () => {
      const p = new Prog(arch, 'O0');
      const rets: bigint[] = [];
      const uc: UprobeConsumer = {
        handler: (_uc, regs) => {
          if (regs.arg(0) === 5n && p.pidOf(regs) === 1) p.check(() => assert.equal(p.m.uprobes.uprobeUnregister(p.inode, p.off('fact'), uc), 0));
          return 0;
        },
        ret_handler: (_uc, _f, regs) => { rets.push(regs.returnValue); return 0; },
      };
      p.register('fact', uc);
      p.runGolden();
      assert.deepEqual(rets, [], 'fact(10)..fact(5) were pending: their returns ran no handler');
      assert.deepEqual(p.m.uprobes.list(), []);
      assert.equal(p.m.uprobes.stats.retHits, 6, 'the six pending instances (fact(10)..fact(5)) went through the trampoline');
      assert.deepEqual(p.warnings(/uprobe/), []);
    });
  });

  describe(`uretprobes (${arch})`, () => {
    test('ret_handler: the return value, func = the entry address, ip = where the function returns to; one return per call', () => {
      const p = new Prog(arch, 'O2');
      const va = p.vaddr('leaf');
      const rets: { pid: number; func: bigint; rv: bigint; to: string | undefined }[] = [];
      let entries = 0;
      p.register('leaf', {
        handler: () => { entries++; return 0; },
        ret_handler: (_uc, func, regs) => { rets.push({ pid: p.pidOf(regs), func, rv: regs.returnValue, to: p.fn(regs.ip) }); return 0; },
      });
      p.runGolden();
      assert.equal(entries, 30);
      assert.equal(rets.length, 30);
      assert.equal(p.m.uprobes.stats.retHits, 30);
      assert.deepEqual(rets[0], { pid: 1, func: va, rv: 7n, to: 'cstart' }, 'leaf(2) == 7, back in cstart');
      assert.ok(rets.every(r => r.func === va));
      assert.deepEqual(rets.map(r => r.rv), [...LEAF_ARGS_1, ...LEAF_ARGS_A, ...LEAF_ARGS_B].map(leafOf));
      assert.deepEqual(rets.slice(2, 22).map(r => r.to), Array(20).fill('work'), 'work\'s calls return into work');
    });

    test('nested recursion (fact at -O0): every nested return fires, innermost first', () => {
      const p = new Prog(arch, 'O0');
      const va = p.vaddr('fact');
      const args: bigint[] = [];
      const rets: bigint[] = [];
      p.register('fact', {
        handler: (_uc, regs) => { args.push(regs.arg(0)); return 0; },
        ret_handler: (_uc, func, regs) => { p.check(() => assert.equal(func, va)); rets.push(regs.returnValue); return 0; },
      });
      p.runGolden();
      const down = (n: number): bigint[] => Array.from({ length: n }, (_, i) => BigInt(n - i));
      const facts = (n: number): bigint[] => Array.from({ length: n }, (_, i) => { let f = 1n; for (let k = 2n; k <= BigInt(i + 1); k++) f *= k; return f; });
      assert.deepEqual(args, [...down(10), ...down(5), ...down(6)]);
      assert.deepEqual(rets, [...facts(10), ...facts(5), ...facts(6)]);
      assert.equal(rets[9], 3628800n);
    });

    for (const opt of ['O2', 'O0']) {
      test(`tail -> leaf (${opt === 'O2' ? 'a tail call: the chained return instance' : 'a plain call'}): both returns fire, leaf's first`, () => {
        const p = new Prog(arch, opt);
        const ev: string[] = [];
        for (const name of ['tail', 'leaf']) {
          p.register(name, {
            handler: (_uc, regs) => { ev.push(`enter ${name} ${regs.arg(0)}`); return 0; },
            ret_handler: (_uc, func, regs) => { ev.push(`ret ${name} ${regs.returnValue} to ${p.fn(regs.ip)}${func === p.vaddr(name) ? '' : ' (bad func)'}`); return 0; },
          });
        }
        p.runGolden();
        const i = ev.indexOf('enter tail 4');
        assert.ok(i >= 0);
        // at -O2 tail jumps to leaf: leaf returns straight to cstart, through the chained instance
        const leafTo = opt === 'O2' ? 'cstart' : 'tail';
        assert.deepEqual(ev.slice(i, i + 4), ['enter tail 4', 'enter leaf 5', `ret leaf 16 to ${leafTo}`, 'ret tail 16 to cstart']);
        assert.equal(ev.filter(e => e.startsWith('ret ')).length, ev.filter(e => e.startsWith('enter ')).length);
      });
    }

    for (const opt of ['O2', 'O0']) {
      test(`longjmp out of escape (${opt}): its instances are discarded, later returns still fire, the output is unchanged`, () => {
        const p = new Prog(arch, opt);
        const ev: string[] = [];
        for (const name of ['escape', 'leaf']) {
          p.register(name, {
            handler: (_uc, regs) => { ev.push(`enter ${name} ${regs.arg(0)}`); return 0; },
            ret_handler: (_uc, _func, regs) => { ev.push(`ret ${name} ${regs.returnValue}`); return 0; },
          });
        }
        p.runGolden();
        assert.deepEqual(ev.filter(e => e.includes('escape')), ['enter escape 3', 'enter escape 2', 'enter escape 1', 'enter escape 0'], 'no escape return');
        const i = ev.indexOf('enter escape 0');
        assert.deepEqual(ev.slice(i + 1, i + 3), ['enter leaf 5', 'ret leaf 16'], 'after longjmp: leaf(5) returns through the trampoline');
        assert.equal(ev.filter(e => e.startsWith('ret leaf')).length, 30);
        assert.deepEqual(p.warnings(/uprobe/), []);
      });
    }
  });

  describe(`uprobes (${arch}): bad targets`, () => {
    test('errors: -EINVAL with a reason naming the file and offset; nothing inserted after a failure', () => {
      const root = mkdtempSync(join(tmpdir(), 'kprobe-uprobes-engine-'));
      try {
        copyFileSync(BIN(arch, 'O2'), join(root, 'prog'));
        chmodSync(join(root, 'prog'), 0o755);
        const p = new Prog(arch, 'O2', { rootfs: root });
        const e = p.m.uprobes;
        assert.equal(p.m.kernel.fs.pathOf(p.inode), '/prog');
        const bad = (off: bigint, why: RegExp): void => {
          const r = e.register(p.inode, off, { handler: () => 0 });
          assert.equal(r.errno, -22, `offset 0x${off.toString(16)}: ${r.reason}`);
          assert.ok(r.reason?.startsWith(`/prog:0x${off.toString(16)}: `), r.reason);
          assert.match(r.reason ?? '', why);
          assert.equal(e.uprobeRegister(p.inode, off, { handler: () => 0 }), -22);
        };
        const size = BigInt(p.inode.size);
        bad(size, /outside the file/);
        bad(size + 0x1000n, /outside the file/);
        bad(-1n, /outside the file/);
        // past the executable segment's bytes: the section headers and symbols, in no PT_LOAD
        bad(p.seg.offset + p.seg.filesz, /no executable segment/);
        for (const s of p.img.segments.filter(s => s.type === 1 && !(s.flags & 1) && s.filesz > 0n)) {
          // a read-only or data PT_LOAD (x86_64: the ELF header at 0, .rodata)
          if (s.offset >= p.seg.offset && s.offset < p.seg.offset + p.seg.filesz) continue;
          bad(s.offset, /no executable segment/);
        }
        if (arch === 'x86_64') bad(0n, /no executable segment/);
        // inside an instruction
        const leaf = p.off('leaf');
        if (arch === 'aarch64') {
          bad(leaf + 2n, /instruction boundary.*4-byte aligned/);
          bad(leaf + 1n, /instruction boundary/);
        } else {
          if (arch === 'riscv64') bad(leaf + 1n, /instruction boundary.*2-byte aligned/);
          // the first instruction of more than the alignment in a function: one alignment unit into it
          const step = BigInt(e.hooks.insnAlign);
          let found = false;
          for (const name of ['leaf', 'fact', 'tail', 'bump', 'work', 'cstart']) {
            const s = p.img.symbols.lookup(name)!;
            let at = s.value;
            while (at < s.value + s.size) {
              const o = Number(at - p.seg.vaddr);
              const d = p.m.kernel.arch.decodeBytes(p.seg.data.subarray(o, o + 16), at);
              assert.ok(d);
              if (BigInt(d.length) > step) {
                bad(at - p.seg.vaddr + p.seg.offset + step, new RegExp(`instruction boundary: 0x${(at + step).toString(16)} is inside ${d.mnemonic} at ${name}\\+0x${(at - s.value).toString(16)}`));
                found = true;
                break;
              }
              at += BigInt(d.length);
            }
            if (found) break;
          }
          assert.ok(found);
        }
        // a refused instruction: the system call instruction (inlined sys6 in cstart)
        const sc = { x86_64: 'syscall', aarch64: 'svc', riscv64: 'ecall' }[arch];
        const cs = p.img.symbols.lookup('cstart')!;
        let at = cs.value, sysAt = -1n;
        while (at < cs.value + cs.size) {
          const o = Number(at - p.seg.vaddr);
          const d = p.m.kernel.arch.decodeBytes(p.seg.data.subarray(o, o + 16), at);
          assert.ok(d);
          if (d.mnemonic === sc) { sysAt = at; break; }
          at += BigInt(d.length);
        }
        assert.ok(sysAt > 0n, `a ${sc} in cstart`);
        bad(sysAt - p.seg.vaddr + p.seg.offset, arch === 'x86_64' ? /syscall cannot be stepped out of line/ : /cannot be probed/);
        // a consumer registered twice; unregistering what is not registered
        const uc: UprobeConsumer = { handler: () => 0 };
        assert.equal(e.uprobeUnregister(p.inode, leaf, uc), -2);
        assert.equal(e.uprobeRegister(p.inode, leaf, uc), 0);
        const twice = e.register(p.inode, leaf, uc);
        assert.equal(twice.errno, -22);
        assert.match(twice.reason ?? '', /already registered/);
        assert.equal(e.uprobeUnregister(p.inode, leaf, uc), 0);
        // nothing left behind
        assert.deepEqual(e.list(), []);
        assert.equal(e.pages.copies(p.init.mm), 0);
        assert.equal(p.init.mm.regionAt(Number(p.seg.vaddr))!.backing, p.inode.pages());
        const e2 = p.m.run();
        assert.equal(p.out, GOLDEN('O2'));
        assert.equal(e2.code, 0);
        assert.equal(e.stats.hits, 0);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  });

  describe(`uprobes (${arch}): determinism`, () => {
    test('two runs with the same probes: the same output, events, hit counts and instruction count', () => {
      const once = (): { out: string; ev: string[]; stats: string; insns: number; hits: number[] } => {
        const p = new Prog(arch, 'O2');
        const ev: string[] = [];
        const names = ['leaf', 'fact', 'tail', 'bump', 'escape', 'work', 'cstart'];
        for (const name of names) {
          p.register(name, {
            handler: (_uc, regs) => { ev.push(`${p.pidOf(regs)} ${name}(${regs.arg(0)}) cpu${regs.cpu.id}`); return 0; },
            ret_handler: (_uc, _f, regs) => { ev.push(`${p.pidOf(regs)} ${name} = ${regs.returnValue}`); return 0; },
          });
        }
        const e = p.runGolden();
        return { out: p.out, ev, stats: JSON.stringify(p.m.uprobes.stats), insns: e.instructions, hits: names.map(n => p.uprobe(n).hits) };
      };
      const a = once(), b = once();
      assert.deepEqual(b, a);
      assert.equal(a.hits.reduce((x, y) => x + y), JSON.parse(a.stats).hits);
      assert.ok(a.ev.length > 100);
    });
  });
}
