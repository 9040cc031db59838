/**
 * The debug facade is the adapter's one door: every value import of
 * emulator/ from adapter/ is emulator/debug/index.ts (type-only imports may
 * name any emulator file), and the DebugTarget interface file holds types
 * only. The rule is checked on the repository's import graph, and shown to
 * catch a wrong import on a graph that has one.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { repoRoot } from '../util/paths';
import { importEdges, importsOf } from '../structure/importGraph';
import type { ImportEdge } from '../structure/importGraph';
import * as path from 'node:path';

const DOOR = 'emulator/debug/index.ts';

/** adapter -> emulator value imports that do not go through the door. */
function doorViolations(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter(e => e.from.startsWith('adapter/') && e.to.startsWith('emulator/') && !e.typeOnly && e.to !== DOOR)
    .map(e => `${e.from} -> ${e.to}`);
}

describe('the adapter\'s one door into the emulator', () => {
  const root = repoRoot();
  const edges = importEdges(root, ['adapter', 'emulator']);

  test('adapter/ value-imports emulator/ only through emulator/debug/index.ts', () => {
    assert.ok(edges.some(e => e.from.startsWith('adapter/') && e.to === DOOR), 'the adapter goes through the door');
    assert.deepEqual(doorViolations(edges), []);
  });

  test('a value import past the door is caught', () => {
    const wrong: ImportEdge = { ...edges.find(e => e.from.startsWith('adapter/') && e.to === DOOR) as ImportEdge, to: 'emulator/machine.ts', typeOnly: false };
    assert.deepEqual(doorViolations([...edges, wrong]), [`${wrong.from} -> emulator/machine.ts`]);
    assert.deepEqual(doorViolations([...edges, { ...wrong, typeOnly: true }]), [], 'a type-only import is allowed');
  });

  test('the DebugTarget interface file holds types only', () => {
    const imports = importsOf(path.join(root, 'emulator', 'debug', 'target.ts'));
    assert.ok(imports.length > 0);
    assert.deepEqual(imports.filter(i => !i.typeOnly).map(i => i.spec), []);
  });
});
