/**
 * The inline breakpoint path for probe sites and the engine's own
 * breakpoints (the kretprobe trampoline, arm64 / riscv slot step
 * breakpoints): a probe's breakpoint is handled inside the CPU's breakpoint
 * instruction instead of a trap that ends the CPU's run. Compared with the
 * same runs where every breakpoint traps (hooks without
 * installInlineBreakpoint), on every architecture with kprobes, everything
 * observable is the same: the hit log's records (the machine-wide
 * instruction count of each hit included), the printk records with their
 * timestamps, the time and registers the handlers see, hits and nmissed,
 * the engine's counters (other than the inline ones), the machine's
 * instruction count, and where a debugger stop requested by a handler
 * leaves the CPU.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Rig, rig, stopAtFibHit } from './harness';
import type { PtRegs } from '../../emulator/kprobes/ptRegs';
import type { Jprobe, Kprobe, Kretprobe, KprobesArchHooks } from '../../emulator/kprobes';
import { x86_64KprobesHooks } from '../../emulator/arch/x86_64/kprobes';
import { aarch64KprobesHooks } from '../../emulator/arch/aarch64/kprobes';
import { riscv64KprobesHooks } from '../../emulator/arch/riscv64/kprobes';

const HOOKS: Record<string, KprobesArchHooks> = { x86_64: x86_64KprobesHooks, aarch64: aarch64KprobesHooks, riscv64: riscv64KprobesHooks };
/** the arch's hooks without the inline path: every breakpoint traps */
const trapOnly = (arch: string): KprobesArchHooks => ({ ...HOOKS[arch], installInlineBreakpoint: undefined });

type Mode = 'k' | 'kpost' | 'r' | 'kr' | 'j';

/** every register the handler sees, pc and flags included (any arch) */
const snapshot = (regs: PtRegs): string => `${regs.ip.toString(16)} ${regs.flags.toString(16)} ${regs.names().map(n => regs.get(n).toString(16)).join(' ')}`;

interface Outcome {
  hits: string[];
  printk: string[];
  seen: string[];
  counts: string;
  stats: string;
  instructions: number;
  r: Rig;
}

function run(arch: string, mode: Mode, inline: boolean): Outcome {
  // no booster, no optimization: every hit goes through the probe site's breakpoint
  const r = rig({ arch, cpus: 2, engine: { kprobeBooster: false, optimization: false, kretprobeBooster: false, hooks: inline ? undefined : trapOnly(arch) } });
  const k = r.machine.kernel;
  const seen: string[] = [];
  let n = 0;
  const kp: Kprobe = {
    symbol_name: 'fib',
    pre_handler: (_p, regs) => {
      n++;
      seen.push(`pre t=${k.timeNs()} cpu=${regs.cpu.id} ${snapshot(regs)}`);
      if (n % 97 === 1) k.printk(regs.cpu.id, `probe: fib hit ${n}`, 'probe');
      return 0;
    },
  };
  if (mode === 'kpost') kp.post_handler = (_p, regs) => { seen.push(`post t=${k.timeNs()} ${snapshot(regs)}`); };
  // maxactive 1: nested fib calls miss (nmissed and the hit log's warnings)
  const rp: Kretprobe = {
    kp: { symbol_name: 'fib' }, maxactive: 1,
    handler: (ri, regs) => { seen.push(`ret t=${k.timeNs()} ${ri.ret_addr.toString(16)} ${snapshot(regs)}`); return 0; },
  };
  const jp: Jprobe = { kp: { symbol_name: 'fib' }, entry: (args, regs) => { seen.push(`j ${args[0]} ${snapshot(regs)}`); } };
  if (mode === 'k' || mode === 'kpost' || mode === 'kr') assert.equal(r.engine.registerKprobe(kp), 0);
  if (mode === 'r' || mode === 'kr') assert.equal(r.engine.registerKretprobe(rp), 0);
  if (mode === 'j') assert.equal(r.engine.registerJprobe(jp), 0);
  const exit = r.machine.run();
  assert.equal(exit.reason, 'poweroff', exit.detail);
  const { inlineOptEntries: _a, inlineKretEntries: _b, inlineFtraceEntries: _c, ...stats } = r.engine.stats;
  return {
    hits: r.machine.hitLog.records().map(h => JSON.stringify({ ...h, addr: h.addr.toString(16) })),
    printk: r.machine.printkRecords.map(x => `${x.timeNs} ${x.cpu} ${x.source} ${x.text}`),
    seen,
    counts: `k ${kp.hits}/${kp.nmissed} r ${rp.kp.hits}/${rp.nmissed}/${rp.kp.nmissed} j ${jp.kp.hits}/${jp.kp.nmissed} warnings ${r.machine.hitLog.warnings().length}`,
    stats: JSON.stringify(stats),
    instructions: exit.instructions,
    r,
  };
}

for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
  describe(`inline breakpoints at probe sites = traps (${arch})`, () => {
    for (const mode of ['k', 'kpost', 'r', 'kr', 'j'] as const) {
      test(`${mode}: same hit log, printk, handler observations, counts and instructions`, () => {
        const inl = run(arch, mode, true);
        const trp = run(arch, mode, false);
        assert.ok(inl.hits.length > 100, `hits recorded: ${inl.hits.length}`);
        assert.equal(inl.hits.length, trp.hits.length);
        for (let i = 0; i < inl.hits.length; i++) assert.equal(inl.hits[i], trp.hits[i], `hit record ${i}`);
        assert.deepEqual(inl.printk, trp.printk);
        assert.equal(inl.seen.length, trp.seen.length);
        for (let i = 0; i < inl.seen.length; i++) assert.equal(inl.seen[i], trp.seen[i], `observation ${i}`);
        assert.equal(inl.counts, trp.counts);
        assert.equal(inl.stats, trp.stats);
        assert.equal(inl.instructions, trp.instructions);
      });
    }

    test('a debugger stop requested by a pre_handler stops the machine at the same place and time', () => {
      const stopAt = (inline: boolean): string =>
        stopAtFibHit(rig({ arch, cpus: 2, engine: { kprobeBooster: false, optimization: false, hooks: inline ? undefined : trapOnly(arch) } }), 40);
      const a = stopAt(true);
      assert.match(a, /hits=40 /);
      assert.equal(a, stopAt(false));
    });
  });
}
