/**
 * Function breakpoints written as kprobe_events definitions (Linux
 * Documentation/trace/kprobetrace.rst), through the adapter on every
 * architecture with kprobes: `p:myopen sys_open path=+0(%REG):string ...`
 * traces without stopping (one trace line per hit in the Debug Console,
 * with its fetch args read from the arch's argument registers), the return
 * form prints `$retval`, the Kprobes view shows the event's name on its row,
 * and a bad register name is refused at its column.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';
import { kprobeLabel } from '../../extension/probeRows';
import { KPROBE_ARCHES, argRegNames } from '../kprobes/harness';
import { Harness, kernelImage, within } from './dapHarness';

const h = new Harness();

function collectOutput(): string[] {
  const out: string[] = [];
  h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
  return out;
}

for (const arch of KPROBE_ARCHES) describe(`kprobe_events function breakpoints on the ${arch} kernel`, () => {
  const program = kernelImage(arch);
  const [a0, a1] = argRegNames(arch);
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test(`p:myopen sys_open path=+0(%${a0}):string flags=%${a1}:x32 comm=$comm traces each hit and never stops; the row names the event`, async () => {
    const out = collectOutput();
    let bps: DebugProtocol.Breakpoint[] = [];
    const defs = [`p:myopen sys_open path=+0(%${a0}):string flags=%${a1}:x32 comm=$comm`, 'r8:myopen_ret sys_open rv=$retval:s64'];
    await h.launchWith(async () => {
      bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: defs.map(name => ({ name })) })).body.breakpoints;
    }, { program, stopAtExit: true });
    assert.ok(bps.every(b => b.verified), bps.map(b => b.message).join('; '));
    assert.match(bps[0].message ?? '', /trace event kprobes\/myopen/);
    // the only stop is the end of the run: the event breakpoints never stop
    const stop = await h.continueToStop();
    assert.notEqual(stop.body.reason, 'breakpoint', `stopped at ${stop.body.description ?? stop.body.reason}`);
    const text = out.join('');
    const enter = /\S+-\d+ +\[\d{3}\] [.d]\S{4} +\d+\.\d{6}: myopen: \(sys_open\+0x0\/0x[0-9a-f]+\) path="\/nonexistent" flags=0x0 comm="[^"]+"$/m;
    // the trace line of Linux's trace file (after the console's printk time)
    assert.match(text, enter);
    assert.match(text, /: myopen_ret: \([a-z_]+\+0x[0-9a-f]+\/0x[0-9a-f]+ <- sys_open\) rv=-2$/m);
    const st = (await within(h.dc.customRequest(ProbeRequest.list) as Promise<DebugProtocol.Response>, 'the probe list')).body as ProbeStateBody;
    const row = st.kprobes.find(p => p.event === 'kprobes/myopen');
    const ret = st.kprobes.find(p => p.event === 'kprobes/myopen_ret');
    assert.ok(row && ret, st.kprobes.map(p => `${p.name} ${p.event}`).join(', '));
    const lines = text.split('\n').filter(l => /: myopen: /.test(l)).length;
    assert.ok(lines > 0 && row.nhit === lines, `${row.nhit} hits, ${lines} trace lines`);
    assert.match(kprobeLabel(row), new RegExp(`^k kprobes/myopen: sys_open\\+0x0 (?:\\[OPTIMIZED\\] )?${lines}/0$`));
    assert.match(kprobeLabel(ret), /^r kprobes\/myopen_ret: sys_open\+0x0 (?:\[OPTIMIZED\] )?\d+\/0$/);
  });

  test('a definition naming a register the arch does not have is refused at its column', async () => {
    let bps: DebugProtocol.Breakpoint[] = [];
    const def = 'p:bad sys_open x=%nosuchreg';
    await h.launchWith(async () => {
      bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: def }] })).body.breakpoints;
    }, { program });
    assert.equal(bps[0].verified, false);
    assert.match(bps[0].message ?? '', new RegExp(`^kprobe_events: column ${def.indexOf('%') + 1}: `));
  });
});
