/**
 * The block translator on a system-mode CPU: the same code run with the
 * translator off (the interpreter alone), on, and in lockstep (every
 * translated entry replayed by the interpreter and compared) ends in the
 * same state with the same instruction count: accesses through the guest's
 * page tables, a #PF raised mid-block (CR2, error code, the pushed rip),
 * a page remapped and flushed by INVLPG or a CR3 reload, code rewritten
 * through another linear alias of its physical page by a translated store,
 * and interrupts taken between the run loop's slices.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SysMachine, installHandlers, runToHandler, HANDLERS, KCODE, RAX, RBX, RCX, RDX, RSI, RDI, P, RW } from './harness';
import { runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';
import { allTranslators } from '../../../emulator/jit';

type Mode = 'off' | 'on' | 'lockstep';
const MODES: readonly Mode[] = ['off', 'on', 'lockstep'];

/** translated instructions and lockstep comparisons of the x86_64 translator of a mode so far */
function counts(mode: Mode): { translated: number; checked: number } {
  const s = allTranslators().get(`x86_64:${mode}`)?.stats;
  return { translated: s?.translatedInsns ?? 0, checked: s?.lockstepChecked ?? 0 };
}

/** run to HLT (at most `budget` instructions, in slices as the PC's run loop gives them) */
function runToHalt(m: SysMachine, budget = 5_000_000): void {
  let done = 0;
  while (done < budget) {
    const r = runSystemCpu(m.cpu, 20_000);
    if (r.event) throw new Error(`machine event: ${r.event.detail}`);
    done += r.executed;
    if (r.halted) return;
  }
  throw new Error(`no HLT within ${budget} instructions (rip 0x${m.cpu.getPc().toString(16)})`);
}

/**
 * A scenario in each mode: its observed result must be the interpreter's,
 * and translated code (lockstep: compared with the interpreter) must have
 * run in the other modes.
 */
function sameInEveryMode(scenario: (m: SysMachine) => unknown): void {
  const results = new Map<Mode, unknown>();
  for (const mode of MODES) {
    const before = counts(mode);
    const m = new SysMachine(mode);
    const r = scenario(m);
    results.set(mode, { result: r, instret: m.cpu.instret });
    const after = counts(mode);
    if (mode !== 'off') assert.ok(after.translated > before.translated, `${mode}: no translated code ran`);
    if (mode === 'lockstep') assert.ok(after.checked > before.checked, 'lockstep compared nothing');
  }
  assert.deepEqual(results.get('on'), results.get('off'), 'translator on vs off');
  assert.deepEqual(results.get('lockstep'), results.get('off'), 'lockstep vs off');
}

const le32 = (v: number): string => [0, 8, 16, 24].map(s => ((v >>> s) & 0xff).toString(16).padStart(2, '0')).join(' ');
/** jmp rel32 from the instruction at `at` to `to` */
const jmp = (at: number, to: number): string => `e9 ${le32(to - (at + 5))}`;

/** a linear page outside the identity map, and two physical pages of code for it */
const L = 0x600000, CODE_A = 0x1d0000, CODE_B = 0x1d1000;
// A: inc rcx; dec rdx; jnz A; mov eax, 1; hlt      B: add rcx, 2; dec rdx; jnz B; mov eax, 2; hlt
const LOOP_A = '48 ff c1 48 ff ca 75 f8 b8 01 00 00 00 f4';
const LOOP_B = '48 83 c1 02 48 ff ca 75 f7 b8 02 00 00 00 f4';

describe('the block translator on a system-mode CPU', () => {
  test('a load/store loop through the page tables: the same registers, memory and count as the interpreter', () => {
    sameInEveryMode(m => {
      // inc rax; mov [rbx], rax; mov rcx, [rbx]; add rbx, 8; dec rdx; jnz; hlt
      m.code(KCODE, '48 ff c0 48 89 03 48 8b 0b 48 83 c3 08 48 ff ca 75 ee f4');
      m.setReg(RBX, 0x1c0000n); m.setReg(RDX, 20000n);
      runToHalt(m);
      return [m.reg(RAX), m.reg(RBX), m.reg(RCX), m.read64(0x1c0000 + 8 * 19999)];
    });
  });

  test('a #PF mid-block: the same CR2, error code, pushed rip and count as the interpreter', () => {
    sameInEveryMode(m => {
      installHandlers(m);
      // mov [rbx], rax; add rbx, 8; inc rax; jmp back: stores up to the end of the identity map (0x200000), then #PF
      m.code(KCODE, '48 89 03 48 83 c3 08 48 ff c0 eb f4');
      m.setReg(RBX, 0x1c0000n);
      const d = runToHandler(m, 1_000_000);
      assert.equal(d.vector, 14);
      assert.equal(m.sys.cr2, 0x200000);
      assert.equal(d.errorCode, 2, 'a supervisor write to a page not present');
      assert.equal(d.rip, BigInt(KCODE), 'the faulting store');
      return [d, m.sys.cr2, m.reg(RAX), m.reg(RBX)];
    });
  });

  for (const flush of ['invlpg', 'a CR3 reload'] as const) {
    test(`a code page remapped, then ${flush}: the new code runs, never a stale translation`, () => {
      sameInEveryMode(m => {
        m.code(CODE_A, LOOP_A);
        m.code(CODE_B, LOOP_B);
        m.map(BigInt(L), BigInt(CODE_A), P | RW);
        m.cpu.setPc(BigInt(L));
        m.setReg(RDX, 10000n);
        runToHalt(m);
        const first = [m.reg(RAX), m.reg(RCX)];
        m.map(BigInt(L), BigInt(CODE_B), P | RW);
        // invlpg [L] or mov rax, cr3; mov cr3, rax; then jmp L
        const stub = KCODE + 0x100;
        const f = flush === 'invlpg' ? `0f 01 3c 25 ${le32(L)}` : '0f 20 d8 0f 22 d8';
        m.code(stub, `${f} ${jmp(stub + f.split(' ').length, L)}`);
        m.cpu.setPc(BigInt(stub)); m.sys.halted = false;
        m.setReg(RDX, 10000n); m.setReg(RCX, 0n);
        runToHalt(m);
        assert.deepEqual([m.reg(RAX), m.reg(RCX)], [2n, 20000n], 'the loop of the page mapped now');
        return [first, m.reg(RAX), m.reg(RCX)];
      });
    });
  }

  test('code rewritten through another linear alias of its physical page by a hot (translated) store loop: the rewritten code runs', () => {
    sameInEveryMode(m => {
      m.code(CODE_A, LOOP_A);
      m.map(BigInt(L), BigInt(CODE_A), P | RW);
      m.cpu.setPc(BigInt(L));
      m.setReg(RDX, 10000n);
      runToHalt(m);
      // mov byte [CODE_A + 2], 0xc9 (inc rcx -> dec rcx) through the identity map, 5000 times; then jmp L
      const stub = KCODE + 0x200;
      m.code(stub, `c6 04 25 ${le32(CODE_A + 2)} c9 48 ff cf 75 f3 ${jmp(stub + 13, L)}`);
      m.cpu.setPc(BigInt(stub)); m.sys.halted = false;
      m.setReg(RDI, 5000n); m.setReg(RDX, 10000n); m.setReg(RCX, 0n);
      runToHalt(m);
      assert.equal(m.reg(RCX), BigInt.asUintN(64, -10000n), 'the rewritten loop decrements');
      return [m.reg(RAX), m.reg(RCX)];
    });
  });

  test('interrupts arrive between slices at the same instruction counts', () => {
    sameInEveryMode(m => {
      installHandlers(m);
      // vector 0x20: inc rsi; iretq
      m.gate(0x20, HANDLERS + 0x400);
      m.code(HANDLERS + 0x400, '48 ff c6 48 cf');
      m.code(KCODE, '48 ff c0 48 01 c3 eb f8'); // inc rax; add rbx, rax; jmp back
      m.cpu.setRflags(0x202);
      for (let k = 0; k < 200; k++) {
        if (k % 7 === 3) m.platform.pending.push(0x20);
        runSystemCpu(m.cpu, 997 + (k % 5));
      }
      assert.equal(m.platform.acked.length, 29);
      assert.equal(m.reg(RSI), 29n, 'every handler ran');
      return [m.reg(RAX), m.reg(RBX), m.reg(RSI), m.cpu.getPc(), m.platform.acked.length];
    });
  });
});
