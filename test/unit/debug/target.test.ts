/**
 * The debug facade's DebugTarget (emulator/debug/index.ts, served by
 * MachineTarget): threads, registers, evaluation, the one breakpoint
 * resolver (source line / next line with code / kretprobe's function /
 * function text / instruction / unknown file), disassembly rows with the
 * probes' patches, and the views' rows. Lines are found by the `#BP`
 * markers of the sample kernel's sources, addresses by symbol.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { launchTarget } from '../../../emulator/debug/index';
import type { DebugTarget } from '../../../emulator/debug/index';
import { FORK_C, kernelImage, markerLine } from '../../adapter/dapHarness';


function boot(cpus = 2): DebugTarget {
  return launchTarget({ program: kernelImage('x86_64'), cpus, record: false });
}

describe('DebugTarget: threads, registers, evaluation', () => {
  test('one thread per CPU, named after the task it runs (idle: swapper/N)', () => {
    const t = boot(2);
    assert.equal(t.kind, 'emulator');
    assert.equal(t.cpuCount, 2);
    assert.equal(t.threadName(1), 'CPU 1: swapper/1');
    assert.equal(t.cpu(2), undefined);
  });

  test('registers: one row per register in pt_regs order; setRegister writes and answers the value as shown', () => {
    const t = boot(1);
    const rows = t.registers(0);
    assert.deepEqual(rows.map(r => r.name), t.arch.regs.map(r => r.name));
    const name = t.arch.regs[0].name;
    assert.equal(t.setRegister(0, name, '0x1234'), rows[0].value.replace(/[0-9a-f]+$/, v => '1234'.padStart(v.length, '0')));
    assert.throws(() => t.setRegister(0, 'nosuchreg', '1'), /no register named nosuchreg/);
    assert.throws(() => t.registers(5), /no CPU 5/);
  });

  test('evaluate: $reg, a kernel symbol (its address), an error naming the expression', () => {
    const t = boot(1);
    const name = t.arch.regs[0].name;
    t.setRegister(0, name, '42');
    const r = t.evaluate({ cpuIndex: 0, expression: `$${name}` });
    assert.ok(r.ok);
    assert.equal(BigInt(r.body.result), 42n);
    const sym = t.image.symbols.lookup('do_fork');
    assert.ok(sym);
    const s = t.evaluate({ cpuIndex: 0, expression: 'do_fork', context: 'hover' });
    assert.ok(s.ok);
    assert.match(s.body.result, /<do_fork>$/);
    assert.equal(BigInt(s.body.memoryReference ?? '0'), sym.value);
    const bad = t.evaluate({ cpuIndex: 0, expression: '1 +' });
    assert.equal(bad.ok, false);
  });
});

describe('DebugTarget.resolveBreakpoint: the one resolver', () => {
  test('a source line with code resolves to that line of the kernel', () => {
    const t = boot();
    const line = markerLine(FORK_C, 'do_fork_body');
    const r = t.resolveBreakpoint({ kind: 'source', path: FORK_C, line });
    assert.ok(r.ok, r.ok ? undefined : r.message);
    assert.equal(r.mode, 'kprobe');
    assert.equal(r.target.kind, 'line');
    assert.equal(r.line, line);
  });

  test('a line without code resolves to the next line with code', () => {
    const t = boot();
    const lines = t.image.lines;
    assert.ok(lines);
    const file = t.sourceFiles().find(f => t.sources.same(FORK_C, f));
    assert.ok(file, 'fork.c is in the line table');
    // a line above the marker that has no code (a declaration, a brace), with code after it
    let empty: number | undefined;
    for (let l = markerLine(FORK_C, 'do_fork_body') - 1; l > 0 && empty === undefined; l--) {
      if (!lines.addressesForLine(file, l).length && lines.nextLineWithCode(file, l) !== undefined) empty = l;
    }
    assert.ok(empty !== undefined);
    const r = t.resolveBreakpoint({ kind: 'source', path: FORK_C, line: empty });
    assert.ok(r.ok, r.ok ? undefined : r.message);
    assert.equal(r.line, lines.nextLineWithCode(file, empty));
    assert.deepEqual(r.target, { kind: 'line', file, line: r.line });
  });

  test('kretprobe on a source line: the function holding it, the breakpoint keeps its line', () => {
    const t = boot();
    const line = markerLine(FORK_C, 'do_fork_body');
    const r = t.resolveBreakpoint({ kind: 'source', path: FORK_C, line, mode: 'kretprobe' });
    assert.ok(r.ok, r.ok ? undefined : r.message);
    assert.equal(r.mode, 'kretprobe');
    assert.deepEqual(r.target, { kind: 'symbol', name: 'do_fork', offset: 0n });
    assert.equal(r.keepsLine, true);
  });

  test('a file nobody has line information for: a reason (pending when modules may bring it later)', () => {
    const t = boot();
    const r = t.resolveBreakpoint({ kind: 'source', path: '/nowhere/other.c', line: 3 });
    assert.equal(r.ok, false);
    assert.ok(!r.ok);
    if (t.loadedModules() !== undefined) {
      assert.deepEqual(r.pending, { kind: 'line', file: '/nowhere/other.c', line: 3 });
      assert.match(r.message, /^pending: no line information for other\.c/);
    } else {
      assert.equal(r.pending, undefined);
    }
  });

  test('function text: symbol+offset, r: prefix, a kprobe_events definition, an error', () => {
    const t = boot();
    const a = t.resolveBreakpoint({ kind: 'function', text: 'do_fork+0x4' });
    assert.ok(a.ok);
    assert.deepEqual(a.target, { kind: 'symbol', name: 'do_fork', offset: 4n });
    assert.equal(a.mode, 'kprobe');
    const r = t.resolveBreakpoint({ kind: 'function', text: 'r:do_fork' });
    assert.ok(r.ok);
    assert.equal(r.mode, 'kretprobe');
    const hw = t.resolveBreakpoint({ kind: 'function', text: 'do_fork', mode: 'hardware' });
    assert.ok(hw.ok);
    assert.equal(hw.mode, 'hardware');
    const ev = t.resolveBreakpoint({ kind: 'function', text: 'p:myfork do_fork' });
    assert.ok(ev.ok);
    assert.equal(ev.definition, 'p:myfork do_fork');
    const bad = t.resolveBreakpoint({ kind: 'function', text: 'not a target!' });
    assert.equal(bad.ok, false);
  });

  test('an instruction address resolves to itself in the asked mode', () => {
    const t = boot();
    const r = t.resolveBreakpoint({ kind: 'instruction', addr: 0xffffffff81000010n, mode: 'kretprobe' });
    assert.deepEqual(r, { ok: true, target: { kind: 'address', addr: 0xffffffff81000010n }, mode: 'kretprobe' });
  });
});

describe('DebugTarget.placeBreakpoint: resolved and registered in one call', () => {
  test('a line without code: the probe is on the next line with code, with its condition compiled', () => {
    const t = boot();
    const file = t.sourceFiles().find(f => t.sources.same(FORK_C, f));
    assert.ok(file && t.image.lines);
    const lines = t.image.lines;
    let empty: number | undefined;
    for (let l = markerLine(FORK_C, 'do_fork_body') - 1; l > 0 && empty === undefined; l--) {
      if (!lines.addressesForLine(file, l).length && lines.nextLineWithCode(file, l) !== undefined) empty = l;
    }
    assert.ok(empty !== undefined);
    const r = t.placeBreakpoint({ kind: 'source', path: FORK_C, line: empty }, { condition: '1 == 1' });
    assert.ok(r.ok, r.ok ? undefined : r.message);
    assert.equal(r.entry.verified, true, r.entry.message);
    assert.equal(r.entry.sites[0]?.source?.line, lines.nextLineWithCode(file, empty));
    assert.equal(t.probes.get(r.entry.id)?.id, r.entry.id, 'the probe manager lists it');
  });

  test('a bad function text registers nothing; a bad condition is the entry\'s message', () => {
    const t = boot();
    const before = t.probes.list().length;
    const bad = t.placeBreakpoint({ kind: 'function', text: 'not a target!' }, {});
    assert.equal(bad.ok, false);
    assert.equal(t.probes.list().length, before);
    const cond = t.placeBreakpoint({ kind: 'function', text: 'do_fork' }, { condition: '1 +' });
    assert.ok(cond.ok);
    assert.equal(cond.entry.verified, false);
    assert.ok(cond.entry.message);
  });
});

describe('DebugTarget: disassembly rows and probe rows', () => {
  test('rows at a function: symbol, original bytes; a kprobe there adds a note and the patched bytes', () => {
    const t = boot();
    const fn = t.image.symbols.lookup('do_fork');
    assert.ok(fn);
    const before = t.disassemble(fn.value, 0, 3);
    assert.equal(before.length, 3);
    assert.equal(before[0].address, fn.value);
    assert.equal(before[0].symbol, 'do_fork');
    assert.equal(before[0].valid, true);
    assert.deepEqual(before[0].notes, []);
    assert.equal(before[0].patchedBytes, undefined);
    const e = t.probes.addBreakpoint({ target: { kind: 'symbol', name: 'do_fork', offset: 0n }, mode: 'kprobe' });
    assert.ok(e.verified, e.message);
    const after = t.disassemble(fn.value, 0, 1)[0];
    assert.deepEqual(after.bytes, before[0].bytes, 'the original bytes');
    assert.ok(after.patchedBytes, 'the bytes memory holds now');
    assert.notDeepEqual(after.patchedBytes, after.bytes);
    assert.match(after.notes.join('; '), /kprobe: .* at do_fork\+0x0/);
    // rows before an address: the row at base is at index -insnOffset
    const around = t.disassemble(before[1].address as bigint, -1, 2);
    assert.equal(around[1].address, before[1].address);
  });

  test('the views\' rows name probes with the front end\'s ids and paths', () => {
    const t = boot();
    const e = t.probes.addBreakpoint({ target: { kind: 'symbol', name: 'do_fork', offset: 0n }, mode: 'kprobe' });
    const rows = t.probeRows({ toLocal: f => `/local/${f}`, idOf: id => id + 100 });
    const row = rows.kprobes.find(r => r.id === e.id + 100);
    assert.ok(row, JSON.stringify(rows.kprobes));
    assert.equal(row.symbol, 'do_fork');
    assert.equal(row.kind, 'kprobe');
    assert.equal(rows.enabled, true);
  });
});
