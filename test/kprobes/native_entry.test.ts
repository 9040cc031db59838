/**
 * The native entry of x86_64 detour buffers and of the kretprobe booster
 * trampoline (emulator/arch/x86_64/kprobes/nativeFrame.ts): the engine does
 * the template's register save and restore itself. Compared with the same
 * runs where the native entry declines (hooks without enterNative: the
 * buffer's real template instructions run), everything the kernel and the
 * handlers can see is identical — the pt_regs frame bytes on the stack
 * during the handler and after the restore, the handlers' registers, the
 * return values, the kernel's output — and exactly the template's
 * instructions are saved per hit.
 */
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import assert from 'node:assert/strict';
import { hexBytes, Rig, rig, snapshot } from './harness';
import type { Kprobe, Kretprobe } from '../../emulator/kprobes';
import type { KprobesArchHooks } from '../../emulator/kprobes';
import { x86_64KprobesHooks } from '../../emulator/arch/x86_64/kprobes';
import { mustVAddr } from '../../emulator/memory/address';
import type { TranslateMode } from '../../emulator/jit';
import { capture, restore } from '../../emulator/timetravel/snapshot';

/** the x86_64 hooks with the native entries switched off (the buffers' templates run as instructions) */
const TEMPLATE_ONLY: KprobesArchHooks = {
  ...x86_64KprobesHooks,
  optprobes: { ...(x86_64KprobesHooks.optprobes as NonNullable<KprobesArchHooks['optprobes']>), enterNative: undefined },
};

interface Outcome {
  lines: string[];
  /** per hit of the optimized probe: its registers and the 168 bytes below its sp (the pt_regs frame) */
  during: string[];
  /** per hit of a probe right after the detoured region: the frame bytes the restore left behind */
  after: string[];
  rets: string[];
  insns: number;
  r: Rig;
}

function runFib(native: boolean, translate?: TranslateMode, hooks?: KprobesArchHooks, beforeRun?: (r: Rig) => void): Outcome {
  const r = rig({ cpus: 1, engine: native ? (hooks ? { hooks } : {}) : { hooks: TEMPLATE_ONLY }, translate });
  const a = r.sym('fib');
  const during: string[] = [];
  const after: string[] = [];
  const rets: string[] = [];
  const mem = r.machine.kernel.mem;
  let sp0 = 0n;
  const kp: Kprobe = {
    addr: a,
    pre_handler: (_p, regs) => {
      sp0 = regs.sp;
      during.push(`${snapshot(regs)} frame=${hexBytes(mem.readBytes(mustVAddr(sp0 - 168n), 168))}`);
      return 0;
    },
  };
  assert.equal(r.engine.registerKprobe(kp), 0);
  // the kretprobe before the optimizer runs: both entries are optimized from the first instruction on. Queued
  // later, kprobe_target's would be optimized after an emulated delay that the two runs (different instruction
  // counts per hit) reach at different calls, and the stack bytes its detour leaves below fib's frame would differ
  const rp: Kretprobe = { kp: { symbol_name: 'kprobe_target' }, handler: (_ri, regs) => { rets.push(snapshot(regs)); return 0; } };
  assert.equal(r.engine.registerKretprobe(rp), 0);
  r.engine.waitForOptimizer();
  const size = r.engine.optimizer.status(a).size;
  assert.ok(size, 'fib+0 is optimized');
  assert.ok(r.engine.optimizer.isOptimized(a));
  // a breakpoint probe (a post_handler keeps it unoptimized: it writes nothing on the stack) just past the region
  const next: Kprobe = {
    addr: a + BigInt(size),
    pre_handler: () => {
      after.push(hexBytes(mem.readBytes(mustVAddr(sp0 - 168n), 168 - 16))); // the copied push rbp / push rbx own the top 16
      return 0;
    },
    post_handler: () => undefined,
  };
  assert.equal(r.engine.registerKprobe(next), 0);
  assert.ok(r.engine.kretprobes.boosted);
  beforeRun?.(r);
  const exit = r.machine.run();
  assert.equal(exit.reason, 'poweroff');
  return { lines: r.machine.printkRecords.map(x => x.text), during, after, rets, insns: exit.instructions, r };
}

// x86_64 only: detour buffers and the kretprobe booster trampoline exist only in the x86 port
describe('native entry (x86_64 detour buffers, kretprobe booster trampoline)', () => {
  test('same frame bytes, registers, return values and output as the template run as instructions', () => {
    const nat = runFib(true), tpl = runFib(false);
    assert.ok(nat.during.length > 1000, `fib hits (${nat.during.length})`);
    // fib's hits, and kprobe_target's (the kretprobe's entry probe)
    assert.equal(nat.r.engine.stats.nativeOptFrames, nat.r.engine.stats.optCallbacks, 'every optimized hit took the native entry');
    assert.ok(nat.r.engine.stats.nativeOptFrames > nat.during.length);
    assert.equal(tpl.r.engine.stats.optCallbacks, nat.r.engine.stats.optCallbacks);
    assert.equal(tpl.r.engine.stats.nativeOptFrames, 0);
    assert.equal(nat.r.engine.stats.nativeKretFrames, nat.rets.length);
    assert.equal(tpl.r.engine.stats.nativeKretFrames, 0);
    assert.equal(nat.rets.length, 97);
    // fewer emulated instructions per hit move the preemption points: compare per call, in any order
    const sorted = (a: string[]): string[] => [...a].sort();
    assert.deepEqual(sorted(nat.during), sorted(tpl.during), 'pt_regs frame and registers seen by the handler');
    assert.deepEqual(sorted(nat.after), sorted(tpl.after), 'the frame as the restore leaves it');
    assert.deepEqual(sorted(nat.rets), sorted(tpl.rets), 'kretprobe handler registers (booster trampoline)');
    assert.deepEqual(sorted(nat.lines), sorted(tpl.lines));
  });

  test('translated code writes the detour buffer\'s save itself: the same frames, registers, output and instruction count as the interpreter', () => {
    const on = runFib(true, 'on'), off = runFib(true, 'off'), tpl = runFib(false, 'off');
    const st = on.r.engine.stats;
    // the buffer's entry gets hot and is translated: from then on the translated block stores the frame before its int3
    assert.ok(st.presavedOptFrames > on.during.length / 2, `${st.presavedOptFrames} of ${st.nativeOptFrames} optimized hits had their save written by translated code`);
    assert.equal(st.nativeOptFrames, st.optCallbacks);
    assert.equal(off.r.engine.stats.presavedOptFrames, 0, 'the interpreter writes the whole frame in nativeEnter');
    // from translated code, the common hit is one piece (save, handlers, restore): every presaved frame of both kinds
    assert.equal(st.fusedNativeHits, st.presavedOptFrames + st.presavedKretFrames, `${st.fusedNativeHits} fused of ${st.presavedOptFrames} + ${st.presavedKretFrames} presaved`);
    assert.equal(off.r.engine.stats.fusedNativeHits, 0);
    assert.equal(on.insns, off.insns, 'the same instruction count');
    assert.deepEqual(on.during, off.during, 'pt_regs frame and registers seen by the handler, hit by hit');
    assert.deepEqual(on.after, off.after, 'the frame as the restore leaves it');
    assert.deepEqual(on.rets, off.rets);
    assert.deepEqual(on.lines, off.lines);
    const sorted = (a: string[]): string[] => [...a].sort();
    assert.deepEqual(sorted(on.during), sorted(tpl.during), 'and as the template run as instructions');
  });

  test('translated native entries go to the engine directly only while its own inline breakpoint handler is the CPU\'s: a wrapper sees every hit', () => {
    const plain = runFib(true, 'on');
    const entries = new Set<number>();
    for (const c of plain.r.engine.code.ranges()) if (c.nativeEntry !== undefined) entries.add(c.nativeEntry.at);
    let seen = 0;
    const wrapped = runFib(true, 'on', undefined, r => {
      for (const cpu of r.machine.cpus) {
        const x = cpu as unknown as { inlineBreakpoint: ((c: unknown, at: number) => boolean) | null };
        const own = x.inlineBreakpoint as NonNullable<typeof x.inlineBreakpoint>;
        x.inlineBreakpoint = (c, at) => { if (entries.has(at)) seen++; return own(c, at); };
      }
    });
    const st = plain.r.engine.stats, ws = wrapped.r.engine.stats;
    assert.ok(st.presavedOptFrames > 1000, `${st.presavedOptFrames} hits through translated entries`);
    assert.equal(ws.presavedOptFrames, st.presavedOptFrames);
    assert.equal(ws.presavedKretFrames, st.presavedKretFrames);
    assert.equal(seen, ws.nativeOptFrames + ws.nativeKretFrames, 'the wrapper saw every native entry hit, translated or not');
    assert.deepEqual(wrapped.during, plain.during);
    assert.deepEqual(wrapped.rets, plain.rets);
    assert.deepEqual(wrapped.lines, plain.lines);
    assert.equal(wrapped.insns, plain.insns);
  });

  test('a native entry that declines after translated code wrote the save: the template runs from the entry on, with the same frames', () => {
    const opt = x86_64KprobesHooks.optprobes as NonNullable<KprobesArchHooks['optprobes']>;
    const enter = opt.enterNative as NonNullable<typeof opt.enterNative>;
    let calls = 0, declined = 0;
    // every third optimized hit, the arch's native entry declines (as when the frame is not plain RAM of one mapping)
    const sometimes: KprobesArchHooks = {
      ...x86_64KprobesHooks,
      optprobes: { ...opt, enterNative: (ctx, regs, ip, kind) => (kind === 'optprobe' && ++calls % 3 === 0 ? (declined++, null) : enter(ctx, regs, ip, kind)) },
    };
    const on = runFib(true, 'on', sometimes), tpl = runFib(false, 'off');
    assert.ok(declined > 1000, `${declined} declined`);
    assert.ok(on.r.engine.stats.presavedOptFrames > 1000);
    assert.equal(on.r.engine.stats.optCallbacks, on.r.engine.stats.nativeOptFrames + declined, 'a declined entry reaches the template\'s callback');
    const sorted = (a: string[]): string[] => [...a].sort();
    assert.deepEqual(sorted(on.during), sorted(tpl.during), 'pt_regs frame and registers seen by the handler');
    assert.deepEqual(sorted(on.after), sorted(tpl.after), 'the frame as the restore leaves it');
    assert.deepEqual(sorted(on.lines), sorted(tpl.lines));
  });

  test('taking an optimized probe away drops the translations of its detour buffer\'s native entry', () => {
    const r = rig({ cpus: 1, translate: 'on' });
    const a = r.sym('fib');
    const mem = r.machine.kernel.mem;
    const told: bigint[] = [];
    const own = mem.codeMeaningChanged.bind(mem);
    mem.codeMeaningChanged = (at, len) => { told.push(BigInt(at)); own(at, len); };
    const kp: Kprobe = { addr: a, pre_handler: () => 0 };
    assert.equal(r.engine.registerKprobe(kp), 0);
    r.engine.waitForOptimizer();
    const buffer = r.engine.optimizer.status(a).buffer;
    assert.ok(buffer !== undefined);
    assert.deepEqual(told.map(x => BigInt.asUintN(64, x)), [buffer], 'the entry attached');
    assert.equal(r.machine.run().reason, 'poweroff');
    assert.ok(r.engine.stats.presavedOptFrames > 0);
    r.engine.unregisterKprobe(kp);
    assert.deepEqual(told.map(x => BigInt.asUintN(64, x)), [buffer, buffer], 'and taken back');
  });

  test('a time-travel restore that puts a native entry back (or takes it away) drops the translations relying on it', () => {
    const r = rig({ cpus: 1, translate: 'on' });
    const a = r.sym('fib');
    const kp: Kprobe = { addr: a, pre_handler: () => 0 };
    assert.equal(r.engine.registerKprobe(kp), 0);
    r.engine.waitForOptimizer();
    const buffer = r.engine.optimizer.status(a).buffer as bigint;
    const at = mustVAddr(buffer);
    const snap = capture(r.machine);
    r.engine.unregisterKprobe(kp); // the buffer is kept, its native entry taken back
    assert.equal(r.engine.code.findV(at)?.nativeEntry, undefined);
    // what the decode caches and the translator hear (the listener list is the host's: a restore keeps it)
    const told: number[] = [];
    r.machine.kernel.mem.codeWriteListeners.push(x => told.push(x));
    restore(snap);
    assert.equal(r.engine.code.findV(at)?.nativeEntry?.at, at, 'the entry is back');
    assert.ok(told.includes(at), 'and the translations of its int3 were told');
    told.length = 0;
    const later = capture(r.machine);
    r.engine.unregisterKprobe(kp);
    r.engine.registerKprobe(kp);
    r.engine.waitForOptimizer();
    told.length = 0;
    restore(later);
    assert.ok(told.includes(at), 'a restore over an entry attached since is told too');
  });

  test('per hit, exactly the template instructions are not run as instructions any more', () => {
    const nat = runFib(true), tpl = runFib(false);
    const arch = nat.r.machine.arch;
    const count = (code: Uint8Array): number => {
      let n = 0;
      for (let off = 0; off < code.length; n++) {
        const d = arch.decodeBytes(code.subarray(off), 0xffffffffa0000000n + BigInt(off));
        assert.ok(d);
        off += d.length;
      }
      return n;
    };
    const t = x86_64KprobesHooks.optprobes?.nativeTemplates;
    assert.ok(t);
    // the template run as instructions: everything after the native entry's int3 (the callback int3 included)
    const perOpt = count(t.optprobe) - 1, perKret = count(t.kretprobe) - 1;
    const st = nat.r.engine.stats;
    assert.equal(st.nativeKretFrames, nat.rets.length);
    // the template's callback int3 retires as an instruction; the native entry's int3 retires in both runs
    assert.equal(tpl.insns - nat.insns, st.nativeOptFrames * perOpt + st.nativeKretFrames * perKret);
  });

  test('native entries nest (a handler\'s kernel call hits the optimized probe again): same frames, results and output as the template', () => {
    const run = (native: boolean): { lines: string[]; seen: string[]; results: string[]; counts: string } => {
      const r = rig({ cpus: 1, engine: native ? {} : { hooks: TEMPLATE_ONLY } });
      const a = r.sym('fib');
      const mem = r.machine.kernel.mem;
      const seen: string[] = [];
      const results: string[] = [];
      let n = 0;
      const kp: Kprobe = {
        addr: a,
        pre_handler: (_p, regs) => {
          // the frame this hit's entry saved, before and after a nested call whose own entries save theirs below it
          const sp = regs.sp;
          const frame = (): string => hexBytes(mem.readBytes(mustVAddr(sp - 168n), 168));
          const before = `${snapshot(regs)} ${frame()}`;
          if (n++ % 500 === 0) {
            results.push(r.engine.nested.call(regs.cpu, a, [6n]).toString());
            assert.equal(`${snapshot(regs)} ${frame()}`, before, 'the outer frame and registers after the nested call');
          }
          seen.push(before);
          return 0;
        },
      };
      assert.equal(r.engine.registerKprobe(kp), 0);
      r.engine.waitForOptimizer();
      assert.ok(r.engine.optimizer.isOptimized(a));
      const exit = r.machine.run();
      assert.equal(exit.reason, 'poweroff');
      if (native) assert.ok(r.engine.stats.nativeOptFrames > r.engine.stats.optCallbacks / 2, 'the native entries ran');
      return { lines: r.machine.printkRecords.map(x => x.text), seen, results, counts: `${kp.hits}/${kp.nmissed}` };
    };
    const nat = run(true), tpl = run(false);
    assert.ok(nat.results.length >= 3, `${nat.results.length} nested calls`);
    assert.ok(nat.results.every(x => x === '8'), `fib(6) = 8 each time: ${nat.results.join(' ')}`);
    assert.deepEqual(nat.results, tpl.results);
    // the nested calls' hits count as missed (a probe was running on the CPU)
    assert.equal(nat.counts, tpl.counts);
    assert.ok(Number(nat.counts.split('/')[1]) > 0, nat.counts);
    const sorted = (x: string[]): string[] => [...x].sort();
    assert.deepEqual(sorted(nat.seen), sorted(tpl.seen));
    assert.deepEqual(sorted(nat.lines), sorted(tpl.lines));
  });

  test('a handler\'s register change is kept, its ip change ignored (native as documented for optprobes)', () => {
    const r = rig({ cpus: 1 });
    const a = r.sym('kprobe_target');
    let n = 0;
    const kp: Kprobe = {
      addr: a,
      pre_handler: (_p, regs) => { n++; regs.ip = r.sym('kprobe_target2'); regs.set('di', regs.arg(0) + 3n); return 1; },
    };
    assert.equal(r.engine.registerKprobe(kp), 0);
    r.engine.waitForOptimizer();
    assert.ok(r.engine.optimizer.isOptimized(a));
    const lines = r.run();
    assert.equal(n, 97);
    assert.equal(r.engine.stats.nativeOptFrames, 97);
    // kprobe_target(x) = x / 3 ran on x + 3: the self-test prints the original argument and a result one higher
    const base = rig({ cpus: 1 }).run();
    const pick = (ls: string[]): string[] => ls.filter(l => l.startsWith('selftest: kprobe_target('));
    const m = /^selftest: kprobe_target\((\d+)\) = (\d+)$/.exec(pick(base)[0] ?? '');
    assert.ok(m, 'the self-test line');
    assert.deepEqual(pick(lines), [`selftest: kprobe_target(${m[1]}) = ${BigInt(m[2]) + 1n}`]);
  });

  // one WeakRef per mode, made in a function of its own (no local of the test's scope holds the machine)
  function finishedMachine(translate: TranslateMode): WeakRef<object> {
    const out = runFib(true, translate);
    assert.ok(out.r.engine.stats.nativeOptFrames > 1000 && out.r.engine.stats.nativeKretFrames > 0);
    return new WeakRef(out.r.machine);
  }

  test('a finished machine whose native entries ran (translated, lockstep, interpreted: the last one run) is collected', async () => {
    // the module-level caches of the native frame code, the translator's last CPU and last helper, and a translated
    // module's imports (the function table is shared by every machine of the process) each held one once
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const refs = (['on', 'lockstep', 'off'] as TranslateMode[]).map(m => [m, finishedMachine(m)] as const);
    for (let i = 0; i < 4; i++) { gc(); await new Promise(r => setTimeout(r, 10)); }
    assert.deepEqual(refs.filter(([, w]) => w.deref() !== undefined).map(([m]) => m), [], 'modes whose machine is still alive');
  });
});
