/**
 * DAP `disassemble` index contract (VS Code's Disassembly view relies on it):
 * the reply holds exactly instructionCount entries and the instruction at
 * memoryReference (+ offset) is at index -instructionOffset; what lies before
 * a function is decoded from known instruction starts (checked against a
 * forward decode from each function's symbol), invalid padding where there is
 * no code.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, within } from './dapHarness';

type Insn = DebugProtocol.DisassembledInstruction;

const h = new Harness();

async function dis(memoryReference: string, instructionOffset: number, instructionCount: number, offset?: number): Promise<Insn[]> {
  const r = await within(h.dc.customRequest('disassemble', { memoryReference, offset, instructionOffset, instructionCount, resolveSymbols: true }), 'disassemble') as DebugProtocol.DisassembleResponse;
  return r.body!.instructions;
}

async function addressOf(symbol: string): Promise<bigint> {
  return BigInt((await h.evaluate(symbol)).memoryReference!);
}

function hex(a: bigint): string { return '0x' + a.toString(16); }

function size(i: Insn): bigint { return BigInt((i.instructionBytes ?? '').split(' ').filter(Boolean).length); }

/** addresses strictly ascending over entries with an address; valid instructions never overlap the next one */
function assertAscending(insns: Insn[]): void {
  const real = insns.filter(i => i.address !== '-1');
  for (let k = 1; k < real.length; k++) {
    const a = BigInt(real[k - 1].address), b = BigInt(real[k].address);
    assert.ok(a < b, `entry ${k}: ${real[k].address} after ${real[k - 1].address}`);
    if (real[k - 1].presentationHint !== 'invalid') assert.ok(a + size(real[k - 1]) <= b, `${real[k - 1].address} (${real[k - 1].instruction}) overlaps ${real[k].address}`);
  }
}

/** every valid entry is an instruction start of a forward decode from its function's symbol */
async function assertFromFunctionStarts(insns: Insn[]): Promise<void> {
  const starts = new Map<string, Set<string>>();
  for (const i of insns) {
    if (i.presentationHint === 'invalid' || !i.symbol) continue;
    const fn = i.symbol.replace(/\+0x[0-9a-f]+$/, '');
    let set = starts.get(fn);
    if (!set) {
      const from = await addressOf(fn);
      const offsetInFn = BigInt(i.address) - from;
      // enough instructions to pass the furthest address asked about in this function
      const far = insns.filter(x => x.symbol === fn || x.symbol?.startsWith(fn + '+')).map(x => BigInt(x.address) - from).reduce((m, x) => (x > m ? x : m), offsetInFn);
      set = new Set((await dis(hex(from), 0, Number(far) + 1)).map(x => x.address));
      starts.set(fn, set);
    }
    assert.ok(set.has(i.address), `${i.address} (${i.symbol}: ${i.instruction}) is not an instruction start of ${fn} decoded forward`);
  }
}

describe('DAP disassemble: instructionOffset / instructionCount contract', () => {
  let doFork: bigint;
  /** do_fork decoded forward from its symbol: the reference truth */
  let forward: Insn[];
  /** a reference 10 instructions into do_fork */
  let ref: string;

  before(async () => {
    await h.startServer();
    await h.startClient();
    await h.launchWith(async () => { /* no breakpoints */ });
    doFork = await addressOf('do_fork');
    forward = await dis(hex(doFork), 0, 40);
    ref = forward[10].address;
  });
  after(async () => { await h.dc.stop(); await h.stopServer(); });

  test('-200/400: 400 entries, the reference at index 200, what precedes decoded from function starts', async () => {
    const r = await dis(ref, -200, 400);
    assert.equal(r.length, 400);
    assert.equal(r[200].address, ref);
    assert.deepEqual(r.slice(190, 230).map(i => i.address), forward.slice(0, 40).map(i => i.address));
    assert.equal(r[190].symbol, 'do_fork');
    assertAscending(r);
    await assertFromFunctionStarts(r.slice(0, 200));
    // the function before do_fork ends where do_fork starts (no gap, no overlap)
    assert.equal(BigInt(r[189].address) + size(r[189]), doFork, `${r[189].address} ${r[189].instruction}`);
  });

  test('-50/100: 100 entries, the reference at index 50', async () => {
    const r = await dis(ref, -50, 100);
    assert.equal(r.length, 100);
    assert.equal(r[50].address, ref);
    assert.deepEqual(r.slice(40, 70).map(i => i.address), forward.slice(0, 30).map(i => i.address));
    assertAscending(r);
    await assertFromFunctionStarts(r);
  });

  test('0/N and positive offsets: the reference (or the instruction N after it) first', async () => {
    for (const n of [1, 7, 25]) {
      const r = await dis(ref, 0, n);
      assert.equal(r.length, n);
      assert.deepEqual(r.map(i => i.address), forward.slice(10, 10 + n).map(i => i.address));
    }
    const r = await dis(ref, 5, 10);
    assert.deepEqual(r.map(i => i.address), forward.slice(15, 25).map(i => i.address));
    assert.deepEqual(await dis(ref, 0, 0), []);
  });

  test('a window wholly before the reference, and a byte offset added to memoryReference', async () => {
    const r = await dis(ref, -10, 4);
    assert.deepEqual(r.map(i => i.address), forward.slice(0, 4).map(i => i.address));
    const byOffset = await dis(hex(doFork), -3, 6, Number(BigInt(forward[3].address) - doFork));
    assert.deepEqual(byOffset.map(i => i.address), forward.slice(0, 6).map(i => i.address));
  });

  test('before the start of code: invalid padding, the reference still at index -instructionOffset', async () => {
    const text = await addressOf('_text');
    const r = await dis(hex(text), -50, 100);
    assert.equal(r.length, 100);
    assert.equal(BigInt(r[50].address), text);
    assert.ok(r.slice(0, 50).every(i => i.presentationHint === 'invalid' && i.instruction === '(bad)'), JSON.stringify(r.slice(0, 50).filter(i => i.presentationHint !== 'invalid')));
    assert.ok(r.slice(50).every(i => i.presentationHint !== 'invalid'));
    assertAscending(r);
  });

  test('past the end of code and in unmapped memory: invalid entries, exactly instructionCount of them', async () => {
    const etext = await addressOf('_etext');
    const r = await dis(hex(etext), -20, 60);
    assert.equal(r.length, 60);
    assert.equal(BigInt(r[20].address), etext);
    assert.ok(r.slice(0, 20).every(i => i.presentationHint !== 'invalid'), 'the code before _etext decodes');
    assertAscending(r);
    const unmapped = await dis('0x10', 1000, 30);
    assert.equal(unmapped.length, 30);
    assert.ok(unmapped.every(i => i.presentationHint === 'invalid'));
    assertAscending(unmapped);
    // the top of the address space: entries past 2^64 carry address -1 (VS Code skips them), the count still holds
    const top = await dis('0xfffffffffffffffe', -2, 6);
    assert.equal(top.length, 6);
    assert.equal(top[2].address, '0xfffffffffffffffe');
    assert.deepEqual(top.slice(4).map(i => i.address), ['-1', '-1']);
  });

  test('bad arguments are errors naming the argument', async () => {
    await assert.rejects(dis(ref, 0, -1), /instructionCount -1 is not an integer in 0\.\.65536/);
    await assert.rejects(dis(ref, 0.5, 4), /instructionOffset 0\.5 is not an integer/);
    await assert.rejects(dis('do_fork', 0, 4), /memoryReference "do_fork" is not an address/);
  });
});
