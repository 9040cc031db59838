/**
 * Frame variables against gdb (the reference a user compares with): vars.c
 * built by gcc and clang at -O0/-O2/-Os, run by the emulator as a user
 * program and stopped at the pcs where gdb-multiarch stopped it under
 * qemu-x86_64's gdbstub (breakpoints on walk, a line in its loop, mix, a line
 * in mix; goldens by test/fixtures/dwarf/gdb-locals.sh). At every stop the
 * arguments and the locals the debugger shows are gdb's `info args` / `info
 * locals`, name for name and value for value (`<optimized out>` where gdb
 * says so).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadElf } from '../../../emulator/elf/elfFile';
import { Machine } from '../../../emulator/machine';
import { cpuFrameState, frameVariables, memReader } from '../../../emulator/debug/variables';
import { repoPath } from '../../util/paths';

const DIR = repoPath('test', 'fixtures', 'dwarf');
const BUILDS = ['gcc-O0', 'gcc-O2', 'gcc-Os', 'clang-O0', 'clang-O2', 'clang-O2-dwarf4'];

/**
 * Where gdb's text is not what a debugger should show, and ours is kept:
 * clang's location for mix's `arr` at its entry describes only the first
 * 8 of its 24 bytes (DW_OP_reg5, DW_OP_piece 8); gdb 13 prints the bytes no
 * piece describes as `<synthetic pointer>` (a value made by
 * DW_OP_implicit_pointer, which this expression does not contain), we print
 * `<optimized out>`. Every other line must be gdb's.
 */
const KNOWN_DIFFERENCES: Record<string, { gdb: string; ours: string }> = {
  'clang-O2 3': { gdb: 'arr = {7, <synthetic pointer>, <synthetic pointer>}', ours: 'arr = {7, <optimized out>, <optimized out>}' },
  'clang-O2-dwarf4 3': { gdb: 'arr = {7, <synthetic pointer>, <synthetic pointer>}', ours: 'arr = {7, <optimized out>, <optimized out>}' },
};

interface Stop { pc: bigint; args: string[]; locals: string[] }

function goldenStops(build: string): Stop[] {
  const out: Stop[] = [];
  let cur: Stop | undefined, inLocals = false;
  for (const line of readFileSync(join(DIR, 'golden', `gdb-locals-vars-${build}.txt`), 'utf8').split('\n')) {
    const m = /^@stop (0x[0-9a-f]+)$/.exec(line);
    if (m) { cur = { pc: BigInt(m[1]), args: [], locals: [] }; out.push(cur); inLocals = false; continue; }
    if (line.startsWith('@stop')) { cur = undefined; continue; } // the program had exited
    if (line === '@locals') { inLocals = true; continue; }
    if (!cur || line === '' || line === 'No locals.' || line === 'No arguments.') continue;
    (inLocals ? cur.locals : cur.args).push(line);
  }
  return out;
}

describe('frame variables = gdb under qemu-user (goldens: test/fixtures/dwarf/gdb-locals.sh)', () => {
  for (const build of BUILDS) {
    test(`${build}: arguments and locals at each of gdb's stops`, () => {
      const stops = goldenStops(build);
      assert.ok(stops.length >= 4, `${stops.length} stops in the golden`);
      const path = join(DIR, `vars-${build}.elf`);
      const image = loadElf(path);
      const m = Machine.forUserProgram(image, [path], { stdout: () => {}, stderr: () => {} });
      const cpu = m.cpus[0];
      let steps = 0;
      for (const [i, stop] of stops.entries()) {
        // run to the stop's pc (at least one instruction past the previous stop: loops stop at the same pc again)
        do {
          const r = m.stepCpu(0, 1);
          assert.equal(r.kind, 'running', `stop ${i} (${build}): the program ended before reaching 0x${stop.pc.toString(16)}`);
          assert.ok(++steps < 100_000, 'runaway');
        } while (cpu.getPc() !== stop.pc);
        const v = frameVariables(image, cpuFrameState(image, m.arch, cpu), memReader(cpu));
        assert.ok(v.ok, v.ok ? '' : v.reason);
        const show = (xs: { name: string; value: string }[]): string[] => xs.map(x => `${x.name} = ${x.value}`).sort();
        assert.deepEqual(show(v.params), [...stop.args].sort(), `stop ${i} at 0x${stop.pc.toString(16)} (${build}): arguments`);
        const known = KNOWN_DIFFERENCES[`${build} ${i}`];
        const expected = stop.locals.map(l => (known && l === known.gdb ? known.ours : l));
        if (known) assert.ok(stop.locals.includes(known.gdb), `the golden still has gdb's ${known.gdb}`);
        assert.deepEqual(show(v.locals), expected.sort(), `stop ${i} at 0x${stop.pc.toString(16)} (${build}): locals`);
      }
    });
  }
});
