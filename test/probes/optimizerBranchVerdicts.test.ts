/**
 * The x86_64 optimizer's branch checks (can_optimize: no indirect jump in
 * the function, no jump, conditional jump or call into the detoured region
 * past its first byte) read a per-function table of branch targets. Their
 * verdicts, with the branch a refusal names, must be those of the plain
 * rule: the first branch of the function, in address order, that is an
 * indirect jump or targets the region. Checked at every instruction start
 * of the sample kernel and of many.elf, with a probe registered at each.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import type { DecodedInsn } from '../../emulator/arch/types';
import { repoPath } from '../util/paths';
import { SAMPLE_IMAGE } from './helpers';

const hex = (a: bigint): string => `0x${a.toString(16)}`;
const BRANCHES = new Set<DecodedInsn['flow']>(['indirectJump', 'jump', 'condJump', 'call']);

interface Fn { start: bigint; end: bigint; insns: DecodedInsn[] }

/** the functions' instructions decoded from the image's bytes up to their int3 padding */
function functionsOf(m: Machine): Fn[] {
  const out: Fn[] = [];
  for (const s of m.kernel.image.symbols.functions()) {
    if (s.size === 0n) continue;
    const insns: DecodedInsn[] = [];
    let ok = true;
    for (let p = s.value; p < s.value + s.size;) {
      const d = m.arch.decode(m.kernel.mem, p);
      if (!d) { ok = false; break; }
      if (d.length === 1 && d.bytes[0] === 0xcc) break;
      insns.push(d);
      p += BigInt(d.length);
    }
    if (ok && insns.length) out.push({ start: s.value, end: s.value + s.size, insns });
  }
  return out;
}

/** the plain rule's branch refusal of a probe at insns[i], or undefined (none, or the region does not fit) */
function branchRefusal(fn: Fn, i: number): string | undefined {
  const addr = fn.insns[i].addr;
  let size = 0;
  for (let k = i; size < 5; k++) {
    if (k >= fn.insns.length) return undefined; // the region crosses the end: refused before the branch checks
    size += fn.insns[k].length;
  }
  const end = addr + BigInt(size);
  if (end > fn.end) return undefined;
  for (const b of fn.insns) {
    if (!BRANCHES.has(b.flow)) continue;
    if (b.flow === 'indirectJump') return `indirect jump at ${hex(b.addr)} (jump table)`;
    if (b.target !== undefined && b.target > addr && b.target < end) return `${b.mnemonic} at ${hex(b.addr)} jumps into the detoured region`;
  }
  return undefined;
}

const BRANCH_REFUSAL = /^(indirect jump at 0x[0-9a-f]+ \(jump table\)|\S+ at 0x[0-9a-f]+ jumps into the detoured region)$/;

function check(imagePath: string): { refused: number; probes: number } {
  const m = new Machine(loadElf(imagePath), { cpus: 1 });
  const fns = functionsOf(m);
  let refused = 0, probes = 0;
  for (const fn of fns) {
    for (let i = 0; i < fn.insns.length; i++) {
      const addr = fn.insns[i].addr;
      // alone at its address: the function's other probes do not change a permanent refusal
      if (m.kprobes.registerKprobe({ addr, pre_handler: () => 0 }) !== 0) continue;
      probes++;
      const st = m.kprobes.optimizer.status(addr);
      if (st.reason?.startsWith('an ftrace-based probe')) continue; // never scanned
      const want = branchRefusal(fn, i);
      const got = st.state === 'none' && st.reason !== undefined && BRANCH_REFUSAL.test(st.reason) ? st.reason : undefined;
      assert.equal(got, want, `${hex(addr)}: ${st.state} ${st.reason ?? ''}`);
      if (want) refused++;
    }
  }
  return { refused, probes };
}

describe('x86_64 optimizer: the branch checks name the first branch the plain rule names', () => {
  test('every instruction start of the sample kernel', () => {
    const r = check(SAMPLE_IMAGE);
    assert.ok(r.probes > 5000, `probes registered: ${r.probes}`);
    assert.ok(r.refused > 100, `branch refusals seen: ${r.refused}`);
  });

  test('every instruction start of many.elf', () => {
    const r = check(repoPath('test', 'fixtures', 'kernel', 'many', 'many.elf'));
    assert.ok(r.probes > 5000, `probes registered: ${r.probes}`);
  });
});
