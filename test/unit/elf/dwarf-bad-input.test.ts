/**
 * Bad DWARF (a debugger meets stripped, truncated and broken images):
 * truncated or inconsistent debug sections degrade to "no debug info for this
 * frame" with a reason, or a variable shown as `<error: ...>` — never a JS
 * exception, a hang, or a value made up.
 *
 * Targeted cases (each with the answer it must give): a bad abbreviation
 * code in the unit of the frame, a truncated .debug_info, a type reference
 * past the section, a cycle of type references, an unknown DW_OP in a
 * location. Then a seeded random mutation run (bytes flipped, sections cut
 * or zeroed in .debug_info / abbrev / str_offsets / addr / loclists /
 * rnglists / .debug_frame) over the six vars.c builds, at stops inside walk,
 * square (inlined) and mix: every query the debugger and the handler
 * compiler make (inline frames, frame variables at each depth, their
 * members, names in scope with their C types, globals) must return.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadElf } from '../../../emulator/elf/elfFile';
import type { ElfImage, ElfSection } from '../../../emulator/elf/types';
import { Machine } from '../../../emulator/machine';
import { debugInfoOf } from '../../../emulator/elf/dwarf/info';
import { DW_AT, RawValue } from '../../../emulator/elf/dwarf/dies';
import {
  FrameState, FrameVariable, childrenOf, frameVariables, globalVariable, memReader, unwindStates,
} from '../../../emulator/debug/variables';
import { dwarfCType } from '../../../emulator/elf/dwarf/ctype';
import { inlineFrames, namesAt } from '../../../emulator/elf/dwarf/scopes';
import { programNamesAt } from '../../../emulator/probes/programNames';
import { repoPath } from '../../util/paths';

const DIR = repoPath('test', 'fixtures', 'dwarf');
const BUILDS = ['gcc-O0', 'gcc-O2', 'gcc-Os', 'clang-O0', 'clang-O2', 'clang-O2-dwarf4'];
const FUZZED = ['.debug_info', '.debug_abbrev', '.debug_str_offsets', '.debug_addr', '.debug_loclists', '.debug_rnglists', '.debug_loc', '.debug_ranges', '.debug_frame'];

/** The image with some sections' bytes replaced (a fresh object: no reader cache is shared with the original). */
function withSections(image: ElfImage, replace: Record<string, Uint8Array>): ElfImage {
  const sections: ElfSection[] = image.sections.map(s => (replace[s.name] ? { ...s, data: replace[s.name], size: BigInt(replace[s.name].length) } : s));
  const byName = new Map(sections.map(s => [s.name, s] as const));
  return { ...image, sections, section: (n: string) => byName.get(n), lines: image.lines };
}

interface Run { image: ElfImage; m: Machine; states: FrameState[][] }

/** The program run to a few stops (in walk's loop, inside the inlined square, in mix); the machine left at the last. */
function runTo(build: string): Run {
  const path = join(DIR, `vars-${build}.elf`);
  const image = loadElf(path);
  const m = Machine.forUserProgram(image, [path], { stdout: () => {}, stderr: () => {} });
  const states: FrameState[][] = [];
  // every 5th instruction in walk (square inlined in it) and in mix, up to 8 stops
  const inFn = new Map<string, number>();
  for (let steps = 0; steps < 20_000 && states.length < 8; steps++) {
    if (m.stepCpu(0, 1).kind !== 'running') break;
    const pc = m.cpus[0].getPc();
    const fn = inlineFrames(image, pc)[0]?.function;
    if (fn !== 'walk' && fn !== 'square' && fn !== 'mix') continue;
    const n = (inFn.get(fn) ?? 0) + 1;
    inFn.set(fn, n);
    if (n % 5 === 1) states.push(unwindStates(image, m.arch, m.cpus[0], 4));
  }
  assert.ok(states.length >= 2, `${build}: stops reached`);
  return { image, m, states };
}

/** Every query the debugger makes at a stop, on an image; returns what it saw (thrown errors fail the test). */
function exercise(image: ElfImage, r: Run, budget = { n: 0 }): string[] {
  const cpu = r.m.cpus[0];
  const read = memReader(cpu);
  const seen: string[] = [];
  const expand = (v: FrameVariable, depth: number): void => {
    seen.push(`${v.name}: ${v.type} = ${v.value}`);
    if (!v.expand || depth > 2 || ++budget.n > 5000) return;
    for (const c of childrenOf(v.expand, read).slice(0, 8)) expand(c, depth + 1);
  };
  for (const frames of r.states) {
    // the unwinder over this image's .debug_frame too
    const walked = unwindStates(image, r.m.arch, cpu, 4, frames[0].pc);
    for (const st of [...frames, ...walked]) {
      const fns = inlineFrames(image, st.pc, st.level === 0);
      for (let d = 0; d < Math.max(1, fns.length); d++) {
        const v = frameVariables(image, { ...st, inlineDepth: d }, read);
        if (!v.ok) { assert.equal(typeof v.reason, 'string'); assert.ok(v.reason.length > 0); seen.push(`reason: ${v.reason}`); continue; }
        for (const x of [...v.params, ...v.locals]) expand(x, 0);
        const names = namesAt(image, st.pc, { inlineDepth: d });
        const lookup = programNamesAt(image, r.m.arch, st.pc, { inlineDepth: d });
        for (const n of names?.names.values() ?? []) {
          seen.push(`${n.name}: ${dwarfCType(image, n.type).kind}`);
          const b = lookup?.(n.name);
          if (b && 'type' in b) seen.push(`${n.name} bound`);
        }
      }
    }
  }
  for (const g of ['counter', 'hidden', 'greeting', 'origin', 'fl', 'w', 'table', 'first', 'second']) {
    const v = globalVariable(image, g, read, r.states[0][0].pc);
    if (v) expand(v, 0);
  }
  return seen;
}

/** A small deterministic PRNG (xorshift32), so every run mutates the same bytes. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 0x1_0000_0000; };
}

describe('bad DWARF degrades, never throws, hangs or makes a value up', () => {
  test('a bad abbreviation code in the frame\'s unit: "no debug info" with the reason; a truncated .debug_info likewise', () => {
    const r = runTo('clang-O2');
    const info = r.image.section('.debug_info')!.data;
    const di = debugInfoOf(r.image);
    const u = di.unitFor(r.states[0][0].pc)!;
    const bad = Uint8Array.from(info);
    bad[u.dieOffset] = 0x7f; // the unit's first DIE: an abbreviation code not in its table
    const img = withSections(r.image, { '.debug_info': bad });
    const v = frameVariables(img, r.states[0][0], memReader(r.m.cpus[0]));
    assert.equal(v.ok, false);
    assert.match(!v.ok ? v.reason : '', /abbreviation code 127/);
    assert.deepEqual(inlineFrames(img, r.states[0][0].pc), []);
    const cut = withSections(r.image, { '.debug_info': info.subarray(0, Math.floor(info.length / 2)) });
    const c = frameVariables(cut, r.states[0][0], memReader(r.m.cpus[0]));
    assert.equal(c.ok, false);
    assert.match(!c.ok ? c.reason : '', /runs past|no compile unit|cannot be read/);
  });

  test('a type reference past .debug_info, a cycle of type references, an unknown DW_OP: the variable says <error ...>, never a value', () => {
    const r = runTo('gcc-O0');
    const st = r.states[0][0];
    const read = memReader(r.m.cpus[0]);
    const good = frameVariables(r.image, st, read);
    assert.ok(good.ok);
    const names = [...good.params, ...good.locals].map(x => x.name);
    assert.ok(names.includes('limit') && names.includes('total'), names.join(' '));
    // the same image, its parsed DIEs altered as a broken file would have them
    const image = withSections(r.image, {});
    const di = debugInfoOf(image);
    const walk = di.units().flatMap(u => di.dies(u)).find(d => d.tag === 0x2e && di.name(d) === 'walk')!;
    const all = [walk, ...walk.children.flatMap(function kids(d): typeof d[] { return [d, ...d.children.flatMap(kids)]; })];
    const die = (n: string) => all.find(d => di.name(d) === n)!;
    const limit = die('limit'), total = die('total'), nParam = die('n');
    const infoLen = image.section('.debug_info')!.data.length;
    const set = (d: typeof limit, at: number, v: RawValue): void => { (d.attrs as Map<number, RawValue>).set(at, v); };
    set(limit, DW_AT.type, { kind: 'ref', offset: infoLen + 0x100 });
    // a pointer type whose pointee is itself (node *n -> a cycle)
    const ptr = di.ref(nParam, DW_AT.type)!;
    set(ptr, DW_AT.type, { kind: 'ref', offset: ptr.offset });
    set(total, DW_AT.location, { kind: 'block', value: Uint8Array.of(0xfe) }); // no such DW_OP
    const v = frameVariables(image, st, read);
    assert.ok(v.ok);
    const by = new Map([...v.params, ...v.locals].map(x => [x.name, x]));
    assert.match(by.get('limit')!.value, /^<error: /, `limit: ${by.get('limit')!.value}`);
    assert.match(by.get('total')!.value, /^<error: .*(DW_OP|opcode).*0xfe/i, `total: ${by.get('total')!.value}`);
    const n = by.get('n')!;
    assert.match(n.type, /\*/, 'a pointer');
    if (n.expand) childrenOf(n.expand, read); // expanding a pointer to itself ends
    // the handler compiler: a name whose type cannot be read, an opcode it does not know
    const lookup = programNamesAt(image, r.m.arch, st.pc)!;
    for (const name of ['limit', 'total', 'n']) {
      const b = lookup(name);
      assert.ok(b, name);
    }
    exercise(image, r);
  });

  test('seeded random mutations of the debug sections over six builds: every query returns', { timeout: 240_000 }, () => {
    let cases = 0, degraded = 0;
    for (const [bi, build] of BUILDS.entries()) {
      const r = runTo(build);
      const baseline = exercise(r.image, r);
      assert.ok(baseline.length > 10, `${build}: the intact image shows variables`);
      const rand = rng(0x5eed + bi);
      const present = FUZZED.filter(n => (r.image.section(n)?.data.length ?? 0) > 0);
      for (let i = 0; i < 100; i++) {
        const name = present[Math.floor(rand() * present.length)];
        const orig = r.image.section(name)!.data;
        let data = Uint8Array.from(orig);
        const kind = Math.floor(rand() * 3);
        if (kind === 0) { // flip a few bytes
          for (let k = 0, n = 1 + Math.floor(rand() * 8); k < n; k++) data[Math.floor(rand() * data.length)] = Math.floor(rand() * 256);
        } else if (kind === 1) { // cut the section short
          data = data.slice(0, Math.floor(rand() * data.length));
        } else { // zero a run of bytes
          const at = Math.floor(rand() * data.length);
          data.fill(0, at, at + 1 + Math.floor(rand() * 64));
        }
        const img = withSections(r.image, { [name]: data });
        let seen: string[];
        try {
          seen = exercise(img, r);
        } catch (e) {
          assert.fail(`${build}: ${name} mutated (${['flipped', 'cut', 'zeroed'][kind]}, case ${i}) threw: ${e instanceof Error ? e.stack : e}`);
        }
        cases++;
        if (seen.some(s => s.startsWith('reason: ') || s.includes('<error: '))) degraded++;
      }
    }
    assert.ok(cases === BUILDS.length * 100);
    assert.ok(degraded > 0, 'some mutations were noticed');
  });
});
