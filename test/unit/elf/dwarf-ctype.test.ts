/**
 * The program's DWARF types in handler-language expressions, on vars.c
 * (every kind of variable; six gcc / clang builds): globals by value,
 * members of nested structs, 2-D arrays, pointer chains, unions, bitfields
 * (signed and unsigned), enums and their enumerators, sizeof of the
 * program's types, casts to them, typedef names. The values are those of
 * vars.c's initializers, read from the program's memory.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadElf } from '../../../emulator/elf/elfFile';
import { Machine } from '../../../emulator/machine';
import { evaluateExpression, formatValue } from '../../../emulator/handlers';
import { programGlobals, programTypes } from '../../../emulator/probes/programNames';
import { FakeEnv } from '../../handlers/fakeEnv';
import { repoPath } from '../../util/paths';

const DIR = repoPath('test', 'fixtures', 'dwarf');
const BUILDS = ['gcc-O0', 'gcc-O2', 'gcc-Os', 'clang-O0', 'clang-O2', 'clang-O2-dwarf4'];

describe('C expressions over the program\'s DWARF types (vars.c)', () => {
  for (const build of BUILDS) {
    test(`${build}`, () => {
      const path = join(DIR, `vars-${build}.elf`);
      const image = loadElf(path);
      const m = Machine.forUserProgram(image, [path], { stdout: () => {}, stderr: () => {} });
      m.stepCpu(0, 1); // the program's address space is the CPU's once it runs
      class ProgramEnv extends FakeEnv {
        override readMem(addr: bigint, size: 1 | 2 | 4 | 8): bigint {
          const b = m.cpus[0].mem.readBytes(Number(addr), size);
          return b.reduceRight((v, x) => (v << 8n) | BigInt(x), 0n);
        }
      }
      const env = new ProgramEnv();
      const opts = { regNames: ['ip'], programName: programGlobals(image), programType: programTypes(image), charSigned: true };
      const ev = (e: string): string => {
        const r = evaluateExpression(e, env, opts);
        assert.ok(r.ok, `${e}: ${r.ok ? '' : r.message}`);
        return formatValue(r.value, () => undefined);
      };
      const dec = (e: string): bigint => BigInt(ev(e).replace(/^0x[0-9a-f]+ \((-?\d+)\)$/, '$1').replace(/^(-?\d+) '.*'$/, '$1'));
      assert.equal(dec('counter'), 7n);
      assert.equal(dec('origin.x + origin.y'), 3n);
      assert.equal(dec('first.next->at.y'), 4n);
      assert.equal(dec('first.next->next == 0'), 1n);
      assert.equal(dec('table[1][2]'), 6n);
      assert.equal(dec('sizeof(table)'), 48n);
      assert.equal(dec('sizeof(table[0])'), 12n);
      assert.equal(dec('sizeof(struct node)'), 32n);
      assert.equal(dec('sizeof(union word)'), 8n);
      assert.equal(ev('w.bytes[0]'), "136 '\\210'", 'an unsigned char as gdb prints it');
      assert.equal(dec('w.all == 0x1122334455667788'), 1n);
      assert.equal(dec('fl.a'), 5n);
      assert.equal(dec('fl.b'), 17n);
      assert.equal(dec('fl.c'), -2n, 'a signed bitfield is sign-extended');
      assert.equal(dec('fl.d'), 99n);
      assert.equal(ev('second.c'), 'BLUE');
      assert.equal(ev('first.c'), 'GREEN');
      assert.equal(dec('first.c == GREEN'), 1n, 'enumerators are constants');
      assert.equal(dec('(int)BLUE'), 6n);
      assert.equal(ev('BLUE'), 'BLUE');
      assert.equal(ev('*greeting'), "104 'h'");
      assert.equal(dec('((struct node *)&second)->at.x'), 3n);
      assert.equal(dec('(u64)sizeof(op_fn)'), 8n, 'a typedef of the program');
      assert.equal(dec('&table[1][0] - &table[0][0]'), 3n);
      // what cannot be: clear errors
      const bad = (e: string, re: RegExp): void => { const r = evaluateExpression(e, env, opts); assert.ok(!r.ok && re.test(r.message), `${e}: ${r.ok ? 'ok' : r.message}`); };
      assert.match(ev('origin'), /^\{\.\.\.\} @ 0x[0-9a-f]+$/, 'a whole struct is its address (the debugger expands it)');
      bad('origin + 1', /'struct point' is not a value here; use one of its members \(\.x\) or its address \(&\)/);
      bad('origin.z', /struct point has no member 'z' \(members: x, y\)/);
      bad('(struct point)counter', /cannot cast to 'struct point'/);
      bad('sizeof(struct nosuch)', /unknown type 'struct nosuch'/);
      bad('fl.a = 1', /read-only|bit-field/);
    });
  }
});
