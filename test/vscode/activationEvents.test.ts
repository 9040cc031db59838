/**
 * package.json lists only the activation events VS Code does not generate
 * itself (a listed copy of a generated event is a warning): since 1.74 it
 * derives onLanguage (contributed languages with a configuration), onCommand
 * (contributed commands) and onView (contributed views) events from the
 * contributions, and reports listed copies as redundant. Debuggers get no
 * generated events.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { repoPath } from '../util/paths';

interface Manifest {
  activationEvents?: string[];
  contributes?: {
    languages?: { id?: string; configuration?: string }[];
    commands?: { command?: string }[];
    views?: Record<string, { id?: string }[]>;
    debuggers?: { type?: string }[];
  };
}

const manifest = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as Manifest;

/** the events VS Code 1.100's ImplicitActivationEvents generators derive from these contributions */
function generated(m: Manifest): string[] {
  const c = m.contributes ?? {};
  return [
    ...(c.languages ?? []).filter(l => l.id && l.configuration).map(l => `onLanguage:${l.id}`),
    ...(c.commands ?? []).filter(x => x.command).map(x => `onCommand:${x.command}`),
    ...Object.values(c.views ?? {}).flat().filter(v => v.id).map(v => `onView:${v.id}`),
  ];
}

test('package.json activationEvents: none that VS Code generates from the contributions', () => {
  const implicit = new Set(generated(manifest));
  assert.ok(implicit.has('onLanguage:kprobe'), 'the kprobe language (with a configuration) is contributed');
  const redundant = (manifest.activationEvents ?? []).filter(e => implicit.has(e));
  assert.deepEqual(redundant, []);
});

test('package.json activationEvents: the debugger and C-source events VS Code does not generate are kept', () => {
  const events = manifest.activationEvents ?? [];
  const type = manifest.contributes?.debuggers?.[0]?.type;
  assert.equal(type, 'kprobe');
  for (const e of [`onDebugResolve:${type}`, `onDebugDynamicConfigurations:${type}`, 'onLanguage:c']) assert.ok(events.includes(e), e);
});
