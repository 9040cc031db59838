/**
 * The time-travel recorder is composed above the machine: recordMachine
 * attaches it (the machine's runSlice / stepCpu then go through it), one
 * per machine; timeTravelOf finds it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../emulator/machine';
import { recordMachine, timeTravelOf } from '../../emulator/timetravel/recorder';
import { sampleImage } from '../probes/helpers';

describe('timetravel: the recorder attaches itself to a machine', () => {
  test('recordMachine attaches one recorder; timeTravelOf finds it; a second call gives the same one', () => {
    const m = new Machine(sampleImage(), { cpus: 1 });
    assert.equal(timeTravelOf(m), null);
    assert.equal(m.recorder, null);
    const tt = recordMachine(m, { interval: 1000, captureRatio: 0 });
    assert.equal(m.recorder, tt);
    assert.equal(timeTravelOf(m), tt);
    assert.equal(recordMachine(m), tt);
    assert.equal(tt.interval, 1000, 'the first call\'s options stay');
  });

  test('once attached, runSlice and stepCpu go through the recorder, and it can go back', () => {
    const m = new Machine(sampleImage(), { cpus: 1 });
    m.runSlice(500);
    const tt = recordMachine(m, { interval: 1000, captureRatio: 0 });
    assert.equal(tt.recordedCalls, 0);
    m.runSlice(2000);
    const afterSlice = tt.recordedCalls;
    assert.ok(afterSlice > 0);
    m.stepCpu(0, 3);
    assert.equal(tt.recordedCalls, afterSlice + 1);
    const retired = m.retired[0];
    assert.equal(tt.stepBack(0).ok, true);
    assert.equal(m.retired[0], retired - 1);
    assert.equal(tt.inPast, true);
  });

  test('a machine that is not recording runs its calls directly', () => {
    const m = new Machine(sampleImage(), { cpus: 1 });
    m.runSlice(2000);
    assert.equal(timeTravelOf(m), null);
    assert.ok(m.totalInstructions >= 2000);
  });
});
