/**
 * The Variables view at the fork.c line marked #BP do_fork_body matches
 * gdb on the same image: every parameter and local gdb has in scope there
 * is shown, `<optimized out>` exactly where gdb's location lists cover no
 * byte of the line's first address, and a name gdb reads from a register
 * shows that register's value. The golden is gdb's answer
 * (scripts/gdb-scope-golden.mjs: gdb-multiarch info line / info scope).
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { FORK_C, Harness, KERNEL, markerLine } from './dapHarness';
import { repoPath } from '../util/paths';

interface Golden { sha256: string; line: string; function: string; offset: number; symbols: { name: string; at: string }[] }

const golden = JSON.parse(readFileSync(repoPath('test', 'fixtures', 'gdb', 'kernel-x86_64.do_fork_body.json'), 'utf8')) as Golden;
const sha = createHash('sha256').update(readFileSync(KERNEL)).digest('hex');
/** said with every mismatch: a rebuilt image needs a new golden */
const provenance = sha === golden.sha256 ? '' : ` (the golden is from another build of the image: run node scripts/gdb-scope-golden.mjs)`;

const h = new Harness();

describe('adapter: the names at fork.c\'s do_fork_body line, as gdb has them', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('Arguments and Locals at the line breakpoint: the names of gdb\'s info scope, <optimized out> where gdb has no location, register values where gdb reads a register', async () => {
    const line = markerLine(FORK_C, 'do_fork_body');
    assert.equal(golden.line, `fork.c:${line}`, `golden for another line${provenance}`);
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line }] });
    });
    const stop = await h.continueToStop();
    const frame = (await h.dc.stackTraceRequest({ threadId: stop.body.threadId as number })).body.stackFrames[0];
    const scopes = (await h.dc.scopesRequest({ frameId: frame.id })).body.scopes;
    const list = async (name: string): Promise<Map<string, string>> => {
      const s = scopes.find(x => x.name === name);
      assert.ok(s, `${name} scope`);
      return new Map((await h.dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables.map(v => [v.name, v.value]));
    };
    const args = await list('Arguments');
    const locals = await list('Locals');
    const regs = await list('Registers');
    // the frame is at the line's first address, where gdb looked
    const ip = await h.evaluate(`${golden.function}`, frame.id, 'hover');
    assert.equal(BigInt(frame.instructionPointerReference!) - BigInt(/^0x[0-9a-f]+/.exec(ip.result)![0]), BigInt(golden.offset), `pc at ${golden.function}+${golden.offset}${provenance}`);
    const shown = [...args.keys(), ...locals.keys()];
    assert.deepEqual(shown, golden.symbols.map(s => s.name), `the names gdb has in scope${provenance}`);
    for (const s of golden.symbols) {
      const value = args.get(s.name) ?? locals.get(s.name) ?? '';
      if (s.at === 'optimized out') {
        assert.equal(value, '<optimized out>', `${s.name}: gdb has no location for it here${provenance}`);
        continue;
      }
      const reg = /^a variable in \$(\w+)$/.exec(s.at)?.[1];
      assert.ok(reg, `golden location "${s.at}" of ${s.name}: a register expected at this line${provenance}`);
      const r = regs.get(reg) ?? regs.get(reg.replace(/^r(?=[a-z]{2}$)/, ''));
      assert.ok(r !== undefined, `register ${reg} in the Registers scope: ${[...regs.keys()].join(' ')}`);
      assert.equal(BigInt(/^-?(0x[0-9a-f]+|\d+)/.exec(value)?.[0] ?? 'x'), BigInt(r), `${s.name} = ${value}, gdb reads ${reg} = ${r}${provenance}`);
    }
  });
});
