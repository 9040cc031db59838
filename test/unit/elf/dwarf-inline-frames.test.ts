/**
 * Inlined frames against gdb (the reference a user compares with): vars.c's
 * always-inline `square`, called from walk (vars.c:37), built by gcc and
 * clang at -O0/-O2/-Os, run by the emulator as a user program and stopped
 * where gdb-multiarch stopped it under qemu-x86_64's gdbstub: at a line
 * breakpoint on square's line (vars.c:28), then instruction by instruction
 * (goldens by test/fixtures/dwarf/gdb-frames.sh). At every stop the frames
 * (each inlined call its own frame, with its function and line; its caller at
 * the call's line) are gdb's backtrace, and frames 0 and 1 have gdb's
 * arguments and locals — inside square only square's names, in walk walk's.
 * The inline-entry rule is gdb's: at an inlined call's first instruction a
 * line breakpoint stops in the inlined function, a step in the caller.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadElf } from '../../../emulator/elf/elfFile';
import { Machine } from '../../../emulator/machine';
import { FrameState, frameVariables, memReader, unwindStates } from '../../../emulator/debug/variables';
import { inlineFrames } from '../../../emulator/elf/dwarf/scopes';
import type { ElfImage } from '../../../emulator/elf/types';
import { repoPath } from '../../util/paths';

const DIR = repoPath('test', 'fixtures', 'dwarf');
const BUILDS = ['gcc-O0', 'gcc-O2', 'gcc-Os', 'clang-O0', 'clang-O2', 'clang-O2-dwarf4'];

interface GdbFrame { function: string; line: number }
interface Stop { kind: 'line' | 'step'; pc: bigint; bt: GdbFrame[]; frames: { args: string[]; locals: string[] }[] }

function goldenStops(build: string): Stop[] {
  const out: Stop[] = [];
  let cur: Stop | undefined, section: 'bt' | 'args' | 'locals' | undefined;
  for (const line of readFileSync(join(DIR, 'golden', `gdb-frames-vars-${build}.txt`), 'utf8').split('\n')) {
    const m = /^@stop (line|step) (0x[0-9a-f]+)$/.exec(line);
    if (m) { cur = { kind: m[1] as Stop['kind'], pc: BigInt(m[2]), bt: [], frames: [] }; out.push(cur); section = undefined; continue; }
    if (line.startsWith('@stop')) { cur = undefined; continue; } // the program had exited
    if (!cur) continue;
    if (line === '@bt') { section = 'bt'; continue; }
    if (/^@frame \d+$/.test(line)) { cur.frames.push({ args: [], locals: [] }); section = 'args'; continue; }
    if (line === '@locals') { section = 'locals'; continue; }
    if (line === '' || line === 'No locals.' || line === 'No arguments.' || line.startsWith('No symbol table')) continue;
    // stepi's chatter when the frame changes ("walk (n=..., limit=7) at vars.c:37"), before the next @stop
    if (section !== 'bt' && /^(0x[0-9a-f]+ in )?\w+ \(.*\) at \S+:\d+$/.test(line)) continue;
    if (section === 'bt') {
      const f = /^#\d+\s+(?:0x[0-9a-f]+ in )?(\w+) \(.*\) at \S+:(\d+)$/.exec(line);
      assert.ok(f, `a backtrace line gdb wrote: ${line}`);
      cur.bt.push({ function: f[1], line: Number(f[2]) });
    } else if (section) {
      cur.frames[cur.frames.length - 1][section].push(line);
    }
  }
  return out;
}

/** The frames the debugger shows: each physical frame's inlined calls first, with their lines and frame states. */
function shownFrames(image: ElfImage, m: Machine, skip0: boolean): { fn: GdbFrame; state: FrameState }[] {
  const cpu = m.cpus[0];
  const out: { fn: GdbFrame; state: FrameState }[] = [];
  for (const st of unwindStates(image, m.arch, cpu, 16)) {
    const skip = st.level === 0 ? skip0 : false;
    const fns = inlineFrames(image, st.pc, skip);
    // past _start (a return address of 0 / the stack's end) no function covers the pc: the walk ends, as gdb's
    if (!fns.length) { assert.ok(out.length > 0, `DWARF covers frame 0 at 0x${st.pc.toString(16)}`); break; }
    fns.forEach((f, d) => {
      const line = d === 0 ? image.lines!.lineForAddress(st.pc)!.line : f.call!.line;
      out.push({ fn: { function: f.function, line }, state: { ...st, inlineDepth: d, skipInlineEntry: skip } });
    });
  }
  return out;
}

describe('inlined frames = gdb under qemu-user (goldens: test/fixtures/dwarf/gdb-frames.sh)', () => {
  for (const build of BUILDS) {
    test(`${build}: backtrace with inlined calls, arguments and locals of frames 0 and 1 at each of gdb's stops`, () => {
      const stops = goldenStops(build);
      assert.ok(stops.length >= 6, `${stops.length} stops in the golden`);
      const path = join(DIR, `vars-${build}.elf`);
      const image = loadElf(path);
      const m = Machine.forUserProgram(image, [path], { stdout: () => {}, stderr: () => {} });
      const cpu = m.cpus[0];
      let steps = 0, inlined = 0;
      for (const [i, stop] of stops.entries()) {
        do {
          const r = m.stepCpu(0, 1);
          assert.equal(r.kind, 'running', `stop ${i} (${build}): the program ended before reaching 0x${stop.pc.toString(16)}`);
          assert.ok(++steps < 100_000, 'runaway');
        } while (cpu.getPc() !== stop.pc);
        const where = `stop ${i} (${stop.kind}) at 0x${stop.pc.toString(16)} (${build})`;
        const frames = shownFrames(image, m, stop.kind !== 'line');
        assert.deepEqual(frames.slice(0, stop.bt.length).map(f => f.fn), stop.bt, `${where}: backtrace`);
        if (stop.bt[0].function === 'square') inlined++;
        for (const [k, g] of stop.frames.entries()) {
          const v = frameVariables(image, frames[k].state, memReader(cpu));
          assert.ok(v.ok, v.ok ? '' : v.reason);
          assert.equal(v.function, stop.bt[k].function, `${where}: frame ${k}'s function`);
          const show = (xs: { name: string; value: string }[]): string[] => xs.map(x => `${x.name} = ${x.value}`).sort();
          assert.deepEqual(show(v.params), [...g.args].sort(), `${where}: frame ${k} arguments`);
          assert.deepEqual(show(v.locals), [...g.locals].sort(), `${where}: frame ${k} locals`);
        }
      }
      assert.ok(inlined > 0, `${build}: gdb stopped inside the inlined square at least once`);
    });
  }
});
