/**
 * Each port's struct pt_regs (ArchInfo.ptRegsFrame, the frame a C kprobe
 * handler is given by emulator/kprobes/cApi.ts) against the struct the
 * modules are compiled with (examples/include/asm/ptrace.h, as Linux's): the same
 * fields in the same order, every register slot a register of the port,
 * none twice.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PORTS } from '../../emulator/ports';
import { repoPath } from '../util/paths';

/** the predefined macro each port's block of asm/ptrace.h is under */
const MACRO: Readonly<Record<string, string>> = { x86_64: '__x86_64__', aarch64: '__aarch64__', riscv64: '__riscv' };

/** field names of the header's struct pt_regs for `macro`, arrays spelled out (regs[31] -> regs0 .. regs30) */
function headerFields(macro: string): string[] {
  const h = readFileSync(repoPath('examples', 'include', 'asm', 'ptrace.h'), 'utf8');
  const block = new RegExp(`defined\\(${macro}\\)\\s*\\n\\s*struct pt_regs \\{([^}]*)\\}`).exec(h);
  assert.ok(block, `asm/ptrace.h: no struct pt_regs under ${macro}`);
  const body = block[1].replace(/unsigned long/g, '').replace(/;/g, ',');
  return body.split(',').map(f => f.trim()).filter(f => f !== '').flatMap(f => {
    const arr = /^(\w+)\[(\d+)\]$/.exec(f);
    return arr ? Array.from({ length: Number(arr[2]) }, (_, i) => `${arr[1]}${i}`) : [f];
  });
}

describe('ArchInfo.ptRegsFrame', () => {
  test('every port that offers C kprobe modules lays out the struct pt_regs of asm/ptrace.h', () => {
    const offered = PORTS.filter(p => p.ptRegsFrame !== undefined).map(p => p.name);
    assert.deepEqual(offered, ['x86_64', 'aarch64', 'riscv64']);
  });

  for (const port of PORTS) {
    const frame = port.ptRegsFrame;
    if (frame === undefined) continue;
    test(`${port.name}: the fields of asm/ptrace.h in order, register slots named as the port's registers`, () => {
      const names = frame.map(s => (typeof s === 'string' ? s : s.name));
      // arm64's regs[n] is the port's xn
      const want = headerFields(MACRO[port.name]).map(f => (/^regs\d+$/.test(f) ? `x${f.slice(4)}` : f));
      assert.deepEqual(names, want);
      assert.equal(new Set(names).size, names.length, 'a field twice');
      const regs = new Set(port.regs.map(r => r.name));
      for (const s of frame) if (typeof s === 'string') assert.ok(regs.has(s), `${s} is not a register of ${port.name}`);
    });
  }
});
