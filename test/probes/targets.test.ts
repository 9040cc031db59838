/**
 * Target forms -> probe addresses, cross-checked with the ELF symbols, the
 * DWARF line table and the `#BP` markers of the sample kernel's sources.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveTarget, parseTargetText } from '../../emulator/probes';
import { hex64 } from '../../emulator/memory/address';
import { marker, probeRig, sampleImage, sym } from './helpers';

function lineTable() {
  const lt = sampleImage().lines;
  assert.ok(lt, 'the sample kernel has a line table');
  return lt;
}

describe('probe targets', () => {
  test('symbol: the site carries symbol_name and registers at the symbol address', () => {
    const { mgr } = probeRig();
    const e = mgr.addBreakpoint({ target: 'do_fork' });
    assert.equal(e.verified, true, e.message);
    assert.equal(e.sites.length, 1);
    assert.equal(e.sites[0].addr, sym('do_fork'));
    assert.equal(e.sites[0].where, 'do_fork+0x0');
    const listed = mgr.debugfsList();
    assert.ok(listed.startsWith(`${hex64(sym('do_fork'))}  k  do_fork+0x0`), listed);
  });

  test('symbol+0xoff: symbol_name+offset, at the second instruction of the function', () => {
    const image = sampleImage();
    const { machine, mgr } = probeRig();
    const first = machine.arch.decode(machine.kernel.mem, sym('do_fork'));
    assert.ok(first);
    const off = BigInt(first.length);
    const t = parseTargetText(`do_fork+0x${off.toString(16)}`);
    assert.ok(typeof t !== 'string');
    const res = resolveTarget(image, t);
    assert.ok(res.ok);
    assert.deepEqual(res.sites, [{ symbol_name: 'do_fork', offset: off, resolved: sym('do_fork') + off }]);
    const e = mgr.addBreakpoint({ target: `do_fork+0x${off.toString(16)}` });
    assert.equal(e.verified, true, e.message);
    assert.equal(e.sites[0].addr, sym('do_fork') + off);
    assert.equal(e.sites[0].where, `do_fork+0x${off.toString(16)}`);
  });

  test('0xaddress: the exact 64-bit address (high-half kernel addresses stay exact)', () => {
    const { mgr } = probeRig();
    const a = sym('kprobe_target2');
    assert.ok(a > 2n ** 63n, 'a high-half address');
    const e = mgr.addBreakpoint({ target: `0x${a.toString(16)}` });
    assert.equal(e.verified, true, e.message);
    assert.equal(e.sites[0].addr, a);
    assert.equal(e.sites[0].where, 'kprobe_target2+0x0');
    const e2 = mgr.addBreakpoint({ target: { kind: 'address', addr: a } });
    assert.equal(e2.sites[0].addr, a);
  });

  for (const [name, fn] of [['do_fork_body', 'do_fork'], ['kprobe_target', 'kprobe_target'], ['sys_open_fail', 'sys_open'], ['fib_base', 'fib']] as const) {
    test(`file.c:line: the is_stmt addresses of the #BP ${name} line, inside ${fn}`, () => {
      const m = marker(name);
      const { mgr } = probeRig();
      const e = mgr.addBreakpoint({ target: `${m.file}:${m.line}` });
      assert.equal(e.verified, true, e.message);
      const want = lineTable().addressesForLine(m.file, m.line);
      assert.ok(want.length > 0);
      assert.deepEqual(e.sites.map(s => s.addr), want);
      for (const s of e.sites) {
        assert.equal(s.source?.line, m.line);
        assert.ok(s.source?.file.endsWith(m.file), s.source?.file);
        assert.equal(sampleImage().symbols.resolve(s.addr as bigint)?.sym.name, fn);
      }
    });
  }

  test('file.c:line written relative to a probe file (../kernel/fork.c) resolves the same', () => {
    const m = marker('do_fork_body');
    const a = resolveTarget(sampleImage(), { kind: 'line', file: m.file, line: m.line });
    const b = resolveTarget(sampleImage(), { kind: 'line', file: `../kernel/${m.file}`, line: m.line });
    const c = resolveTarget(sampleImage(), { kind: 'line', file: `examples/kernel/${m.file}`, line: m.line });
    assert.ok(a.ok && b.ok && c.ok);
    assert.deepEqual(b.sites, a.sites);
    assert.deepEqual(c.sites, a.sites);
  });

  test('a line without code is an error naming the next line with code', () => {
    const m = marker('do_fork_body');
    // the comment block above do_fork has no code: walk up from the marker to a line without any
    const lt = lineTable();
    let line = m.line - 1;
    while (line > 1 && lt.addressesForLine(m.file, line).length > 0) line--;
    assert.equal(lt.addressesForLine(m.file, line).length, 0);
    const next = lt.nextLineWithCode(m.file, line);
    assert.ok(next !== undefined && next > line);
    const res = resolveTarget(sampleImage(), { kind: 'line', file: m.file, line });
    assert.ok(!res.ok);
    assert.equal(res.message, `no code at ${m.file}:${line}; the next line with code is ${m.file}:${next}`);
    assert.equal(res.nextLine, next);
    const { mgr } = probeRig();
    const e = mgr.addBreakpoint({ target: `${m.file}:${line}` });
    assert.equal(e.verified, false);
    assert.equal(e.nextLine, next);
    assert.match(e.message ?? '', /next line with code/);
  });

  test('a file that is not in the line table is named in the error', () => {
    const res = resolveTarget(sampleImage(), { kind: 'line', file: 'nosuch.c', line: 3 });
    assert.ok(!res.ok);
    assert.match(res.message, /source file 'nosuch\.c' is not in the line table of .*kernel-x86_64\.elf/);
  });

  test('bad target text is a clear error, not an exception', () => {
    const { mgr } = probeRig();
    const e = mgr.addBreakpoint({ target: 'do fork' });
    assert.equal(e.verified, false);
    assert.match(e.message ?? '', /invalid probe target 'do fork'/);
    assert.equal(mgr.debugfsList(), '');
  });
});
