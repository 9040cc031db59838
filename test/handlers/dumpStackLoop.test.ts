/**
 * A dump_stack() loop in a probe handler on the sample kernel: each trace
 * costs the handler steps by the text it prints, the probe env appends the
 * traces in linear time, so the runaway loop meets its step budget after a
 * bounded number of traces and the run goes on.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../emulator/machine';
import { RUNAWAY_DISABLE_AFTER } from '../../emulator/probes';
import { DEFAULT_STEP_BUDGET } from '../../emulator/handlers';
import { addFile, runAll, sampleImage } from '../probes/helpers';
import { probesOf } from '../../emulator/probes/attach';

describe('dump_stack() in a probe handler loop', () => {
  test('while (1) dump_stack(); under maxInstructions 2000000: bounded traces, the probe disabled after its budget faults, the kernel goes on', () => {
    const m = new Machine(sampleImage(), { cpus: 2, maxInstructions: 2_000_000 });
    addFile(probesOf(m), 'kprobe do_fork { pre { while (1) dump_stack(); return 0; } }', 'stack.kprobe');
    const out = runAll(m);
    const traces = out.lines.filter(l => l === 'Call Trace:').length;
    const firstTrace = out.lines.indexOf('Call Trace:');
    const traceLen = out.lines.slice(firstTrace + 1).findIndex(l => !l.startsWith(' ')) + 2;
    assert.ok(traceLen >= 3, `a trace of ${traceLen} lines`);
    // each trace is charged at least one step per 8 bytes of its lines (each line is longer than 8 bytes)
    assert.ok(traces <= RUNAWAY_DISABLE_AFTER * Math.ceil(DEFAULT_STEP_BUDGET / traceLen), `${traces} traces`);
    assert.ok(traces > RUNAWAY_DISABLE_AFTER, `${traces} traces`);
    const e = probesOf(m).list()[0];
    assert.equal(e.hits, RUNAWAY_DISABLE_AFTER);
    assert.equal(e.enabled, false);
    assert.equal(out.records.filter(r => r.text.includes('exceeded its step budget')).length, RUNAWAY_DISABLE_AFTER);
    assert.equal(out.exit.reason, 'poweroff');
  });
});
