/**
 * The debugger's one run driver (emulator/debug/runControl.ts) with a
 * hand-cranked defer: continue runs in chunks until the machine ends, pause
 * ends a job at the next chunk boundary, cancel drops it without an end,
 * a step job ends with 'stepped', and a breakpoint stop ends a continue.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../../emulator/machine';
import { RunController, RunEnd } from '../../../emulator/debug/runControl';
import { Stepper } from '../../../emulator/debug/stepper';
import { whereOf } from '../../../emulator/probes';
import { sampleImage } from '../../kprobes/harness';
import { probesOf } from '../../../emulator/probes/attach';

function rig(opts: { maxInstructions?: number } = {}): { m: Machine; rc: RunController; ends: RunEnd[]; crank(): boolean } {
  const m = new Machine(sampleImage(), { cpus: 2, maxInstructions: opts.maxInstructions ?? 0 });
  const queue: (() => void)[] = [];
  const ends: RunEnd[] = [];
  const rc = new RunController(m, e => ends.push(e), fn => {
    let live = true;
    queue.push(() => { if (live) fn(); });
    return () => { live = false; };
  });
  return { m, rc, ends, crank: () => { const f = queue.shift(); f?.(); return f !== undefined; } };
}

describe('RunController', () => {
  test('continue runs in chunks on the deferred queue until the machine powers off', () => {
    const r = rig();
    r.rc.resume();
    assert.equal(r.rc.running, true);
    assert.equal(r.ends.length, 0, 'nothing runs before the first deferred turn');
    let turns = 0;
    while (r.crank()) turns++;
    assert.ok(turns > 1, `ran in ${turns} turns`);
    assert.equal(r.ends.length, 1);
    assert.equal(r.ends[0].kind, 'exited');
    assert.equal(r.rc.running, false);
  });

  test('pause ends a continue at the next chunk boundary; cancel drops a job without an end', () => {
    const r = rig();
    r.rc.resume();
    r.crank();
    r.rc.pause();
    r.crank();
    assert.deepEqual(r.ends, [{ kind: 'paused', description: 'Paused' }]);
    r.rc.resume();
    r.rc.cancel();
    assert.equal(r.crank(), true, 'the cancelled turn is still queued');
    assert.equal(r.ends.length, 1, 'but it ends nothing');
    assert.equal(r.rc.running, false);
  });

  test('a one-instruction step ends at once with stepped; the instruction limit ends a continue', () => {
    const r = rig({ maxInstructions: 50_000 });
    const pc = r.m.cpus[0].getPc();
    const st = new Stepper(r.m, 0, 'instruction', { pc, readCode: (a, n) => r.m.kernel.mem.readBytes(Number(BigInt.asIntN(64, a)), n), where: a => whereOf(r.m.image, a) });
    r.rc.step(st);
    assert.deepEqual(r.ends, [{ kind: 'stepped', cpu: 0, step: 'instruction', description: 'Stepped one instruction', budget: false }]);
    r.rc.resume();
    while (r.crank());
    assert.equal(r.ends[1].kind, 'limit');
  });

  test('a breakpoint stop ends a continue with the stop request', () => {
    const r = rig();
    const e = probesOf(r.m).addBreakpoint({ target: 'do_fork' });
    assert.ok(e.verified, e.message);
    r.rc.resume();
    while (r.ends.length === 0 && r.crank());
    const end = r.ends[0];
    assert.equal(end.kind, 'stopped');
    if (end.kind === 'stopped') assert.equal(end.request.reason, 'breakpoint');
  });
});
