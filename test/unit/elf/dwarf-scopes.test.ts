/**
 * The DWARF readers below the debugger (emulator/elf/dwarf: scopes.ts,
 * typeDies.ts, ctype.ts) on an image alone, with no machine: the names in
 * scope at a function's entry with their C spellings and sizes, globals
 * and file statics by name, bitfield offsets, the inlined call a pc is in
 * (with the caller's call line, found in vars.c by its text), and the
 * program's types in the C type model. The values of these names are the
 * debugger's (debug/variables.ts: dwarf-variables, dwarf-locals-gdb).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadElf } from '../../../emulator/elf/elfFile';
import { DW_AT } from '../../../emulator/elf/dwarf/dies';
import { globalDie, inlineFrames, namesAt, refOf } from '../../../emulator/elf/dwarf/scopes';
import { bitfieldOffset, sizeOf, strip, typeText } from '../../../emulator/elf/dwarf/typeDies';
import { typeNamed } from '../../../emulator/elf/dwarf/ctype';
import { repoPath } from '../../util/paths';

const DIR = repoPath('test', 'fixtures', 'dwarf');
const BUILDS = ['gcc-O0', 'gcc-O2', 'gcc-Os', 'clang-O0', 'clang-O2', 'clang-O2-dwarf4'];
/** the line of vars.c where walk calls the always-inline square */
const SQUARE_CALL_LINE = readFileSync(join(DIR, 'vars.c'), 'utf8').split('\n').findIndex(l => l.includes('square(n->at.x)')) + 1;

describe('DWARF scopes, names and types without a machine (elf/dwarf)', () => {
  for (const build of BUILDS) {
    test(`${build}: walk's names at its entry, globals, bitfields, the inlined square, struct node`, () => {
      const image = loadElf(join(DIR, `vars-${build}.elf`));
      const walk = image.symbols.lookup('walk');
      assert.ok(walk, 'walk is a symbol of the image');

      const scope = namesAt(image, walk.value);
      assert.ok(scope, 'debug info covers walk');
      assert.equal(scope.function, 'walk');
      const di = scope.di;
      const n = scope.names.get('n'), limit = scope.names.get('limit');
      assert.equal(n?.kind, 'param');
      assert.equal(typeText(di, n?.type), 'struct node *');
      assert.equal(sizeOf(di, n?.type, 8), 8);
      assert.equal(limit?.kind, 'param');
      assert.equal(typeText(di, limit?.type), 'int');
      assert.equal(scope.names.get('total')?.kind, 'local');

      const hidden = globalDie(image, 'hidden');
      assert.ok(hidden, 'the file static hidden');
      assert.match(typeText(di, refOf(di, hidden.die, DW_AT.type)), /^long( int)?$/);
      assert.equal(globalDie(image, 'no_such_global'), undefined);

      const fl = globalDie(image, 'fl');
      const flags = strip(di, fl && refOf(di, fl.die, DW_AT.type));
      assert.ok(flags);
      assert.equal(typeText(di, flags), 'struct flags');
      // struct flags { unsigned a : 3; unsigned b : 5; signed c : 4; unsigned long d; }
      assert.deepEqual(flags.children.map(m => [di.name(m), bitfieldOffset(di, m, 4)]), [['a', 0], ['b', 3], ['c', 8], ['d', 64]]);

      // some pc of walk is in the inlined square (its entry too, when the inline-entry rule is off)
      let frames: ReturnType<typeof inlineFrames> = [];
      for (let pc = walk.value; pc < walk.value + walk.size && frames.length < 2; pc++) frames = inlineFrames(image, pc, false);
      assert.deepEqual(frames.map(f => [f.function, f.inlined]), [['square', true], ['walk', false]]);
      assert.equal(frames[1].call?.line, SQUARE_CALL_LINE);

      const node = typeNamed(image, 'struct', 'node');
      assert.equal(node?.kind, 'struct');
      if (node?.kind !== 'struct') return;
      assert.equal(node.size, 32);
      assert.deepEqual(node.members().map(m => [m.name, m.offset, m.type.kind]), [['next', 0, 'ptr'], ['name', 8, 'ptr'], ['at', 16, 'struct'], ['c', 24, 'int']]);
    });
  }
});
