/**
 * Frame variables from DWARF (emulator/debug/variables.ts, issue 14 part 2)
 * on the sample kernel of every arch with a CPU, stopped by kprobes:
 * - at do_fork's entry the six parameters have their C types and the values
 *   of the ABI argument registers (their location lists say so), the locals
 *   `err` / `pid` are `<optimized out>` (not live yet), never a wrong value;
 * - after copy_process() returned (fork.c `if (err)`), `err` is the value
 *   copy_process returned (recorded by a kretprobe), as an int;
 * - a pc no unit covers gives the reason, not an exception.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rig } from '../kprobes/harness';
import { PORTS } from '../../emulator/ports';
import { cpuFrameState, frameVariables, memReader, unwindStates, FrameVariables } from '../../emulator/debug/variables';
import { lineOf } from '../adapter/dapHarness';
import { repoPath } from '../util/paths';

const KPROBE_ARCHES = PORTS.filter(p => p.hasCpu).map(p => p.name);

describe('frame variables from DWARF', () => {
  for (const arch of KPROBE_ARCHES) {
    test(`${arch}: do_fork's parameters at its entry are the argument registers; locals not yet live are <optimized out>`, () => {
      const r = rig({ arch, cpus: 1 });
      const seen: { v: FrameVariables; args: bigint[] }[] = [];
      const abi = r.machine.arch.abi;
      r.engine.registerKprobe({
        addr: r.sym('do_fork'), pre_handler: (p, regs) => {
          if (seen.length < 4) {
            // the frame is at the probe address (the CPU's pc may be past the breakpoint instruction)
            seen.push({
              v: frameVariables(r.image, cpuFrameState(r.image, r.machine.arch, regs.cpu, p.addr as bigint), memReader(regs.cpu)),
              args: abi.argRegs.slice(0, 4).map(i => regs.cpu.getReg(i)),
            });
          }
          return 0;
        },
      });
      r.run();
      assert.equal(seen.length, 4);
      for (const { v, args } of seen) {
        assert.ok(v.ok, v.ok ? '' : v.reason);
        assert.equal(v.function, 'do_fork');
        assert.deepEqual(v.params.map(p => `${p.type} ${p.name}`), [
          'unsigned long clone_flags', 'unsigned long stack_start', 'struct pt_regs * regs', 'unsigned long stack_size', 'int * parent_tidptr', 'int * child_tidptr',
        ]);
        assert.equal(v.params[0].value, String(args[0]));
        assert.equal(v.params[1].value, String(args[1]));
        assert.equal(v.params[2].value, `0x${args[2].toString(16)}`);
        assert.equal(v.params[3].value, String(args[3]));
        assert.deepEqual(v.locals.map(l => [l.name, l.value]).sort(), [['err', '<optimized out>'], ['pid', '<optimized out>']]);
      }
    });
  }

  test('x86_64: after copy_process() returns, err is its return value', () => {
    const r = rig({ cpus: 1 });
    const line = lineOf(repoPath('examples', 'kernel', 'fork.c'), 'if (err)');
    const addrs = r.image.lines?.addressesForLine('fork.c', line) ?? [];
    assert.ok(addrs.length > 0, `code at fork.c:${line}`);
    let last: bigint | undefined;
    const errs: [string, bigint | undefined][] = [];
    r.engine.registerKretprobe({ kp: { symbol_name: 'copy_process' }, handler: (_ri, regs) => { last = regs.returnValue; return 0; } });
    r.engine.registerKprobe({
      addr: addrs[0], pre_handler: (p, regs) => {
        const v = frameVariables(r.image, cpuFrameState(r.image, r.machine.arch, regs.cpu, p.addr as bigint), memReader(regs.cpu));
        assert.ok(v.ok, v.ok ? '' : v.reason);
        errs.push([v.locals.find(l => l.name === 'err')?.value ?? 'missing', last]);
        return 0;
      },
    });
    r.run();
    assert.ok(errs.length > 5);
    for (const [shown, ret] of errs) assert.equal(shown, String(BigInt.asIntN(32, ret ?? -1n)));
  });

  test('x86_64: the caller of do_fork, unwound by the CFI: its function and variables, never an error value', () => {
    const r = rig({ cpus: 1 });
    let got: { fn: string; sym: string | undefined; values: string[] } | undefined;
    r.engine.registerKprobe({
      addr: r.sym('do_fork'), pre_handler: (p, regs) => {
        if (got) return 0;
        const states = unwindStates(r.image, r.machine.arch, regs.cpu, 2, p.addr as bigint);
        assert.equal(states.length, 2);
        const v = frameVariables(r.image, states[1], memReader(regs.cpu));
        assert.ok(v.ok, v.ok ? '' : v.reason);
        got = { fn: v.function, sym: r.image.symbols.resolve(states[1].pc)?.sym.name, values: [...v.params, ...v.locals].map(x => `${x.name}=${x.value}`) };
        return 0;
      },
    });
    r.run();
    assert.ok(got);
    assert.equal(got.fn, got.sym, 'the DWARF function is the symbol at the return address');
    assert.ok(got.values.length > 0);
    for (const x of got.values) assert.doesNotMatch(x, /=<error/);
  });

  test('a pc that no compile unit covers: the reason, no exception', () => {
    const r = rig({ cpus: 1 });
    const v = frameVariables(r.image, { pc: 0x1000n, regs: new Map() }, () => undefined);
    assert.equal(v.ok, false);
    assert.match(v.ok ? '' : v.reason, /^no debug info for 0x1000 \(no compile unit covers it\)$/);
  });
});
