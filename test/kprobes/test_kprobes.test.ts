/**
 * Port of Linux lib/test_kprobes.c to the sample kernel: the kernel's own
 * self-test pass calls target(rand1), target2(rand1), recursed_target(rand1)
 * and stacktrace_driver() (examples/kernel/main.c), then worker threads call
 * them again with other values; the probes' handlers check what they see.
 * Every case runs on each architecture with kprobes (KPROBE_ARCHES); where
 * the pc, the return address or the frame record live comes from the port.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { insns, KPROBE_ARCHES, portInfo, returnAddressOnEntry, rig, selftestLines } from './harness';
import type { Kprobe, Kretprobe, KretprobeInstance, PtRegs } from '../../emulator/kprobes';
import { fixupStackTrace } from '../../emulator/kprobes';
import { kprobesArchFor } from '../../emulator/arch/registry';
import { mustVAddr } from '../../emulator/memory/address';
import { walkFrames } from '../../emulator/kernel/stack';

/**
 * The address `fn`'s call to `callee` returns to, seen by a probe on
 * `callee` in an unprobed run (the calls go through function pointers, and
 * riscv64 calls are auipc + jalr: no decoded call target to look for).
 */
function returnAddressOfCall(arch: string, fn: string, callee: string): bigint {
  const r = rig({ arch });
  let ret: bigint | undefined;
  const kp: Kprobe = {
    symbol_name: callee,
    pre_handler: (_p, regs) => {
      const a = returnAddressOnEntry(regs);
      if (ret === undefined && r.image.symbols.resolve(a)?.sym.name === fn) ret = a;
      return 0;
    },
  };
  assert.equal(r.engine.registerKprobe(kp), 0);
  r.run();
  assert.ok(ret !== undefined, `${fn} calls ${callee}`);
  return ret;
}

const DIV_FACTOR = 3n;
const RAND1 = 0x2545f491n; // the kernel's fixed rand1 (main.c kprobes_selftest)
/** calls of target()/target2() per run: 1 self-test + 4 workers x 24 iterations */
const TARGET_CALLS = 1 + 4 * 24;

for (const arch of KPROBE_ARCHES) describe(`lib/test_kprobes.c (${arch})`, () => {
  const port = portInfo(arch);
  test('test_kprobe: pre and post handlers on kprobe_target', () => {
    const r = rig({ arch });
    let handlerErrors = 0;
    let prehVal = 0n, posthVal = 0n;
    const seen: bigint[] = [];
    // the probed instruction: stepped (or simulated), execution goes on after it
    const first = insns(r, 'kprobe_target')[0];
    assert.equal(first.flow, 'none', `${first.mnemonic} does not branch`);
    const kp: Kprobe = {
      symbol_name: 'kprobe_target',
      pre_handler: (p, regs) => {
        // the pc as the breakpoint reports it (x86: after the int3; arm64, riscv: the probe address)
        if (regs.ip !== (p.addr as bigint) + BigInt(port.breakpointPcOffset)) handlerErrors++;
        const v = regs.arg(0) & 0xffffffffn;
        seen.push(v);
        prehVal = v / DIV_FACTOR;
        return 0;
      },
      post_handler: (_p, regs) => {
        if (prehVal !== (seen[seen.length - 1] as bigint) / DIV_FACTOR) handlerErrors++;
        // after the single-step execution continues at the next original instruction
        if (regs.ip !== r.sym('kprobe_target') + BigInt(first.length)) handlerErrors++;
        posthVal = prehVal + DIV_FACTOR;
      },
    };
    assert.equal(r.engine.registerKprobe(kp), 0);
    assert.equal(kp.addr, r.sym('kprobe_target'));
    const lines = r.run();
    assert.equal(handlerErrors, 0);
    assert.equal(seen[0], RAND1);
    assert.notEqual(prehVal, 0n);
    assert.notEqual(posthVal, 0n);
    assert.equal(kp.hits, TARGET_CALLS);
    assert.equal(kp.nmissed, 0);
    assert.ok(selftestLines(lines).includes(`selftest: kprobe_target(${RAND1}) = ${RAND1 / DIV_FACTOR}`));
    r.engine.unregisterKprobe(kp);
  });

  test('test_kprobes: two kprobes registered together', () => {
    const r = rig({ arch });
    let preh = 0, preh2 = 0, posth = 0, posth2 = 0;
    const kp: Kprobe = { symbol_name: 'kprobe_target', pre_handler: () => { preh++; return 0; }, post_handler: () => { posth++; } };
    const kp2: Kprobe = { symbol_name: 'kprobe_target2', pre_handler: () => { preh2++; return 0; }, post_handler: () => { posth2++; } };
    assert.equal(r.engine.registerKprobes([kp, kp2]), 0);
    const lines = r.run();
    assert.deepEqual([preh, posth, preh2, posth2], [TARGET_CALLS, TARGET_CALLS, TARGET_CALLS, TARGET_CALLS]);
    assert.ok(selftestLines(lines).includes(`selftest: kprobe_target2(${RAND1}) = ${RAND1 / DIV_FACTOR + 1n}`));
    r.engine.unregisterKprobes([kp, kp2]);
    assert.equal(r.engine.probes.listEntries().length, 0);
  });

  test('test_kretprobe: return value seen by the handler is value/3', () => {
    const r = rig({ arch });
    let handlerErrors = 0;
    let krphVal = 0n;
    let entries = 0, returns = 0;
    const rp: Kretprobe = {
      kp: { symbol_name: 'kprobe_target' },
      data_size: 8,
      entry_handler: (ri: KretprobeInstance, regs: PtRegs) => {
        entries++;
        regs.cpu.mem.write64(mustVAddr(ri.data), regs.arg(0) & 0xffffffffn);
        return 0;
      },
      handler: (ri: KretprobeInstance, regs: PtRegs) => {
        returns++;
        const arg = regs.cpu.mem.read64(mustVAddr(ri.data));
        const ret = regs.returnValue & 0xffffffffn;
        if (ret !== arg / DIV_FACTOR) handlerErrors++;
        if (returns === 1) krphVal = ret;
        return 0;
      },
    };
    assert.equal(r.engine.registerKretprobe(rp), 0);
    r.run();
    assert.equal(handlerErrors, 0);
    assert.equal(krphVal, RAND1 / DIV_FACTOR);
    assert.equal(entries, TARGET_CALLS);
    assert.equal(returns, TARGET_CALLS);
    assert.equal(rp.nmissed, 0);
    r.engine.unregisterKretprobe(rp);
  });

  test('test_kretprobes: two kretprobes', () => {
    const r = rig({ arch });
    const got: bigint[][] = [[], []];
    const mk = (name: string, i: number): Kretprobe => ({
      kp: { symbol_name: name },
      handler: (_ri, regs) => { got[i].push(regs.returnValue & 0xffffffffn); return 0; },
    });
    const rp = mk('kprobe_target', 0), rp2 = mk('kprobe_target2', 1);
    assert.equal(r.engine.registerKretprobes([rp, rp2]), 0);
    r.run();
    assert.equal(got[0].length, TARGET_CALLS);
    assert.equal(got[1].length, TARGET_CALLS);
    assert.equal(got[0][0], RAND1 / DIV_FACTOR);
    assert.equal(got[1][0], RAND1 / DIV_FACTOR + 1n);
    r.engine.unregisterKretprobes([rp, rp2]);
  });

  test('test_kprobe_missed: handlers calling the probed function count as missed', () => {
    const r = rig({ arch });
    const target = r.sym('kprobe_recursed_target');
    const nested: bigint[] = [];
    const kp: Kprobe = {
      symbol_name: 'kprobe_recursed_target',
      pre_handler: (_p, regs) => { nested.push(r.engine.nested.call(regs.cpu, target, [RAND1])); return 0; },
      post_handler: (_p, regs) => { nested.push(r.engine.nested.call(regs.cpu, target, [RAND1])); },
    };
    assert.equal(r.engine.registerKprobe(kp), 0);
    const lines = r.run();
    // recursed_target is called once by the self-test: one hit, two reentries
    assert.equal(kp.hits, 1);
    assert.equal(kp.nmissed, 2);
    assert.deepEqual(nested, [RAND1 / DIV_FACTOR, RAND1 / DIV_FACTOR]);
    assert.ok(selftestLines(lines).includes(`selftest: kprobe_recursed_target(${RAND1}) = ${RAND1 / DIV_FACTOR}`));
  });

  test('test_stacktrace_on_kretprobe: trampoline on the stack, fixed-up trace has the real return address', () => {
    const r = rig({ arch });
    const tramp = r.engine.kretprobes.trampoline;
    const driver = r.image.symbols.lookup('kprobe_stacktrace_driver');
    assert.ok(driver);
    let retvals: bigint[] = [];
    let rawTrace: bigint[] = [];
    let fixed: { addr: bigint; replaced: boolean }[] = [];
    const rp: Kretprobe = {
      kp: { symbol_name: 'kprobe_stacktrace_target' },
      handler: (_ri, regs) => { retvals.push(regs.returnValue); return 0; },
    };
    // while stacktrace_target's instance is live, walk the frame-pointer chain from internal_target
    const kp: Kprobe = {
      symbol_name: 'kprobe_stacktrace_internal_target',
      pre_handler: (_p, regs) => {
        if (rawTrace.length) return 0;
        const mem = regs.cpu.mem;
        const trace = [returnAddressOnEntry(regs)]; // our own return address (entry: on the stack or in the link register)
        // stacktrace_target's frame record, then the callers' (the port's frame-pointer layout)
        const rec = port.frameRecord;
        assert.ok(rec, `${arch} keeps frame records`);
        let fp = regs.cpu.getReg(port.abi.fpReg);
        for (let i = 0; i < 3 && fp !== 0n; i++) {
          trace.push(mem.read64(mustVAddr(fp + BigInt(rec.returnAddressOffset))));
          fp = mem.read64(mustVAddr(fp + BigInt(rec.savedFpOffset)));
        }
        rawTrace = trace;
        const task = r.machine.kernel.current(regs.cpu.id);
        fixed = fixupStackTrace(r.engine, task, trace, regs.cpu.id);
        return 0;
      },
    };
    assert.equal(r.engine.registerKretprobe(rp), 0);
    assert.equal(r.engine.registerKprobe(kp), 0);
    r.run();
    // __builtin_return_address(0) in the probed function saw the trampoline (documented limitation)
    assert.equal(retvals[0], tramp);
    assert.equal(rawTrace[1], tramp);
    assert.equal(fixed[1].replaced, true);
    assert.ok(fixed[1].addr > driver.value && fixed[1].addr < driver.value + driver.size, 'real return address is inside kprobe_stacktrace_driver');
    assert.equal(fixed[0].replaced, false);
    assert.equal(fixed[0].addr, rawTrace[0]);
  });

  // the kretprobe booster's trampoline exists where the arch has one (x86_64)
  const boosters = kprobesArchFor(arch)?.optprobes?.kretprobeBoostTrampoline ? [true, false] : [false];
  for (const booster of boosters) {
    test(`test_stacktrace_on_nested_kretprobe: from the inner return handler both trampoline entries become the real return addresses (${booster ? 'booster' : 'breakpoint'} trampoline)`, () => {
      const r = rig({ arch, engine: { kretprobeBooster: booster } });
      const kernel = r.machine.kernel;
      const ret0 = returnAddressOfCall(arch, 'kprobe_stacktrace_target', 'kprobe_stacktrace_internal_target');
      const ret1 = returnAddressOfCall(arch, 'kprobe_stacktrace_driver', 'kprobe_stacktrace_target');
      let raw: bigint[] = [];
      let fixed: { addr: bigint; raw: bigint; replaced: boolean }[] = [];
      let innerReturns = 0, outerReturns = 0;
      const rp: Kretprobe = { kp: { symbol_name: 'kprobe_stacktrace_target' }, handler: () => { outerReturns++; return 0; } };
      const rp2: Kretprobe = {
        kp: { symbol_name: 'kprobe_stacktrace_internal_target' },
        handler: (_ri, regs) => {
          innerReturns++;
          if (raw.length) return 0;
          // stack_trace_save() from the handler: a walk from its registers, then the kretprobe fix-up
          const task = kernel.current(regs.cpu.id);
          raw = walkFrames(kernel, regs.cpu, task);
          fixed = fixupStackTrace(r.engine, task, raw, regs.cpu.id, { fromPc: true });
          return 0;
        },
      };
      assert.equal(r.engine.registerKretprobe(rp), 0);
      assert.equal(r.engine.registerKretprobe(rp2), 0);
      const tramp = r.engine.kretprobes.trampoline;
      const lines = r.run();
      assert.ok(innerReturns > 0 && innerReturns === outerReturns, `every call returned through both (${innerReturns}/${outerReturns})`);
      assert.equal(rp.nmissed, 0);
      assert.equal(rp2.nmissed, 0);
      // the unfixed walk: the handler's pc and stacktrace_target's return slot are both the trampoline
      assert.equal(raw[0], tramp);
      assert.equal(raw[1], tramp);
      assert.deepEqual(fixed.slice(0, 2), [
        { addr: ret0, raw: tramp, replaced: true },
        { addr: ret1, raw: tramp, replaced: true },
      ]);
      assert.ok(fixed.length > 2, 'the walk goes on past the driver');
      for (const f of fixed.slice(2)) assert.equal(f.replaced, false);
      assert.ok(!fixed.some(f => f.addr === tramp), 'no trampoline left in the fixed trace');
      assert.ok(!lines.some(l => /kretprobe BUG|Oops/.test(l)));
    });
  }

  test('nested kretprobes on a recursive function (fib)', () => {
    const r = rig({ arch });
    const fib = (n: bigint): bigint => (n < 2n ? n : fib(n - 1n) + fib(n - 2n));
    let errors = 0, returns = 0;
    const rp: Kretprobe = {
      kp: { symbol_name: 'fib' },
      maxactive: 64,
      data_size: 8,
      entry_handler: (ri, regs) => { regs.cpu.mem.write64(mustVAddr(ri.data), regs.arg(0) & 0xffffffffn); return 0; },
      handler: (ri, regs) => {
        returns++;
        const n = regs.cpu.mem.read64(mustVAddr(ri.data));
        if (regs.returnValue !== fib(n)) errors++;
        return 0;
      },
    };
    assert.equal(r.engine.registerKretprobe(rp), 0);
    const lines = r.run();
    assert.equal(errors, 0);
    assert.equal(rp.nmissed, 0);
    assert.equal(returns, rp.kp.hits);
    assert.ok(returns >= 20, `fib(20) recurses at least 20 deep, saw ${returns} returns`);
    assert.ok(selftestLines(lines).includes('selftest: fib(20) = 6765'));
  });
});
