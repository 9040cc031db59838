/**
 * The block translator's run time and back end, architecture by
 * architecture independent: code patched under a running translated loop
 * takes effect at the next execution of the patched instruction; a store
 * into the running block; the budget (a block is entered only when the
 * instructions left cover it); the IR operations against a BigInt
 * reference; the code cache's invalidation figures.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { machine, getReg, setReg, hexBytes, CODE, DATA } from '../fixtures/x86/harness';
import { x86_64 } from '../../emulator/arch/x86_64/index';
import { translatorFor } from '../../emulator/jit';
import { JIT_HOT_ARRIVALS_LOCKSTEP, JIT_MIN_BUDGET } from '../../emulator/cpu/interp';
import type { FrontEnd } from '../../emulator/jit';
import { textPoke } from '../../emulator/memory/textPoke';
import { mustVAddr } from '../../emulator/memory/address';
import { Machine } from '../../emulator/machine';
import type { Jprobe, Kprobe, Kretprobe } from '../../emulator/kprobes';
import type { PtRegs } from '../../emulator/kprobes/ptRegs';
import { BENCH_TARGET, benchImage, checkBenchOutput } from '../fixtures/kernel/bench/hostTime';
import type { X86Cpu } from '../../emulator/arch/x86_64/cpu';
import { IrBuilder, BinOp, UnOp } from '../../emulator/jit/ir';
import { compileBlocks, ST_PC, STATE_BYTES, TLB_ENTRIES, TLB_WRITE } from '../../emulator/jit/backend';
import { guestBytes, guestMemory, arenaOffset } from '../../emulator/memory/guestRam';
import { Backing } from '../../emulator/memory/backing';
import { Memory, PERM_R, PERM_U, PERM_X, Region } from '../../emulator/memory/memory';
import { hitLogText, printkText } from './machineText';

// these loops run a few hundred times: translate after as few arrivals as lockstep does (the default waits for JIT_HOT_ARRIVALS)
const jitOn = () => { const t = translatorFor('x86_64', x86_64.jit as FrontEnd<unknown, never>, 'on'); if (t) t.hotArrivals = JIT_HOT_ARRIVALS_LOCKSTEP; return t; };

function withJit(code: string | Uint8Array, on: boolean): X86Cpu {
  const { cpu } = machine(code);
  (cpu as unknown as { jit: unknown }).jit = on ? jitOn() : null;
  return cpu;
}

function state(cpu: X86Cpu): string {
  const ctx = cpu.saveContext();
  return JSON.stringify({ lo: [...ctx.lo], hi: [...ctx.hi], rip: ctx.rip, rflags: ctx.rflags, instret: cpu.instret });
}

// loop: inc rax; cmp rax, 100; jne loop; then patch the loop's first 3 bytes with nops (two stores), inc rbx; jmp loop
const SMC = '48ffc0 4883f864 75f7 66c705eeffffff9090 c605e9ffffff90 48ffc3 ebe2';

describe('translator: code patched under translated code', () => {
  test('int3 poked into a running translated loop traps at its next execution', () => {
    const cpu = withJit('48ffc0 ebfb', true); // loop: inc rax; jmp loop
    const t = jitOn();
    assert.ok(t !== null, 'the translator is available');
    const before = t.stats.translatedInsns;
    const r1 = cpu.run(100000);
    assert.equal(r1.trap, null);
    assert.equal(r1.executed, 100000);
    assert.ok(t.stats.translatedInsns - before > 90000, 'the loop ran translated');
    assert.equal(getReg(cpu, 'rax'), 50000n);
    // a kprobe is registered while the CPU spins: the probed instruction's first byte becomes int3
    const inv = t.stats.invalidations;
    textPoke(cpu.mem, CODE, Uint8Array.of(0xcc));
    assert.ok(t.stats.invalidations > inv, 'the page\'s translation was dropped');
    const pcBefore = cpu.getPc();
    const r2 = cpu.run(100000);
    assert.equal(r2.trap?.kind, 'breakpoint');
    // the next execution of the patched instruction: at most the jmp before it ran
    assert.equal(r2.executed, pcBefore === BigInt(CODE) ? 1 : 2);
    assert.equal(r2.trap?.pc, BigInt(CODE) + 1n);
  });

  test('jumps between two pages stay in translated code (the chain table); a probe poked into the second page traps at its next execution', () => {
    // page 0: inc rax; jmp page1          page 1: inc rbx; jmp page0
    const code = new Uint8Array(0x1008);
    code.set(hexBytes('48ffc0 e9f80f0000'), 0);
    code.set(hexBytes('48ffc3 e9f8efffff'), 0x1000);
    const a = withJit(code, true), b = withJit(code, false);
    const t = jitOn() as NonNullable<ReturnType<typeof jitOn>>;
    const calls = t.stats.calls;
    for (let k = 0; k < 4; k++) {
      assert.deepEqual(a.run(50000), b.run(50000));
      assert.equal(state(a), state(b), `state after run ${k}`);
    }
    assert.equal(getReg(a, 'rax'), 50000n);
    // 50,000 page crossings: JavaScript called in a handful of times (the entries, and the first crossing of each jump)
    assert.ok(t.stats.calls - calls < 50, `${t.stats.calls - calls} calls into translated code for 50,000 crossings`);
    const inv = t.stats.invalidations;
    for (const cpu of [a, b]) textPoke(cpu.mem, CODE + 0x1000, Uint8Array.of(0xcc));
    assert.ok(t.stats.invalidations > inv, 'the second page\'s translation was dropped');
    const ra = a.run(50000), rb = b.run(50000);
    assert.deepEqual(ra, rb);
    assert.equal(ra.trap?.kind, 'breakpoint');
    assert.equal(ra.trap?.pc, BigInt(CODE + 0x1000) + 1n);
    assert.equal(state(a), state(b));
  });

  test('a loop whose body falls from one page into the next: the second page is translated at the same arrival as the first', () => {
    // L (6 bytes before page 1): inc rax; inc rax | page 1: inc rbx; dec rcx; jnz L
    const code = new Uint8Array(0x1010);
    const L = 0x1000 - 6;
    code.set(hexBytes('48ffc0 48ffc0'), L);
    code.set(hexBytes(`48ffc3 48ffc9 75${((L - (0x1000 + 8)) & 0xff).toString(16).padStart(2, '0')}`), 0x1000);
    const a = withJit(code, true), b = withJit(code, false);
    for (const cpu of [a, b]) { cpu.setPc(BigInt(CODE + L)); setReg(cpu, 'rcx', 1000000n); }
    const t = jitOn() as NonNullable<ReturnType<typeof jitOn>>;
    // a few iterations more than the arrivals that translate L: the fall into page 1 counted at each of them
    const warm = 5 * (JIT_HOT_ARRIVALS_LOCKSTEP + 4);
    assert.deepEqual(a.run(warm), b.run(warm));
    assert.equal(state(a), state(b));
    // from here every instruction of the loop runs translated: none is left to the interpreter
    const before = t.stats.translatedInsns;
    assert.deepEqual(a.run(500), b.run(500));
    assert.equal(state(a), state(b));
    assert.equal(t.stats.translatedInsns - before, 500, 'instructions of the next 100 iterations that ran translated');
  });

  test('a quantum too small for any block translates nothing and counts as the interpreter', () => {
    const a = withJit('48ffc0 48ffc3 ebf8', true), b = withJit('48ffc0 48ffc3 ebf8', false);
    const t = jitOn() as NonNullable<ReturnType<typeof jitOn>>;
    const n0 = t.stats.translations, e0 = t.stats.entries;
    for (let k = 0; k < 3000; k++) assert.deepEqual(a.run(JIT_MIN_BUDGET - 1), b.run(JIT_MIN_BUDGET - 1));
    assert.equal(state(a), state(b));
    assert.equal(t.stats.translations, n0);
    assert.equal(t.stats.entries, e0);
  });

  test('a store into the running block: same registers and counts as the interpreter at every boundary', () => {
    const a = withJit(SMC, true), b = withJit(SMC, false);
    const t = jitOn() as NonNullable<ReturnType<typeof jitOn>>;
    const inv = t.stats.invalidations;
    for (let k = 0; k < 40; k++) {
      const ra = a.run(777), rb = b.run(777);
      assert.deepEqual(ra, rb, `run ${k}`);
      assert.equal(state(a), state(b), `state after run ${k}`);
    }
    assert.equal(getReg(a, 'rax'), 100n);
    assert.ok(getReg(a, 'rbx') > 1000n);
    assert.ok(t.stats.invalidations > inv, 'the patched page was re-translated');
  });

  test('budgets that end inside a block: exact counts (a block is entered only when the budget covers it)', () => {
    const a = withJit('48ffc0 48ffc3 48ffc1 48ffc2 ebf2', true), b = withJit('48ffc0 48ffc3 48ffc1 48ffc2 ebf2', false);
    for (const n of [1, 2, 3, 5, 7, 11, 13, 1000, 3, 4999, 1, 2]) {
      assert.deepEqual(a.run(n), b.run(n));
      assert.equal(state(a), state(b));
    }
  });
});

describe('translator back end: IR operations against a BigInt reference', () => {
  const M64 = (1n << 64n) - 1n;
  const S = (v: bigint) => BigInt.asIntN(64, v);
  const U = (v: bigint) => BigInt.asUintN(64, v);
  const bin: Record<BinOp, (a: bigint, b: bigint) => bigint> = {
    add: (a, b) => a + b, sub: (a, b) => a - b, mul: (a, b) => a * b, and: (a, b) => a & b, or: (a, b) => a | b, xor: (a, b) => a ^ b,
    shl: (a, b) => U(a) << (U(b) & 63n), shru: (a, b) => U(a) >> (U(b) & 63n), shrs: (a, b) => S(a) >> (U(b) & 63n),
    rotl: (a, b) => { const n = U(b) & 63n; return (U(a) << n) | (U(a) >> ((64n - n) & 63n)); },
    rotr: (a, b) => { const n = U(b) & 63n; return (U(a) >> n) | (U(a) << ((64n - n) & 63n)); },
    eq: (a, b) => BigInt(U(a) === U(b)), ne: (a, b) => BigInt(U(a) !== U(b)), ltu: (a, b) => BigInt(U(a) < U(b)), lts: (a, b) => BigInt(S(a) < S(b)),
    leu: (a, b) => BigInt(U(a) <= U(b)), les: (a, b) => BigInt(S(a) <= S(b)), gtu: (a, b) => BigInt(U(a) > U(b)), gts: (a, b) => BigInt(S(a) > S(b)),
    geu: (a, b) => BigInt(U(a) >= U(b)), ges: (a, b) => BigInt(S(a) >= S(b)),
    mulhu: (a, b) => (U(a) * U(b)) >> 64n, mulhs: (a, b) => (S(a) * S(b)) >> 64n,
    divu: (a, b) => U(b) === 0n ? 0n : U(a) / U(b), remu: (a, b) => U(b) === 0n ? a : U(a) % U(b),
    divs: (a, b) => S(b) === 0n ? 0n : S(b) === -1n ? -S(a) : S(a) / S(b), rems: (a, b) => S(b) === 0n ? a : S(b) === -1n ? 0n : S(a) % S(b),
  };
  const un: Record<UnOp, (a: bigint) => bigint> = {
    eqz: a => BigInt(U(a) === 0n), popcnt: a => BigInt([...U(a).toString(2)].filter(c => c === '1').length),
    clz: a => BigInt(64 - (U(a) === 0n ? 0 : U(a).toString(2).length)),
    ctz: a => { let n = 0n; let v = U(a); if (v === 0n) return 64n; while ((v & 1n) === 0n) { v >>= 1n; n++; } return n; },
    sext8: a => BigInt.asIntN(8, a), sext16: a => BigInt.asIntN(16, a), sext32: a => BigInt.asIntN(32, a),
    zext8: a => a & 0xffn, zext16: a => a & 0xffffn, zext32: a => a & 0xffffffffn,
  };
  const values = [0n, 1n, 2n, 3n, 7n, 63n, 64n, 0x7fn, 0x80n, 0xffn, 0x8000n, 0x7fffffffn, 0x80000000n, 0xffffffffn, 0x100000000n,
    0x123456789abcdef0n, 0x7fffffffffffffffn, 0x8000000000000000n, M64, M64 - 1n, 0xfedcba9876543210n, 0x5555555555555555n];

  /** one block: each register slot i <- op(slot a, slot b) */
  function run(build: (b: IrBuilder<null>) => void, slots: number, regs: bigint[]): bigint[] {
    const b = new IrBuilder<null>(0x1000);
    b.begin(null, 0x1000, 0x1004);
    build(b);
    b.jmp(0x2000);
    const bytes = compileBlocks([{ start: 0x1000, ops: b.ops, temps: b.temps, count: 1, helperIndex: [-1], next: 0x1004 }], { slots, lockstep: false });
    const mem = guestMemory() as WebAssembly.Memory;
    const fail = () => { throw new Error('no import expected'); };
    const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), { k: { mem, fill: fail, helper: fail, logStore: fail } });
    const st = guestBytes(4096), rf = guestBytes(8 * slots);
    const dv = new DataView(rf.buffer, rf.byteOffset, rf.byteLength);
    regs.forEach((v, i) => { dv.setUint32(4 * i, Number(U(v) & 0xffffffffn), true); dv.setUint32(4 * (slots + i), Number(U(v) >> 32n), true); });
    const n = (inst.exports.run as (st: number, rf: number, e: number, b: number) => number)(arenaOffset(st), arenaOffset(rf), 0, 10);
    assert.equal(n, 1);
    assert.equal(new DataView(st.buffer, st.byteOffset).getBigInt64(ST_PC, true), 0x2000n);
    return regs.map((_, i) => (BigInt(dv.getUint32(4 * (slots + i), true)) << 32n) | BigInt(dv.getUint32(4 * i, true)));
  }

  for (const op of Object.keys(bin) as BinOp[]) {
    test(`bin ${op}`, () => {
      for (const a of values) {
        const regs = [a, ...values];
        const out = run(b => { const x = b.get(0); for (let i = 1; i < regs.length; i++) b.set(i, b.bin(op, x, b.get(i))); }, regs.length, regs);
        for (let i = 1; i < regs.length; i++) assert.equal(out[i], U(bin[op](a, values[i - 1])), `${op}(0x${U(a).toString(16)}, 0x${values[i - 1].toString(16)})`);
      }
    });
  }
  test('stm: consecutive 64-bit stores under one check, all of them in the part of a page the TLB maps, or none', () => {
    const slots = 3;
    const vals = [0x1111111122222222n, 0x3333333344444444n, 0x8555555566666666n];
    const page = guestBytes(4096);
    /** a block `stm [addr], r0 r1 r2; jmp 0x2000` with the page 0x5000 mapped at `page`'s bytes [0, hi) */
    function go(addr: number, hi: number): { n: number; pc: bigint; fills: number } {
      page.fill(0xee);
      const b = new IrBuilder<null>(0x1000);
      b.begin(null, 0x1000, 0x1004);
      b.stm(b.const(addr), [b.get(0), b.get(1), b.get(2)]);
      b.jmp(0x2000);
      const bytes = compileBlocks([{ start: 0x1000, ops: b.ops, temps: b.temps, count: 1, helperIndex: [-1], next: 0x1004 }], { slots, lockstep: false });
      let fills = 0;
      const fail = () => { throw new Error('no import expected'); };
      const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), { k: { mem: guestMemory() as WebAssembly.Memory, fill: () => { fills++; return 0; }, helper: fail, logStore: fail } });
      const st = guestBytes(STATE_BYTES), rf = guestBytes(8 * slots);
      const sv = new DataView(st.buffer, st.byteOffset, st.byteLength);
      const e = TLB_WRITE + ((5 & (TLB_ENTRIES - 1)) << 4);
      sv.setInt32(e, 5, true); sv.setInt32(e + 4, 0, true); sv.setInt32(e + 8, arenaOffset(page), true);
      sv.setUint16(e + 12, 0, true); sv.setUint16(e + 14, hi, true);
      const dv = new DataView(rf.buffer, rf.byteOffset, rf.byteLength);
      vals.forEach((v, i) => { dv.setUint32(4 * i, Number(v & 0xffffffffn), true); dv.setUint32(4 * (slots + i), Number(v >> 32n), true); });
      const n = (inst.exports.run as (st: number, rf: number, e: number, b: number) => number)(arenaOffset(st), arenaOffset(rf), 0, 10);
      return { n, pc: sv.getBigInt64(ST_PC, true), fills };
    }
    const untouched = (from: number, to: number): boolean => page.subarray(from, to).every(x => x === 0xee);
    // inside the mapped part: all three, in order, nothing around them
    assert.deepEqual(go(0x5f00, 4096), { n: 1, pc: 0x2000n, fills: 0 });
    const pv = new DataView(page.buffer, page.byteOffset, 4096);
    assert.deepEqual([0, 8, 16].map(o => pv.getBigUint64(0xf00 + o, true)), vals);
    assert.ok(untouched(0, 0xf00) && untouched(0xf18, 4096));
    // across the page's end: none, the block leaves before the instruction without asking the TLB
    assert.deepEqual(go(0x5ff0, 4096), { n: 0, pc: 0x1000n, fills: 0 });
    assert.ok(untouched(0, 4096));
    // past the part of the page the entry maps (a region ending inside the page): none; the TLB was asked and could not fill
    assert.deepEqual(go(0x5f00, 0xf10), { n: 0, pc: 0x1000n, fills: 1 });
    assert.ok(untouched(0, 4096));
  });

  test('unary ops and select', () => {
    for (const op of Object.keys(un) as UnOp[]) {
      const out = run(b => { values.forEach((_, i) => b.set(i, b.un(op, b.get(i)))); }, values.length, values);
      values.forEach((v, i) => assert.equal(out[i], U(un[op](v)), `${op}(0x${v.toString(16)})`));
    }
    const out = run(b => { const c = b.get(0); b.set(1, b.sel(c, b.get(1), b.get(2))); b.set(2, b.sel(b.const(0), b.get(1), b.get(3))); }, 4, [5n, 11n, 22n, 33n]);
    assert.deepEqual(out, [5n, 11n, 33n, 33n]);
  });
});

describe('translator: probe paths', () => {
  test("an optimized kprobe's detour runs inside translated code (its handler call is a helper, not a return to the run loop)", () => {
    const m = new Machine(benchImage(), { cpus: 1, translate: 'on' });
    const t = translatorFor('x86_64', x86_64.jit as FrontEnd<unknown, never>, 'on') as NonNullable<ReturnType<typeof jitOn>>;
    m.kprobes.setOptimization(1);
    let hits = 0;
    const kp: Kprobe = { symbol_name: BENCH_TARGET, pre_handler: () => { hits++; return 0; } };
    assert.equal(m.kprobes.registerKprobe(kp), 0);
    m.kprobes.waitForOptimizer();
    assert.ok(m.kprobes.optimizer.isOptimized(m.image.symbols.lookup(BENCH_TARGET)?.value ?? 0n), 'the probe is optimized');
    const calls = t.stats.calls;
    assert.equal(m.run().reason, 'poweroff');
    const calledIn = t.stats.calls - calls;
    assert.equal(hits, checkBenchOutput(m, 'bench.elf (o)'));
    assert.ok(hits >= 100000);
    assert.ok(calledIn < hits / 20, `${calledIn} calls into translated code for ${hits} hits`);
  });
});

describe('translator: native entries whose save translated code writes (x86 detour buffers, kretprobe booster)', () => {
  /** bench.elf with an optimized kprobe (o) or a boosted kretprobe (rb): every 997th handler's registers and the 168 bytes below its sp */
  function run(mode: 'o' | 'rb', translate: 'on' | 'off'): { seen: string[]; log: string; printk: string; instructions: number; presaved: number; native: number; fused: number } {
    const m = new Machine(benchImage(), { cpus: 1, translate });
    const e = m.kprobes;
    e.setOptimization(mode === 'o' ? 1 : 0);
    e.traps.kprobeBooster = mode === 'rb';
    e.kretprobes.setBoost(mode === 'rb');
    const mem = m.kernel.mem;
    const seen: string[] = [];
    let n = 0;
    const regs = (r: PtRegs): string => `t=${m.kernel.timeNs()} ${r.ip.toString(16)} ${r.flags.toString(16)} ${r.names().map(x => r.get(x).toString(16)).join(' ')} `
      + `below sp: ${Buffer.from(mem.readBytes(mustVAddr(r.sp - 168n), 168)).toString("hex")}`;
    const kp: Kprobe = { symbol_name: BENCH_TARGET, pre_handler: (_p, r) => { if (n++ % 997 === 0) seen.push(`pre ${regs(r)}`); return 0; } };
    const rp: Kretprobe = { kp: { symbol_name: BENCH_TARGET }, maxactive: 8, handler: (ri, r) => { if (n++ % 997 === 0) seen.push(`ret ${ri.ret_addr.toString(16)} ${regs(r)}`); return 0; } };
    if (mode === 'o') {
      assert.equal(e.registerKprobe(kp), 0);
      e.waitForOptimizer();
    } else assert.equal(e.registerKretprobe(rp), 0);
    const exit = m.run();
    assert.equal(exit.reason, 'poweroff', exit.detail);
    assert.equal(n, checkBenchOutput(m, `bench.elf (${mode}, translator ${translate})`));
    const st = e.stats;
    return {
      seen,
      log: hitLogText(m),
      printk: printkText(m),
      instructions: exit.instructions,
      presaved: mode === 'o' ? st.presavedOptFrames : st.presavedKretFrames,
      native: mode === 'o' ? st.nativeOptFrames : st.nativeKretFrames,
      fused: st.fusedNativeHits,
    };
  }
  for (const mode of ['o', 'rb'] as const) {
    test(`${mode}: the same handlers' registers and stack bytes, hit log, printk and instruction count as the interpreter`, () => {
      const on = run(mode, 'on'), off = run(mode, 'off');
      assert.equal(on.native, off.native);
      assert.ok(on.presaved > on.native * 0.9, `${on.presaved} of ${on.native} saves written by translated code`);
      assert.equal(off.presaved, 0);
      // each save translated code wrote is handled in one piece (save, handlers, restore), the interpreter's never
      assert.equal(on.fused, on.presaved);
      assert.equal(off.fused, 0);
      assert.ok(on.seen.length > 300);
      assert.deepEqual(on.seen, off.seen);
      assert.equal(on.log, off.log);
      assert.equal(on.printk, off.printk);
      assert.equal(on.instructions, off.instructions);
    });
  }
});

describe('translator: a probe\'s single-step inside translated code (x86 TF)', () => {
  type StepMode = 'k' | 'kpost' | 'r' | 'j';
  /** one run of bench.elf with a probe whose slot is single-stepped; everything a user can observe */
  function run(mode: StepMode, translate: 'on' | 'off', quantum?: number): { seen: string[]; hits: string; log: string; printk: string; instructions: number; calls: number; n: number; stepped: number } {
    const m = new Machine(benchImage(), { cpus: 1, translate, quantum });
    const t = translatorFor('x86_64', x86_64.jit as FrontEnd<unknown, never>, 'on') as NonNullable<ReturnType<typeof jitOn>>;
    // every hit single-steps the slot: no jump optimization, no boosters
    m.kprobes.setOptimization(0);
    m.kprobes.traps.kprobeBooster = false;
    m.kprobes.kretprobes.setBoost(false);
    const seen: string[] = [];
    let n = 0;
    // the virtual time, the registers
    const regs = (r: PtRegs): string => `t=${m.kernel.timeNs()} ${r.ip.toString(16)} ${r.flags.toString(16)} ${r.names().map(x => r.get(x).toString(16)).join(' ')}`;
    const kp: Kprobe = { symbol_name: BENCH_TARGET, pre_handler: (_p, r) => { if (n++ % 997 === 0) seen.push(`pre ${regs(r)}`); return 0; } };
    if (mode === 'kpost') kp.post_handler = (_p, r) => { if (n % 997 === 1) seen.push(`post ${regs(r)}`); };
    const rp: Kretprobe = { kp: { symbol_name: BENCH_TARGET }, maxactive: 8, handler: (ri, r) => { if (n++ % 997 === 0) seen.push(`ret ${ri.ret_addr.toString(16)} ${regs(r)}`); return 0; } };
    const jp: Jprobe = { kp: { symbol_name: BENCH_TARGET }, entry: (args, r) => { if (n++ % 997 === 0) seen.push(`j ${args.join(',')} ${regs(r)}`); } };
    if (mode === 'k' || mode === 'kpost') assert.equal(m.kprobes.registerKprobe(kp), 0);
    if (mode === 'r') assert.equal(m.kprobes.registerKretprobe(rp), 0);
    if (mode === 'j') assert.equal(m.kprobes.registerJprobe(jp), 0);
    const calls = t.stats.calls;
    const exit = m.run();
    assert.equal(exit.reason, 'poweroff', exit.detail);
    checkBenchOutput(m, `bench.elf (${mode}, translator ${translate})`);
    const probe = mode === 'r' ? rp.kp : mode === 'j' ? jp.kp : kp;
    return {
      seen, n,
      hits: `${probe.hits}/${probe.nmissed} ${rp.nmissed ?? ''}`,
      log: hitLogText(m),
      printk: printkText(m),
      instructions: exit.instructions,
      calls: t.stats.calls - calls,
      stepped: m.kprobes.stats.singleSteps,
    };
  }
  for (const mode of ['k', 'kpost', 'r', 'j'] as const) {
    test(`${mode}: the same hits, hit log, registers, printk and instruction count as the interpreter; the step stays in translated code`, () => {
      const off = run(mode, 'off');
      const on = run(mode, 'on');
      assert.ok(on.n >= 400000, `${on.n} handler calls`);
      assert.equal(on.hits, off.hits);
      assert.equal(on.instructions, off.instructions);
      assert.deepEqual(on.seen, off.seen);
      assert.equal(on.log, off.log);
      assert.equal(on.printk, off.printk);
      // one call into translated code per hit would be >= 400,000: the slot's step no longer leaves it
      assert.ok(on.stepped >= 400000, `${on.stepped} single-steps`);
      assert.equal(on.stepped, off.stepped);
      if (mode === 'k' || mode === 'kpost') assert.ok(on.calls < on.n / 20, `${on.calls} calls into translated code for ${on.n} hits`);
    });
  }
  test('k with quanta that end next to the step (the step runs in the helper only when the budget covers it): the same as the interpreter', () => {
    for (const q of [17, 18, 19, 23]) {
      const off = run('k', 'off', q);
      const on = run('k', 'on', q);
      assert.equal(on.instructions, off.instructions, `quantum ${q}`);
      assert.equal(on.log, off.log, `quantum ${q}`);
      assert.deepEqual(on.seen, off.seen, `quantum ${q}`);
    }
  });
});

describe('translator: an inline single-step inside a helper, at the CPU level', () => {
  // loop: inc rax; int3; jmp loop. The int3's inline handler does what a kprobe's does on x86: TF set,
  // pc = a slot holding `mov rcx, [rbx]`; the inline single-step handler resumes after the int3.
  const LOOP = '48ffc0 cc ebfa';
  const SLOT = CODE + 0x100;
  /** one run of the loop on a CPU with the translator on or off; `until` decides, per hit, what the next step does */
  function runLoop(on: boolean, budget: number, plan: (hit: number) => 'ok' | 'fault' | 'unclaimed'): { r: string; s: string } {
    const cpu = withJit(LOOP, on);
    cpu.mem.writeBytes(SLOT, hexBytes('488b0b'));
    setReg(cpu, 'rbx', BigInt(DATA));
    let hits = 0;
    let next: 'ok' | 'fault' | 'unclaimed' = 'ok';
    cpu.inlineBreakpoint = (c, at) => {
      if (at !== CODE + 3) return false;
      next = plan(++hits);
      if (next === 'fault') setReg(c, 'rbx', 0x1000n); // unmapped: the stepped instruction faults
      c.tf = true;
      c.pc = SLOT;
      return true;
    };
    cpu.inlineSingleStep = c => {
      if (next === 'unclaimed') return false; // the trap goes on (the task itself single-stepping)
      c.tf = false;
      c.pc = CODE + 4;
      return true;
    };
    const res = cpu.run(budget);
    return { r: JSON.stringify({ executed: res.executed, trap: res.trap ? { kind: res.trap.kind, pc: res.trap.pc.toString(16) } : null }), s: `${state(cpu)} hits=${hits}` };
  }
  type Plan = (hit: number) => 'ok' | 'fault' | 'unclaimed';
  const plans: [string, Plan][] = [
    ['a fault in the stepped instruction is the trap the interpreter reports', h => (h === 3000 ? 'fault' : 'ok')],
    ['a step the handler does not claim ends the run with the single-step trap, as in the interpreter', h => (h === 3000 ? 'unclaimed' : 'ok')],
    ['every step claimed: the same count and state at the budget\'s end', () => 'ok'],
  ];
  for (const [name, plan] of plans) {
    test(name, () => {
      for (const budget of [20000, 20001, 20002, 19999]) {
        const off = runLoop(false, budget, plan);
        const on = runLoop(true, budget, plan);
        assert.equal(on.r, off.r, `budget ${budget}`);
        assert.equal(on.s, off.s, `budget ${budget}`);
      }
    });
  }
  test('the translated runs did step inside the helper', () => {
    const t = jitOn() as NonNullable<ReturnType<typeof jitOn>>;
    const calls = t.stats.calls;
    const on = runLoop(true, 40000, () => 'ok');
    assert.ok(/hits=(\d+)/.exec(on.s) !== null);
    const hits = Number(/hits=(\d+)/.exec(on.s)?.[1]);
    assert.ok(hits > 9000, `${hits} hits`);
    assert.ok(t.stats.calls - calls < hits / 20, `${t.stats.calls - calls} calls into translated code for ${hits} hits`);
  });
});

/** collect garbage until finalizers have run */
async function settle(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  for (let i = 0; i < 3; i++) { gc(); await new Promise(r => setTimeout(r, 10)); }
}

let fileInode = 77n;
/**
 * A file's text (`code`: offset, bytes) mapped read-only at CODE by two
 * processes, one page more than the code (a page array is shared when the
 * mapping covers what its instructions can reach): their user-mode decode
 * caches share its pages, so the second runs the instructions (and the
 * modules) the first translated. The first runs 20000 instructions from
 * CODE, translating `pages` pages, then exits (its mapping goes) and is
 * collected; the second runs 20000 from CODE (translated instructions
 * c0 before it).
 */
async function handOver(path: string, code: [number, string][], pages: number): Promise<{ t: NonNullable<ReturnType<typeof jitOn>>; cpu: X86Cpu; n0: number; c0: number; second: Memory }> {
  const t = jitOn() as NonNullable<ReturnType<typeof jitOn>>;
  const size = (pages + 1) * 0x1000;
  const bytes = guestBytes(size);
  for (const [off, hex] of code) bytes.set(hexBytes(hex), off);
  const text = Backing.file(fileInode++, path, bytes);
  const process = (): Memory => {
    const mem = new Memory('process');
    mem.mapBacking(CODE, size, PERM_R | PERM_X | PERM_U, 'text', text, 0);
    return mem;
  };
  const { cpu } = machine('90');
  (cpu as unknown as { jit: unknown }).jit = t;
  cpu.userMode = true;
  let first: Memory | null = process();
  const gone = new WeakRef(first);
  cpu.mem = first;
  cpu.setPc(BigInt(CODE));
  const n0 = t.stats.translations;
  assert.equal(cpu.run(20000).executed, 20000);
  assert.equal(t.stats.translations - n0, pages, 'the first process translated the text');
  first.unmap(first.regionAt(CODE) as Region);
  first = null;
  const second = process();
  cpu.mem = second;
  cpu.setPc(BigInt(CODE));
  const c0 = t.stats.translatedInsns;
  assert.equal(cpu.run(20000).executed, 20000);
  await settle();
  assert.ok(gone.deref() === undefined, 'the first process is collected');
  return { t, cpu, n0, c0, second };
}

describe('translator: the function table', () => {
  test("a finished machine's modules leave the shared function table once its code is collected", async () => {
    const t = jitOn() as NonNullable<ReturnType<typeof jitOn>>;
    await settle();
    const inUse0 = t.tableInUse;
    // 40 machines, each translating its own loop (two pages: two modules)
    const code = new Uint8Array(0x1008);
    code.set(hexBytes('48ffc0 e9f80f0000'), 0);
    code.set(hexBytes('48ffc3 e9f8efffff'), 0x1000);
    const n0 = t.stats.translations;
    for (let k = 0; k < 40; k++) assert.equal(withJit(code, true).run(20000).executed, 20000);
    assert.ok(t.stats.translations - n0 >= 80, 'every machine translated its pages');
    await settle();
    assert.ok(t.tableInUse - inUse0 < 10, `${t.tableInUse - inUse0} table slots still in use after 40 finished machines`);
  });

  test('a module translated in one address space runs on in another that shares its page (a file\'s text) after the first is gone', async () => {
    // inc rax; jmp back
    const { t, cpu, n0, c0 } = await handOver('/bin/loop', [[0, '48ffc0 ebfb']], 1);
    const rax = getReg(cpu, 'rax');
    assert.equal(cpu.run(20000).executed, 20000);
    assert.equal(getReg(cpu, 'rax') - rax, 10000n, 'the loop ran on (half its instructions are inc rax)');
    assert.equal(t.stats.translations - n0, 1, 'with the first process\'s module: no new translation');
    assert.ok(t.stats.translatedInsns - c0 >= 39000, `translated instructions in the second process: ${t.stats.translatedInsns - c0}`);
  });

  test('a code write in a process running another (gone) process\'s modules drops them: the jump between them reaches the new code', async () => {
    // inc rax; jmp to the next page / inc rbx; jmp back: one module per page, the jumps between them through the chain table
    const { t, cpu, n0, second } = await handOver('/bin/pingpong', [[0, '48ffc0 e9f80f0000'], [0x1000, '48ffc3 e9f8efffff']], 2);
    assert.equal(t.stats.translations - n0, 2, 'the second process ran the first one\'s modules');
    // a breakpoint on the second page's first instruction (as a uprobe writes it): the next arrival there traps
    textPoke(second, CODE + 0x1000, Uint8Array.of(0xcc));
    const rbx = getReg(cpu, 'rbx');
    const r = cpu.run(20000);
    assert.equal(r.trap?.kind, 'breakpoint', `the run ends at the breakpoint (executed ${r.executed}, rbx +${getReg(cpu, 'rbx') - rbx})`);
    assert.ok(r.executed <= 4, `${r.executed} instructions before it`);
  });
});
