/**
 * The aarch64 front end (emulator/arch/aarch64/jit.ts):
 *  - a hand-built loop of bl / ret / blr / br (ret through x30 and another
 *    register, blr x30 reading its target before the link write), loads,
 *    a load / store pair, run in lockstep (each exit of translated code
 *    compared with the interpreter: registers, NZCV, counts, memory) and
 *    equal to the interpreter alone, also when at one iteration a ret or
 *    blr goes to a non-canonical address (the same fault, x30 unchanged),
 *    a br to a misaligned one (the fetch there faults), a load's base is
 *    not canonical although base + offset is a mapped address (addrOf
 *    faults), a store pair crosses a page (into a read-only one: the
 *    interpreter's partial pair and fault);
 *  - representative conformance programs in lockstep: output and exit
 *    status equal to the interpreter's, with instructions run translated
 *    (npm test runs the whole differential suite under
 *    KPROBE_TRANSLATE=lockstep as well).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { repoPath } from '../util/paths';
import { existsSync } from 'node:fs';
import { assertLockstepMatches } from '../fixtures/jitLockstep';
import { a64Machine, setX, CODE, DATA } from '../fixtures/a64/harness';
import { aarch64 } from '../../emulator/arch/aarch64/index';
import { allTranslators, translatorFor } from '../../emulator/jit';
import type { FrontEnd } from '../../emulator/jit';
import { PERM_R, PERM_W } from '../../emulator/memory/memory';
import type { A64Cpu } from '../../emulator/arch/aarch64/cpu';

const BIN = 'test/conformance/bin/aarch64';
/** calls and returns (recursion), control flow at -O0, byte loops (strings), integer operations at -O2 */
const PROGRAMS = ['recursion-gcc-O2', 'control-clang-O0', 'strings-gcc-Os', 'intops-clang-O2'];

function translatedInsns(): number {
  return allTranslators().get('aarch64:lockstep')?.stats.translatedInsns ?? 0;
}

// encodings from aarch64-linux-gnu-as (CODE + offset in the comments)
const LOOP = [
  0xd2800000, // 00 start: mov x0, #0
  0x91000400, // 04 loop:  add x0, x0, #1
  0x94000015, // 08        bl f
  0x1000031e, // 0c        adr x30, g
  0xeb0e001f, // 10        cmp x0, x14
  0x9a9e009e, // 14        csel x30, x4, x30, eq   (x14: the iteration whose blr goes to x4)
  0xd63f03c0, // 18        blr x30
  0x100000a3, // 1c        adr x3, h
  0xeb0f001f, // 20        cmp x0, x15
  0x9a830083, // 24        csel x3, x4, x3, eq     (x15: the iteration whose br goes to x4)
  0xd61f0060, // 28        br x3
  0x00000000, // 2c        udf #0
  0xeb06001f, // 30 h:     cmp x0, x6
  0x9a870187, // 34        csel x7, x12, x7, eq    (x6: the iteration whose load base is x12)
  0xf85e00e8, // 38        ldur x8, [x7, #-32]
  0xeb10001f, // 3c        cmp x0, x16
  0x9a890229, // 40        csel x9, x17, x9, eq    (x16: from this iteration the pair is at x17)
  0xa9000520, // 44        stp x0, x1, [x9]
  0xa9402d2a, // 48        ldp x10, x11, [x9]
  0x8b0a0108, // 4c        add x8, x8, x10
  0xf104b01f, // 50        cmp x0, #300
  0x54fffd81, // 54        b.ne loop
  0x14000000, // 58 done:  b done
  0x91000421, // 5c f:     add x1, x1, #1
  0xeb05001f, // 60        cmp x0, x5
  0x9a9e009e, // 64        csel x30, x4, x30, eq   (x5: the iteration whose ret goes to x4)
  0xd65f03c0, // 68        ret
  0x91000821, // 6c g:     add x1, x1, #2
  0xaa1e03ed, // 70        mov x13, x30
  0xd65f01a0, // 74        ret x13
];
/** a writable page followed by a read-only one (a pair across them: the first store is made, the second faults) */
const RW = 0x700000, RO = 0x701000;
/** mapped just below the top of the lower canonical half (a non-canonical base minus an offset lands here) */
const TOP = 0x7fffffff0000;
const NONCANON = 0x0001000000000000n;

function loopCpu(regs: Record<string, bigint>, on: boolean): A64Cpu {
  const { mem, cpu } = a64Machine(LOOP);
  mem.map(RW, 0x1000, PERM_R | PERM_W, 'rw');
  mem.map(RO, 0x1000, PERM_R, 'ro');
  mem.map(TOP, 0x10000, PERM_R | PERM_W, 'top');
  const base: Record<string, bigint> = {
    x4: NONCANON, x5: 0n, x6: 0n, x7: BigInt(DATA + 0x120), x9: BigInt(DATA + 0x800),
    x12: 0x800000000010n, x14: 0n, x15: 0n, x16: 0n, x17: BigInt(RW + 0xff8),
  };
  for (const [k, v] of Object.entries({ ...base, ...regs })) setX(cpu, k, v);
  (cpu as unknown as { jit: unknown }).jit = on ? translatorFor('aarch64', aarch64.jit as FrontEnd<unknown, never>, 'lockstep') : null;
  return cpu;
}

function state(cpu: A64Cpu): string {
  const ctx = cpu.saveContext();
  const mem = [DATA + 0x800, DATA + 0xff8, RW + 0xff8, TOP + 0xfff0].map(a => [...cpu.mem.readBytes(a, 16)]);
  return JSON.stringify({ lo: [...ctx.lo], hi: [...ctx.hi], pc: ctx.pc, pstate: ctx.pstate, instret: cpu.instret, mem });
}

describe('aarch64 front end: calls, returns and indirect branches in lockstep', () => {
  const cases: [string, Record<string, bigint>][] = [
    ['no fault', {}],
    ['ret to a non-canonical address', { x5: 150n }],
    ['blr x30 to a non-canonical address (x30 not written)', { x14: 150n }],
    ['br to a non-canonical address', { x15: 150n }],
    ['br to a misaligned address (the fetch faults)', { x15: 150n, x4: BigInt(CODE + 0x32) }],
    ['ret to a misaligned address', { x5: 150n, x4: BigInt(CODE + 0x5e) }],
    ['load through a non-canonical base (base + offset mapped)', { x6: 150n }],
    ['store pair across a page from a hot block', { x16: 150n, x17: BigInt(DATA + 0xff8) }],
    ['store pair across a page into a read-only one', { x16: 150n }],
  ];
  for (const [name, regs] of cases) {
    test(name, () => {
      const a = loopCpu(regs, true), b = loopCpu(regs, false);
      const before = translatedInsns();
      const budget = 4000;
      // several runs: each one re-enters translated code at a different point
      for (let k = 0; k < 5; k++) {
        const ra = a.run(budget), rb = b.run(budget);
        assert.deepEqual(ra, rb, `run ${k}`);
        assert.equal(state(a), state(b), `state after run ${k}`);
        if (ra.trap !== null) break;
      }
      assert.ok(translatedInsns() - before > 1000, 'the loop ran translated');
      const faults = name !== 'no fault' && name !== 'store pair across a page from a hot block';
      assert.equal(a.getPc() !== BigInt(CODE + 0x58), faults, 'the run ended where expected');
    });
  }
});

describe('aarch64 front end: conformance programs in lockstep against the interpreter', () => {
  for (const name of PROGRAMS) {
    test(name, () => {
      const path = `${BIN}/${name}.elf`;
      assert.ok(existsSync(repoPath(path)), `${path} exists`);
      assertLockstepMatches('aarch64', path);
    });
  }
});
