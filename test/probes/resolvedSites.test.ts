/**
 * A breakpoint whose target the debugger's resolver has resolved already
 * (emulator/debug/resolver.ts) is registered at the sites it was given: the
 * probe manager does not resolve the target a second time. The proof gives
 * the sites of another line than the target's: the probe goes where the
 * sites say.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveTarget } from '../../emulator/probes';
import { marker, probeRig, sampleImage } from './helpers';

test('addBreakpoint with resolved sites registers at those sites (no second resolution of the target)', () => {
  const { mgr } = probeRig();
  const asked = marker('do_fork_body'), other = marker('sys_open_ok');
  const otherSites = resolveTarget(sampleImage(), { kind: 'line', ...other });
  const askedSites = resolveTarget(sampleImage(), { kind: 'line', ...asked });
  assert.ok(otherSites.ok && askedSites.ok);
  const given = mgr.addBreakpoint({ target: { kind: 'line', ...asked }, sites: otherSites.sites });
  assert.ok(given.verified, given.message);
  assert.deepEqual(given.sites.map(s => s.addr), otherSites.sites.map(s => s.resolved));
  // without sites the manager resolves the target itself
  const own = mgr.addBreakpoint({ target: { kind: 'line', ...asked } });
  assert.deepEqual(own.sites.map(s => s.addr), askedSites.sites.map(s => s.resolved));
  assert.notDeepEqual(own.sites.map(s => s.addr), given.sites.map(s => s.addr));
});
