/**
 * The kprobes engine is made of parts that are handed their collaborators
 * (core.ts makes them): no part imports the engine to reach another part
 * through it. Only the engine's own front ends take the engine itself:
 * index.ts (its public surface), cApi.ts (the functions C modules call),
 * debugfs.ts and sysctl.ts (the files the front ends read and write).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { importEdges } from './importGraph';
import { repoRoot } from '../util/paths';

const ROOT = repoRoot();
const KPROBES = 'emulator/kprobes/';
const ENGINE = `${KPROBES}core.ts`;
/** files that take the engine as their API */
const FRONT_ENDS = new Set(['index.ts', 'cApi.ts', 'debugfs.ts', 'sysctl.ts'].map(f => KPROBES + f));

describe('kprobes engine of parts', () => {
  const edges = importEdges(ROOT, ['emulator']);

  test('no part of the engine imports core.ts (value or type): parts are handed narrow interfaces of each other', () => {
    const parts = new Set(edges.filter(e => e.from.startsWith(KPROBES)).map(e => e.from));
    assert.ok(parts.size > 20, `the kprobes folder was read (${parts.size} files)`);
    const bad = edges.filter(e => e.from.startsWith(KPROBES) && e.from !== ENGINE && !FRONT_ENDS.has(e.from) && e.to === ENGINE);
    assert.deepEqual(bad.map(e => `${e.from} -> ${e.spec}`), []);
  });

  test('uprobes/ and hwbp/ do not look up their arch hooks in the registry (the Machine hands them in)', () => {
    const bad = edges.filter(e => (e.from.startsWith('emulator/uprobes/') || e.from.startsWith('emulator/hwbp/')) && e.to === 'emulator/arch/registry.ts');
    assert.deepEqual(bad.map(e => `${e.from} -> ${e.spec}`), []);
  });
});
