/**
 * Decoded and translated code across TLB flushes (sysmode/paging.ts): a
 * flush (MOV to CR3, a CR4.PGE toggle) walks every page code was decoded
 * from again and keeps its code while the page still maps the same
 * physical page, executable, with A set; a page remapped elsewhere, made
 * not executable or not present, or whose A bit was cleared, loses its
 * code (the next fetch walks, faults or sets A as the SDM says), and a
 * write to the physical page through another mapping still drops it. The
 * same runs with the translator off, on and in lockstep end in the same
 * state with the same instruction count.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SysMachine, installHandlers, runToHandler, KCODE, RAX, RCX, RDX, P, RW, A, G, NX } from './harness';
import { runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';
import { EFER_NXE } from '../../../emulator/arch/x86_64/sysmode/state';
import { allTranslators } from '../../../emulator/jit';

type Mode = 'off' | 'on' | 'lockstep';
const MODES: readonly Mode[] = ['off', 'on', 'lockstep'];

/** the translator's counters of a mode so far */
function stats(mode: Mode): { translations: number; invalidations: number; translated: number } {
  const s = allTranslators().get(`x86_64:${mode}`)?.stats;
  return { translations: s?.translations ?? 0, invalidations: s?.invalidations ?? 0, translated: s?.translatedInsns ?? 0 };
}

/** run to HLT in slices */
function runToHalt(m: SysMachine, budget = 2_000_000): void {
  let done = 0;
  while (done < budget) {
    const r = runSystemCpu(m.cpu, 20_000);
    if (r.event) throw new Error(`machine event: ${r.event.detail}`);
    done += r.executed;
    if (r.halted) return;
  }
  throw new Error(`no HLT within ${budget} instructions (rip 0x${m.cpu.getPc().toString(16)})`);
}

const le32 = (v: number): string => [0, 8, 16, 24].map(s => ((v >>> s) & 0xff).toString(16).padStart(2, '0')).join(' ');
const jmp = (at: number, to: number): string => `e9 ${le32(to - (at + 5))}`;

/** a linear page outside the identity map, and two physical pages of code for it */
const L = 0x600000, CODE_A = 0x1d0000, CODE_B = 0x1d1000;
// A: inc rcx; dec rdx; jnz A; mov eax, 1; hlt      B: add rcx, 2; dec rdx; jnz B; mov eax, 2; hlt
const LOOP_A = '48 ff c1 48 ff ca 75 f8 b8 01 00 00 00 f4';
const LOOP_B = '48 83 c1 02 48 ff ca 75 f7 b8 02 00 00 00 f4';

const FLUSHES = {
  'a CR3 reload': '0f 20 d8 0f 22 d8', // mov rax, cr3; mov cr3, rax
  'a CR4.PGE toggle': '0f 20 e0 48 35 80 00 00 00 0f 22 e0 48 35 80 00 00 00 0f 22 e0', // mov rax, cr4; xor rax, 0x80; mov cr4, rax (twice)
} as const;
type Flush = keyof typeof FLUSHES;

/** LOOP_A at L (hot: translated), then `change` to the page tables, then the flush and a jump to L again; what the second run left */
function afterFlush(m: SysMachine, flush: Flush, change: (m: SysMachine) => void, flags = P | RW): { first: bigint[] } {
  m.code(CODE_A, LOOP_A);
  m.code(CODE_B, LOOP_B);
  m.map(BigInt(L), BigInt(CODE_A), flags);
  m.cpu.setPc(BigInt(L));
  m.setReg(RDX, 10000n);
  runToHalt(m);
  const first = [m.reg(RAX), m.reg(RCX)];
  change(m);
  const stub = KCODE + 0x100, f = FLUSHES[flush];
  m.code(stub, `${f} ${jmp(stub + f.split(' ').length, L)}`);
  m.cpu.setPc(BigInt(stub)); m.sys.halted = false;
  m.setReg(RDX, 10000n); m.setReg(RCX, 0n); m.setReg(RAX, 0n);
  return { first };
}

describe('decoded and translated code across TLB flushes', () => {
  for (const flush of Object.keys(FLUSHES) as Flush[]) {
    for (const global of [false, true]) {
      test(`${flush}, ${global ? 'global' : 'non-global'} page mapping the same physical page: the translation is kept and runs`, () => {
        const results = new Map<Mode, unknown>();
        for (const mode of MODES) {
          const m = new SysMachine(mode);
          if (global) { m.sys.cr4 |= 0x80; m.sys.syncPaging(); }
          const r = afterFlush(m, flush, () => undefined, P | RW | (global ? G : 0n));
          const before = stats(mode);
          runToHalt(m);
          const after = stats(mode);
          assert.deepEqual([m.reg(RAX), m.reg(RCX)], [1n, 10000n]);
          if (mode === 'on') {
            assert.equal(after.invalidations, before.invalidations, 'nothing dropped');
            assert.equal(after.translations, before.translations, 'nothing translated again');
            assert.ok(after.translated - before.translated > 9000, 'the kept translation ran the loop');
          }
          results.set(mode, [r.first, m.reg(RAX), m.reg(RCX), m.cpu.instret]);
        }
        assert.deepEqual(results.get('on'), results.get('off'));
        assert.deepEqual(results.get('lockstep'), results.get('off'));
      });
    }

    test(`${flush} after the page was remapped to another physical page: the new code runs, never the kept one`, () => {
      const results = new Map<Mode, unknown>();
      for (const mode of MODES) {
        const m = new SysMachine(mode);
        const r = afterFlush(m, flush, mm => mm.map(BigInt(L), BigInt(CODE_B), P | RW));
        runToHalt(m);
        assert.deepEqual([m.reg(RAX), m.reg(RCX)], [2n, 20000n], 'the loop of the page mapped now');
        results.set(mode, [r.first, m.reg(RAX), m.reg(RCX), m.cpu.instret]);
      }
      assert.deepEqual(results.get('on'), results.get('off'));
      assert.deepEqual(results.get('lockstep'), results.get('off'));
    });

    test(`${flush} after the page was made not executable (XD): the fetch faults, the kept code does not run`, () => {
      const results = new Map<Mode, unknown>();
      for (const mode of MODES) {
        const m = new SysMachine(mode);
        installHandlers(m);
        m.sys.efer |= EFER_NXE; m.sys.syncPaging(); m.mem.flushAll();
        afterFlush(m, flush, mm => mm.map(BigInt(L), BigInt(CODE_A), P | RW | NX));
        const d = runToHandler(m, 100);
        assert.equal(d.vector, 14);
        assert.equal(d.rip, BigInt(L));
        assert.equal(m.sys.cr2, L);
        assert.equal(m.reg(RCX), 0n, 'no instruction of the page ran');
        results.set(mode, [d, m.cpu.instret]);
      }
      assert.deepEqual(results.get('on'), results.get('off'));
      assert.deepEqual(results.get('lockstep'), results.get('off'));
    });

    test(`${flush} after the PTE's A bit was cleared: the next fetch walks the tables and sets it again`, () => {
      for (const mode of MODES) {
        const m = new SysMachine(mode);
        const pte = m.entry(BigInt(L), 1);
        afterFlush(m, flush, mm => mm.phys64(pte, mm.read64(pte) & ~A));
        runToHalt(m);
        assert.deepEqual([m.reg(RAX), m.reg(RCX)], [1n, 10000n]);
        assert.equal(m.read64(pte) & A, A, `${mode}: A set by the walk`);
      }
    });
  }

  test('code kept across a flush is still dropped when its physical page is written through another mapping', () => {
    const results = new Map<Mode, unknown>();
    for (const mode of MODES) {
      const m = new SysMachine(mode);
      afterFlush(m, 'a CR3 reload', () => undefined);
      runToHalt(m);
      // mov byte [CODE_A + 2], 0xc9 through the identity map (inc rcx -> dec rcx); jmp L
      const stub = KCODE + 0x200;
      m.code(stub, `c6 04 25 ${le32(CODE_A + 2)} c9 ${jmp(stub + 8, L)}`);
      m.cpu.setPc(BigInt(stub)); m.sys.halted = false;
      m.setReg(RDX, 10000n); m.setReg(RCX, 0n);
      runToHalt(m);
      assert.equal(m.reg(RCX), BigInt.asUintN(64, -10000n), 'the rewritten loop decrements');
      results.set(mode, [m.reg(RAX), m.reg(RCX), m.cpu.instret]);
    }
    assert.deepEqual(results.get('on'), results.get('off'));
    assert.deepEqual(results.get('lockstep'), results.get('off'));
  });
});
