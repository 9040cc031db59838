/**
 * Frame variables from DWARF (emulator/debug/variables.ts: the Variables view)
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
import { rig } from '../../kprobes/harness';
import { PORTS } from '../../../emulator/ports';
import { childrenOf, cpuFrameState, frameVariables, globalVariable, memReader, unwindStates, FrameVariable, FrameVariables, MemReader } from '../../../emulator/debug/variables';
import { loadElf } from '../../../emulator/elf/elfFile';
import { readFileSync } from 'node:fs';
import { lineOf } from '../../adapter/dapHarness';
import { repoPath } from '../../util/paths';

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

describe('aggregate values from DWARF (struct / union / array / bitfield members)', () => {
  /** the image's initialized data as memory (vars.c is never run: its globals hold their initial values) */
  function imageMemory(image: ReturnType<typeof loadElf>): MemReader {
    return (addr, size) => {
      for (const s of image.segments) {
        if (s.type !== 1 || addr < s.vaddr || addr + BigInt(size) > s.vaddr + s.filesz) continue;
        const off = Number(addr - s.vaddr);
        return s.data.slice(off, off + size);
      }
      return undefined;
    };
  }
  for (const build of ['vars-gcc-O0', 'vars-gcc-O2', 'vars-clang-O0', 'vars-clang-O2', 'vars-clang-O2-dwarf4']) {
    test(`${build}: globals by value, members on demand`, () => {
      const image = loadElf(repoPath('test', 'fixtures', 'dwarf', `${build}.elf`));
      const mem = imageMemory(image);
      const g = (name: string): FrameVariable => {
        const v = globalVariable(image, name, mem);
        assert.ok(v, name);
        return v;
      };
      const kids = (v: FrameVariable): Map<string, FrameVariable> => {
        assert.ok(v.expand, `${v.name} expands`);
        return new Map(childrenOf(v.expand, mem).map(c => [c.name, c]));
      };
      assert.deepEqual([g('counter').type, g('counter').value], ['int', '7']);
      assert.match(g('greeting').value, /^0x[0-9a-f]+ "hello"$/);
      const fl = kids(g('fl'));
      assert.deepEqual([...fl].map(([n, c]) => `${n}=${c.value}`), ['a=5', 'b=17', 'c=-2', 'd=99']);
      const table = kids(g('table'));
      assert.equal(g('table').type, 'int [4][3]');
      assert.deepEqual([...kids(table.get('[1]') as FrameVariable)].map(([, c]) => c.value), ['4', '5', '6']);
      assert.deepEqual([...kids(table.get('[3]') as FrameVariable)].map(([, c]) => c.value), ['0', '0', '0']);
      const first = kids(g('first'));
      assert.match(first.get('name')?.value ?? '', /"first"$/);
      assert.equal(first.get('c')?.value, 'GREEN');
      assert.deepEqual([...kids(first.get('at') as FrameVariable)].map(([n, c]) => `${n}=${c.value}`), ['x=5', 'y=6']);
      // next points to `second`: expanding the pointer shows the struct it points to
      const second = kids(first.get('next') as FrameVariable);
      assert.match(second.get('name')?.value ?? '', /"second"$/);
      assert.equal(second.get('c')?.value, 'BLUE');
      assert.equal(second.get('next')?.value, '0x0');
      const w = kids(g('w'));
      assert.equal(w.get('all')?.value, String(0x1122334455667788n));
      assert.equal(kids(w.get('bytes') as FrameVariable).get('[0]')?.value, "136 '\\210'");
    });
  }
});

describe('values as gdb prints them (goldens from gdb-multiarch: test/fixtures/dwarf/gdb-goldens.sh)', () => {
  const dir = repoPath('test', 'fixtures', 'dwarf');
  for (const build of ['vars-gcc-O0', 'vars-gcc-O2', 'vars-gcc-Os', 'vars-clang-O0', 'vars-clang-O2', 'vars-clang-O2-dwarf4']) {
    test(`${build}: every global equals gdb's print`, () => {
      const image = loadElf(`${dir}/${build}.elf`);
      const mem: MemReader = (addr, size) => {
        for (const s of image.segments) {
          if (s.type !== 1 || addr < s.vaddr || addr + BigInt(size) > s.vaddr + s.filesz) continue;
          const off = Number(addr - s.vaddr);
          return s.data.slice(off, off + size);
        }
        return undefined;
      };
      const golden = readFileSync(`${dir}/golden/gdb-${build}.txt`, 'utf8').trim().split('\n');
      assert.equal(golden.length, 9);
      for (const line of golden) {
        const [name, value] = [line.slice(0, line.indexOf(' = ')), line.slice(line.indexOf(' = ') + 3)];
        assert.equal(globalVariable(image, name, mem)?.value, value, name);
      }
    });
  }
});
